//! The rmcp side of a session: `Handler`, what rmcp calls when the server sends something
//! outside a response. It declares our capabilities (only those the host answers), hands the
//! server's questions (`elicitation/create`, `sampling/createMessage`, `roots/list`) to the
//! host through `elicit.rs` and its log messages to the call they belong to, routes progress
//! by token, and turns list_changed and resources/updated into the server's callbacks.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitationCapability, FormElicitationCapability,
    Implementation, ProgressNotificationParam, ProtocolVersion, RootsCapabilities, SamplingCapability,
    UrlElicitationCapability,
};
// Sampling and roots are deprecated in 2026-07-28 (SEP-2577); servers still ask for them.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;

use crate::catalog::call;
use crate::catalog::elicit::{self, Asker, CallOrigin, InFlight, Unanswered};
use crate::catalog::lock;
use crate::secret::redactor::Redactor;

pub(super) struct HandlerShared {
    pub(super) server_id: String,
    pub(super) progress: Mutex<call::Progress>,
    pub(super) on_list_changed: Box<dyn Fn() + Send + Sync>,
    /// `notifications/resources/updated`, with the resource's URI.
    pub(super) on_updated: Box<dyn Fn(String) + Send + Sync>,
    pub(super) asker: Asker,
    pub(super) in_flight: Mutex<InFlight>,
    /// The server's secret values, redacted from the log while the session (rmcp's tasks
    /// included) lives.
    pub(super) _redactor: Redactor,
}

#[derive(Clone)]
pub(super) struct Handler(pub(super) Arc<HandlerShared>);

pub(super) fn token_key(token: &impl serde::Serialize) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // Declared only as far as the host answers: a server that sees no capability can fall
        // back (ask in the tool's result, use its own default) instead of meeting a decline the
        // user never gave.
        let asks = self.0.asker.asks;
        let mut caps = ClientCapabilities::default();
        if asks.elicitation {
            let mut e = ElicitationCapability::new();
            e.form = Some(FormElicitationCapability::new());
            e.url = Some(UrlElicitationCapability::new());
            caps.elicitation = Some(e);
        }
        if asks.sampling {
            caps.sampling = Some(SamplingCapability::default());
        }
        if asks.roots {
            caps.roots = Some(RootsCapabilities::default());
        }
        if asks.views {
            let mut ui = serde_json::Map::new();
            ui.insert("mimeTypes".into(), serde_json::json!([crate::apps::VIEW_MIME]));
            caps.extensions.get_or_insert_with(Default::default).insert(crate::apps::EXTENSION.into(), ui);
        }
        // A server may make a task of a call: it is followed to its end (`follow.rs`).
        caps.extensions.get_or_insert_with(Default::default).insert(rmcp::model::TASKS_EXTENSION_ID.into(), serde_json::Map::new());
        ClientConfig::new(caps, Implementation::new("toolreg", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, ErrorData> {
        let origin = self.0.origin(&cx);
        let v = serde_json::to_value(&request).unwrap_or(Value::Null);
        let params = elicit::ElicitParams::from_request(&self.0.server_id, origin.as_ref(), &v);
        let answer = self.0.asker.elicit(params, origin.as_ref(), &cx.ct).await.map_err(|e| ErrorData::internal_error(e, None))?;
        let mut result = rmcp::model::ElicitResult::new(match answer.action {
            elicit::ElicitAction::Accept => rmcp::model::ElicitationAction::Accept,
            elicit::ElicitAction::Decline => rmcp::model::ElicitationAction::Decline,
            elicit::ElicitAction::Cancel => rmcp::model::ElicitationAction::Cancel,
        });
        result.content = answer.content.map(Value::Object);
        Ok(result)
    }

    #[allow(deprecated)] // sampling: deprecated in 2026-07-28, still asked on 2025-11-25
    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let origin = self.0.origin(&cx);
        let params = elicit::SampleParams::from_request(&self.0.server_id, origin.as_ref(), serde_json::to_value(&request).unwrap_or(Value::Null));
        let v = self.0.asker.sample(params, origin.as_ref(), &cx.ct).await.map_err(|u| refused::<rmcp::model::CreateMessageRequestMethod>(u, "sample"))?;
        serde_json::from_value(v).map_err(|e| ErrorData::internal_error(format!("the host's sampling result is not a CreateMessageResult: {e}"), None))
    }

    /// A 2025-11-25 server's `roots/list`: the host's roots (`host/roots`). Without the host's
    /// capability we declared none, and a server that asks anyway gets `-32601`.
    #[allow(deprecated)] // roots: deprecated by SEP-2577, still asked
    async fn list_roots(&self, cx: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let origin = self.0.origin(&cx);
        let params = elicit::RootsParams::new(&self.0.server_id, origin.as_ref());
        let r = self.0.asker.roots(params, origin.as_ref(), &cx.ct).await.map_err(|u| refused::<rmcp::model::ListRootsRequestMethod>(u, "list its roots"))?;
        serde_json::from_value(serde_json::to_value(r).unwrap_or(Value::Null))
            .map_err(|e| ErrorData::internal_error(format!("the host's roots are not a ListRootsResult: {e}"), None))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _cx: NotificationContext<RoleClient>) {
        let key = token_key(&params.progress_token);
        let value = serde_json::to_value(&params).unwrap_or(Value::Null);
        lock(&self.0.progress).deliver(key, value);
    }

    /// A server's log message goes, verbatim, to the client of the call it was sent during:
    /// the call whose response stream carried it (Streamable HTTP), else the sole call in
    /// flight on this server. With several in flight and no stream to tell, or none, it is
    /// dropped: sending it to every caller could show one client what was meant for another.
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in 2025-11-25
    async fn on_logging_message(&self, params: rmcp::model::LoggingMessageNotificationParam, cx: NotificationContext<RoleClient>) {
        let via = match cx.extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => Some(token_key(id)),
            _ => None,
        };
        let call_id = lock(&self.0.in_flight).find(via.as_deref()).and_then(|o| o.call_id);
        match call_id {
            Some(call_id) => {
                let message = serde_json::to_value(&params).unwrap_or(Value::Null);
                self.0.asker.host.log(&call_id, message).await;
            }
            // The data is the server's message to a client, never our log's: only that it came.
            None => tracing::trace!(server = %self.0.server_id, "notifications/message outside a call we can tell: dropped"),
        }
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.0.server_id, "tools/list_changed");
        (self.0.on_list_changed)();
    }

    // Resources and prompts are fetched with the tools (`resources.rs`): one refresh for all.
    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.0.server_id, "resources/list_changed");
        (self.0.on_list_changed)();
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.0.server_id, "prompts/list_changed");
        (self.0.on_list_changed)();
    }

    async fn on_resource_updated(&self, params: rmcp::model::ResourceUpdatedNotificationParam, _cx: NotificationContext<RoleClient>) {
        (self.0.on_updated)(params.uri);
    }
}

/// A question the host did not answer, as the error the server gets: `-32601` when the host
/// cannot answer that kind (`M`, the request's method).
fn refused<M: rmcp::model::ConstString>(u: Unanswered, doing: &str) -> ErrorData {
    match u {
        Unanswered::NotSupported => ErrorData::method_not_found::<M>(),
        Unanswered::TimedOut(t) => ErrorData::internal_error(format!("the host did not answer within {} ms", t.as_millis()), None),
        Unanswered::Cancelled => ErrorData::internal_error("cancelled", None),
        Unanswered::Failed(e) => ErrorData::internal_error(format!("the host could not {doing}: {e}"), None),
    }
}

impl HandlerShared {
    /// The tool call a server's request belongs to: the one whose response stream carried it
    /// (Streamable HTTP), else the only call in flight.
    fn origin(&self, cx: &RequestContext<RoleClient>) -> Option<CallOrigin> {
        let via = match cx.extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => Some(token_key(id)),
            _ => None,
        };
        lock(&self.in_flight).find(via.as_deref())
    }
}
