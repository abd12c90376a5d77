//! An OAuth server's MCP HTTP client (rmcp's `AuthClient`, which attaches and refreshes the
//! tokens) with one more chance when another process rotated them: a request that still ends
//! in 401 (the token refused, its refresh rejected) reads the shared record again, and when
//! another process saved new tokens meanwhile (`TokenStore::reload`) it is sent once more with
//! those, instead of being answered `needsAuth`. Before the catalog maps a 401 to a new
//! authorization (`Connection::failed`, `challenged`), the tokens of every process sharing the
//! record have been tried.
//!
//! Invariant: at most one retry per request, and only when the stored record changed; a record
//! no other process shares (a host's own secrets) never retries.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits};

use super::tokens::TokenStore;

#[derive(Clone)]
pub(crate) struct Rotated<C> {
    inner: C,
    tokens: TokenStore,
}

type Result<T, E> = std::result::Result<T, StreamableHttpError<E>>;

impl<C: StreamableHttpClient + Sync> Rotated<C> {
    pub fn new(inner: C, tokens: TokenStore) -> Self {
        Rotated { inner, tokens }
    }

    pub fn inner(&self) -> &C {
        &self.inner
    }

    async fn once_more<T, F, Fut>(&self, auth_token: Option<String>, call: F) -> Result<T, C::Error>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, C::Error>>,
    {
        let seen = self.tokens.adopted();
        match call(auth_token).await {
            // No token given: `AuthClient` loads the adopted one.
            Err(StreamableHttpError::AuthRequired(_)) if self.tokens.reload(seen).await => call(None).await,
            other => other,
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Rotated<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, C::Error> {
        self.post_message_with_response_limits(uri, message, session_id, auth_token, custom_headers, StreamableHttpResponseLimits::default()).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, C::Error> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth_token, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, C::Error> {
        self.once_more(auth_token, |token| {
            self.inner.post_message_with_response_limits(uri.clone(), message.clone(), session_id.clone(), token, custom_headers.clone(), limits)
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), C::Error> {
        self.once_more(auth_token, |token| self.inner.delete_session(uri.clone(), session_id.clone(), token, custom_headers.clone())).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, C::Error> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth_token, custom_headers, max).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, C::Error> {
        self.once_more(auth_token, |token| {
            self.inner.get_stream_with_max_sse_event_size(uri.clone(), session_id.clone(), last_event_id.clone(), token, custom_headers.clone(), max_sse_event_size)
        })
        .await
    }
}
