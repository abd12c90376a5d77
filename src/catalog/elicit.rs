//! Questions an MCP server asks while one of its tools runs: `elicitation/create` (ask the user
//! for input, in a form or at a URL), `sampling/createMessage` (ask the host's model) and
//! `roots/list` (the host's directories), as requests (2025-11-25) or as the input requests of
//! a multi round-trip call (2026-07-28, `mrtr.rs`). The
//! catalog owns the MCP sessions, so it receives them; the host owns the user and the model, so
//! they go to it through the `AskHost` port, which the server layer implements over reverse
//! requests. This module knows no rmcp and no JSON-RPC: `client.rs` converts.
//!
//! Invariants:
//! - A question is asked only when the host declared it can answer (`HostAsks`); otherwise an
//!   elicitation is declined and a sampling or roots request refused, without asking. We declare the
//!   matching MCP client capabilities only as far as the host declared them (`client.rs`).
//! - Every question is bounded: by `elicitation_timeout` (no answer in time: `cancel`, or an
//!   error for sampling), by the tool call it belongs to (cancelled call: the question is
//!   withdrawn), and by the server itself (`notifications/cancelled`). Withdrawing drops the
//!   host's future, which tells the host (`$/cancelRequest`).
//! - What the user answers is never logged: it may be a password or personal data.
//! - An accepted form answer gets the schema's `default`s for the fields it leaves out
//!   (SEP-1034: "clients SHOULD apply default values when users omit optional fields").
//! - No lock is held while the host is asked.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::lock;

/// What the host declared it answers (from `initialize`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostAsks {
    pub elicitation: bool,
    pub sampling: bool,
    /// The host answers `host/roots`: only then are servers offered the `roots` capability.
    pub roots: bool,
    /// The host renders MCP Apps views: only then do servers hear that the client does
    /// (extension `io.modelcontextprotocol/ui`), and may answer with views.
    pub views: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitMode {
    /// Ask for the fields of `requestedSchema`.
    Form,
    /// Send the user to `url` (credentials, payments: nothing passes through the client).
    Url,
}

/// An `elicitation/create` of an MCP server, as the host gets it (`host/elicit`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// The MCP server that asks.
    pub server_id: String,
    /// The toolreg call (the model's `callId`) the question belongs to; absent when it cannot be
    /// known (see protocol/README.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool of that call, as the server names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub mode: ElicitMode,
    /// What the server says it needs, for the user.
    pub message: String,
    /// Form mode: a flat JSON Schema object of primitive properties (with `default`s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// URL mode: where to send the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: the server's id for this elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted (form: with `content`) or consented (URL mode).
    Accept,
    /// The user explicitly refused.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

/// The host's answer to `host/elicit`, and what goes back to the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ElicitResult {
    pub action: ElicitAction,
    /// Form mode, `accept` only: the values, keyed by property name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    pub fn action(action: ElicitAction) -> Self {
        ElicitResult { action, content: None }
    }
}

/// A `sampling/createMessage` of an MCP server, as the host gets it (`host/sample`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SampleParams {
    pub server_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The MCP `CreateMessageRequestParams` as the server sent them.
    pub request: Value,
}

/// A server's `roots/list`, as the host gets it (`host/roots`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RootsParams {
    pub server_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// A directory or file the host lets MCP servers work in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The host's answer to `host/roots`, and what goes back to the server (`ListRootsResult`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RootsResult {
    pub roots: Vec<Root>,
}

/// The port to the host. Futures are `'static`: they run in the MCP session's tasks. Dropping
/// one withdraws the question.
pub trait AskHost: Send + Sync {
    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, String>>;
    /// The MCP `CreateMessageResult`, as the host gave it.
    fn sample(&self, params: SampleParams) -> BoxFuture<'static, Result<Value, String>>;
    /// The host's roots. Asked only of a host that declared `HostAsks::roots`.
    fn roots(&self, _params: RootsParams) -> BoxFuture<'static, Result<RootsResult, String>> {
        Box::pin(async { Err("the host does not list roots".into()) })
    }
    /// A server's log message (MCP `notifications/message` params, verbatim) sent during the
    /// call `call_id`, for the client that made it. Hosts that show none drop it.
    fn log(&self, _call_id: &str, _message: Value) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// A host that answers nothing (the catalog built without one: tests, benches).
pub struct NoHost;

impl AskHost for NoHost {
    fn elicit(&self, _: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, String>> {
        Box::pin(async { Ok(ElicitResult::action(ElicitAction::Decline)) })
    }
    fn sample(&self, _: SampleParams) -> BoxFuture<'static, Result<Value, String>> {
        Box::pin(async { Err("no host to ask".into()) })
    }
}

/// The host link a session carries: the port, what it answers, how long to wait.
#[derive(Clone)]
pub(crate) struct Asker {
    pub host: std::sync::Arc<dyn AskHost>,
    pub asks: HostAsks,
    pub timeout: Duration,
}

/// The tool call a question belongs to.
#[derive(Clone, Debug)]
pub(crate) struct CallOrigin {
    pub call_id: Option<String>,
    pub tool: String,
    pub cancel: CancellationToken,
    /// Where a stdio session's reader hands this call's log messages, in the order read, so
    /// the call forwards them before its own result (`stdio::DirectCalls::on_notice`).
    pub logs: Option<tokio::sync::mpsc::UnboundedSender<Value>>,
}

impl ElicitParams {
    /// An `elicitation/create`'s params as the server sent them (JSON), for the host.
    pub(crate) fn from_request(server_id: &str, origin: Option<&CallOrigin>, v: &Value) -> Self {
        let text = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        let mode = if v.get("mode").and_then(Value::as_str) == Some("url") { ElicitMode::Url } else { ElicitMode::Form };
        ElicitParams {
            server_id: server_id.to_owned(),
            call_id: origin.and_then(|o| o.call_id.clone()),
            tool: origin.map(|o| o.tool.clone()),
            mode,
            message: text("message").unwrap_or_default(),
            requested_schema: v.get("requestedSchema").cloned(),
            url: text("url"),
            elicitation_id: text("elicitationId"),
        }
    }
}

impl SampleParams {
    pub(crate) fn from_request(server_id: &str, origin: Option<&CallOrigin>, request: Value) -> Self {
        SampleParams { server_id: server_id.to_owned(), call_id: origin.and_then(|o| o.call_id.clone()), tool: origin.map(|o| o.tool.clone()), request }
    }
}

impl RootsParams {
    pub(crate) fn new(server_id: &str, origin: Option<&CallOrigin>) -> Self {
        RootsParams { server_id: server_id.to_owned(), call_id: origin.and_then(|o| o.call_id.clone()), tool: origin.map(|o| o.tool.clone()) }
    }
}

/// The `tools/call`s in flight on one session, so a question can name its call. A call is
/// entered before its request is sent (its MCP request id is not known yet: a fast server can
/// ask before we learn it), and given its id once sent.
#[derive(Default)]
pub(crate) struct InFlight {
    next: u64,
    calls: HashMap<u64, (Option<String>, CallOrigin)>,
}

impl InFlight {
    pub fn enter(&mut self, origin: CallOrigin) -> u64 {
        self.next += 1;
        self.calls.insert(self.next, (None, origin));
        self.next
    }

    pub fn sent(&mut self, slot: u64, request_id: String) {
        if let Some(c) = self.calls.get_mut(&slot) {
            c.0 = Some(request_id);
        }
    }

    pub fn leave(&mut self, slot: u64) {
        self.calls.remove(&slot);
    }

    /// The call a question belongs to. `via`: the MCP request whose response stream carried the
    /// question (Streamable HTTP knows it; stdio does not). Without it, or when it names no
    /// call we know, only a sole call in flight (or a sole one not yet sent) can be meant.
    pub fn find(&self, via: Option<&str>) -> Option<CallOrigin> {
        if let Some(id) = via {
            if let Some((_, c)) = self.calls.values().find(|(rid, _)| rid.as_deref() == Some(id)) {
                return Some(c.clone());
            }
            let unsent: Vec<_> = self.calls.values().filter(|(rid, _)| rid.is_none()).collect();
            return (unsent.len() == 1).then(|| unsent[0].1.clone());
        }
        (self.calls.len() == 1).then(|| self.calls.values().next().map(|(_, c)| c.clone())).flatten()
    }
}

/// Leaves the in-flight set however the call ends.
pub(crate) struct InFlightGuard<'a>(pub &'a Mutex<InFlight>, pub u64);

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        lock(self.0).leave(self.1);
    }
}

/// Why a question got no answer from the host.
pub(crate) enum Unanswered {
    /// The host cannot answer this kind of question.
    NotSupported,
    TimedOut(Duration),
    /// The tool call or the server's request was cancelled.
    Cancelled,
    /// The host's request failed.
    Failed(String),
}

impl Asker {
    /// Forwards an elicitation and applies the schema's defaults to an accepted answer. An
    /// unanswered question becomes `decline` (no capability) or `cancel` (timeout,
    /// cancellation); only a failed host request is an error.
    pub async fn elicit(&self, params: ElicitParams, origin: Option<&CallOrigin>, upstream: &CancellationToken) -> Result<ElicitResult, String> {
        if !self.asks.elicitation {
            return Ok(ElicitResult::action(ElicitAction::Decline));
        }
        let schema = params.requested_schema.clone();
        let (server, mode) = (params.server_id.clone(), params.mode);
        let asked = self.wait(self.host.elicit(params), origin, upstream).await;
        match asked {
            Ok(mut answer) => {
                // Content belongs to an accepted form only (a URL-mode answer is consent).
                if answer.action != ElicitAction::Accept || mode == ElicitMode::Url {
                    answer.content = None;
                } else {
                    apply_defaults(schema.as_ref(), &mut answer);
                }
                // The action only: the content is the user's.
                tracing::debug!(server = %server, action = ?answer.action, "elicitation answered");
                Ok(answer)
            }
            Err(Unanswered::TimedOut(t)) => {
                tracing::info!(server = %server, "elicitation unanswered after {} ms: cancel", t.as_millis());
                Ok(ElicitResult::action(ElicitAction::Cancel))
            }
            Err(Unanswered::Cancelled) | Err(Unanswered::NotSupported) => Ok(ElicitResult::action(ElicitAction::Cancel)),
            Err(Unanswered::Failed(e)) => Err(format!("the host could not ask the user: {e}")),
        }
    }

    /// Forwards a sampling request; the host's `CreateMessageResult` or why there is none.
    pub async fn sample(&self, params: SampleParams, origin: Option<&CallOrigin>, upstream: &CancellationToken) -> Result<Value, Unanswered> {
        if !self.asks.sampling {
            return Err(Unanswered::NotSupported);
        }
        self.wait(self.host.sample(params), origin, upstream).await
    }

    /// Asks the host for its roots; none without the capability.
    pub async fn roots(&self, params: RootsParams, origin: Option<&CallOrigin>, upstream: &CancellationToken) -> Result<RootsResult, Unanswered> {
        if !self.asks.roots {
            return Err(Unanswered::NotSupported);
        }
        self.wait(self.host.roots(params), origin, upstream).await
    }

    async fn wait<T>(&self, asked: BoxFuture<'static, Result<T, String>>, origin: Option<&CallOrigin>, upstream: &CancellationToken) -> Result<T, Unanswered> {
        let call_cancelled = async {
            match origin {
                Some(o) => o.cancel.cancelled().await,
                None => std::future::pending().await,
            }
        };
        // Dropping `asked` on any other branch withdraws the host's request.
        tokio::select! {
            r = tokio::time::timeout(self.timeout, asked) => match r {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(Unanswered::Failed(e)),
                Err(_) => Err(Unanswered::TimedOut(self.timeout)),
            },
            _ = call_cancelled => Err(Unanswered::Cancelled),
            _ = upstream.cancelled() => Err(Unanswered::Cancelled),
        }
    }
}

/// SEP-1034: each top-level property with a `default` that the answer leaves out gets it. An
/// accept without content is an accept of every default.
pub fn apply_defaults(schema: Option<&Value>, answer: &mut ElicitResult) {
    let Some(props) = schema.and_then(|s| s.get("properties")).and_then(Value::as_object) else { return };
    for (name, prop) in props {
        if let Some(d) = prop.get("default") {
            answer.content.get_or_insert_with(Map::new).entry(name.clone()).or_insert_with(|| d.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_only_what_the_answer_leaves_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "nick": {"type": "string"}
        }});
        let mut a = ElicitResult { action: ElicitAction::Accept, content: Some(json!({"age": 41}).as_object().cloned().unwrap()) };
        apply_defaults(Some(&schema), &mut a);
        assert_eq!(Value::Object(a.content.unwrap()), json!({"age": 41, "name": "John Doe"}));
        let mut empty = ElicitResult::action(ElicitAction::Accept);
        apply_defaults(Some(&schema), &mut empty);
        assert_eq!(Value::Object(empty.content.unwrap()), json!({"name": "John Doe", "age": 30}));
        let mut none = ElicitResult::action(ElicitAction::Accept);
        apply_defaults(Some(&json!({"type": "object", "properties": {"x": {"type": "string"}}})), &mut none);
        assert_eq!(none.content, None);
    }

    fn origin(call: &str) -> CallOrigin {
        CallOrigin { call_id: Some(call.into()), tool: "t".into(), cancel: CancellationToken::new(), logs: None }
    }

    #[test]
    fn a_question_names_its_call_when_it_can_be_known() {
        let mut f = InFlight::default();
        assert!(f.find(None).is_none());
        let a = f.enter(origin("a"));
        // One call, sent or not: it is the one.
        assert_eq!(f.find(None).unwrap().call_id.as_deref(), Some("a"));
        assert_eq!(f.find(Some("7")).unwrap().call_id.as_deref(), Some("a"));
        f.sent(a, "7".into());
        let b = f.enter(origin("b"));
        // Two calls: only the stream it came on tells (HTTP); stdio cannot.
        assert!(f.find(None).is_none());
        assert_eq!(f.find(Some("7")).unwrap().call_id.as_deref(), Some("a"));
        assert_eq!(f.find(Some("8")).unwrap().call_id.as_deref(), Some("b"));
        f.sent(b, "8".into());
        assert_eq!(f.find(Some("8")).unwrap().call_id.as_deref(), Some("b"));
        assert!(f.find(Some("9")).is_none());
        f.leave(a);
        assert_eq!(f.find(None).unwrap().call_id.as_deref(), Some("b"));
    }
}
