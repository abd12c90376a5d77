//! An upstream server's authorization page put before the person behind an MCP 2026-07-28
//! client, which may not be sent requests (`auth_host.rs` parks the page of every running
//! flow). A call of a tool of a server whose flow waits, directly or through `tool_invoke`,
//! ends with an input-required result (SEP-2322) carrying a URL-mode elicitation under the key
//! `authorize` and a sealed `requestState` naming the server, with a one-time nonce. The person
//! opens the page and finishes; the client calls again with its answer and the state, and the
//! gateway waits (at most `READY_WAIT`) for the server to be authorized and listed, then runs
//! the call.
//!
//! Invariants:
//! - The state holds the server id and a nonce, never the page's URL (sealing is not
//!   encryption, and the URL carries the flow's state); the URL is never logged.
//! - A state runs at most one wait (the nonce is spent); one that is altered, expired or made
//!   for another tool is an invalid-params error. The seal's purpose (`authorize:` + the name
//!   the client called) differs from every other round's, so no state opens as another kind.
//! - Fail closed: whatever did not authorize the server (declined, the flow failed, the wait
//!   ran out) is a refusal naming `toolreg auth`, and nothing runs.

use super::auth_host::{self, terminal_hint};
use super::rounds::{open_ours, spend};
use super::{Gateway, Lens};
use crate::catalog::ServerState;
use crate::service::TOOL_INVOKE;
use crate::service::Source;
use rmcp::model::{CallToolResponse, InputRequest, InputRequests, InputRequiredResult, InputResponses, JsonObject};
use rmcp::ErrorData;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The key of the page among a round's input requests.
pub const AUTHORIZE_KEY: &str = "authorize";

/// How long a retry waits for the server to be authorized and listed once the person says they
/// finished: the token request and a first listing, with room for a slow server.
const READY_WAIT: Duration = Duration::from_secs(30);

fn purpose(tool: &str) -> String {
    format!("authorize:{tool}")
}

/// What a retry's state says about the authorization of the called tool's server.
pub enum Authorized {
    /// No state, or one of another kind.
    NotOurs,
    /// An authorization state but no answer: the page is offered again.
    AskAgain,
    /// The server is authorized and listed: the call runs.
    Ready,
    /// Not authorized: the text says why, and what to run.
    Refused(String),
}

/// The server a call reaches: the called tool's, or for `tool_invoke` that of the tool it
/// names; by the registry, else by the wire name (a server that never listed).
pub fn target(gw: &Gateway, lens: &Lens, called: &str, arguments: Option<&JsonObject>) -> Option<String> {
    let listing = lens.listing();
    let mut name = listing.aliases.get(called).map_or(called, String::as_str);
    if name == TOOL_INVOKE {
        name = arguments?.get("name")?.as_str()?;
    }
    match lens.service.registry().get(name).map(|r| &r.entry.source) {
        Some(Source::Mcp { server_id, .. }) => Some(server_id.clone()),
        Some(_) => None,
        // A server outside the lens is no business of its clients.
        None => auth_host::server_by_name(&gw.catalog, name).filter(|s| lens.has_server(s)),
    }
}

/// This round's result when `server_id`'s flow waits on a page: the page as a URL request, and
/// the state the retry must echo. None when no page waits.
pub fn ask(gw: &Gateway, called: &str, server_id: &str) -> Result<Option<CallToolResponse>, ErrorData> {
    let Some(page) = gw.clients.auth_pages.current(&gw.catalog, server_id) else { return Ok(None) };
    let sealer = gw.rounds.sealer()?;
    let nonce = super::new_token().map_err(|e| ErrorData::internal_error(e, None))?;
    let state = sealer.seal(&purpose(called), json!({"server": server_id, "nonce": nonce}), gw.approval_timeout());
    let params = json!({"mode": "url", "elicitationId": page.elicitation_id, "url": page.url, "message": auth_host::message(&page.reason)});
    let question: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": params}))
        .map_err(|e| ErrorData::internal_error(format!("authorization request: {e}"), None))?;
    gw.clients.auth_pages.taken(server_id);
    tracing::info!(server = %server_id, "the authorization page goes to a 2026-07-28 client as a URL request");
    let requests: InputRequests = [(AUTHORIZE_KEY.to_owned(), question)].into_iter().collect();
    Ok(Some(CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))))
}

/// The answer a retry of `called` brings, checked; when the person finished, waits for the
/// server to be ready.
pub async fn answered(gw: &Arc<Gateway>, called: &str, state: Option<&str>, responses: Option<&InputResponses>) -> Result<Authorized, ErrorData> {
    let Some(state) = state else { return Ok(Authorized::NotOurs) };
    let Some(value) = open_ours(gw, &purpose(called), called, state)? else { return Ok(Authorized::NotOurs) };
    let (Some(server_id), Some(nonce)) = (value["server"].as_str(), value["nonce"].as_str()) else {
        return Err(ErrorData::invalid_params("the requestState is not an authorization of this server", None));
    };
    let Some(answer) = responses.and_then(|r| r.get(AUTHORIZE_KEY)) else { return Ok(Authorized::AskAgain) };
    if !spend(gw, nonce) {
        return Err(ErrorData::invalid_params("this requestState was used already; call the tool again", Some(json!({"tool": called}))));
    }
    let hint = terminal_hint(&auth_host::config_path(&gw.config()), server_id);
    if answer["action"] != "accept" {
        return Ok(Authorized::Refused(format!("MCP server {server_id} is not authorized: the user did not open its authorization page; {hint}")));
    }
    Ok(wait_ready(gw, server_id, &hint).await)
}

/// Until the server is authorized and listed (then the listing has its tools), its flow ended
/// without authorizing it, or `READY_WAIT` ran out.
async fn wait_ready(gw: &Arc<Gateway>, server_id: &str, hint: &str) -> Authorized {
    let start = Instant::now();
    loop {
        let status = match gw.catalog.server_status(server_id) {
            Ok(s) => s,
            Err(e) => return Authorized::Refused(format!("MCP server {server_id}: {e}")),
        };
        if status.state == ServerState::Ready && status.cached && !gw.catalog.authorizing(server_id) {
            gw.relist().await;
            return Authorized::Ready;
        }
        if let Some(why) = gw.catalog.auth_blocked(server_id) {
            return Authorized::Refused(format!("{why}; {hint}"));
        }
        if start.elapsed() >= READY_WAIT {
            return Authorized::Refused(format!(
                "MCP server {server_id} is not authorized: the authorization did not finish within {} s; {hint}",
                READY_WAIT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
