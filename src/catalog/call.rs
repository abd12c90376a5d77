//! One `tools/call`, whichever way it travels: through rmcp's service (Streamable HTTP) or the
//! direct stdio path (`stdio::DirectCalls`). The rules a call obeys are written here once;
//! each path in `client/call_paths.rs` keeps only how its request is sent and its answer awaited.
//!
//! The rules:
//! - Arguments are a JSON object, or absent (`null`).
//! - A call cancelled before it is sent is not sent.
//! - The call timeout (`callTimeoutMs`) covers the whole call, sending included: a server that
//!   stops reading its stdin fails the call as `Timeout`, it does not stall it (`send`).
//! - Past the timeout, or when the caller cancels, a request that may have reached the server
//!   (any of it was written) is followed by `notifications/cancelled` (reason
//!   `"request timeout"`, rmcp's own wording for its timeouts, or `"cancelled by the host"`)
//!   and the call fails as `Timeout` or `Cancelled`. An answer already there wins over both.
//!   A request stopped half-way is still written whole (by `stdio::LineWrite`, in a task of its
//!   own): a half line would corrupt the next message of the session.
//! - A JSON-RPC error answer is `CatalogError::Mcp` with the server's message; one of
//!   `KEPT_CODES` is `CatalogError::Rpc`, with its code and `data`.
//! - An input-required result (2026-07-28) is not the end: `mrtr.rs` asks the host and sends
//!   the call again, within the same timeout, or hands it to the caller (`mrtr::Inputs`).
//! - A result is a `CallToolResult`: an object with a `content` array, without rmcp's
//!   `resultType` tag; anything else is `CatalogError::Mcp`. `isError: true` is a result.
//! - A result over `maxResultBytes` is cut with a note (`result_cap.rs`), never dropped.
//! - Progress notifications reach the call that sent their token (`Progress`).
//!
//! Around a call, outside this file: `Catalog::call_tool` refuses disabled and held tools first
//! and passes every error through `ServerConfig::redact`; `client/handler.rs` matches the server's
//! questions to the call (`elicit::InFlight`); `output.rs` reads `isError` and
//! `structuredContent` for the model. No rmcp type here: the paths hand in JSON.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::error::CatalogError;
use super::mrtr::Retry;
use super::result_cap;

pub(crate) const METHOD: &str = "tools/call";

/// Why the server is told to stop (`notifications/cancelled`).
pub(crate) const TIMED_OUT: &str = "request timeout";
pub(crate) const CANCELLED: &str = "cancelled by the host";

/// One `tools/call` as its caller asks for it (`Catalog::call_tool`).
pub struct CallRequest<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: Value,
    /// Cancelling it sends the server `notifications/cancelled`.
    pub cancel: CancellationToken,
    /// Where the server's progress notifications for the call go.
    pub progress: Option<mpsc::UnboundedSender<Value>>,
    /// Names the call in the questions the server asks meanwhile (`elicit.rs`).
    pub call_id: Option<&'a str>,
}

/// How long a call may take and how much of its result is handed on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub timeout: Duration,
    pub max_result_bytes: usize,
}

/// The request's `arguments`; `None` leaves them out.
pub(crate) fn arguments(arguments: Value) -> Result<Option<Map<String, Value>>, CatalogError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        _ => Err(CatalogError::Mcp("tool arguments must be a JSON object".into())),
    }
}

/// One direct `tools/call` request as a line: `id` is both its request id and its progress token,
/// `meta` the members every request of the connection adds to `_meta` (on 2026-07-28: protocol
/// version, client info and capabilities), serialised once per connection, or empty. Written by
/// hand: the hot path copies those bytes instead of building and serialising them per call.
/// `retry`: a later round of a multi round-trip call (`mrtr.rs`).
pub(crate) fn request_line(
    id: &str,
    tool: &str,
    arguments: Option<&Map<String, Value>>,
    meta: &str,
    retry: Option<&Retry>,
) -> Result<Vec<u8>, CatalogError> {
    let bad = |e: serde_json::Error| CatalogError::Mcp(e.to_string());
    let mut line = Vec::with_capacity(160 + meta.len() + tool.len());
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut line, id).map_err(bad)?;
    line.extend_from_slice(br#","method":"tools/call","params":{"_meta":{"progressToken":"#);
    serde_json::to_writer(&mut line, id).map_err(bad)?;
    if !meta.is_empty() {
        line.push(b',');
        line.extend_from_slice(meta.as_bytes());
    }
    line.extend_from_slice(br#"},"name":"#);
    serde_json::to_writer(&mut line, tool).map_err(bad)?;
    if let Some(arguments) = arguments {
        line.extend_from_slice(br#","arguments":"#);
        serde_json::to_writer(&mut line, arguments).map_err(bad)?;
    }
    if let Some(retry) = retry {
        line.extend_from_slice(br#","inputResponses":"#);
        serde_json::to_writer(&mut line, &retry.responses).map_err(bad)?;
        if let Some(state) = &retry.state {
            line.extend_from_slice(br#","requestState":"#);
            serde_json::to_writer(&mut line, state).map_err(bad)?;
        }
    }
    line.extend_from_slice(b"}}\n");
    Ok(line)
}

/// What every round of one call shares: its in-flight slot (`elicit::InFlight`), its limits,
/// its one timer and its cancellation.
pub(crate) struct Round<'a> {
    pub slot: u64,
    pub limits: Limits,
    pub deadline: &'a Deadline,
    pub cancel: &'a CancellationToken,
}

/// The one timer of a call: started before its request is sent, it bounds send and answer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    timeout: Duration,
    at: Instant,
}

impl Deadline {
    pub fn start(timeout: Duration) -> Self {
        Deadline { timeout, at: Instant::now() + timeout }
    }

    pub async fn passed(&self) {
        tokio::time::sleep_until(self.at).await;
    }

    pub fn error(&self) -> CatalogError {
        CatalogError::timed_out(METHOD, self.timeout)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// When it passes.
    pub fn at(&self) -> Instant {
        self.at
    }
}

/// Why a call was given up: the reason the server is told, and the call's error.
pub(crate) type GaveUp = (&'static str, CatalogError);

/// Runs `send` until it is done, the deadline passes or `cancel` fires. A cancel already there
/// wins, so a call cancelled before it is sent is not sent. Giving up only stops waiting:
/// whether the request went out (and the server must be told) is the sender's to say.
pub(crate) async fn send<T>(send: impl Future<Output = T>, deadline: &Deadline, cancel: &CancellationToken) -> Result<T, GaveUp> {
    if cancel.is_cancelled() {
        return Err((CANCELLED, CatalogError::Cancelled));
    }
    // Most sends finish in their first poll (the pipe has room): those arm no timer.
    let mut send = std::pin::pin!(send);
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(send.as_mut().poll(cx))).await;
    if let std::task::Poll::Ready(sent) = first {
        return Ok(sent);
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err((CANCELLED, CatalogError::Cancelled)),
        _ = deadline.passed() => Err((TIMED_OUT, deadline.error())),
        sent = send => Ok(sent),
    }
}

/// Waits for the answer to a sent call until the deadline, or until `cancel`. Giving up, it has
/// `tell` send the server the reason (`TIMED_OUT`, `CANCELLED`) before failing.
pub(crate) async fn answer<T, Told>(
    answer: impl Future<Output = Result<T, CatalogError>>,
    deadline: &Deadline,
    cancel: &CancellationToken,
    tell: impl FnOnce(&'static str) -> Told,
) -> Result<T, CatalogError>
where
    Told: Future<Output = ()>,
{
    let (reason, error) = tokio::select! {
        // A response already read is not thrown away for a timer that fired beside it.
        biased;
        a = answer => return a,
        _ = cancel.cancelled() => (CANCELLED, CatalogError::Cancelled),
        _ = deadline.passed() => (TIMED_OUT, deadline.error()),
    };
    tell(reason).await;
    Err(error)
}

/// The JSON-RPC error codes of a `tools/call` answer that mean something to whoever made the
/// call, so they are kept (`CatalogError::Rpc`): `-32021` a client capability the call needs
/// is missing (`data.requiredCapabilities`), `-32602` the server refused the params (an
/// input-required retry's `inputResponses` among them). Others are the server's business.
pub(crate) const KEPT_CODES: [i32; 2] = [-32021, -32602];

/// A JSON-RPC error answer (its `error` object).
pub(crate) fn error_answer(error: &Value) -> CatalogError {
    let message = error.get("message").and_then(Value::as_str).unwrap_or("the server answered with an error");
    let code = error.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok());
    rpc_error(code, message, error.get("data").cloned())
}

/// `CatalogError::Rpc` for a kept code, `CatalogError::Mcp` (the message only) otherwise.
pub(crate) fn rpc_error(code: Option<i32>, message: &str, data: Option<Value>) -> CatalogError {
    match code {
        Some(code) if KEPT_CODES.contains(&code) => CatalogError::Rpc { code, message: message.to_owned(), data: data.filter(|d| !d.is_null()) },
        _ => CatalogError::Mcp(message.to_owned()),
    }
}

/// The answer's `result` as read from the wire, parsed once.
pub(crate) fn parse_raw(raw: &RawValue) -> Result<Value, CatalogError> {
    serde_json::from_str(raw.get()).map_err(|e| CatalogError::Mcp(format!("{METHOD}: {e}")))
}

/// The answer's `result`, checked to be a `CallToolResult` and cut to `max_bytes`.
pub(crate) fn result(mut value: Value, max_bytes: usize) -> Result<Value, CatalogError> {
    let unexpected = || CatalogError::Mcp(format!("unexpected response to {METHOD}"));
    let Value::Object(map) = &mut value else { return Err(unexpected()) };
    map.remove("resultType");
    if !map.get("content").is_some_and(Value::is_array) {
        return Err(unexpected());
    }
    Ok(result_cap::cap(value, max_bytes))
}

/// Progress notifications by their token's JSON, to the sink of the call that sent it. Some
/// arrive before their call registered (rmcp allocates the token while sending, so a fast
/// server can beat us to it): the last `MAX_EARLY` of those wait for it.
#[derive(Default)]
pub(crate) struct Progress {
    sinks: HashMap<String, mpsc::UnboundedSender<Value>>,
    early: VecDeque<(String, Value)>,
}

const MAX_EARLY: usize = 256;

impl Progress {
    /// One `notifications/progress` from the server.
    pub fn deliver(&mut self, key: String, value: Value) {
        match self.sinks.get(&key) {
            // Its call has returned (the receiver is gone): late progress has nowhere to go.
            Some(sink) if sink.is_closed() => {}
            Some(sink) => {
                let _ = sink.send(value);
            }
            None => {
                if self.early.len() == MAX_EARLY {
                    self.early.pop_front();
                }
                self.early.push_back((key, value));
            }
        }
    }

    /// Sends the progress of the call with this token to `sink`, including any that came first.
    pub fn register(&mut self, key: String, sink: mpsc::UnboundedSender<Value>) {
        for (_, value) in self.early.iter().filter(|(k, _)| *k == key) {
            let _ = sink.send(value.clone());
        }
        self.early.retain(|(k, _)| *k != key);
        // The sink stays registered after its call: rmcp runs each notification handler in its
        // own task, so the last progress may land after the response. The caller drops the
        // receiver when done; registering the next sink removes closed ones. (A timer per call
        // for this cost a thread wake-up 15 ms later, each call.)
        self.sinks.retain(|_, s| !s.is_closed());
        self.sinks.insert(key, sink);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;

    /// `answer` with a recorder for what the server was told.
    async fn wait<T>(
        a: impl Future<Output = Result<T, CatalogError>>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (Result<T, CatalogError>, Option<&'static str>) {
        let told = Arc::new(Mutex::new(None));
        let record = told.clone();
        let r = answer(a, &Deadline::start(timeout), cancel, |reason| async move { *record.lock().unwrap() = Some(reason) }).await;
        let told = *told.lock().unwrap();
        (r, told)
    }

    #[tokio::test]
    async fn an_answer_in_time_is_returned_and_the_server_is_told_nothing() {
        let (r, told) = wait(async { Ok(7) }, Duration::from_secs(5), &CancellationToken::new()).await;
        assert_eq!((r.unwrap(), told), (7, None));
        let (r, _) = wait(async { Err::<(), _>(CatalogError::Mcp("bad".into())) }, Duration::from_secs(5), &CancellationToken::new()).await;
        assert!(matches!(r, Err(CatalogError::Mcp(m)) if m == "bad"));
    }

    #[tokio::test]
    async fn past_the_timeout_the_server_is_told_and_the_call_times_out() {
        let never = std::future::pending::<Result<(), CatalogError>>();
        let (r, told) = wait(never, Duration::from_millis(20), &CancellationToken::new()).await;
        assert_eq!(told, Some("request timeout"));
        assert_eq!(r.unwrap_err().to_string(), "MCP tools/call timed out after 20 ms");
    }

    #[tokio::test]
    async fn cancelling_tells_the_server_and_fails_as_cancelled() {
        let cancel = CancellationToken::new();
        let later = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            later.cancel();
        });
        let never = std::future::pending::<Result<(), CatalogError>>();
        let (r, told) = wait(never, Duration::from_secs(30), &cancel).await;
        assert_eq!(told, Some("cancelled by the host"));
        assert!(matches!(r, Err(CatalogError::Cancelled)));
    }

    #[tokio::test]
    async fn an_answer_already_there_wins_over_cancel_and_timeout() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (r, told) = wait(async { Ok("done") }, Duration::ZERO, &cancel).await;
        assert_eq!((r.unwrap(), told), ("done", None));
    }

    #[tokio::test]
    async fn the_timeout_covers_sending_and_a_cancel_already_there_sends_nothing() {
        let deadline = Deadline::start(Duration::from_millis(20));
        let stuck = std::future::pending::<()>();
        let (reason, error) = send(stuck, &deadline, &CancellationToken::new()).await.unwrap_err();
        assert_eq!((reason, error.to_string()), (TIMED_OUT, "MCP tools/call timed out after 20 ms".to_owned()));
        // What is left of the timeout after sending is all the answer gets.
        let (r, told) = wait(std::future::pending::<Result<(), CatalogError>>(), Duration::ZERO, &CancellationToken::new()).await;
        assert!(matches!(r, Err(CatalogError::Timeout { .. })) && told == Some(TIMED_OUT), "{r:?}");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let sent = std::sync::atomic::AtomicBool::new(false);
        let r = send(async { sent.store(true, std::sync::atomic::Ordering::SeqCst) }, &Deadline::start(Duration::from_secs(5)), &cancel).await;
        assert!(matches!(r, Err((CANCELLED, CatalogError::Cancelled))));
        assert!(!sent.load(std::sync::atomic::Ordering::SeqCst), "a cancelled call is not sent");
    }

    #[test]
    fn arguments_are_an_object_or_absent() {
        assert_eq!(arguments(Value::Null).unwrap(), None);
        assert_eq!(arguments(json!({"a": 1})).unwrap().unwrap()["a"], 1);
        let e = arguments(json!([1])).unwrap_err();
        assert_eq!(e.to_string(), "MCP error: tool arguments must be a JSON object");
    }

    #[test]
    fn a_request_line_is_one_json_rpc_request_with_the_connection_meta() {
        let args = json!({"q": "a \"quoted\"\nline"});
        let line = request_line("c7", "say \"hi\"", args.as_object(), r#""v":"2026-07-28","caps":{}"#, None).unwrap();
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v, json!({"jsonrpc": "2.0", "id": "c7", "method": "tools/call", "params": {
            "_meta": {"progressToken": "c7", "v": "2026-07-28", "caps": {}}, "name": "say \"hi\"", "arguments": args}}));
        let bare: Value = serde_json::from_slice(&request_line("c8", "t", None, "", None).unwrap()).unwrap();
        assert_eq!(bare["params"], json!({"_meta": {"progressToken": "c8"}, "name": "t"}));
        // A retry: the responses, and the state as the same string (JSON inside it untouched).
        let state = r#"{"b": 1,  "a":"\u00e9"}"#;
        let retry = Retry { responses: json!({"k": {"action": "accept"}}).as_object().cloned().unwrap(), state: Some(state.into()) };
        let again: Value = serde_json::from_slice(&request_line("c9", "t", None, "", Some(&retry)).unwrap()).unwrap();
        assert_eq!(again["params"]["inputResponses"], json!({"k": {"action": "accept"}}));
        assert_eq!(again["params"]["requestState"].as_str(), Some(state));
        let stateless = Retry { state: None, ..retry };
        let again: Value = serde_json::from_slice(&request_line("c9", "t", None, "", Some(&stateless)).unwrap()).unwrap();
        assert!(again["params"].get("requestState").is_none(), "{again}");
    }

    #[test]
    fn only_a_call_tool_result_is_a_result() {
        for bad in [json!([]), json!("text"), json!({}), json!({"tools": []}), json!({"content": "text"})] {
            let e = result(bad.clone(), 1000).unwrap_err();
            assert_eq!(e.to_string(), "MCP error: unexpected response to tools/call", "{bad}");
        }
        let raw = RawValue::from_string(r#"{"content":[],"isError":true,"resultType":"x"}"#.into()).unwrap();
        // A failed tool is a result; rmcp's tag is not the server's.
        assert_eq!(result(parse_raw(&raw).unwrap(), 1000).unwrap(), json!({"content": [], "isError": true}));
        let raw = RawValue::from_string(r#"{"tools":[]}"#.into()).unwrap();
        assert!(result(parse_raw(&raw).unwrap(), 1000).is_err());
        assert!(parse_raw(&RawValue::from_string("[1]".into()).unwrap()).is_ok());
    }

    #[test]
    fn an_oversized_result_is_cut_with_a_note() {
        let big = json!({"content": [{"type": "text", "text": "x".repeat(100)}]});
        let out = result(big, 10).unwrap();
        assert_eq!(out["content"][0]["text"], format!("{}\n[... truncated: 10 of 100 bytes shown]", "x".repeat(10)));
    }

    #[test]
    fn an_error_answer_carries_the_servers_message() {
        assert_eq!(error_answer(&json!({"code": -32601, "message": "no such method"})).to_string(), "MCP error: no such method");
        // A code the caller can act on is kept, with its data; the text names it.
        let missing = error_answer(&json!({"code": -32021, "message": "needs sampling", "data": {"requiredCapabilities": {"sampling": {}}}}));
        assert_eq!(missing, CatalogError::Rpc { code: -32021, message: "needs sampling".into(), data: Some(json!({"requiredCapabilities": {"sampling": {}}})) });
        assert_eq!(error_answer(&json!({"code": -32602, "message": "no such tool"})).to_string(), "MCP error: no such tool (JSON-RPC error -32602)");
        assert_eq!(error_answer(&json!({"code": 1})).to_string(), "MCP error: the server answered with an error");
    }

    #[test]
    fn progress_reaches_its_call_even_when_it_came_first_and_late_progress_is_dropped() {
        let mut p = Progress::default();
        p.deliver("1".into(), json!({"progress": 1}));
        p.deliver("2".into(), json!({"progress": 9}));
        let (tx, mut rx) = mpsc::unbounded_channel();
        p.register("1".into(), tx);
        p.deliver("1".into(), json!({"progress": 2}));
        assert_eq!(rx.try_recv().unwrap()["progress"], 1);
        assert_eq!(rx.try_recv().unwrap()["progress"], 2);
        assert!(rx.try_recv().is_err(), "another call's progress is not ours");
        // The call returned: its late progress is neither sent nor kept as early.
        drop(rx);
        p.deliver("1".into(), json!({"progress": 3}));
        assert_eq!(p.early.len(), 1);
        let (tx, _rx) = mpsc::unbounded_channel();
        p.register("3".into(), tx);
        assert!(!p.sinks.contains_key("1"), "a closed sink goes when the next call registers");
    }

    #[test]
    fn early_progress_is_bounded() {
        let mut p = Progress::default();
        for i in 0..MAX_EARLY + 10 {
            p.deliver(i.to_string(), json!(i));
        }
        assert_eq!(p.early.len(), MAX_EARLY);
        assert_eq!(p.early.front().unwrap().0, "10", "the oldest go first");
    }
}
