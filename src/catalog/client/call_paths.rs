//! One `tools/call` on a live `Connection`, down one of two paths: through rmcp's service
//! (Streamable HTTP), or written and answered directly on a stdio session (`stdio::DirectCalls`),
//! past rmcp's loop. Both obey `call.rs`'s rules and run their rounds through `mrtr.rs`; each
//! keeps here only how its request is sent and its answer awaited.

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientCapabilities,
    ClientJsonRpcMessage, ClientNotification, ClientRequest, NumberOrString, ProgressToken, RequestId,
    DEFAULT_MRTR_MAX_ROUNDS,
};
use rmcp::model::RequestMetaObject;
use rmcp::service::PeerRequestOptions;
use rmcp::ClientHandler;
use serde_json::Value;
use tokio::sync::mpsc;

use super::handler::{token_key, Handler};
use super::Connection;
use crate::catalog::call::{self, CallRequest};
use crate::catalog::call_logs::CallLogs;
use crate::catalog::elicit::{CallOrigin, InFlightGuard};
use crate::catalog::error::CatalogError;
use crate::catalog::lock;
use crate::catalog::mrtr;
use crate::catalog::stdio::{DirectCalls, Pending};

impl Connection {
    /// One `tools/call`, under the rules of `call.rs`. Returns the `CallToolResult` as JSON; a
    /// tool-level failure is `Ok` with `isError: true`, only protocol/transport failures are
    /// `Err`. `call_id` names the call in the questions the server asks meanwhile, whether as
    /// requests (2025-11-25) or as input-required results (2026-07-28, `mrtr.rs`), which are
    /// asked of the host or, under `Inputs::PassThrough`, handed back as `Answer::InputRequired`.
    pub async fn call_tool(&self, request: CallRequest<'_>, limits: call::Limits, inputs: &mrtr::Inputs) -> Result<mrtr::Answer, CatalogError> {
        match self.call_tool_rounds(request, limits, inputs).await {
            Err(CatalogError::Closed(what)) if self.child.is_some() => Err(CatalogError::Closed(self.why_closed(what).await)),
            other => other,
        }
    }

    /// A call's session closed: when the process exited (or does within a moment), why, which
    /// for a confined server names what its sandbox denied, not a bare "connection closed".
    async fn why_closed(&self, what: String) -> String {
        match tokio::time::timeout(std::time::Duration::from_millis(500), self.exited()).await {
            Ok(why) => format!("{what} ({why})"),
            Err(_) => what,
        }
    }

    async fn call_tool_rounds(&self, request: CallRequest<'_>, limits: call::Limits, inputs: &mrtr::Inputs) -> Result<mrtr::Answer, CatalogError> {
        let CallRequest { tool, arguments, cancel, progress, call_id, .. } = request;
        let arguments = call::arguments(arguments)?;
        if cancel.is_cancelled() {
            return Err(CatalogError::Cancelled);
        }
        // A stdio call's log lines are queued for it by the reader (`call_logs`).
        let (logs, queue) = match (&self.direct, call_id) {
            (Some(_), Some(id)) => {
                let (logs, queue) = CallLogs::new(id, self.handler.asker.host.clone());
                (Some(logs), Some(queue))
            }
            _ => (None, None),
        };
        let logs = logs.as_ref();
        let origin = CallOrigin { call_id: call_id.map(str::to_owned), tool: tool.to_owned(), cancel: cancel.clone(), logs: queue };
        let slot = lock(&self.handler.in_flight).enter(origin.clone());
        let _in_flight = InFlightGuard(&self.handler.in_flight, slot);
        // One timer for every round of the call, the host's answers included.
        let deadline = call::Deadline::start(limits.timeout);
        let round = call::Round { slot, limits, deadline: &deadline, cancel: &cancel };
        let arguments = arguments.as_ref();
        let answer = match inputs {
            mrtr::Inputs::Fulfil => {
                let rounds = mrtr::Rounds {
                    asker: &self.handler.asker,
                    server_id: &self.handler.server_id,
                    origin: &origin,
                    deadline: &deadline,
                    max_rounds: DEFAULT_MRTR_MAX_ROUNDS,
                    method: call::METHOD,
                };
                let meta = &*self.request_meta;
                let value = match &self.direct {
                    Some(direct) => rounds.drive(|retry| self.call_direct(direct, tool, arguments, &round, progress.clone(), retry, meta, logs)).await?,
                    None => rounds.drive(|retry| self.call_rmcp(call_params(tool, arguments, retry), &round, progress.clone(), None)).await?,
                };
                // A server that made a task of the call: its end is the call's (`follow.rs`).
                let value = if super::follow::is_task(&value) { self.follow(value, &rounds, progress).await? } else { value };
                mrtr::Answer::Complete(value)
            }
            mrtr::Inputs::PassThrough { capabilities, retry } => {
                let meta = self.caller_meta(capabilities);
                let value = match (&self.direct, &meta) {
                    (Some(direct), Some(meta)) => {
                        let object = serde_json::to_string(meta).unwrap_or_default();
                        let members = object.get(1..object.len().saturating_sub(1)).unwrap_or_default();
                        self.call_direct(direct, tool, arguments, &round, progress, retry.clone(), members, logs).await?
                    }
                    (Some(direct), None) => self.call_direct(direct, tool, arguments, &round, progress, retry.clone(), &self.request_meta, logs).await?,
                    (None, meta) => self.call_rmcp(call_params(tool, arguments, retry.clone()), &round, progress, meta.clone()).await?,
                };
                mrtr::read(value)?
            }
        };
        match answer {
            mrtr::Answer::Complete(value) => Ok(mrtr::Answer::Complete(call::result(value, limits.max_result_bytes)?)),
            asked => Ok(asked),
        }
    }

    /// A 2026-07-28 request's `_meta` naming the caller's capabilities instead of ours (a
    /// session of an older revision has none: its server knows us from `initialize`).
    pub(in crate::catalog) fn caller_meta(&self, capabilities: &Value) -> Option<RequestMetaObject> {
        if self.version.has_initialize() {
            return None;
        }
        let capabilities: ClientCapabilities = serde_json::from_value(capabilities.clone()).unwrap_or_default();
        let me = Handler(self.handler.clone()).get_info();
        Some(RequestMetaObject::with_client_context(self.version.clone(), me.client_info, capabilities))
    }

    /// One round of `call_tool` through rmcp's service (Streamable HTTP): its `result`. rmcp
    /// gets no timeout of its own: `call::answer` keeps the time and tells the server as rmcp would.
    async fn call_rmcp(
        &self,
        params: CallToolRequestParams,
        round: &call::Round<'_>,
        progress: Option<mpsc::UnboundedSender<Value>>,
        meta: Option<RequestMetaObject>,
    ) -> Result<Value, CatalogError> {
        let timeout = round.limits.timeout;
        let failed = |e| self.failed(call::METHOD, timeout, e);
        if round.cancel.is_cancelled() {
            return Err(CatalogError::Cancelled);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut options = PeerRequestOptions::no_options();
        options.meta = meta;
        let handle = self.peer.send_request_with_option(request, options).await.map_err(failed)?;
        self.track(round.slot, &handle.id, &handle.progress_token, progress);
        let id = handle.id.clone();
        let answer = async { handle.await_response().await.map_err(failed) };
        let response = call::answer(answer, round.deadline, round.cancel, |reason| self.tell_cancelled(id, reason)).await?;
        serde_json::to_value(&response).map_err(|e| CatalogError::Mcp(e.to_string()))
    }

    /// One round of `call_tool` on a stdio session: its `result`. The request is written from
    /// here and its response handed back by the reader (`stdio::DirectCalls`), not routed
    /// through rmcp's loop. `meta`: the members the request's `_meta` adds.
    #[allow(clippy::too_many_arguments)]
    async fn call_direct(
        &self,
        direct: &DirectCalls,
        tool: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        round: &call::Round<'_>,
        progress: Option<mpsc::UnboundedSender<Value>>,
        retry: Option<mrtr::Retry>,
        meta: &str,
        logs: Option<&CallLogs>,
    ) -> Result<Value, CatalogError> {
        let (deadline, cancel) = (round.deadline, round.cancel);
        let closed = || CatalogError::closed(call::METHOD);
        let Pending { id: key, reply } = direct.register().ok_or_else(closed)?;
        let id = RequestId::String(key.clone().into());
        let token = ProgressToken(NumberOrString::String(key.clone().into()));
        self.track(round.slot, &id, &token, progress);
        let line = call::request_line(&key, tool, arguments, meta, retry.as_ref())?;
        // The timeout covers the write: a server that stops reading its stdin fills the pipe.
        let mut write = None;
        let sent = call::send(async { write.insert(direct.start_line(line).await).run().await }, deadline, cancel).await;
        match sent {
            Ok(Ok(())) => drop(write),
            Ok(Err(_)) => {
                direct.forget(&key);
                return Err(closed());
            }
            Err((reason, error)) => {
                direct.forget(&key);
                // Any of the request written may reach the server: it is finished, then the notice.
                if let Some(write) = write {
                    write.stop_waiting(cancelled_line(id, reason));
                }
                return Err(error);
            }
        }
        let answer = async {
            match logs {
                Some(logs) => logs.forward_until(reply).await,
                None => reply.await,
            }
            .map_err(|_| closed())
        };
        // Not through rmcp, and not awaited: a notice must not stall the call behind a full pipe.
        let tell = |reason| {
            direct.forget(&key);
            direct.send_later(cancelled_line(id, reason));
            std::future::ready(())
        };
        match call::answer(answer, deadline, cancel, tell).await? {
            Ok(raw) => call::parse_raw(&raw),
            Err(error) => Err(call::error_answer(&error)),
        }
    }

    /// Matches what the server sends about request `id` (questions, progress on `token`) to
    /// the call in `slot`; its progress goes to `sink`, including any that came first.
    fn track(&self, slot: u64, id: &RequestId, token: &ProgressToken, sink: Option<mpsc::UnboundedSender<Value>>) {
        lock(&self.handler.in_flight).sent(slot, token_key(id));
        if let Some(sink) = sink {
            lock(&self.handler.progress).register(token_key(token), sink);
        }
    }

    /// `notifications/cancelled` for request `id`, with `reason` (`call::TIMED_OUT`, `call::CANCELLED`).
    async fn tell_cancelled(&self, id: RequestId, reason: &'static str) {
        let _ = self.peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason.into()))).await;
    }
}

/// `notifications/cancelled` for the direct call `id`, as one line.
fn cancelled_line(id: RequestId, reason: &'static str) -> Vec<u8> {
    let param = CancelledNotificationParam::new(Some(id), Some(reason.into()));
    let notice = ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(CancelledNotification::new(param)));
    let mut line = serde_json::to_vec(&notice).unwrap_or_default();
    line.push(b'\n');
    line
}

/// A `tools/call` request's params, with a retry's answers and state.
fn call_params(tool: &str, arguments: Option<&serde_json::Map<String, Value>>, retry: Option<mrtr::Retry>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Some(map) = arguments {
        params = params.with_arguments(map.clone());
    }
    if let Some(retry) = retry {
        params = params.with_input_responses(retry.responses.into_iter().collect());
        params.request_state = retry.state;
    }
    params
}
