//! The tasks extension (SEP-2663) on the gateway face: a task an upstream server made of a call
//! is handed to the caller under an id of ours (`tasks::Book`), and the caller's `tasks/get`,
//! `tasks/update` and `tasks/cancel` go to that server under its own id; a completed task's result
//! reaches the caller as a direct call's would (`task_result`).

use super::Service;
use crate::catalog::{Catalog, CatalogError, TaskAsk};
use crate::invoke::{InvokeError, Invoked, TaskMade};
use crate::tasks::Route;
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Why a task request got no answer from its server.
#[derive(Debug)]
pub enum TaskFailure {
    /// The id is not one of this owner's (never made, another's, or forgotten).
    Unknown(String),
    /// The server's own JSON-RPC error, for the caller to act on.
    Rpc { code: i32, message: String, data: Option<Value> },
    Failed(String),
}

impl Service {
    /// `made` for `owner`: the server's `CreateTaskResult` with our id in place of the
    /// server's. Fails when the result names no task id.
    pub fn task_adopt(&self, owner: &str, made: &TaskMade) -> Result<Value, String> {
        let Some(upstream_id) = made.task.get("taskId").and_then(Value::as_str) else {
            return Err(format!("the MCP server {} made a task of {} without a taskId", made.server_id, made.tool));
        };
        let ttl = made.task.get("ttlMs").and_then(Value::as_u64).map(Duration::from_millis);
        let route = Route { server_id: made.server_id.clone(), upstream_id: upstream_id.to_owned(), tool: made.tool.clone() };
        let id = self.tasks.adopt(owner, route, ttl)?;
        let mut task = made.task.clone();
        task["taskId"] = Value::String(id);
        Ok(task)
    }

    /// `ask` about `owner`'s task `id`, at its server: the server's answer, naming our id.
    pub async fn task_request(&self, catalog: &Catalog, owner: &str, id: &str, ask: &TaskAsk) -> Result<Value, TaskFailure> {
        let route = self.tasks.route(owner, id).ok_or_else(|| TaskFailure::Unknown(format!("unknown task: {id}")))?;
        let mut answer = catalog.task_request(&route.server_id, &route.upstream_id, ask).await.map_err(|e| match e {
            CatalogError::Rpc { code, message, data } => TaskFailure::Rpc { code, message, data },
            e => TaskFailure::Failed(e.to_string()),
        })?;
        if answer.get("taskId").is_some() {
            answer["taskId"] = Value::String(id.to_owned());
        }
        Ok(answer)
    }

    /// The result a completed task of `owner`'s (`id`) ended with, `raw` as its server inlined
    /// it, through the steps a direct call's result takes (`pipeline::task_result`): fitted and
    /// cut to the result budget, the whole kept for `results_owner`.
    pub async fn task_result(&self, owner: &str, id: &str, raw: Value, results_owner: &str, cancel: &CancellationToken) -> Result<Invoked, InvokeError> {
        let tool = self.tasks.route(owner, id).map_or_else(|| "task".to_owned(), |r| r.tool);
        super::pipeline::task_result(self, raw, results_owner, &tool, cancel).await
    }
}
