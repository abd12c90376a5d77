//! A task an upstream server made of our call (the tasks extension, SEP-2663), followed to its
//! end: we declare the extension (`handler.rs`), so a server may answer a `tools/call` with a
//! `CreateTaskResult`; the call then polls `tasks/get` every `pollIntervalMs` (kept within
//! `POLL`) until the task is terminal, and its result is the call's. Meanwhile each new status
//! goes to the call's progress sink, a task waiting on input has its requests asked of the host
//! as a round's are (`mrtr.rs`) and answered by `tasks/update`, and the call's cancellation or
//! its deadline (the server's call timeout, every poll included) cancels the task
//! (`tasks/cancel`, best effort) before the call ends.

use std::time::Duration;

use rmcp::model::{CancelTaskParams, CancelTaskRequest, ClientRequest, GetTaskParams, GetTaskRequest, UpdateTaskParams, UpdateTaskRequest};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::Connection;
use crate::catalog::error::CatalogError;
use crate::catalog::mrtr::Rounds;

/// The poll interval's bounds, whatever the server suggests.
const POLL: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(5));
/// How long a `tasks/cancel` of a call that ends anyway may take.
const CANCEL_WITHIN: Duration = Duration::from_secs(5);

/// Whether a call's answer is a task (`resultType: "task"`).
pub(crate) fn is_task(value: &Value) -> bool {
    value.get("resultType").and_then(Value::as_str) == Some("task")
}

fn poll_interval(task: &Value) -> Duration {
    let ms = task.get("pollIntervalMs").and_then(Value::as_u64).unwrap_or(1000);
    Duration::from_millis(ms).clamp(POLL.0, POLL.1)
}

impl Connection {
    /// Follows the task `created` (the server's `CreateTaskResult`) to its end: the
    /// `CallToolResult` of a completed task, the error of a failed one.
    pub(super) async fn follow(&self, created: Value, rounds: &Rounds<'_>, progress: Option<mpsc::UnboundedSender<Value>>) -> Result<Value, CatalogError> {
        let id = created.get("taskId").and_then(Value::as_str).ok_or_else(|| CatalogError::Mcp("tools/call: the server's task has no taskId".into()))?.to_owned();
        let mut wait = poll_interval(&created);
        let mut seen = (String::new(), String::new());
        let mut step = 0u64;
        loop {
            tokio::select! {
                biased;
                _ = rounds.origin.cancel.cancelled() => return Err(self.give_up(&id, CatalogError::Cancelled).await),
                _ = rounds.deadline.passed() => return Err(self.give_up(&id, rounds.deadline.error()).await),
                _ = tokio::time::sleep(wait) => {}
            }
            let task = self.task_send(ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id.clone()))), "tasks/get", rounds).await?;
            wait = poll_interval(&task);
            let status = task.get("status").and_then(Value::as_str).unwrap_or_default().to_owned();
            let message = task.get("statusMessage").and_then(Value::as_str).unwrap_or_default().to_owned();
            if (status.as_str(), message.as_str()) != (seen.0.as_str(), seen.1.as_str()) {
                step += 1;
                if let Some(sink) = &progress {
                    let text = if message.is_empty() { format!("task {status}") } else { format!("task {status}: {message}") };
                    let _ = sink.send(json!({"progress": step, "message": text}));
                }
                seen = (status.clone(), message);
            }
            match status.as_str() {
                "completed" => return task.get("result").cloned().ok_or_else(|| CatalogError::Mcp("tasks/get: a completed task without its result".into())),
                "failed" => {
                    let error = task.get("error").cloned().unwrap_or(Value::Null);
                    let code = error.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok()).unwrap_or(-32603);
                    let message = error.get("message").and_then(Value::as_str).unwrap_or("the task failed").to_owned();
                    return Err(CatalogError::Rpc { code, message, data: error.get("data").cloned() });
                }
                "cancelled" => return Err(CatalogError::Mcp("tools/call: the server cancelled its task".into())),
                "input_required" => {
                    let requests: Vec<(String, Value)> = task.get("inputRequests").and_then(Value::as_object).map(|m| m.clone().into_iter().collect()).unwrap_or_default();
                    if requests.is_empty() {
                        continue;
                    }
                    let answers = tokio::select! {
                        biased;
                        _ = rounds.origin.cancel.cancelled() => return Err(self.give_up(&id, CatalogError::Cancelled).await),
                        _ = rounds.deadline.passed() => return Err(self.give_up(&id, rounds.deadline.error()).await),
                        a = rounds.fulfil_all(requests) => a,
                    };
                    let answers = match answers {
                        Ok(a) => a,
                        Err(e) => return Err(self.give_up(&id, e).await),
                    };
                    let update = UpdateTaskRequest::new(UpdateTaskParams::new(id.clone(), answers.into_iter().collect()));
                    self.task_send(ClientRequest::UpdateTaskRequest(update), "tasks/update", rounds).await?;
                    wait = POLL.0;
                }
                _ => {}
            }
        }
    }

    /// One tasks request within the call's deadline, our capabilities (the extension among
    /// them) in its `_meta` as every request of ours carries them.
    async fn task_send(&self, request: ClientRequest, method: &str, rounds: &Rounds<'_>) -> Result<Value, CatalogError> {
        self.send_meta(request, method, rounds.deadline.at().into_std(), rounds.deadline.timeout(), None).await
    }

    /// Cancels the task (best effort, briefly) and hands back why the call ends.
    async fn give_up(&self, id: &str, why: CatalogError) -> CatalogError {
        let cancel = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(id)));
        let at = std::time::Instant::now() + CANCEL_WITHIN;
        if let Err(e) = self.send_meta(cancel, "tasks/cancel", at, CANCEL_WITHIN, None).await {
            tracing::debug!(task = id, "tasks/cancel failed: {e}");
        }
        why
    }
}
