//! Approval of a gated call for MCP 2026-07-28 clients, by multi round-trip request (SEP-2322).
//! Such a client may not be sent requests, so the first `tools/call` ends with an input-required
//! result: the approval form under the key `approval` and a sealed `requestState` naming the
//! call (a digest of the tool and its arguments) and a one-time nonce. The client asks its user
//! and calls again with the answer and the state; the call runs only if the state is intact,
//! unexpired, unused, made for this tool, and the answer approves this very call. Anything else
//! asks again or refuses, never runs.

use super::client_host::{call_digest, decision_of, ApprovalRound, ClientHost};
use super::{lock, Gateway};
use crate::service::ApprovalRequest;
use rmcp::model::{CallToolResponse, InputRequest, InputRequests, InputRequiredResult, InputResponses};
use rmcp::ErrorData;
use serde_json::json;
use std::time::{Duration, Instant};

/// The key of the approval question among a round's input requests.
pub const APPROVAL_KEY: &str = "approval";

fn purpose(tool: &str) -> String {
    format!("approval:{tool}")
}

/// The answer a retry of `tool` brings, checked: a state that is not ours, altered, expired or
/// already used is an invalid-params error (nothing runs); no state is a first round.
pub fn answered(gw: &Gateway, tool: &str, state: Option<&str>, responses: Option<&InputResponses>) -> Result<ApprovalRound, ErrorData> {
    let Some(state) = state else { return Ok(ApprovalRound::default()) };
    let sealer = gw.rounds.sealer()?;
    let value = sealer.open(&purpose(tool), state).map_err(|r| ErrorData::invalid_params(r.0, Some(json!({"tool": tool}))))?;
    let (Some(digest), Some(nonce)) = (value["digest"].as_str(), value["nonce"].as_str()) else {
        return Err(ErrorData::invalid_params("the requestState is not an approval of this server", None));
    };
    let Some(answer) = responses.and_then(|r| r.get(APPROVAL_KEY)) else {
        // Nothing answered: ask again (a new state), the old one stays unused.
        return Ok(ApprovalRound::default());
    };
    if !spend(gw, nonce) {
        return Err(ErrorData::invalid_params("this requestState was used already; call the tool again", Some(json!({"tool": tool}))));
    }
    Ok(ApprovalRound { answered: Some((digest.to_owned(), decision_of(answer, false))), ..ApprovalRound::default() })
}

/// The value a retry's `state` holds for `purpose` (a round of `called`): None for a state of
/// another kind (another round's, a pass-through's), an invalid-params error for one that is
/// altered or expired.
pub(super) fn open_ours(gw: &Gateway, purpose: &str, called: &str, state: &str) -> Result<Option<serde_json::Value>, ErrorData> {
    let sealer = gw.rounds.sealer()?;
    match sealer.open(purpose, state) {
        Ok(v) => Ok(Some(v)),
        Err(r) if r.0 == super::seal::OTHER_PURPOSE => Ok(None),
        Err(r) => Err(ErrorData::invalid_params(r.0, Some(json!({"tool": called})))),
    }
}

/// Marks a nonce used; false if it was. Entries go when their state could no longer open.
pub(super) fn spend(gw: &Gateway, nonce: &str) -> bool {
    let now = Instant::now();
    let keep = gw.approval_timeout();
    let mut spent = lock(&gw.rounds.spent_states);
    spent.retain(|_, at| now.duration_since(*at) <= keep);
    spent.insert(nonce.to_owned(), now).is_none()
}

/// This round's result: the approval form for `asked`, and the state the retry must echo.
pub fn ask(gw: &Gateway, host: &ClientHost, tool: &str, asked: &ApprovalRequest, ttl: Duration) -> Result<CallToolResponse, ErrorData> {
    let sealer = gw.rounds.sealer()?;
    let nonce = super::new_token().map_err(|e| ErrorData::internal_error(e, None))?;
    let digest = call_digest(&asked.name, &asked.arguments);
    let state = sealer.seal(&purpose(tool), json!({"digest": digest, "nonce": nonce}), ttl);
    let form = host.approval_form_for(asked);
    let question: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": form}))
        .map_err(|e| ErrorData::internal_error(format!("approval form: {e}"), None))?;
    let requests: InputRequests = [(APPROVAL_KEY.to_owned(), question)].into_iter().collect();
    Ok(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(state))))
}
