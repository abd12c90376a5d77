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
use crate::catalog::TaskAsk;
use crate::service::{TaskFailure, TaskMade};
use rmcp::model::{CallToolResponse, CreateTaskResult, ErrorCode, GetTaskResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ErrorData;
use serde_json::{json, Value};

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
    let mut answer = ask(session, context, id, TaskAsk::Get).await?;
    if answer["status"] == "completed" {
        if let Some(raw) = answer.get_mut("result").map(Value::take).filter(Value::is_object) {
            answer["result"] = result_for(session, context, id, raw).await?;
        }
    }
    serde_json::from_value(answer).map_err(|e| ErrorData::internal_error(format!("tasks/get: the server's answer: {e}"), None))
}

/// A completed task's `raw` result through the service's result steps, said as MCP.
async fn result_for(session: &Session, context: &RequestContext<RoleServer>, id: &str, raw: Value) -> Result<Value, ErrorData> {
    // Whose a cut whole is: the session's, or (no session) the holder of its random ref.
    let stateless = context.protocol_version().is_some_and(|v| !v.has_initialize());
    let results_owner = if stateless { super::session::STATELESS } else { session.owner.as_str() };
    let service = &session.lens.service;
    let done = service.task_result(&owner(session, context), id, raw, results_owner, &context.ct).await.map_err(|e| ErrorData::internal_error(format!("tasks/get: the task's result: {e}"), None))?;
    serde_json::to_value(super::session::to_result_for(done, service.budget().media)).map_err(|e| ErrorData::internal_error(format!("tasks/get: the task's result: {e}"), None))
}

pub async fn update(session: &Session, context: &RequestContext<RoleServer>, id: &str, responses: InputResponses) -> Result<(), ErrorData> {
    ask(session, context, id, TaskAsk::Update(responses)).await.map(|_| ())
}

pub async fn cancel(session: &Session, context: &RequestContext<RoleServer>, id: &str) -> Result<(), ErrorData> {
    ask(session, context, id, TaskAsk::Cancel).await.map(|_| ())
}
