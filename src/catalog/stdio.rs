//! Newline-delimited JSON-RPC with a stdio MCP server: our own transport under rmcp, with a
//! bound on one message and a direct path for tool calls.
//!
//! rmcp's own stdio reader drops a line over its 16 MiB cap and logs it, so the request that
//! line answered waits for its whole timeout (300 s for a call) and then says "timed out". We
//! read lines ourselves instead.
//!
//! Invariants:
//! - A line never occupies more than `max` bytes of memory: past that we stop buffering and
//!   only scan the rest for the message's top-level `"id"` (wherever it is: the TypeScript SDK
//!   writes it last), then answer that request with a JSON-RPC error, so it fails at once with
//!   a message that names the limit. An oversized line without an id is logged.
//! - Reading is cancel-safe (rmcp polls `receive` inside a `select!`): partial lines and the
//!   discard state live on the struct, bytes are consumed only after they were accounted for.
//! - Lines that are not JSON-RPC are skipped (debug log), as rmcp does.
//! - Every message goes out as one whole line under one lock, whoever writes it. A direct call
//!   writes its request through a `LineWrite`, which keeps its progress: the call may stop
//!   waiting for a write that blocks (a server not reading its stdin, the pipe full), and the
//!   rest of the line is then finished in a task of its own, never left half-way.
//! - `tools/call` takes a direct path (`DirectCalls`): the calling task writes the request
//!   itself and the reader hands the response straight back to it. Through rmcp a call crossed
//!   its service loop twice, a send task and a response timer, and its response was parsed as
//!   an untagged enum of 20 result types; that was most of the sidecar's own cost of a call
//!   (BENCHMARKS.md, "MCP call overhead"). Direct calls carry string ids (`toolreg-N`), which
//!   rmcp's numeric ids never equal; everything else (list, progress, the server's questions,
//!   cancellation notices) still goes through rmcp.
//! - When the server's stdout ends or the transport is dropped, every direct call still
//!   waiting fails at once as a closed connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

use super::lock;

/// The default bound on one message from an MCP server: rmcp's own stdio and SSE limit.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

pub(crate) struct BoundedStdio<R: AsyncRead> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Set while the rest of an oversized line is being skipped.
    oversized: Option<Oversized>,
    direct: Arc<DirectCalls>,
}

struct Oversized {
    bytes: usize,
    scan: IdScan,
}

/// The answer to a direct call: its `result`, or its `error` object.
pub(crate) type Reply = Result<Box<RawValue>, Value>;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type SharedWriter = Arc<tokio::sync::Mutex<Option<Writer>>>;

/// The writing half of the session and the direct calls waiting for their response.
pub(crate) struct DirectCalls {
    writer: SharedWriter,
    waiting: std::sync::Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    next: AtomicU64,
    closed: AtomicBool,
    /// Takes a notification line off rmcp's path (true: taken), see `on_notice`.
    notice: std::sync::OnceLock<NoticeHook>,
}

type NoticeHook = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// Where a direct call's response will arrive.
pub(crate) struct Pending {
    pub id: String,
    pub reply: oneshot::Receiver<Reply>,
}

const DIRECT_ID_PREFIX: &str = "toolreg-";

impl DirectCalls {
    fn new(writer: Writer) -> Self {
        DirectCalls {
            writer: Arc::new(tokio::sync::Mutex::new(Some(writer))),
            waiting: std::sync::Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            notice: std::sync::OnceLock::new(),
        }
    }

    /// Lets `hook` take notification lines as they are read, before the responses that follow
    /// them. rmcp runs each notification's handler in a task of its own while a direct call's
    /// response is handed back at once, so a server's last log message of a call could be
    /// handled after the call had ended and no longer found it (then dropped).
    pub fn on_notice(&self, hook: impl Fn(&[u8]) -> bool + Send + Sync + 'static) {
        let _ = self.notice.set(Box::new(hook));
    }

    fn take_notice(&self, text: &[u8]) -> bool {
        self.notice.get().is_some_and(|hook| hook(text))
    }

    /// A fresh id and the receiver of its response; `None` once the server's stdout ended.
    pub fn register(&self) -> Option<Pending> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let id = format!("{DIRECT_ID_PREFIX}{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, reply) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), tx);
        // The reader may have closed between the check and the insert.
        if self.closed.load(Ordering::Acquire) {
            lock(&self.waiting).remove(&id);
            return None;
        }
        Some(Pending { id, reply })
    }

    /// Stops waiting for `id` (timed out, cancelled, or its request could not be written).
    pub fn forget(&self, id: &str) {
        lock(&self.waiting).remove(id);
    }

    /// Writes one whole line (the caller ends it with `\n`).
    pub async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut writer = self.writer.lock().await;
        let w = writer.as_mut().ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotConnected, "transport is closed"))?;
        w.write_all(line).await?;
        w.flush().await
    }

    /// Waits for the writer, then holds it for `line` (the caller ends it with `\n`). Nothing is
    /// written before `LineWrite::run`, so dropping this wait sends nothing.
    pub async fn start_line(&self, line: Vec<u8>) -> LineWrite {
        LineWrite { writer: Some(self.writer.clone().lock_owned().await), line, done: 0 }
    }

    /// Writes `line` when the writer is free, in a task of its own: for a notice (a call's
    /// cancellation) that must not hold its sender up behind a server that does not read.
    pub fn send_later(&self, line: Vec<u8>) {
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let mut rest = LineWrite { writer: Some(writer.lock_owned().await), line, done: 0 };
            let _ = rest.run().await;
        });
    }

    /// The response for a waiting direct call, if `text` is one. Called with every line read.
    fn deliver(&self, text: &[u8]) -> bool {
        #[derive(Deserialize)]
        struct Probe<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            method: Option<serde::de::IgnoredAny>,
            result: Option<Box<RawValue>>,
            error: Option<Value>,
        }
        // Only a line that names one of our ids is parsed twice.
        if lock(&self.waiting).is_empty() || memchr::memmem::find(text, DIRECT_ID_PREFIX.as_bytes()).is_none() {
            return false;
        }
        let Ok(probe) = serde_json::from_slice::<Probe>(text) else { return false };
        let Some(Ok(id)) = probe.id.map(|raw| serde_json::from_str::<String>(raw.get())) else { return false };
        // A request from the server that happens to use such an id is not an answer.
        if !id.starts_with(DIRECT_ID_PREFIX) || probe.method.is_some() {
            return false;
        }
        let reply = match (probe.result, probe.error) {
            (Some(r), None) => Ok(r),
            (None, Some(e)) => Err(e),
            _ => Err(json!({"code": -32603, "message": "the server's response has neither a result nor an error"})),
        };
        match lock(&self.waiting).remove(&id) {
            Some(tx) => {
                let _ = tx.send(reply);
            }
            None => tracing::debug!(%id, "response to a call no longer waited for; dropped"),
        }
        true
    }

    /// An error for a waiting direct call (an oversized response).
    fn deliver_error(&self, id: &Value, error: Value) -> bool {
        let Some(id) = id.as_str() else { return false };
        match lock(&self.waiting).remove(id) {
            Some(tx) => {
                let _ = tx.send(Err(error));
                true
            }
            None => false,
        }
    }

    /// No more responses will come: every waiting call fails (its sender is dropped).
    fn close_reading(&self) {
        self.closed.store(true, Ordering::Release);
        lock(&self.waiting).clear();
    }
}

/// One line on its way out, holding the writer. `run` is cancel-safe: the bytes written so far
/// are counted here, so waiting can stop at any point; a line begun and not finished is then
/// finished in a task of its own (`stop_waiting`, or on drop), never left half-way.
pub(crate) struct LineWrite {
    writer: Option<tokio::sync::OwnedMutexGuard<Option<Writer>>>,
    line: Vec<u8>,
    done: usize,
}

impl LineWrite {
    /// Writes the rest of the line and flushes. After an error the writer is let go unfinished:
    /// the pipe is broken, there is no reader left to confuse.
    pub async fn run(&mut self) -> std::io::Result<()> {
        let result = self.write_rest().await;
        if result.is_err() {
            self.writer = None;
        }
        result
    }

    async fn write_rest(&mut self) -> std::io::Result<()> {
        let closed = || std::io::Error::new(std::io::ErrorKind::NotConnected, "transport is closed");
        let w = self.writer.as_mut().ok_or_else(closed)?.as_mut().ok_or_else(closed)?;
        while self.done < self.line.len() {
            // `write` is cancel-safe: bytes are written and counted in the same poll.
            match w.write(&self.line[self.done..]).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => self.done += n,
            }
        }
        w.flush().await
    }

    /// The caller stops waiting. A line none of which was written is dropped unsent (false);
    /// otherwise it may reach the server (true): its rest is written in a task of its own,
    /// then `then`, under the same hold of the writer so that nothing comes between.
    pub fn stop_waiting(mut self, then: Vec<u8>) -> bool {
        if self.done == 0 {
            return false;
        }
        self.finish_later(Some(then));
        true
    }

    fn finish_later(&mut self, then: Option<Vec<u8>>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let mut rest = LineWrite { writer: self.writer.take(), line: std::mem::take(&mut self.line), done: self.done };
        runtime.spawn(async move {
            if rest.run().await.is_ok() {
                if let Some(then) = then {
                    (rest.line, rest.done) = (then, 0);
                    let _ = rest.run().await;
                }
            }
        });
    }
}

impl Drop for LineWrite {
    fn drop(&mut self) {
        // The call's future itself was dropped mid-line.
        if self.writer.is_some() && self.done > 0 && self.done < self.line.len() {
            self.finish_later(None);
        }
    }
}

impl<R> BoundedStdio<R>
where
    R: AsyncRead + Unpin + Send,
{
    pub fn new<W: AsyncWrite + Send + Unpin + 'static>(read: R, write: W, max: usize) -> Self {
        BoundedStdio {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max: max.max(1),
            oversized: None,
            direct: Arc::new(DirectCalls::new(Box::new(write))),
        }
    }

    /// The direct path for tool calls on this session.
    pub fn direct(&self) -> Arc<DirectCalls> {
        self.direct.clone()
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
            if let Some((id, error)) = oversized_error(o, self.max) {
                if self.direct.deliver_error(&id, error.clone()) {
                    continue;
                }
                let reply = json!({"jsonrpc": "2.0", "id": id, "error": error});
                if let Ok(reply) = serde_json::from_value(reply) {
                    return Err(Some(reply));
                }
            }
        }
    }
}

impl<R: AsyncRead> Drop for BoundedStdio<R> {
    fn drop(&mut self) {
        self.direct.close_reading();
    }
}

/// The id of the request an oversized line answered and the JSON-RPC error that answers it.
fn oversized_error(o: Oversized, max: usize) -> Option<(Value, Value)> {
    let bytes = o.bytes.saturating_sub(1);
    let message = format!(
        "the server sent a message of {bytes} bytes, over the limit of {max} bytes (maxMessageBytes); it was not read"
    );
    let Some(id) = o.scan.id() else {
        tracing::warn!(bytes, max, "MCP server sent an oversized message without an id; dropped");
        return None;
    };
    tracing::warn!(bytes, max, %id, "MCP server sent an oversized response; failing its request");
    Some((id, json!({"code": -32603, "message": message})))
}

impl<R> Transport<RoleClient> for BoundedStdio<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let direct = self.direct.clone();
        let line = serde_json::to_vec(&item).map(|mut l| {
            l.push(b'\n');
            l
        });
        async move { direct.write_line(&line.map_err(std::io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Ok(()) => {}
                Err(None) => {
                    self.direct.close_reading();
                    return None;
                }
                Err(reply) => return reply,
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            let parsed = if text.iter().all(u8::is_ascii_whitespace) || self.direct.deliver(text) || self.direct.take_notice(text) {
                None
            } else {
                Some(serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text))
            };
            // Keep the allocation for the next line unless it was a big one.
            if line.capacity() <= 1 << 20 {
                self.line = line;
                self.line.clear();
            }
            match parsed {
                None => {}
                Some(Ok(msg)) => return Some(msg),
                Some(Err(e)) => tracing::debug!(error = %e, "ignoring a line from the MCP server that is not JSON-RPC"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let writer = self.direct.writer.lock().await.take();
        match writer {
            Some(mut w) => w.shutdown().await,
            None => Ok(()),
        }
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
    use std::time::Duration;

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
    async fn a_direct_call_gets_its_response_and_rmcp_gets_the_rest() {
        let (ours, theirs) = ("toolreg-1", 7);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{theirs},\"result\":{{\"tools\":[]}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":\"{ours}\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"hi\"}}],\"isError\":false}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":\"toolreg-2\",\"error\":{{\"code\":-32602,\"message\":\"bad\"}}}}\n"
        );
        let (mut out, written) = tokio::io::duplex(1 << 16);
        let mut t = BoundedStdio::new(std::io::Cursor::new(input.into_bytes()), written, 1 << 20);
        let d = t.direct();
        let (a, b) = (d.register().unwrap(), d.register().unwrap());
        assert_eq!((a.id.as_str(), b.id.as_str()), (ours, "toolreg-2"));
        d.write_line(b"{\"id\":\"toolreg-1\"}\n").await.unwrap();
        let mut sent = vec![0; 19];
        tokio::io::AsyncReadExt::read_exact(&mut out, &mut sent).await.unwrap();
        assert_eq!(sent, b"{\"id\":\"toolreg-1\"}\n");
        // rmcp sees its own response only; ours went to the waiting calls.
        let first = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!(first["id"], theirs);
        assert!(t.receive().await.is_none());
        let result: Value = serde_json::from_str(a.reply.await.unwrap().unwrap().get()).unwrap();
        assert_eq!(result["content"][0]["text"], "hi");
        assert_eq!(b.reply.await.unwrap().unwrap_err()["message"], "bad");
        // The server's stdout ended: no new call waits for an answer that cannot come.
        assert!(d.register().is_none());
    }

    #[tokio::test]
    async fn a_line_given_up_half_way_is_finished_whole_then_its_notice() {
        let (mut out, written) = tokio::io::duplex(1024);
        let t = BoundedStdio::new(tokio::io::empty(), written, 1024);
        let d = t.direct();
        let request = [vec![b'x'; 10_000], vec![b'\n']].concat();
        let mut write = d.start_line(request.clone()).await;
        // The pipe takes 1 KiB and nobody reads: the write blocks half-way.
        let stuck = tokio::time::timeout(Duration::from_millis(50), write.run()).await;
        assert!(stuck.is_err(), "the write cannot finish while nobody reads");
        assert!(write.stop_waiting(b"{\"cancelled\":1}\n".to_vec()), "begun, so it may reach the server");
        // Another message waits for the whole line and the notice, then follows them.
        let next = tokio::spawn(async move { d.write_line(b"{\"next\":2}\n").await });
        let mut all = Vec::new();
        let expected = [&request[..], b"{\"cancelled\":1}\n", b"{\"next\":2}\n"].concat();
        let mut buf = [0; 4096];
        while all.len() < expected.len() {
            let n = tokio::io::AsyncReadExt::read(&mut out, &mut buf).await.unwrap();
            all.extend_from_slice(&buf[..n]);
        }
        assert_eq!(all, expected);
        next.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_line_not_begun_is_not_sent_and_lets_the_writer_go() {
        let (mut out, written) = tokio::io::duplex(1024);
        let t = BoundedStdio::new(tokio::io::empty(), written, 1024);
        let d = t.direct();
        let write = d.start_line(b"{\"never\":1}\n".to_vec()).await;
        assert!(!write.stop_waiting(b"{\"cancelled\":1}\n".to_vec()));
        d.write_line(b"{\"next\":2}\n").await.unwrap();
        let mut sent = vec![0; 11];
        tokio::io::AsyncReadExt::read_exact(&mut out, &mut sent).await.unwrap();
        assert_eq!(sent, b"{\"next\":2}\n");
    }

    #[tokio::test]
    async fn direct_calls_fail_when_the_transport_goes() {
        let t = BoundedStdio::new(tokio::io::empty(), tokio::io::sink(), 1024);
        let pending = t.direct().register().unwrap();
        drop(t);
        assert!(pending.reply.await.is_err(), "the waiting call is released, not left hanging");
    }

    #[tokio::test]
    async fn an_oversized_response_fails_its_direct_call() {
        let big = "x".repeat(5000);
        let input = format!("{{\"jsonrpc\":\"2.0\",\"result\":{{\"text\":\"{big}\"}},\"id\":\"toolreg-1\"}}\n");
        let mut t = BoundedStdio::new(std::io::Cursor::new(input.into_bytes()), tokio::io::sink(), 1024);
        let pending = t.direct().register().unwrap();
        assert!(t.receive().await.is_none());
        let error = pending.reply.await.unwrap().unwrap_err();
        assert!(error["message"].as_str().unwrap().contains("over the limit of 1024 bytes (maxMessageBytes)"), "{error}");
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
