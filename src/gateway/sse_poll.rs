//! SSE polling on the HTTP face (SEP-1699), when `gateway.ssePollAfterMs` asks for it: a tool
//! call still running after that long has
//! its POST SSE stream closed, with a `retry` interval, so a long call does not hold a
//! connection; the client reconnects with `Last-Event-ID` and gets the result on the resumed
//! stream (rmcp's session keeps the call's events). rmcp only closes a stream by its HTTP request
//! id, which a handler never sees: `Sessions` wraps rmcp's session manager to hand each request
//! its stream (`CallStream`, in the request's extensions).

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionHandle, LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, ServerSseMessage, SessionId, SessionManager};
use std::time::Duration;

/// How long the client waits before it reconnects (the `retry` field).
pub const RETRY: Duration = Duration::from_secs(1);

/// The SSE stream a request's answer goes out on.
#[derive(Clone)]
pub struct CallStream {
    session: LocalSessionHandle,
    http_request_id: u64,
}

/// rmcp's in-memory sessions, telling each request its stream.
#[derive(Default)]
pub struct Sessions(LocalSessionManager);

impl Sessions {
    async fn handle(&self, id: &SessionId) -> Result<LocalSessionHandle, LocalSessionManagerError> {
        self.0.sessions.read().await.get(id).cloned().ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone()))
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.0.create_session().await
    }
    async fn initialize_session(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.0.initialize_session(id, message).await
    }
    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.0.has_session(id).await
    }
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.0.close_session(id).await
    }
    /// As rmcp's, with the request's stream put in its extensions.
    async fn create_stream(&self, id: &SessionId, mut message: ClientJsonRpcMessage) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let session = self.handle(id).await?;
        let mut receiver = session.establish_request_wise_channel().await?;
        if let (ClientJsonRpcMessage::Request(req), Some(http_request_id)) = (&mut message, receiver.http_request_id) {
            req.request.extensions_mut().insert(CallStream { session: session.clone(), http_request_id });
        }
        session.push_message(message, receiver.http_request_id).await?;
        Ok(futures::stream::poll_fn(move |cx| receiver.inner.poll_recv(cx)))
    }
    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.0.accept_message(id, message).await
    }
    async fn create_standalone_stream(&self, id: &SessionId) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.0.create_standalone_stream(id).await
    }
    async fn resume(&self, id: &SessionId, last_event_id: String) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.0.resume(id, last_event_id).await
    }
    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.0.restore_session(id).await
    }
}

/// Runs `call`; if it is still running `after` (the config's `gateway.ssePollAfterMs`; `None`:
/// never) and came over an HTTP session's SSE stream, closes that stream (the answer is kept for
/// the client's reconnect) and keeps running.
pub async fn polled<T>(context: &RequestContext<RoleServer>, after: Option<Duration>, call: impl std::future::Future<Output = T>) -> T {
    let (Some(after), Some(stream)) = (after, context.extensions.get::<CallStream>().cloned()) else { return call.await };
    tokio::pin!(call);
    tokio::select! {
        done = &mut call => return done,
        () = tokio::time::sleep(after) => {}
    }
    if let Err(e) = stream.session.close_sse_stream(stream.http_request_id, Some(RETRY)).await {
        tracing::debug!("could not close a long call's SSE stream: {e}");
    }
    call.await
}
