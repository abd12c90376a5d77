//! The `subscriptions/listen` stream of a 2026-07-28 session: such a server sends
//! `notifications/tools/list_changed` only there (a 2025-11-25 one sends it on the session, to
//! `client/handler.rs`). Each notice runs the same callback as the legacy one (`refresh.rs`
//! `on_list_changed`).
//!
//! Resources' and prompts' `list_changed` come the same way and run the same callback (one
//! refresh fetches all three lists).
//!
//! A resource subscription to such a server is a stream of its own, filtered on that one URI
//! (`resourceSubscriptions`, which replaces `resources/subscribe` in 2026-07-28): opened by
//! `open_resource` when the first subscriber comes, run by the same `run`, ended (cancelled)
//! when the last one leaves (`client/mod.rs` `watch_resource`).
//!
//! Invariants: one stream per connection, opened only when the server's capabilities say
//! `listChanged` for tools, resources or prompts; it ends with the connection (its token is cancelled when the
//! `Connection` goes, and a closed transport ends it). A stream that ends otherwise (abrupt
//! close, lag, a graceful end the server chose) is opened again after a back-off that doubles
//! from `BACKOFF_MIN` to `BACKOFF_MAX` and starts over once a stream lived `STABLE`; the
//! reopened stream refreshes once, since a notice sent in the gap was lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, ServiceError, Subscription};
use tokio_util::sync::CancellationToken;

const BACKOFF_MIN: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
const STABLE: Duration = Duration::from_secs(30);

/// The stream's filter for a session's server: `None` unless it speaks 2026-07-28 and declares
/// `listChanged` for tools, resources or prompts (all three refresh together).
pub(super) fn wanted(peer: &Peer<RoleClient>) -> Option<SubscriptionFilter> {
    let info = peer.peer_info()?;
    if info.protocol_version.has_initialize() {
        return None;
    }
    let caps = &info.capabilities;
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
    let mut filter = SubscriptionFilter::builder();
    if tools {
        filter = filter.tools_list_changed();
    }
    if resources {
        filter = filter.resources_list_changed();
    }
    if prompts {
        filter = filter.prompts_list_changed();
    }
    (tools || resources || prompts).then(|| filter.build())
}

/// What a stream brings its owner.
pub(super) enum Notice<'a> {
    /// Tools', resources' or prompts' `list_changed`.
    ListChanged,
    /// `notifications/resources/updated`, with the URI.
    Updated(&'a str),
    /// The stream was opened again: a notice sent in the gap was lost.
    Reopened,
}

pub(super) type OnNotice = Arc<dyn Fn(Notice<'_>) + Send + Sync>;

/// The stream of `uri`'s updates, once the server acknowledged that very URI.
pub(super) async fn open_resource(peer: &Peer<RoleClient>, uri: &str) -> Result<(SubscriptionFilter, Subscription), String> {
    let filter = SubscriptionFilter::builder().resource_subscription(uri).build();
    let mut stream = peer.listen(filter.clone()).await.map_err(|e| format!("subscriptions/listen: {e}"))?;
    if stream.acknowledged().resource_subscriptions.as_ref().is_some_and(|uris| uris.iter().any(|u| u == uri)) {
        return Ok((filter, stream));
    }
    let _ = stream.cancel().await;
    Err(format!("the server did not accept a subscription to {uri}"))
}

/// Keeps one stream open until `stop` or the transport closes (`first`: one already open);
/// `on` runs per notice.
pub(super) async fn run(
    server_id: String,
    peer: Peer<RoleClient>,
    filter: SubscriptionFilter,
    mut first: Option<Subscription>,
    on: OnNotice,
    stop: CancellationToken,
) {
    let mut backoff = BACKOFF_MIN;
    let mut reopened = false;
    loop {
        let started = Instant::now();
        let opened = match first.take() {
            Some(stream) => Ok(stream),
            None => tokio::select! {
                s = peer.listen(filter.clone()) => s,
                _ = stop.cancelled() => return,
            },
        };
        match opened {
            Ok(mut stream) => {
                tracing::debug!(server = %server_id, "subscriptions/listen open");
                if reopened {
                    on(Notice::Reopened);
                }
                loop {
                    let next = tokio::select! {
                        n = stream.next() => n,
                        _ = stop.cancelled() => {
                            let _ = stream.cancel().await;
                            return;
                        }
                    };
                    match next {
                        Ok(Some(
                            ServerNotification::ToolListChangedNotification(_)
                            | ServerNotification::ResourceListChangedNotification(_)
                            | ServerNotification::PromptListChangedNotification(_),
                        )) => {
                            tracing::debug!(server = %server_id, "list_changed (listen)");
                            on(Notice::ListChanged);
                        }
                        Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => on(Notice::Updated(&n.params.uri)),
                        Ok(Some(_)) => {}
                        Ok(None) => {
                            tracing::debug!(server = %server_id, end = ?stream.end(), "subscriptions/listen ended");
                            break;
                        }
                        Err(e) => {
                            tracing::debug!(server = %server_id, error = %e, "subscriptions/listen failed");
                            break;
                        }
                    }
                }
            }
            // The server advertised listChanged but knows no listen: nothing to wait for.
            Err(ServiceError::McpError(e)) if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => {
                tracing::info!(server = %server_id, "server has no subscriptions/listen; its list is fresh at each refresh only");
                return;
            }
            Err(e) => tracing::debug!(server = %server_id, error = %e, "subscriptions/listen refused"),
        }
        if peer.is_transport_closed() || stop.is_cancelled() {
            return;
        }
        if started.elapsed() >= STABLE {
            backoff = BACKOFF_MIN;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.cancelled() => return,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
        reopened = true;
    }
}
