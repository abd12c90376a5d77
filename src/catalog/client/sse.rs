//! The legacy HTTP+SSE transport of MCP 2024-11-05 (rmcp 3.11 has no client for it; many hosted
//! servers still publish `/sse` URLs): `GET url` opens an event stream whose first `endpoint`
//! event names where to `POST` messages; every answer and server request comes on that stream.
//! Bridged to rmcp as a newline-delimited JSON pipe (`transport-async-rw`): one task reads the
//! stream into the pipe, one posts what rmcp writes, in order. The endpoint must have the
//! stream's origin: the server's headers (credentials) go to no other host.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// The most one event may hold before the stream is dropped (as rmcp's 16 MiB message bound).
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// rmcp's side of the pipe.
pub(crate) type Pipe = (ReadHalf<DuplexStream>, WriteHalf<DuplexStream>);

/// Opens the stream and waits (within `wait`) for its `endpoint`; the tasks end when rmcp
/// drops its side or the server ends the stream.
pub(crate) async fn open(client: reqwest::Client, url: &str, headers: http::HeaderMap, wait: Duration) -> Result<Pipe, String> {
    let base = reqwest::Url::parse(url).map_err(|_| "not a URL".to_owned())?;
    let response = client
        .get(base.clone())
        .headers(headers.clone())
        .header(http::header::ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| format!("legacy SSE: {}", causes(e.without_url())))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("legacy SSE: GET answered HTTP {}", status.as_u16()));
    }
    let mut events = Events { response, buf: Vec::new(), data: String::new(), name: String::new() };
    let endpoint = tokio::time::timeout(wait, async {
        loop {
            match events.next().await? {
                (name, data) if name == "endpoint" => return Some(data),
                _ => continue,
            }
        }
    })
    .await
    .map_err(|_| "legacy SSE: no `endpoint` event in time".to_owned())?
    .ok_or("legacy SSE: the stream ended before its `endpoint` event")?;
    let endpoint = base.join(endpoint.trim()).map_err(|_| "legacy SSE: the `endpoint` event is not a URL".to_owned())?;
    if endpoint.origin() != base.origin() {
        return Err("legacy SSE: the `endpoint` event names another origin; not followed".into());
    }
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (our_read, mut our_write) = tokio::io::split(ours);
    tokio::spawn(async move {
        while let Some((name, data)) = events.next().await {
            if !(name.is_empty() || name == "message") {
                continue;
            }
            // One line per message for rmcp: the event's data may span lines.
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&data) else { continue };
            let mut line = message.to_string();
            line.push('\n');
            if our_write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        let _ = our_write.shutdown().await;
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(our_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let sent = client
                .post(endpoint.clone())
                .headers(headers.clone())
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(line)
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => {}
                Ok(r) => tracing::warn!(status = r.status().as_u16(), "legacy SSE: a POSTed message was refused"),
                Err(e) => tracing::warn!(error = %causes(e.without_url()), "legacy SSE: a POST failed"),
            }
        }
    });
    Ok(tokio::io::split(theirs))
}

/// An error and its causes on one line (reqwest's own says only "error sending request").
fn causes(e: reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut next = std::error::Error::source(&e);
    while let Some(cause) = next {
        out.push_str(&format!(": {cause}"));
        next = cause.source();
    }
    crate::secret::redact_urls_in(&out).into_owned()
}

/// Server-sent events off a response, read chunk by chunk (text/event-stream's rules: `event:`
/// and `data:` fields, a blank line ends an event, `:` lines are comments).
struct Events {
    response: reqwest::Response,
    buf: Vec<u8>,
    data: String,
    name: String,
}

impl Events {
    /// The next event's name (empty: `message`) and data; `None` at the end or past the bound.
    async fn next(&mut self) -> Option<(String, String)> {
        loop {
            while let Some(at) = self.buf.iter().position(|b| *b == b'\n') {
                let raw: Vec<u8> = self.buf.drain(..=at).collect();
                let line = String::from_utf8_lossy(&raw);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.is_empty() {
                    if self.data.is_empty() && self.name.is_empty() {
                        continue;
                    }
                    let data = std::mem::take(&mut self.data);
                    return Some((std::mem::take(&mut self.name), data.strip_suffix('\n').unwrap_or(&data).to_owned()));
                }
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => self.name = value.to_owned(),
                    "data" => {
                        self.data.push_str(value);
                        self.data.push('\n');
                    }
                    _ => {}
                }
            }
            if self.buf.len() + self.data.len() > MAX_EVENT_BYTES {
                tracing::warn!("legacy SSE: an event over {MAX_EVENT_BYTES} bytes; the stream is dropped");
                return None;
            }
            let chunk = self.response.chunk().await.ok()??;
            self.buf.extend_from_slice(&chunk);
        }
    }
}
