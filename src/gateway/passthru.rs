//! An upstream server's input requests, passed through to a MCP 2026-07-28 client (SEP-2322).
//! Such a client answers for itself: when an upstream tool answers input-required, the gateway
//! hands its `inputRequests` to the client unchanged (keys included) with a `requestState` of its
//! own that seals which server and tool asked and the upstream's state (verbatim, may be absent).
//! The client's retry brings the state back: it opens only intact, unexpired and for the same
//! wire tool name (else an invalid-params error, before anything runs), and the client's
//! `inputResponses` go to that upstream tool unchanged with the upstream's state.
//!
//! Both this and the gateway's own approval rounds (`rounds.rs`) hand out states; their seals
//! name different purposes (`upstream:` and `approval:` + wire name), so one never opens as the
//! other. A call that ran after the user approved it in a round carries that approval in its
//! state, spent once (the nonce), so the retry runs without asking the user again.
//!
//! `prompts/get` and `resources/read` pass through the same way (`open_request`,
//! `ask_request`): the seal's purpose is `upstream-prompt:` or `upstream-resource:` + the name
//! or URI the client asked for, and it holds the server and the upstream's own name, so a
//! state opens only for that very prompt or resource, on the server that asked.

use super::rounds::spend;
use super::shelf::Route;
use super::Gateway;
use crate::catalog::Retry;
use crate::service::InputAsked;
use crate::service::PassThrough;
use rmcp::model::{CallToolResponse, InputRequests, InputRequiredResult, InputResponses};
use rmcp::ErrorData;
use serde_json::{json, Map, Value};

fn purpose(tool: &str) -> String {
    format!("upstream:{tool}")
}

/// A retry's state, opened: for the upstream, and the approval it was run under.
pub struct Opened {
    pub pass: PassThrough,
    /// The digest of the call the user approved, when it ran after an approval round.
    pub approved: Option<String>,
}

/// The pass-through of one call of `tool` by a 2026-07-28 client with `capabilities`. `Ok(None)`:
/// the state is not a pass-through state (an approval round's, or none: see `rounds.rs`).
pub fn open(gw: &Gateway, tool: &str, capabilities: Value, state: Option<&str>, responses: Option<&InputResponses>) -> Result<Option<Opened>, ErrorData> {
    let responses = || responses.map(|r| r.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Map<String, Value>>());
    let Some(state) = state else {
        // Answers without a state (a client may send them): they go to whichever tool runs.
        let retry = responses().map(|responses| (None, Retry { responses, state: None }));
        return Ok(Some(Opened { pass: PassThrough { capabilities, retry }, approved: None }));
    };
    let sealer = gw.rounds.sealer()?;
    let value = match sealer.open(&purpose(tool), state) {
        Ok(v) => v,
        // Sealed for another purpose: maybe an approval round's, which `rounds` opens.
        Err(r) if r.0 == super::seal::OTHER_PURPOSE => return Ok(None),
        Err(r) => return Err(ErrorData::invalid_params(r.0, Some(json!({"tool": tool})))),
    };
    let text = |k: &str| value[k].as_str().map(str::to_owned);
    let (Some(server_id), Some(upstream_tool)) = (text("server"), text("tool")) else {
        return Err(ErrorData::invalid_params("the requestState is not a pass-through of this server", None));
    };
    let approved = match (text("approved"), text("nonce")) {
        (Some(digest), Some(nonce)) if spend(gw, &nonce) => Some(digest),
        (Some(_), _) => return Err(ErrorData::invalid_params("this requestState was used already; call the tool again", Some(json!({"tool": tool})))),
        (None, _) => None,
    };
    let retry = Retry { responses: responses().unwrap_or_default(), state: text("state") };
    Ok(Some(Opened { pass: PassThrough { capabilities, retry: Some((Some((server_id, upstream_tool)), retry)) }, approved }))
}

/// This round's result for the client: the upstream's requests, and a state that brings its
/// retry back to them. `approved`: the digest of the call the user approved this round.
pub fn ask(gw: &Gateway, tool: &str, asked: InputAsked, approved: Option<&str>) -> Result<CallToolResponse, ErrorData> {
    let sealer = gw.rounds.sealer()?;
    let mut sealed = json!({"server": asked.server_id, "tool": asked.tool});
    if let Some(state) = &asked.state {
        sealed["state"] = json!(state);
    }
    if let Some(digest) = approved {
        sealed["approved"] = json!(digest);
        sealed["nonce"] = json!(super::new_token().map_err(|e| ErrorData::internal_error(e, None))?);
    }
    let state = sealer.seal(&purpose(tool), sealed, gw.approval_timeout());
    let requests = input_requests(&asked.server_id, asked.requests)?;
    Ok(CallToolResponse::InputRequired(InputRequiredResult::new(requests, Some(state))))
}

/// An upstream's input requests as the client gets them (unchanged), none when empty.
fn input_requests(server_id: &str, requests: Vec<(String, Value)>) -> Result<Option<InputRequests>, ErrorData> {
    let requests: Map<String, Value> = requests.into_iter().collect();
    if requests.is_empty() {
        return Ok(None);
    }
    serde_json::from_value(Value::Object(requests))
        .map(Some)
        .map_err(|e| ErrorData::internal_error(format!("the MCP server {server_id} asked for input toolreg cannot pass on: {e}"), None))
}

/// The seal's purpose for a `prompts/get` (`kind` "prompt") or `resources/read` ("resource")
/// of `name`, as the client asked for it.
pub fn request_purpose(kind: &str, name: &str) -> String {
    format!("upstream-{kind}:{name}")
}

/// A 2026-07-28 client's retry of a prompt or resource `route` leads to: the answers and the
/// upstream's state, or `None` for a first request. A state that does not open for `purpose`
/// and `route` is refused (invalid params) before anything is sent.
pub fn open_request(gw: &Gateway, purpose: &str, route: &Route, state: Option<&str>, responses: Option<&InputResponses>) -> Result<Option<Retry>, ErrorData> {
    let responses = responses.map(|r| r.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Map<String, Value>>());
    let Some(state) = state else {
        return Ok(responses.map(|responses| Retry { responses, state: None }));
    };
    let sealer = gw.rounds.sealer()?;
    let value = sealer.open(purpose, state).map_err(|r| ErrorData::invalid_params(r.0, None))?;
    if value["server"] != route.server.as_str() || value["name"] != route.own.as_str() {
        return Err(ErrorData::invalid_params(super::seal::OTHER_PURPOSE, None));
    }
    Ok(Some(Retry { responses: responses.unwrap_or_default(), state: value["state"].as_str().map(str::to_owned) }))
}

/// The input-required result of a prompt or resource for the client: the upstream's requests
/// and a state sealed for `purpose` holding the route and the upstream's state.
pub fn ask_request(gw: &Gateway, purpose: &str, route: &Route, requests: Vec<(String, Value)>, state: Option<String>) -> Result<InputRequiredResult, ErrorData> {
    let sealer = gw.rounds.sealer()?;
    let mut sealed = json!({"server": route.server, "name": route.own});
    if let Some(state) = state {
        sealed["state"] = json!(state);
    }
    let state = sealer.seal(purpose, sealed, gw.approval_timeout());
    Ok(InputRequiredResult::new(input_requests(&route.server, requests)?, Some(state)))
}
