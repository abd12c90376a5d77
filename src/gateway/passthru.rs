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

use super::rounds::spend;
use super::Gateway;
use crate::catalog::Retry;
use crate::invoke::InputAsked;
use crate::upstream::PassThrough;
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
    let sealer = gw.sealer.as_ref().map_err(|e| ErrorData::internal_error(e.clone(), None))?;
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
    let sealer = gw.sealer.as_ref().map_err(|e| ErrorData::internal_error(e.clone(), None))?;
    let mut sealed = json!({"server": asked.server_id, "tool": asked.tool});
    if let Some(state) = &asked.state {
        sealed["state"] = json!(state);
    }
    if let Some(digest) = approved {
        sealed["approved"] = json!(digest);
        sealed["nonce"] = json!(super::new_token().map_err(|e| ErrorData::internal_error(e, None))?);
    }
    let state = sealer.seal(&purpose(tool), sealed, gw.approval_timeout());
    let requests: Map<String, Value> = asked.requests.into_iter().collect();
    let requests: Option<InputRequests> = if requests.is_empty() {
        None
    } else {
        Some(serde_json::from_value(Value::Object(requests)).map_err(|e| {
            ErrorData::internal_error(format!("the MCP server {} asked for input toolreg cannot pass on: {e}", asked.server_id), None)
        })?)
    };
    Ok(CallToolResponse::InputRequired(InputRequiredResult::new(requests, Some(state))))
}
