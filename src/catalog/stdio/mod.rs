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
//! - A big line never holds a runtime thread: from `BIG_LINE` bytes it is parsed on tokio's
//!   blocking pool (the next line waits for it, so messages stay in order), and reading yields
//!   every `YIELD_BYTES`. A 3.5 MB page of `tools/list` took 20-30 ms to parse (rmcp buffers
//!   its untagged result types), and with both runtime threads on such pages the main loop
//!   answered nothing meanwhile (`cargo bench --bench faults`).
//! - Every message goes out as one whole line under one lock, whoever writes it. A direct call
//!   writes its request through a `LineWrite`, which keeps its progress: the call may stop
//!   waiting for a write that blocks (a server not reading its stdin, the pipe full), and the
//!   rest of the line is then finished in a task of its own, never left half-way.
//! - `tools/call` takes a direct path (`DirectCalls`): the calling task writes the request
//!   itself and the reader hands the response straight back to it. Through rmcp a call crossed
//!   its service loop twice, a send task and a response timer, and its response was parsed as
//!   an untagged enum of 20 result types; that was most of the sidecar's own cost of a call
//!   (docs/benchmarks-history.md, "MCP call overhead, issue 8's last point"). Direct calls carry
//!   string ids (`toolreg-N`), which
//!   rmcp's numeric ids never equal; everything else (list, progress, the server's questions,
//!   cancellation notices) still goes through rmcp.
//! - When the server's stdout ends or the transport is dropped, every direct call still
//!   waiting fails at once as a closed connection.
//!
//! Here the reader and rmcp's `Transport`; `direct.rs` holds `DirectCalls` and `LineWrite`,
//! `id_scan.rs` the scan for an oversized line's id.

mod direct;
mod id_scan;

use std::sync::Arc;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

pub(crate) use direct::{DirectCalls, Pending};
use id_scan::IdScan;

/// The default bound on one message from an MCP server: rmcp's own stdio and SSE limit.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

pub(crate) struct BoundedStdio<R: AsyncRead> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Set while the rest of an oversized line is being skipped.
    oversized: Option<Oversized>,
    /// A big line being parsed on the blocking pool; kept here so `receive` stays cancel-safe.
    parsing: Option<tokio::task::JoinHandle<Option<RxJsonRpcMessage<RoleClient>>>>,
    /// Bytes read since `read_line` last yielded.
    unyielded: usize,
    direct: Arc<DirectCalls>,
}

/// From this size a line is parsed off the runtime's threads: rmcp's parse of a 200 KB list
/// took milliseconds; a hop to the blocking pool costs tens of microseconds.
const BIG_LINE: usize = 64 * 1024;

/// `read_line` lets other tasks run after this many bytes of one line (copied or scanned).
const YIELD_BYTES: usize = 1024 * 1024;

struct Oversized {
    bytes: usize,
    scan: IdScan,
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
            parsing: None,
            unyielded: 0,
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
            let newline = memchr::memchr(b'\n', available);
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
            self.unyielded += take;
            if self.unyielded >= YIELD_BYTES {
                self.unyielded = 0;
                tokio::task::yield_now().await;
            }
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
            if let Some(job) = &mut self.parsing {
                let parsed = job.await;
                self.parsing = None;
                match parsed {
                    Ok(Some(msg)) => return Some(msg),
                    Ok(None) => continue,
                    Err(e) => {
                        tracing::warn!(error = %e, "parsing a message from the MCP server failed");
                        continue;
                    }
                }
            }
            match self.read_line().await {
                Ok(()) => {}
                Err(None) => {
                    self.direct.close_reading();
                    return None;
                }
                Err(reply) => return reply,
            }
            let line = std::mem::take(&mut self.line);
            if line.len() >= BIG_LINE {
                let direct = self.direct.clone();
                self.parsing = Some(tokio::task::spawn_blocking(move || take_line(&direct, &line)));
                continue;
            }
            let parsed = take_line(&self.direct, &line);
            // Keep the allocation for the next line (it is not a big one).
            self.line = line;
            self.line.clear();
            if parsed.is_some() {
                return parsed;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.direct.close_writing().await
    }
}

/// A line's message for rmcp; `None` when the line is blank, was a direct call's response or a
/// notification the hook took, or is not JSON-RPC (skipped).
fn take_line(direct: &DirectCalls, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) || direct.deliver(text) || direct.take_notice(text) {
        return None;
    }
    serde_json::from_slice(text)
        .map_err(|e| tracing::debug!(error = %e, "ignoring a line from the MCP server that is not JSON-RPC"))
        .ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

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
    async fn a_big_line_parsed_off_the_runtime_keeps_its_place() {
        let big = "x".repeat(BIG_LINE);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{big}\"}}]}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[]}}}}\n"
        );
        let mut t = BoundedStdio::new(std::io::Cursor::new(input.into_bytes()), tokio::io::sink(), 1 << 20);
        let first = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!((&first["id"], first["result"]["content"][0]["text"].as_str().map(str::len)), (&json!(1), Some(BIG_LINE)));
        let second = serde_json::to_value(t.receive().await.unwrap()).unwrap();
        assert_eq!(second["id"], 2);
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
