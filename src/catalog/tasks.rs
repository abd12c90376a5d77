//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) as a client: `tasks/get`,
//! `tasks/update` and `tasks/cancel` of a task an upstream server made when a call declared the
//! extension. Each request declares the extension itself in its `_meta` (a 2026-07-28 server
//! answers -32021 otherwise), within the server's call timeout. The results are the server's,
//! as JSON; the task's id is the server's own (the gateway's ids for its clients are in
//! `tasks::Book`).

use std::time::Instant;

use rmcp::model::{CancelTaskParams, CancelTaskRequest, ClientRequest, GetTaskParams, GetTaskRequest, InputResponses, UpdateTaskParams, UpdateTaskRequest};
use serde_json::{json, Value};

use super::error::CatalogError;
use super::Catalog;

/// A request about one of a server's tasks.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskAsk {
    Get,
    /// The answers to the task's input requests, key → result.
    Update(InputResponses),
    Cancel,
}

impl TaskAsk {
    pub fn method(&self) -> &'static str {
        match self {
            TaskAsk::Get => "tasks/get",
            TaskAsk::Update(_) => "tasks/update",
            TaskAsk::Cancel => "tasks/cancel",
        }
    }

    fn request(&self, task_id: &str) -> ClientRequest {
        match self {
            TaskAsk::Get => ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(task_id))),
            TaskAsk::Update(r) => ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(UpdateTaskParams::new(task_id, r.clone()))),
            TaskAsk::Cancel => ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(task_id))),
        }
    }
}

/// The capabilities a tasks request declares: the extension, and nothing else to ask for.
pub fn tasks_capabilities() -> Value {
    json!({"extensions": {(rmcp::model::TASKS_EXTENSION_ID): {}}})
}

impl Catalog {
    /// `ask` about the server's task `task_id`, through its session (connecting if it has
    /// none), within the call timeout. The result is the server's, as JSON.
    pub async fn task_request(&self, server_id: &str, task_id: &str, ask: &TaskAsk) -> Result<Value, CatalogError> {
        let server = self.enabled_server(server_id)?;
        let config = server.config();
        let timeout = config.timeouts.call(self.inner.shared.opts.call_timeout);
        let deadline = Instant::now() + timeout;
        let method = ask.method();
        let conn = tokio::time::timeout(timeout, server.connection())
            .await
            .unwrap_or_else(|_| Err(CatalogError::timed_out(method, timeout)))
            .map_err(|e| e.redacted(&config))?;
        let meta = conn.caller_meta(&tasks_capabilities());
        let answer = conn.send_meta(ask.request(task_id), method, deadline, timeout, meta).await.map_err(|e| e.redacted(&config))?;
        Ok(failure_redacted(&config, answer))
    }
}

/// A failed task's `error`, inlined in a `tasks/get` answer, is the server's error as a
/// rejected call's is: its strings lose the server's secrets before anyone sees them.
fn failure_redacted(config: &super::ServerConfig, mut answer: Value) -> Value {
    if let Some(error) = answer.get_mut("error") {
        *error = super::error::redact_strings(config, error.take());
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::config::tests::http;

    #[test]
    fn a_failed_tasks_inlined_error_loses_the_servers_secrets() {
        let cfg = http("https://u:pw77@h/mcp?token=tok77", "Bearer sk-77");
        let answer = json!({
            "taskId": "t1", "status": "failed",
            "error": {"code": -32603, "message": "upstream said Bearer sk-77", "data": {"url": "https://u:pw77@h/mcp?token=tok77"}},
        });
        let shown = failure_redacted(&cfg, answer).to_string();
        for secret in ["sk-77", "pw77", "tok77"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("\"status\":\"failed\"") && shown.contains("-32603"), "{shown}");
        let done = json!({"taskId": "t2", "status": "completed", "result": {"content": [{"type": "text", "text": "sk-77"}]}});
        assert_eq!(failure_redacted(&cfg, done.clone()), done, "a result is the tool's own output, as a call's is");
    }
}
