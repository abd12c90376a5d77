//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on `toolreg mcp`: the gateway
//! declares it, and a 2026-07-28 client that declares it too (at the session or in a request's
//! `_meta`) has its capabilities passed to the upstream server, which decides whether a call
//! becomes a task. Such a task reaches the client under an id of the gateway's, bound to the
//! client (`Service::task_adopt`); `tasks/get`, `tasks/update` and `tasks/cancel` go to the
//! server that made it (`Service::task_request`), and a completed task's result takes a direct
//! call's result steps (`Service::task_result`). rmcp answers -32021 for `tasks/*` from a
//! client that did not declare the extension, -32601 for the removed `tasks/result` and
//! `tasks/list`, and checks `Mcp-Name` against the task id.

use super::session::Session;
use super::{Gateway, Lens};
use crate::catalog::TaskAsk;
use crate::service::{TaskFailure, TaskMade};
use rmcp::model::{
    CallToolResponse, CreateTaskResult, ErrorCode, GetMeta, GetTaskResult, InputResponses, RequestId, ServerNotification, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer, SubscriptionContext};
use rmcp::ErrorData;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Adds the extension to the gateway's capabilities.
pub fn declare(capabilities: &mut Value) {
    capabilities["extensions"][rmcp::model::TASKS_EXTENSION_ID] = json!({});
}

/// Whose the tasks made in this request are: a session's own, or (2026-07-28, no session) the
/// lens's stateless clients', whose ids are unguessable, so holding one is the right to use it.
pub fn owner(session: &Session, context: &RequestContext<RoleServer>) -> String {
    let lens = session.lens.name.as_deref().unwrap_or("");
    if context.protocol_version().is_some_and(|v| !v.has_initialize()) {
        format!("stateless:{lens}")
    } else {
        format!("{}:{lens}", session.owner)
    }
}

/// The server's task for the client, under the gateway's id.
pub fn created(session: &Session, context: &RequestContext<RoleServer>, made: &TaskMade) -> Result<CallToolResponse, ErrorData> {
    let task = session.lens.service.task_adopt(&owner(session, context), made).map_err(|e| ErrorData::internal_error(e, None))?;
    let result: CreateTaskResult = serde_json::from_value(task).map_err(|e| ErrorData::internal_error(format!("the MCP server {}'s task: {e}", made.server_id), None))?;
    Ok(CallToolResponse::Task(result))
}

/// An upstream's refusal of `tool`'s call as the client gets it: a -32021 that asks for the
/// tasks extension (the tool runs only as a task) says so, naming the tool and the extension,
/// in its message and its `data` (`tool`, beside the server's `requiredCapabilities`); any
/// other error goes as the server sent it.
pub fn refused(tool: &str, code: i32, message: String, data: Option<Value>) -> ErrorData {
    let tasks = rmcp::model::TASKS_EXTENSION_ID;
    let needs_tasks = data.as_ref().and_then(|d| d.pointer("/requiredCapabilities/extensions")).is_some_and(|e| e.get(tasks).is_some());
    if code != ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0 || !needs_tasks {
        return ErrorData::new(ErrorCode(code), message, data);
    }
    let mut data = data.unwrap_or_else(|| json!({}));
    data["tool"] = json!(tool);
    let readable = format!("{tool} runs only as a task: declare the {tasks} extension (in the client's capabilities, or in the request's _meta from 2026-07-28) to call it ({message})");
    ErrorData::new(ErrorCode(code), readable, Some(data))
}

async fn ask(session: &Session, context: &RequestContext<RoleServer>, id: &str, ask: TaskAsk) -> Result<Value, ErrorData> {
    let owner = owner(session, context);
    session.lens.service.task_request(&session.gw.catalog, &owner, id, &ask).await.map_err(|f| match f {
        TaskFailure::Unknown(why) => ErrorData::invalid_params(why, Some(json!({"taskId": id}))),
        TaskFailure::Rpc { code, message, data } => ErrorData::new(ErrorCode(code), message, data),
        TaskFailure::Failed(why) => ErrorData::internal_error(why, None),
    })
}

/// The task as its server tells it; a completed one's result as a direct call's would reach
/// the client (cut to the result budget, its media per `results.media`).
pub async fn get(session: &Session, context: &RequestContext<RoleServer>, id: &str) -> Result<GetTaskResult, ErrorData> {
    let answer = ask(session, context, id, TaskAsk::Get).await?;
    let answer = with_result(&session.lens, &owner(session, context), &results_owner(session, context), id, answer, &context.ct).await?;
    serde_json::from_value(answer).map_err(|e| ErrorData::internal_error(format!("tasks/get: the server's answer: {e}"), None))
}

/// Whose a task result's cut whole is: the session's, or (no session) the holder of its ref.
fn results_owner(session: &Session, context: &RequestContext<RoleServer>) -> String {
    let stateless = context.protocol_version().is_some_and(|v| !v.has_initialize());
    if stateless { super::session::STATELESS.to_owned() } else { session.owner.clone() }
}

/// `answer` (a `tasks/get` answer) with a completed task's result through the service's
/// result steps, said as MCP.
async fn with_result(lens: &Lens, owner: &str, results_owner: &str, id: &str, mut answer: Value, cancel: &CancellationToken) -> Result<Value, ErrorData> {
    if answer["status"] != "completed" {
        return Ok(answer);
    }
    let Some(raw) = answer.get_mut("result").map(Value::take).filter(Value::is_object) else { return Ok(answer) };
    let failed = |e: String| ErrorData::internal_error(format!("tasks/get: the task's result: {e}"), None);
    let done = lens.service.task_result(owner, id, raw, results_owner, cancel).await.map_err(|e| failed(e.to_string()))?;
    answer["result"] = serde_json::to_value(super::session::to_result_for(done, lens.service.budget().media)).map_err(|e| failed(e.to_string()))?;
    Ok(answer)
}

/// Follows, while the stream is open, the tasks a `subscriptions/listen` stream named
/// (`listen_tasks`) that are its owner's, telling it `notifications/tasks` at each change of
/// status (first, the status they have): ids under the gateway's id, a failed task's error
/// redacted and a completed one's result as `tasks/get` gives them. An id of another owner
/// (or none) is not followed, and nothing says so. `None` when the stream named none.
pub fn follow_listened(session: &Session, context: &SubscriptionContext) -> Option<Following> {
    let request = context.request_context();
    let ids = super::listen_tasks::asked(request);
    if ids.is_empty() {
        return None;
    }
    let watch = Watch {
        gw: session.gw.clone(),
        lens: session.lens.clone(),
        owner: owner(session, request),
        results_owner: results_owner(session, request),
        peer: request.peer.clone(),
        subscription: context.sink().id().clone(),
        cancel: request.ct.clone(),
    };
    Some(Following(tokio::spawn(watch.run(ids))))
}

/// A stream's following of its tasks, ended with the stream (however `listen` ends).
pub struct Following(tokio::task::JoinHandle<()>);

impl Drop for Following {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The poll interval's bounds, whatever the server suggests.
const POLL: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

struct Watch {
    gw: Arc<Gateway>,
    lens: Arc<Lens>,
    owner: String,
    results_owner: String,
    peer: Peer<RoleServer>,
    subscription: RequestId,
    cancel: CancellationToken,
}

impl Watch {
    /// Polls each open task at the pace its server asks (within `POLL`) until it is terminal,
    /// unknown (another's, expired) or the stream ends.
    async fn run(self, mut open: Vec<String>) {
        let mut seen: HashMap<String, (Value, Value)> = HashMap::new();
        while !open.is_empty() {
            let mut wait = POLL.1;
            for id in open.clone() {
                let answer = match self.lens.service.task_request(&self.gw.catalog, &self.owner, &id, &TaskAsk::Get).await {
                    Ok(a) => a,
                    Err(TaskFailure::Unknown(_)) => {
                        open.retain(|o| *o != id);
                        continue;
                    }
                    // The server did not answer this time: asked again next round.
                    Err(e) => {
                        tracing::debug!("tasks/get for a listen stream: {e:?}");
                        continue;
                    }
                };
                let ms = answer.get("pollIntervalMs").and_then(Value::as_u64).unwrap_or(1000);
                wait = wait.min(Duration::from_millis(ms).clamp(POLL.0, POLL.1));
                let now = (answer["status"].clone(), answer["statusMessage"].clone());
                if seen.get(&id) == Some(&now) {
                    continue;
                }
                let terminal = ["completed", "failed", "cancelled"].iter().any(|s| now.0 == *s);
                seen.insert(id.clone(), now);
                if !self.tell(&id, answer).await {
                    return;
                }
                if terminal {
                    open.retain(|o| *o != id);
                }
            }
            tokio::select! {
                _ = self.cancel.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Tells the stream of task `id` as `answer` (its `tasks/get` answer) says; false once the
    /// stream is gone.
    async fn tell(&self, id: &str, answer: Value) -> bool {
        let answer = match with_result(&self.lens, &self.owner, &self.results_owner, id, answer, &self.cancel).await {
            Ok(a) => a,
            Err(e) => {
                tracing::debug!("notifications/tasks: {}", e.message);
                return true;
            }
        };
        let params: TaskStatusNotificationParams = match serde_json::from_value(answer) {
            Ok(p) => p,
            Err(e) => {
                tracing::debug!("notifications/tasks: the server's task: {e}");
                return true;
            }
        };
        let mut note = ServerNotification::TaskStatusNotification(TaskStatusNotification::new(params));
        note.get_meta_mut().set_subscription_id(self.subscription.clone());
        self.peer.send_notification(note).await.is_ok()
    }
}

pub async fn update(session: &Session, context: &RequestContext<RoleServer>, id: &str, responses: InputResponses) -> Result<(), ErrorData> {
    ask(session, context, id, TaskAsk::Update(responses)).await.map(|_| ())
}

pub async fn cancel(session: &Session, context: &RequestContext<RoleServer>, id: &str) -> Result<(), ErrorData> {
    ask(session, context, id, TaskAsk::Cancel).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refusal_asking_for_the_tasks_extension_is_reworded() {
        let sampling = json!({"requiredCapabilities": {"sampling": {}}});
        let other = refused("ask", -32021, "needs sampling".into(), Some(sampling.clone()));
        assert_eq!((other.message.as_ref(), other.data), ("needs sampling", Some(sampling)));
        let tasks = json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
        let invalid = refused("job", -32602, "bad".into(), Some(tasks.clone()));
        assert_eq!(invalid.data, Some(tasks.clone()), "another code goes as it came");
        let job = refused("job", -32021, "Missing required client capability".into(), Some(tasks));
        assert_eq!(job.data.as_ref().unwrap()["tool"], "job");
        assert!(job.message.starts_with("job runs only as a task") && job.message.ends_with("(Missing required client capability)"), "{}", job.message);
    }
}
