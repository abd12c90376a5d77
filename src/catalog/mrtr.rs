//! Multi round-trip requests (MCP 2026-07-28, SEP-2322): a server that needs input before a
//! `tools/call` (or a `prompts/get`, a `resources/read`: `resources.rs`) can finish answers with an input-required result (`resultType:
//! "input_required"`, `inputRequests`: key → `elicitation/create` | `sampling/createMessage` |
//! `roots/list`, and an opaque `requestState`). We fulfil each request through the host (the
//! same `Asker` that serves 2025-11-25 servers' questions) and send the call again, with a new
//! request id, `inputResponses` and the state. Both call paths of `client/call_paths.rs` run their rounds
//! here; they only send a round and hand back its `result` as JSON. No rmcp, no JSON-RPC.
//!
//! Invariants:
//! - `requestState` goes back as the server sent it, the same string (never parsed); a server
//!   that sent none gets none, and a new call starts without either.
//! - At most `max_rounds` requests per call (rmcp's `DEFAULT_MRTR_MAX_ROUNDS`, 10), all within
//!   the call's one timeout (`call::Deadline`), asking included; a cancelled call stops between
//!   rounds and withdraws the questions it is asking.
//! - Every question names its call (`CallOrigin`), as a 2025-11-25 server's do.
//! - A request kind we do not know, or one the host cannot answer (sampling or roots without the
//!   host capability), fails the call readably: there is no per-request error to send back.
//! - A result without `resultType` (or `complete`) is the call's result.
//! - Under `Inputs::PassThrough` (the gateway's 2026-07-28 client answers for itself) a call is
//!   one round: the caller's answers and the server's state go out as the caller sent them, the
//!   server's input requests come back unchanged (keys included), nothing is asked here.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::call::{Deadline, METHOD};
use super::error::CatalogError;
use super::elicit::{Asker, CallOrigin, ElicitParams, RootsParams, SampleParams, Unanswered};

/// What a retry adds to the call's params.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retry {
    /// `inputResponses`: key → the result of the request of that key.
    pub responses: Map<String, Value>,
    /// `requestState`, echoed.
    pub state: Option<String>,
}

/// What a call does with the server's input requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Inputs {
    /// Asks the host, and sends the call again until it completes.
    #[default]
    Fulfil,
    /// Hands them back to whoever made the call: one round, sent with `retry` (the caller's
    /// `inputResponses` and the server's `requestState`, both verbatim) and the caller's
    /// `clientCapabilities` (JSON), so the server asks only for what the caller can do.
    PassThrough { capabilities: Value, retry: Option<Retry> },
}

/// One round's `result`, read.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Complete(Value),
    InputRequired { requests: Vec<(String, Value)>, state: Option<String> },
    /// The server made a task of the call (`resultType: "task"`, the tasks extension): the
    /// `CreateTaskResult` as it came. Only a caller that declared the extension gets one.
    Task(Value),
}

/// Reads a `tools/call` result: input-required or the call's result.
pub(crate) fn read(value: Value) -> Result<Answer, CatalogError> {
    read_for(METHOD, value)
}

/// Reads a result of `method`: input-required or the request's result.
pub(crate) fn read_for(method: &str, mut value: Value) -> Result<Answer, CatalogError> {
    let Some(map) = value.as_object_mut() else { return Ok(Answer::Complete(value)) };
    // Tasks are made of tool calls only (SEP-2663).
    if method == METHOD && map.get("resultType").and_then(Value::as_str) == Some("task") {
        return Ok(Answer::Task(value));
    }
    if map.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return Ok(Answer::Complete(value));
    }
    let bad = |why: &str| CatalogError::Mcp(format!("{method}: the server's input-required result {why}"));
    let requests = match map.remove("inputRequests") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(requests)) => requests.into_iter().collect(),
        Some(_) => return Err(bad("has inputRequests that are not an object")),
    };
    let state = match map.remove("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(bad("has a requestState that is not a string")),
    };
    if requests.is_empty() && state.is_none() {
        return Err(bad("asks for nothing (neither inputRequests nor requestState)"));
    }
    Ok(Answer::InputRequired { requests, state })
}

/// One call's rounds: whom to ask, for which call, until when.
pub(crate) struct Rounds<'a> {
    pub asker: &'a Asker,
    pub server_id: &'a str,
    pub origin: &'a CallOrigin,
    pub deadline: &'a Deadline,
    pub max_rounds: usize,
    /// The request's method, for errors.
    pub method: &'static str,
}

impl Rounds<'_> {
    /// Sends the call (`send(None)`), then a retry per input-required answer, until a result.
    /// `send` returns the round's `result` as JSON.
    pub async fn drive<F, Fut>(&self, mut send: F) -> Result<Value, CatalogError>
    where
        F: FnMut(Option<Retry>) -> Fut,
        Fut: std::future::Future<Output = Result<Value, CatalogError>>,
    {
        let mut retry = None;
        let mut state_only = 0u32;
        for round in 1..=self.max_rounds {
            let (requests, state) = match read_for(self.method, send(retry.take()).await?)? {
                Answer::Complete(v) => return Ok(v),
                // No question for a retry that will not be sent.
                Answer::InputRequired { .. } if round == self.max_rounds => break,
                Answer::InputRequired { requests, state } => (requests, state),
                // Followed to its end by the caller (`client/follow.rs`).
                Answer::Task(v) => return Ok(v),
            };
            let responses = if requests.is_empty() {
                // Only state: the server is working; wait a little as rmcp does (50..250 ms).
                let pause = Duration::from_millis((50u64 << state_only.min(3)).min(250));
                state_only += 1;
                self.bounded(async {
                    tokio::time::sleep(pause).await;
                    Ok(Map::new())
                })
                .await?
            } else {
                state_only = 0;
                self.bounded(self.fulfil_all(requests)).await?
            };
            retry = Some(Retry { responses, state });
        }
        Err(CatalogError::Mcp(format!("{}: the server still asked for input after {} rounds", self.method, self.max_rounds)))
    }

    /// `work` within the call's deadline, stopped by its cancellation.
    async fn bounded<T>(&self, work: impl std::future::Future<Output = Result<T, CatalogError>>) -> Result<T, CatalogError> {
        tokio::select! {
            biased;
            _ = self.origin.cancel.cancelled() => Err(CatalogError::Cancelled),
            _ = self.deadline.passed() => Err(CatalogError::timed_out(self.method, self.deadline.timeout())),
            r = work => r,
        }
    }

    /// Asks the host everything at once: the user and the model may answer in any order.
    pub(crate) async fn fulfil_all(&self, requests: Vec<(String, Value)>) -> Result<Map<String, Value>, CatalogError> {
        let asks = requests.into_iter().map(|(key, request)| async move { self.fulfil(&request).await.map(|v| (key, v)) });
        Ok(futures::future::try_join_all(asks).await?.into_iter().collect())
    }

    /// One input request's result, from the host.
    async fn fulfil(&self, request: &Value) -> Result<Value, CatalogError> {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("(no method)");
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        let origin = Some(self.origin);
        let cancel = &self.origin.cancel;
        let failed = |why: String| CatalogError::Mcp(format!("{}: the server asked for input by {method}; {why}", self.method));
        match method {
            "elicitation/create" => {
                let asked = ElicitParams::from_request(self.server_id, origin, &params);
                let answer = self.asker.elicit(asked, origin, cancel).await.map_err(failed)?;
                Ok(serde_json::to_value(answer).unwrap_or(Value::Null))
            }
            "sampling/createMessage" => {
                let asked = SampleParams::from_request(self.server_id, origin, params);
                self.asker.sample(asked, origin, cancel).await.map_err(|u| self.unanswered(u, "sampling", failed))
            }
            "roots/list" => {
                let asked = RootsParams::new(self.server_id, origin);
                let roots = self.asker.roots(asked, origin, cancel).await.map_err(|u| self.unanswered(u, "roots", failed))?;
                Ok(serde_json::to_value(roots).unwrap_or(Value::Null))
            }
            _ => Err(failed("toolreg cannot answer that kind of request".into())),
        }
    }

    fn unanswered(&self, u: Unanswered, capability: &str, failed: impl Fn(String) -> CatalogError) -> CatalogError {
        match u {
            Unanswered::NotSupported => failed(format!("the host does not answer those (it did not declare capabilities.{capability})")),
            Unanswered::TimedOut(t) => failed(format!("the host did not answer within {} ms", t.as_millis())),
            Unanswered::Cancelled => CatalogError::Cancelled,
            Unanswered::Failed(e) => failed(format!("the host could not answer: {e}")),
        }
    }
}

#[cfg(test)]
#[path = "mrtr_tests.rs"]
mod tests;
