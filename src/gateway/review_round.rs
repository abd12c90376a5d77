//! A held tool (`review.rs`) put before the person behind an MCP 2026-07-28 client, which may
//! not be sent requests: the call ends with an input-required result (SEP-2322) carrying the
//! review form under the key `review` and a sealed `requestState` naming the server, the tool
//! and the fingerprint the form shows, with a one-time nonce. The client asks its user and
//! calls again with the answer and the state.
//!
//! Invariants:
//! - The approval binds to the fingerprint in the state, the one the person was shown: if the
//!   tool changed since, nothing is approved and nothing runs (`review::approve`).
//! - A state runs at most one approval (the nonce is spent, as for approval rounds); one that is
//!   altered, expired or made for another tool is an invalid-params error, nothing approved.
//! - The seal's purpose (`review:` + the tool name as the client called it) differs from those
//!   of approval rounds and pass-throughs, so no state opens as another kind.

use super::review::{self, Review};
use super::rounds::{open_ours, spend};
use super::Gateway;
use rmcp::model::{CallToolResponse, InputRequest, InputRequests, InputRequiredResult, InputResponses};
use rmcp::ErrorData;
use serde_json::json;

/// The key of the review question among a round's input requests.
pub const REVIEW_KEY: &str = "review";

fn purpose(tool: &str) -> String {
    format!("review:{tool}")
}

/// What a retry's state says about the review of `called` (the name the client called).
pub enum Reviewed {
    /// No state, or one of another kind (an approval round's, a pass-through's).
    NotOurs,
    /// A review state but no answer: the question is asked again.
    AskAgain,
    /// The person answered: approved for good, or refused with why.
    Answered(Review),
}

/// This round's result: the review form of the held `tool` of `server_id`, or the verdict
/// when there is nothing to ask (approved meanwhile, gone).
pub fn ask(gw: &Gateway, called: &str, server_id: &str, tool: &str) -> Result<Result<CallToolResponse, Review>, ErrorData> {
    let held = match review::held(gw, server_id, tool) {
        Ok(held) => held,
        Err(verdict) => return Ok(Err(verdict)),
    };
    let sealer = gw.rounds.sealer()?;
    let nonce = super::new_token().map_err(|e| ErrorData::internal_error(e, None))?;
    let sealed = json!({"server": server_id, "tool": tool, "fingerprint": held.pin.fingerprint, "nonce": nonce});
    let state = sealer.seal(&purpose(called), sealed, gw.approval_timeout());
    let question: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": review::form(&held.about, &held.pin.name)}))
        .map_err(|e| ErrorData::internal_error(format!("review form: {e}"), None))?;
    let requests: InputRequests = [(REVIEW_KEY.to_owned(), question)].into_iter().collect();
    Ok(Ok(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))))
}

/// The review answer a retry of `called` brings, checked and acted on.
pub fn answered(gw: &Gateway, called: &str, state: Option<&str>, responses: Option<&InputResponses>) -> Result<Reviewed, ErrorData> {
    let Some(state) = state else { return Ok(Reviewed::NotOurs) };
    let Some(value) = open_ours(gw, &purpose(called), called, state)? else { return Ok(Reviewed::NotOurs) };
    let text = |k: &str| value[k].as_str().map(str::to_owned);
    let (Some(server_id), Some(tool), Some(fingerprint), Some(nonce)) = (text("server"), text("tool"), text("fingerprint"), text("nonce")) else {
        return Err(ErrorData::invalid_params("the requestState is not a review of this server", None));
    };
    let Some(answer) = responses.and_then(|r| r.get(REVIEW_KEY)) else { return Ok(Reviewed::AskAgain) };
    if !spend(gw, &nonce) {
        return Err(ErrorData::invalid_params("this requestState was used already; call the tool again", Some(json!({"tool": called}))));
    }
    let answer = serde_json::to_value(answer).unwrap_or_default();
    let approves = answer["action"] == "accept" && answer["content"]["approve"] == true;
    Ok(Reviewed::Answered(match review::held(gw, &server_id, &tool) {
        // Approved meanwhile (`toolreg pins`), or gone: nothing left to decide.
        Err(verdict) => verdict,
        Ok(held) if approves => review::approve(gw, &server_id, &tool, &fingerprint, &held),
        Ok(held) => review::declined(gw, &server_id, &tool, &held, "the user did not approve it"),
    }))
}
