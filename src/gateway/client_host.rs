//! The invoke path's `HostPort` and the catalog's `AskHost`, over an MCP client: approval is an
//! `elicitation/create` form (approve once, for the session, always, or deny), progress is `notifications/progress` under the
//! client's token, and an upstream server's own questions and log messages
//! (`notifications/message`) are forwarded to the client that made the call. Host tools and
//! host repair do not exist here (`HostAbilities` says so).

use super::{lock, Gateway};
use crate::service::{Approvals, Decision, Remember};
use crate::catalog::{AskHost, Catalog, ElicitAction, ElicitMode, ElicitParams, ElicitResult, SampleParams};
use crate::invisible;
use crate::service::{Registry, Source};
use crate::service::{ApprovalRequest, HostPort};
use futures::future::BoxFuture;
#[allow(deprecated)] // logging: deprecated by SEP-2577, still in 2025-11-25
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{ProgressNotificationParam, ProgressToken, ServerRequest};
use rmcp::service::{Peer, RoleServer};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// How the user is asked before a gated call runs.
#[derive(Clone)]
pub enum Asking {
    /// The client declared `elicitation`: ask with a form.
    Elicit,
    /// A 2026-07-28 client that declared `elicitation`: a server may not send it requests, so
    /// the call ends with an input-required result carrying the form, and the client's retry
    /// brings the answer (`approval_round`).
    Round(Arc<ApprovalRound>),
    /// The config trusts the client: run without asking.
    Trusted,
}

/// One round of a multi round-trip approval: the answer the retry brought (for the call it was
/// asked about), and the question this round leaves to ask.
#[derive(Default)]
pub struct ApprovalRound {
    /// (digest of the call the user answered about, their decision).
    pub answered: Option<(String, Decision)>,
    pub asked: Mutex<Option<ApprovalRequest>>,
}

/// What an approval answer is bound to: the tool and its arguments (canonical JSON), so an
/// answer given for one call never lets another run.
pub fn call_digest(name: &str, arguments: &Value) -> String {
    let text = crate::service::Service::canonical_json(&json!([name, arguments]));
    data_encoding::HEXLOWER.encode(&Sha256::digest(text.as_bytes()))
}

/// One call's host: the client that made it.
pub struct ClientHost {
    pub peer: Peer<RoleServer>,
    pub asking: Option<Asking>,
    pub approvals: Arc<Approvals>,
    /// Where a gated tool's server name and own tool name are looked up, for the question.
    pub registry: Arc<Registry>,
    pub catalog: Catalog,
    pub progress_token: Option<ProgressToken>,
}

impl ClientHost {
    /// (server name, the tool's own name) of an MCP tool by wire name.
    fn server_of(&self, wire: &str) -> Option<(String, String)> {
        match &self.registry.get(wire)?.entry.source {
            Source::Mcp { server_id, tool_name } => {
                Some((self.catalog.config(server_id).map_or_else(|| server_id.clone(), |c| c.name), tool_name.clone()))
            }
            _ => None,
        }
    }
}

impl HostPort for ClientHost {
    fn approval_request(&self, req: ApprovalRequest) {
        let approvals = self.approvals.clone();
        match &self.asking {
            // `invoke` opened the approval before calling us: answering at once is safe.
            Some(Asking::Trusted) => {
                approvals.respond(&req.approval_id, Decision::ONCE);
            }
            Some(Asking::Elicit) => {
                let peer = self.peer.clone();
                let (server, tool) = self.server_of(&req.name).unwrap_or_else(|| ("toolreg".into(), req.name.clone()));
                tokio::spawn(async move {
                    // A client asked by our requests has a session: approveSession is offered.
                    let decision = ask_approval(&peer, &server, &tool, &req, true).await;
                    approvals.respond(&req.approval_id, decision);
                });
            }
            Some(Asking::Round(round)) => {
                // The answer the retry brought counts only for the very call it was given for.
                let answer = round.answered.as_ref().filter(|(digest, _)| *digest == call_digest(&req.name, &req.arguments));
                match answer {
                    Some((_, decision)) => {
                        approvals.respond(&req.approval_id, decision.clone());
                    }
                    None => {
                        let id = req.approval_id.clone();
                        *lock(&round.asked) = Some(req);
                        // Not run this round; the session turns the refusal into the question.
                        approvals.respond(&id, Decision::Deny { reason: Some("waiting for the user's answer".into()) });
                    }
                }
            }
            // `invoke` refuses before asking when the host cannot approve.
            None => {
                approvals.respond(&req.approval_id, Decision::Deny { reason: Some("this client cannot be asked".into()) });
            }
        }
    }

    fn approval_withdrawn(&self, approval_id: &str, reason: &str) {
        tracing::debug!(approval_id, reason, "approval withdrawn");
    }

    fn progress(&self, _token: &str, value: Value) {
        let Some(token) = &self.progress_token else { return };
        let mut value = value;
        value["progressToken"] = serde_json::to_value(token).unwrap_or(Value::Null);
        let Ok(param) = serde_json::from_value::<ProgressNotificationParam>(value) else { return };
        let peer = self.peer.clone();
        // Sent in order by the peer's one writer; not awaited, so a slow client slows no call.
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }

    async fn execute_tool(&self, name: &str, _arguments: &Value, _call_id: &str) -> Result<Value, String> {
        Err(format!("{name} is a host tool, and an MCP client does not run host tools"))
    }

    async fn repair_tool_call(&self, _name: &str, _schema: &Value, _arguments: &Value, _error: &str) -> Result<Option<Value>, String> {
        Ok(None)
    }
}

/// The approval form: which tool, on which server, with which arguments; approve or deny.
/// What the user reads shows every hidden character (`\u{202E}`): the server's own tool name
/// and the model's arguments may carry some.
async fn ask_approval(peer: &Peer<RoleServer>, server: &str, tool: &str, req: &ApprovalRequest, session: bool) -> Decision {
    let request = json!({"method": "elicitation/create", "params": approval_form(server, tool, req, session)});
    let answer = match serde_json::from_value::<ServerRequest>(request) {
        Ok(r) => peer.send_request(r).await.map(|r| serde_json::to_value(&r).unwrap_or(Value::Null)),
        Err(e) => return Decision::Deny { reason: Some(format!("internal error: {e}")) },
    };
    match answer {
        Ok(v) => decision_of(&v, session),
        Err(e) => Decision::Deny { reason: Some(format!("the client did not answer: {e}")) },
    }
}

/// The `elicitation/create` params of the approval question, shown every hidden character:
/// `decision` is a titled single-select (`oneOf` of `{const, title}`, read by a person).
/// `session`: the client has an MCP session, so an approval may last for it (`approveSession`).
pub fn approval_form(server: &str, tool: &str, req: &ApprovalRequest, session: bool) -> Value {
    let args = serde_json::to_string_pretty(&req.arguments).unwrap_or_default();
    let args = invisible::visible(&args);
    let (server, tool) = (invisible::visible(server), invisible::visible(tool));
    let mut choices = vec![json!({"const": "approve", "title": "Approve this call"})];
    if session {
        choices.push(json!({"const": "approveSession", "title": format!("Approve {tool} for this session")}));
    }
    choices.push(json!({"const": "approveAlways", "title": format!("Always approve {tool} (until revoked or its definition changes)")}));
    choices.push(json!({"const": "deny", "title": "Deny"}));
    json!({
        "mode": "form",
        "message": format!("Allow the tool {tool} of the MCP server {server} to run with these arguments?\n{args}"),
        "requestedSchema": {"type": "object", "properties": {
            "decision": {"type": "string", "title": "Decision", "oneOf": choices,
                "description": format!("approve: run {tool} on {server} once; approveSession: run it without asking again in this session; approveAlways: run it without asking again until revoked (toolreg approvals --revoke); deny: do not run it")}
        }, "required": ["decision"]}
    })
}

/// The user's decision in an elicitation answer: only an accepted form that says approve runs.
/// `approveSession` where no session was offered approves this call only.
pub fn decision_of(answer: &Value, session: bool) -> Decision {
    let remember = match answer["content"]["decision"].as_str() {
        Some("approve") => Some(Remember::Once),
        Some("approveSession") if session => Some(Remember::Session),
        Some("approveSession") => Some(Remember::Once),
        Some("approveAlways") => Some(Remember::Always),
        _ => None,
    };
    match (answer["action"].as_str(), remember) {
        (Some("accept"), Some(remember)) => Decision::Approve { remember },
        (Some("accept"), None) => Decision::Deny { reason: None },
        (other, _) => Decision::Deny { reason: Some(format!("the user chose {}", other.unwrap_or("nothing"))) },
    }
}

impl ClientHost {
    /// The approval question of the tool `req` names, as this client's form.
    pub fn approval_form_for(&self, req: &ApprovalRequest) -> Value {
        let (server, tool) = self.server_of(&req.name).unwrap_or_else(|| ("toolreg".into(), req.name.clone()));
        // A 2026-07-28 client (asked by rounds) has no session to approve for.
        approval_form(&server, &tool, req, !matches!(self.asking, Some(Asking::Round(_))))
    }
}

/// Whether the client speaks 2026-07-28 or later, and so takes no requests from a server.
pub(super) fn stateless(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info().is_some_and(|i| !i.protocol_version.has_initialize())
}

/// Upstream servers' questions, to the client whose call they belong to.
#[derive(Default)]
pub struct Questions(OnceLock<Weak<Gateway>>);

impl Questions {
    pub fn attach(&self, gw: &Arc<Gateway>) {
        let _ = self.0.set(Arc::downgrade(gw));
    }

    fn peer(&self, call_id: Option<&str>) -> Option<Peer<RoleServer>> {
        let gw = self.0.get()?.upgrade()?;
        let calls = lock(&gw.clients.calls);
        match call_id {
            Some(id) => calls.get(id).cloned(),
            // Without a call id the catalog matched no call; a sole call in flight is it.
            None if calls.len() == 1 => calls.values().next().cloned(),
            None => None,
        }
    }
}

impl AskHost for Questions {
    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, String>> {
        let peer = self.peer(params.call_id.as_deref());
        Box::pin(async move {
            let peer = peer.ok_or("no client call to ask through")?;
            // A 2026-07-28 client may not be sent requests (passing the question on as an
            // input-required result is not done yet): declined, as by a client that cannot ask.
            if peer.peer_info().and_then(|i| i.capabilities.elicitation.clone()).is_none() || stateless(&peer) {
                return Ok(ElicitResult::action(ElicitAction::Decline));
            }
            let mut p = json!({"mode": params.mode, "message": params.message});
            match params.mode {
                ElicitMode::Form => p["requestedSchema"] = params.requested_schema.unwrap_or(json!({"type": "object", "properties": {}})),
                ElicitMode::Url => {
                    p["url"] = json!(params.url);
                    p["elicitationId"] = json!(params.elicitation_id);
                }
            }
            let request: ServerRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": p})).map_err(|e| e.to_string())?;
            let answer = peer.send_request(request).await.map_err(|e| e.to_string())?;
            serde_json::from_value(serde_json::to_value(&answer).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
        })
    }

    fn sample(&self, params: SampleParams) -> BoxFuture<'static, Result<Value, String>> {
        let peer = self.peer(params.call_id.as_deref());
        Box::pin(async move {
            let peer = peer.ok_or("no client call to ask through")?;
            if peer.peer_info().and_then(|i| i.capabilities.sampling.clone()).is_none() || stateless(&peer) {
                return Err("the client does not offer sampling".into());
            }
            let request: ServerRequest =
                serde_json::from_value(json!({"method": "sampling/createMessage", "params": params.request})).map_err(|e| e.to_string())?;
            let answer = peer.send_request(request).await.map_err(|e| e.to_string())?;
            serde_json::to_value(&answer).map_err(|e| e.to_string())
        })
    }

    /// Sent to the calling client at every level: the gateway keeps no `logging/setLevel`.
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in 2025-11-25
    fn log(&self, call_id: &str, message: Value) -> BoxFuture<'static, ()> {
        let peer = self.peer(Some(call_id));
        Box::pin(async move {
            let Some(peer) = peer else { return };
            let Ok(param) = serde_json::from_value::<LoggingMessageNotificationParam>(message) else { return };
            let _ = peer.notify_logging_message(param).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(form: &Value) -> Vec<String> {
        form["requestedSchema"]["properties"]["decision"]["oneOf"].as_array().unwrap().iter().map(|c| c["const"].as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn the_form_offers_a_session_only_to_a_client_with_one_and_reads_each_answer() {
        let req = ApprovalRequest { approval_id: "a".into(), call_id: "c".into(), name: "mcp__fx__echo".into(), arguments: json!({}), reason: String::new() };
        assert_eq!(offered(&approval_form("fx", "echo", &req, true)), ["approve", "approveSession", "approveAlways", "deny"]);
        assert_eq!(offered(&approval_form("fx", "echo", &req, false)), ["approve", "approveAlways", "deny"]);
        let answer = |d: &str| json!({"action": "accept", "content": {"decision": d}});
        assert_eq!(decision_of(&answer("approveSession"), true), Decision::Approve { remember: Remember::Session });
        assert_eq!(decision_of(&answer("approveSession"), false), Decision::ONCE, "no session: this call only");
        assert_eq!(decision_of(&answer("approveAlways"), false), Decision::Approve { remember: Remember::Always });
        assert_eq!(decision_of(&answer("deny"), true), Decision::Deny { reason: None });
        assert!(matches!(decision_of(&json!({"action": "decline", "content": {"decision": "approveAlways"}}), true), Decision::Deny { .. }));
    }
}
