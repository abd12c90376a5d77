//! Every MCP request a stdio session serves, in its span (`telemetry::request`): `Traced` is
//! rmcp's `Service` over a session's handler, so each request, whatever its method, passes one
//! place. Telemetry off, the request goes straight through. Over `--http` rmcp's Streamable
//! HTTP service takes a `ServerHandler`, not a `Service`: there the session spans its own
//! `tools/call`, `tools/list`, `resources/read` and `prompts/get` (`Session::traced`); other
//! requests get no span over HTTP.

use crate::service::{Telemetry, TelemetryFace, TelemetryRequest};
use rmcp::model::{ClientNotification, ClientRequest, ProtocolVersion, ServerResult};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service, ServiceRole};
use rmcp::ErrorData;
use std::borrow::Cow;

pub struct Traced<S> {
    inner: S,
    /// `network.transport`: `pipe` (stdio) or `tcp` (`--http`).
    transport: &'static str,
}

impl<S> Traced<S> {
    pub fn new(inner: S, transport: &'static str) -> Traced<S> {
        Traced { inner, transport }
    }
}

/// The span's description of a request, when telemetry is on.
pub(crate) fn request_of(method: &str, context: &RequestContext<RoleServer>, transport: &'static str) -> Option<TelemetryRequest> {
    Telemetry::global().is_on().then(|| TelemetryRequest {
        face: TelemetryFace::Gateway,
        method: method.to_string(),
        id: context.id.to_string(),
        session: context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        transport,
    })
}

/// A request's failure as its span says it: the JSON-RPC code.
pub(crate) fn failure<T>(done: &Result<T, ErrorData>) -> Option<String> {
    done.as_ref().err().map(|e| e.code.0.to_string())
}

impl<S: Service<RoleServer>> Service<RoleServer> for Traced<S> {
    async fn handle_request(&self, request: ClientRequest, context: RequestContext<RoleServer>) -> Result<ServerResult, ErrorData> {
        let span = request_of(request.method(), &context, self.transport);
        // Boxed: the handler's future is large, and two of it on a worker's stack overflow it.
        let work = Box::pin(self.inner.handle_request(request, context));
        TelemetryRequest::traced(span, work, failure::<ServerResult>).await
    }

    async fn handle_notification(&self, notification: ClientNotification, context: NotificationContext<RoleServer>) -> Result<(), ErrorData> {
        self.inner.handle_notification(notification, context).await
    }

    fn get_info(&self) -> <RoleServer as ServiceRole>::Info {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }
}
