//! Our small adapter over `rmcp`, the only module besides `stdio.rs` (our stdio reader) and
//! `listen.rs` (the 2026-07-28 notice stream) that names it: one live MCP session with one
//! server (a child process over stdio, or Streamable HTTP), and the three things we ask of it:
//! list tools (following `nextCursor`), call a tool, notice `tools/list_changed`; and the
//! server's questions during a call (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`), which go to the host through `elicit.rs`. A call's rounds (a 2026-07-28
//! server's input-required results) are driven by `mrtr.rs`; each path here sends one round.
//!
//! Here the `Connection` and the listing; `connect.rs` opens one, `handler.rs` is what rmcp
//! calls for the server's requests and notices, `call_paths.rs` sends a `tools/call` round.
//!
//! Invariants:
//! - Every request is bounded by a caller-given deadline; on expiry the server gets
//!   `notifications/cancelled` (from rmcp's timer for a list, from `call.rs` for a call). A
//!   direct call's deadline covers writing its request too.
//! - We speak 2026-07-28 with a server that answers `server/discover` with it, else 2025-11-25
//!   (the newest revision with an `initialize` handshake), per the server's `protocolVersion`
//!   (`auto` by default: rmcp's `ClientLifecycleMode::Auto`, plus one reconnect with
//!   `initialize` when the probe's answer is neither 2026 nor a legacy error). On 2026-07-28
//!   every request carries our version, info and capabilities in `_meta` (rmcp adds them; the
//!   direct stdio path adds the same members, serialised once per connection).
//!   On 2026-07-28 list_changed arrives only on a `subscriptions/listen` stream (`listen.rs`,
//!   one per connection, ending with it).
//! - A list's caching hints (`ttlMs`, `cacheScope`) are merged over its pages as rmcp's
//!   `list_all_tools_with_cache_hint` does: the earliest expiry, none if a page has none,
//!   private if any page is.
//! - rmcp's own response cache is bypassed (we send raw requests): a refresh must ask the
//!   server, and a failure must surface instead of rmcp's stale cached answer.
//! - A stdio server is a child owned through `child.rs`; stopping a session kills its group.
//! - HTTPS uses rustls with the ring provider (installed process-wide on first use if none is).
//! - Env and header values never appear in logs or errors; only their keys do.

mod call_paths;
mod connect;
mod follow;
mod sse;
mod handler;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams, ProtocolVersion, ServerResult};
use rmcp::model::RequestMetaObject;
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::ClientHandler;
use tokio_util::sync::CancellationToken;

use super::authorize::ServerAuth;
use super::call;
use super::child::{self, kill_group, ChildProc};
use super::elicit::Asker;
use super::error::CatalogError;
use super::lock;
use super::pages::Pages;
use super::stdio::DirectCalls;
use super::tool::McpTool;
use handler::{Handler, HandlerShared};

pub(crate) use connect::{connect, ConnectFailure};

const MAX_PAGES: usize = 1000;

/// A live session. Dropping it kills the child's process group; `close` does so politely.
pub(crate) struct Connection {
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    handler: Arc<HandlerShared>,
    child: Option<ChildProc>,
    auth: Option<Arc<ServerAuth>>,
    /// Stdio sessions: tool calls written and answered past rmcp's service loop (`stdio.rs`).
    direct: Option<Arc<DirectCalls>>,
    /// The revision the session speaks.
    version: ProtocolVersion,
    /// How it is reached: `stdio`, `http` (Streamable HTTP) or `sse` (legacy HTTP+SSE).
    pub(crate) transport: &'static str,
    /// What every direct request adds to its `_meta` (2026-07-28 has no session to remember
    /// who we are): the members, serialised once here, or empty.
    request_meta: Box<str>,
    /// Ends the `subscriptions/listen` task (`listen.rs`) with the connection.
    _listening: Option<tokio_util::sync::DropGuard>,
    /// A 2026-07-28 server's resource subscriptions: one listen stream per URI, ended when
    /// its guard goes (unsubscribed, or the connection went).
    resource_streams: Mutex<HashMap<String, tokio_util::sync::DropGuard>>,
}

/// One `tools/list`, all pages, with its caching hints (2026-07-28; legacy servers send none).
#[derive(Debug)]
pub(crate) struct Listed {
    pub tools: Vec<McpTool>,
    /// How long the list is fresh: `None` when a page gave no `ttlMs`.
    pub ttl: Option<Duration>,
    /// A page said `cacheScope: private`.
    pub private: bool,
}
impl Connection {
    fn new(
        service: RunningService<RoleClient, Handler>,
        handler: Arc<HandlerShared>,
        child: Option<ChildProc>,
        auth: Option<Arc<ServerAuth>>,
    ) -> Self {
        let peer = service.peer().clone();
        let version = peer.peer_info().map_or(ProtocolVersion::V_2025_11_25, |i| i.protocol_version.clone());
        let request_meta = if version.has_initialize() {
            Box::default()
        } else {
            let me = Handler(handler.clone()).get_info();
            let meta = RequestMetaObject::with_client_context(version.clone(), me.client_info, me.capabilities);
            let object = serde_json::to_string(&meta).unwrap_or_default();
            // `{...}` without its braces: members for `call::request_line`.
            object.get(1..object.len().saturating_sub(1)).unwrap_or_default().into()
        };
        let listening = super::listen::wanted(&peer).map(|filter| {
            let stop = CancellationToken::new();
            let h = handler.clone();
            // A reopened stream refreshes too: a notice sent in the gap was lost.
            let on: super::listen::OnNotice = Arc::new(move |n| match n {
                super::listen::Notice::ListChanged | super::listen::Notice::Reopened => (h.on_list_changed)(),
                super::listen::Notice::Updated(_) => {}
            });
            tokio::spawn(super::listen::run(handler.server_id.clone(), peer.clone(), filter, None, on, stop.clone()));
            stop.drop_guard()
        });
        let transport = if child.is_some() { "stdio" } else { "http" };
        Connection {
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            handler,
            child,
            auth,
            direct: None,
            transport,
            version,
            request_meta,
            _listening: listening,
            resource_streams: Mutex::new(HashMap::new()),
        }
    }

    /// How the session is reached: `stdio`, `http` or `sse`.
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// The revision the session speaks (`2025-11-25`, `2026-07-28`).
    pub fn protocol_version(&self) -> String {
        self.version.to_string()
    }

    /// Whether the session was opened with `initialize` (2025-11-25 and before).
    pub fn has_initialize(&self) -> bool {
        self.version.has_initialize()
    }

    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// `resources/subscribe` (`on`) or `unsubscribe` of `uri` on a 2026-07-28 server, which
    /// knows neither: a listen stream for the URI whose updates go where a 2025-11-25 server's
    /// `notifications/resources/updated` go (`on_updated`). A stream opened again after a gap
    /// reports the URI updated, since an update in the gap was lost.
    pub(super) async fn watch_resource(&self, uri: &str, on: bool, within: Duration) -> Result<(), CatalogError> {
        if !on {
            lock(&self.resource_streams).remove(uri);
            return Ok(());
        }
        if lock(&self.resource_streams).contains_key(uri) {
            return Ok(());
        }
        let opened = tokio::time::timeout(within, super::listen::open_resource(&self.peer, uri)).await;
        let (filter, first) = opened.unwrap_or_else(|_| Err("subscriptions/listen was not acknowledged in time".into())).map_err(CatalogError::Mcp)?;
        let (h, own) = (self.handler.clone(), uri.to_owned());
        let notice: super::listen::OnNotice = Arc::new(move |n| match n {
            super::listen::Notice::Updated(u) => (h.on_updated)(u.to_owned()),
            super::listen::Notice::Reopened => (h.on_updated)(own.clone()),
            super::listen::Notice::ListChanged => {}
        });
        let stop = CancellationToken::new();
        tokio::spawn(super::listen::run(self.handler.server_id.clone(), self.peer.clone(), filter, Some(first), notice, stop.clone()));
        lock(&self.resource_streams).insert(uri.to_owned(), stop.drop_guard());
        Ok(())
    }

    /// Who answers the server's questions, and for which server: for `mrtr::Rounds`.
    pub(super) fn asker(&self) -> (&Asker, &str) {
        (&self.handler.asker, &self.handler.server_id)
    }

    /// `e` as a `CatalogError`; a 401 or 403 `insufficient_scope` of an OAuth server starts
    /// its authorization and fails the request at once.
    pub(super) fn failed(&self, what: &str, timeout: Duration, e: ServiceError) -> CatalogError {
        if let (Some(auth), Some(challenge)) = (&self.auth, e.auth_challenge()) {
            return CatalogError::NeedsAuth(auth.challenged(challenge.to_owned()));
        }
        service_error(what, timeout, e)
    }

    /// Whether this session can still carry requests.
    pub fn is_alive(&self) -> bool {
        let exited = self.child.as_ref().is_some_and(|c| c.exited.borrow().is_some());
        !exited && !self.peer.is_transport_closed()
    }

    /// Resolves when the child process has exited (never, for HTTP): the reason as text.
    pub async fn exited(&self) -> String {
        match &self.child {
            Some(c) => {
                let mut rx = c.exited.clone();
                let _ = rx.wait_for(|e| e.is_some()).await;
                let why = rx.borrow().clone();
                why.unwrap_or_else(|| "server process exited".into())
            }
            None => std::future::pending().await,
        }
    }

    /// All tools, following `nextCursor`, within `timeout` for all pages together.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Listed, CatalogError> {
        let deadline = Instant::now() + timeout;
        let mut pages = Pages::default();
        let mut hints = Hints::default();
        let mut seen_cursors = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(CatalogError::timed_out("tools/list", timeout));
            }
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let response = self
                .peer
                .send_request_with_option(request, PeerRequestOptions::with_timeout(remaining))
                .await
                .map_err(|e| self.failed("tools/list", timeout, e))?
                .await_response()
                .await
                .map_err(|e| self.failed("tools/list", timeout, e))?;
            let ServerResult::ListToolsResult(page) = response else {
                return Err(CatalogError::Mcp("unexpected response to tools/list".into()));
            };
            hints.page(page.ttl_ms, page.cache_scope);
            pages = pages.add(page.tools, &self.handler.server_id).await?;
            match page.next_cursor {
                Some(next) if !next.is_empty() => {
                    if !seen_cursors.insert(next.clone()) {
                        return Err(CatalogError::Mcp(format!("tools/list repeated cursor {next:?}")));
                    }
                    cursor = Some(next);
                }
                _ => return Ok(hints.listed(pages.tools)),
            }
        }
        Err(CatalogError::Mcp(format!("tools/list has more than {MAX_PAGES} pages")))
    }
    /// Ends the session: closes the transport (a stdio server sees EOF), then SIGTERM and,
    /// after `grace`, SIGKILL to the child's whole process group.
    pub async fn close(&self, grace: Duration) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
        if let Some(child) = &self.child {
            let mut rx = child.exited.clone();
            if tokio::time::timeout(grace, rx.wait_for(|e| e.is_some())).await.is_err() {
                kill_group(child.pgid, child::SIGTERM);
                let _ = tokio::time::timeout(grace, rx.wait_for(|e| e.is_some())).await;
            }
            // Grandchildren may outlive the leader; the group goes in any case.
            kill_group(child.pgid, child::SIGKILL);
        }
    }
}

/// The caching hints of a list's pages, merged (rmcp's `MergedList` rule).
struct Hints {
    /// The earliest expiry so far; `None` once a page had no `ttlMs`.
    expires: Option<Instant>,
    first: bool,
    private: bool,
}

impl Default for Hints {
    fn default() -> Self {
        Hints { expires: None, first: true, private: false }
    }
}

impl Hints {
    fn page(&mut self, ttl_ms: Option<u64>, scope: Option<rmcp::model::CacheScope>) {
        let expiry = ttl_ms.and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)));
        self.expires = if std::mem::take(&mut self.first) { expiry } else { self.expires.zip(expiry).map(|(a, b)| a.min(b)) };
        self.private |= scope == Some(rmcp::model::CacheScope::Private);
    }

    fn listed(self, tools: Vec<McpTool>) -> Listed {
        let ttl = self.expires.map(|at| at.saturating_duration_since(Instant::now()));
        Listed { tools, ttl, private: self.private }
    }
}

fn service_error(what: &str, timeout: Duration, e: ServiceError) -> CatalogError {
    match e {
        ServiceError::Timeout { .. } => CatalogError::timed_out(what, timeout),
        ServiceError::McpError(data) => call::rpc_error(Some(data.code.0), &data.message, data.data),
        ServiceError::TransportClosed => CatalogError::closed(what),
        ServiceError::Cancelled { .. } => CatalogError::Cancelled,
        other => CatalogError::Mcp(crate::secret::redact_urls_in(&format!("{what}: {other}")).into_owned()),
    }
}
