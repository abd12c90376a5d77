//! Newline-delimited JSON-RPC from a stdio MCP server, read with a bound on one message.
//!
//! rmcp's own stdio reader drops a line over its 16 MiB cap and logs it, so the request that
//! line answered waits for its whole timeout (300 s for a call) and then says "timed out". We
//! read lines ourselves instead (sending still goes through rmcp's writer):
//!
//! Invariants:
//! - A line never occupies more than `max` bytes of memory: past that we stop buffering and
//!   only scan the rest for the message's top-level `"id"` (wherever it is: the TypeScript SDK
//!   writes it last), then hand rmcp a JSON-RPC error for that id, so the waiting request fails
//!   at once with a message that names the limit. An oversized line without an id is logged.
//! - Reading is cancel-safe (rmcp polls `receive` inside a `select!`): partial lines and the
//!   discard state live on the struct, bytes are consumed only after they were accounted for.
//! - Lines that are not JSON-RPC are skipped (debug log), as rmcp does.
//! - A response to a `tools/call` we sent is parsed as a `CallToolResult` directly: rmcp's own
//!   parse tries each message shape and then each of its 20 result types in turn (a call result
//!   is the 16th), a fifth of the sidecar's CPU per call (BENCHMARKS.md). Anything that does
//!   not parse that way (an error, a malformed result) takes rmcp's parse as before.

use std::collections::HashSet;

use rmcp::model::{CallToolResult, ClientRequest, JsonRpcMessage, JsonRpcResponse, RequestId, ServerResult};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

/// The default bound on one message from an MCP server: rmcp's own stdio and SSE limit.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

pub(crate) struct BoundedStdio<R: AsyncRead, W: AsyncWrite> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Set while the rest of an oversized line is being skipped.
    oversized: Option<Oversized>,
    write: AsyncRwTransport<RoleClient, tokio::io::Empty, W>,
    /// Ids of `tools/call` requests sent and not yet answered through the direct parse.
    calls: HashSet<RequestId>,
}

/// Ids of unanswered calls kept (a call that timed out leaves its id); past it they are
/// forgotten, and their answers take rmcp's slower parse.
const MAX_TRACKED_CALLS: usize = 1024;

struct Oversized {
    bytes: usize,
    scan: IdScan,
}

impl<R, W> BoundedStdio<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(read: R, write: W, max: usize) -> Self {
        BoundedStdio {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max: max.max(1),
            oversized: None,
            write: AsyncRwTransport::new(tokio::io::empty(), write),
            calls: HashSet::new(),
        }
    }

    /// `text` as the response to a `tools/call` in flight, if it is one.
    fn call_response(&mut self, text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.calls.is_empty() {
            return None;
        }
        let response: JsonRpcResponse<CallToolResult> = serde_json::from_slice(text).ok()?;
        if !self.calls.remove(&response.id) {
            return None;
        }
        let JsonRpcResponse { jsonrpc, id, result } = response;
        Some(JsonRpcMessage::Response(JsonRpcResponse { jsonrpc, id, result: ServerResult::from(result) }))
    }

    /// One whole line into `self.line` (true), or an oversized line's error message (Some in
    /// `Err`), or EOF / a read error (`Err(None)`).
    async fn read_line(&mut self) -> Result<(), Option<RxJsonRpcMessage<RoleClient>>> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(a) if a.is_empty() => return Err(None),
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read from the MCP server");
                    return Err(None);
                }
            };
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            if self.oversized.is_none() && self.line.len() + take > self.max {
                let mut scan = IdScan::default();
                scan.feed(&self.line);
                self.oversized = Some(Oversized { bytes: self.line.len(), scan });
                self.line = Vec::new();
            }
            match &mut self.oversized {
                Some(o) => {
                    o.bytes += take;
                    o.scan.feed(chunk);
                }
                None => self.line.extend_from_slice(chunk),
            }
            self.read.consume(take);
            if newline.is_none() {
                continue;
            }
            let Some(o) = self.oversized.take() else { return Ok(()) };
            if let Some(reply) = oversized_reply(o, self.max) {
                return Err(Some(reply));
            }
        }
    }
}

/// A JSON-RPC error answering the request an oversized line was the response to.
fn oversized_reply(o: Oversized, max: usize) -> Option<RxJsonRpcMessage<RoleClient>> {
    let bytes = o.bytes.saturating_sub(1);
    let message = format!(
        "the server sent a message of {bytes} bytes, over the limit of {max} bytes (maxMessageBytes); it was not read"
    );
    let Some(id) = o.scan.id() else {
        tracing::warn!(bytes, max, "MCP server sent an oversized message without an id; dropped");
        return None;
    };
    tracing::warn!(bytes, max, %id, "MCP server sent an oversized response; failing its request");
    let reply = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}});
    serde_json::from_value(reply).ok()
}

impl<R, W> Transport<RoleClient> for BoundedStdio<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(r) = &item {
            if matches!(r.request, ClientRequest::CallToolRequest(_)) {
                if self.calls.len() >= MAX_TRACKED_CALLS {
                    self.calls.clear();
                }
                self.calls.insert(r.id.clone());
            }
        }
        self.write.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Ok(()) => {}
                Err(reply) => return reply,
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                self.line = line;
                self.line.clear();
                continue;
            }
            let parsed = match self.call_response(text) {
                Some(msg) => Ok(msg),
                None => serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text),
            };
            // Keep the allocation for the next line unless it was a big one.
            if line.capacity() <= 1 << 20 {
                self.line = line;
                self.line.clear();
            }
            match parsed {
                Ok(msg) => return Some(msg),
                Err(e) => tracing::debug!(error = %e, "ignoring a line from the MCP server that is not JSON-RPC"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.close().await
    }
}

/// Finds the value of the top-level `"id"` of a JSON object fed in pieces, in constant memory.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_str: bool,
    escaped: bool,
    expect_key: bool,
    /// The first bytes of the top-level key being read (three are enough to tell `id`).
    key: Option<Vec<u8>>,
    key_is_id: bool,
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

const MAX_ID_BYTES: usize = 256;

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() {
                return;
            }
            if self.in_str {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_str = false;
                    if let Some(k) = self.key.take() {
                        self.key_is_id = k == b"id";
                    }
                } else if let Some(k) = &mut self.key {
                    if k.len() < 3 {
                        k.push(b);
                    }
                }
                self.capture(b);
                continue;
            }
            match b {
                b'"' => {
                    self.in_str = true;
                    if self.depth == 1 && self.expect_key {
                        self.key = Some(Vec::new());
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth == 1 {
                        self.expect_key = b == b'{';
                    }
                }
                b'}' | b']' if self.depth == 1 => {
                    self.finish_value();
                    self.depth = 0;
                    continue;
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b',' if self.depth == 1 => {
                    self.finish_value();
                    self.expect_key = true;
                    continue;
                }
                b':' if self.depth == 1 => {
                    self.expect_key = false;
                    if std::mem::take(&mut self.key_is_id) {
                        self.value = Some(Vec::new());
                        continue;
                    }
                }
                _ => {}
            }
            self.capture(b);
        }
    }

    fn capture(&mut self, b: u8) {
        if let Some(v) = &mut self.value {
            if v.len() < MAX_ID_BYTES {
                v.push(b);
            }
        }
    }

    fn finish_value(&mut self) {
        if let Some(v) = self.value.take() {
            self.found = Some(v);
        }
    }

    /// A string or number id, if one was seen.
    fn id(&self) -> Option<Value> {
        let v: Value = serde_json::from_slice(self.found.as_deref()?).ok()?;
        (v.is_string() || v.is_number()).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(text: &str, piece: usize) -> Option<Value> {
        let mut scan = IdScan::default();
        for chunk in text.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan.id()
    }

    #[test]
    fn id_is_found_first_last_and_in_pieces() {
        for piece in [1, 3, 1000] {
            assert_eq!(id_of(r#"{"jsonrpc":"2.0","id":7,"result":{"id":9}}"#, piece), Some(json!(7)));
            assert_eq!(id_of(r#"{"result":{"id":9,"s":"\"id\":3"},"jsonrpc":"2.0","id":"a\"b"}"#, piece), Some(json!("a\"b")));
            assert_eq!(id_of(r#"{ "idx": 1, "result": [1, {"id": 2}], "id" : 12 }"#, piece), Some(json!(12)));
            assert_eq!(id_of(r#"{"method":"notifications/progress","params":{"id":1}}"#, piece), None);
            assert_eq!(id_of(r#"[{"id":1}]"#, piece), None);
        }
    }

    #[tokio::test]
    async fn a_call_response_is_parsed_directly_and_as_rmcp_would() {
        use rmcp::model::{CallToolRequest, CallToolRequestParams};
        let line = r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":null,"isError":false}}"#;
        let error = r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"bad"}}"#;
        let input = format!("{line}\n{line}\n{error}\n");
        let mut t = BoundedStdio::new(std::io::Cursor::new(input.into_bytes()), tokio::io::sink(), 1 << 20);
        for id in [5, 6] {
            let call = ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("echo")));
            t.send(JsonRpcMessage::request(call, RequestId::Number(id))).await.unwrap();
        }
        let direct = t.receive().await.unwrap();
        assert_eq!(t.calls.len(), 1, "the direct parse answered call 5");
        assert!(matches!(&direct, JsonRpcMessage::Response(JsonRpcResponse { result: ServerResult::CallToolResult(_), .. })));
        // The same line again: its id is no longer in flight, so rmcp's parse reads it.
        let generic = t.receive().await.unwrap();
        assert_eq!(serde_json::to_value(&direct).unwrap(), serde_json::to_value(&generic).unwrap());
        assert_eq!(serde_json::to_value(&direct).unwrap()["result"]["structuredContent"], Value::Null);
        let failed = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!(failed["error"]["message"], "bad");
    }

    #[tokio::test]
    async fn an_oversized_line_fails_its_request_and_the_next_line_still_reads() {
        let big = "x".repeat(5000);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{big}\"}}]}},\"id\":3}}\n\
             not json\n\
             {{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"content\":[]}}}}\n"
        );
        let mut t = BoundedStdio::new(std::io::Cursor::new(input.into_bytes()), tokio::io::sink(), 1024);
        let first = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!(first["id"], 3);
        let message = first["error"]["message"].as_str().unwrap();
        assert!(message.contains("over the limit of 1024 bytes (maxMessageBytes)"), "{message}");
        assert!(t.line.capacity() <= 1024);
        let second = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!(second["id"], 4);
        assert!(t.receive().await.is_none());
    }
}
