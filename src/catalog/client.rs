//! Our small adapter over `rmcp`, the only file besides `stdio.rs` (our stdio reader) and
//! `listen.rs` (the 2026-07-28 notice stream) that names it: one live MCP session with one
//! server (a child process over stdio, or Streamable HTTP), and the three things we ask of it:
//! list tools (following `nextCursor`), call a tool, notice `tools/list_changed`; and the
//! server's questions during a call (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`), which go to the host through `elicit.rs`. A call's rounds (a 2026-07-28
//! server's input-required results) are driven by `mrtr.rs`; each path here sends one round.
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientCapabilities,
    ClientNotification,
    ClientConfig, ClientJsonRpcMessage, ClientRequest, ElicitRequestParams, NumberOrString, ProgressToken, RequestId,
    ElicitationCapability, FormElicitationCapability, Implementation, ListToolsRequest,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, RootsCapabilities, SamplingCapability, ServerResult,
    UrlElicitationCapability, DEFAULT_MRTR_MAX_ROUNDS,
};
// Sampling and roots are deprecated in 2026-07-28 (SEP-2577); servers still ask for them.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::model::RequestMetaObject;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, InboundStreamOrigin, NotificationContext, Peer, PeerRequestOptions, RequestContext, RoleClient, RunningService,
    ServiceError,
};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::authorize::ServerAuth;
use super::child::{self, kill_group, ChildProc};
use super::call;
use super::call_logs::{self, CallLogs};
use super::lock;
use super::config::{ProtocolChoice, ServerConfig, Transport};
use super::error::CatalogError;
use super::tool::McpTool;
use super::elicit::{self, Asker, CallOrigin, InFlight, InFlightGuard, Unanswered};
use super::mrtr;
use super::stdio::{BoundedStdio, DirectCalls, Pending};
use crate::secret::redactor::Redactor;

const MAX_PAGES: usize = 1000;

struct HandlerShared {
    server_id: String,
    progress: Mutex<call::Progress>,
    on_list_changed: Box<dyn Fn() + Send + Sync>,
    /// `notifications/resources/updated`, with the resource's URI.
    on_updated: Box<dyn Fn(String) + Send + Sync>,
    asker: Asker,
    in_flight: Mutex<InFlight>,
    /// The server's secret values, redacted from the log while the session (rmcp's tasks
    /// included) lives.
    _redactor: Redactor,
}

#[derive(Clone)]
struct Handler(Arc<HandlerShared>);

fn token_key(token: &impl serde::Serialize) -> String {
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

/// Why a connect failed: `Verdict` when the server's answer to `server/discover` rules out
/// 2026-07-28 but rmcp did not fall back (it knows discover but not our version, it answered
/// with something other than a discover result, or rmcp's own fallback failed on the same
/// stream), so one more connect with `initialize` alone may still work.
enum Failed {
    Verdict(String),
    Other(String),
}

impl From<String> for Failed {
    fn from(why: String) -> Self {
        Failed::Other(why)
    }
}

impl From<&str> for Failed {
    fn from(why: &str) -> Self {
        Failed::Other(why.to_owned())
    }
}

/// `legacy_known`: an earlier `auto` connect of this server ended on 2025-11-25, so this one
/// goes straight to `initialize` (a server that ignores `server/discover` costs rmcp's fixed
/// 10 s probe at every connect otherwise).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn connect(
    config: &ServerConfig,
    timeout: Duration,
    max_message_bytes: usize,
    on_list_changed: Box<dyn Fn() + Send + Sync>,
    on_updated: Box<dyn Fn(String) + Send + Sync>,
    asker: Asker,
    auth: Option<Arc<ServerAuth>>,
    legacy_known: bool,
) -> Result<Connection, String> {
    // Registered before the server runs: its first stderr line may quote them.
    let redactor = Redactor::new(config.secret_values());
    let handler = Arc::new(HandlerShared {
        server_id: config.id.clone(),
        progress: Mutex::new(call::Progress::default()),
        on_list_changed,
        on_updated,
        asker,
        in_flight: Mutex::new(InFlight::default()),
        _redactor: redactor.clone(),
    });
    let open = Open { config, timeout, deadline: Instant::now() + timeout, max_message_bytes, handler, redactor, auth };
    let lifecycle = match (config.protocol_version, legacy_known) {
        (ProtocolChoice::V2025_11_25, _) | (ProtocolChoice::Auto, true) => ClientLifecycleMode::Initialize,
        (ProtocolChoice::V2026_07_28, _) => ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        (ProtocolChoice::Auto, false) => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
    };
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    match open.session(lifecycle).await {
        Ok(c) => Ok(c),
        Err(Failed::Verdict(why)) if auto => {
            tracing::info!(server = %config.id, "no 2026-07-28 session ({why}); connecting again with initialize");
            open.session(ClientLifecycleMode::Initialize).await.map_err(|f| match f {
                Failed::Verdict(w) | Failed::Other(w) => w,
            })
        }
        Err(Failed::Verdict(why) | Failed::Other(why)) => Err(why),
    }
}

/// One connect's inputs; `session` may run twice (the fallback), within one `deadline`.
struct Open<'a> {
    config: &'a ServerConfig,
    timeout: Duration,
    deadline: Instant,
    max_message_bytes: usize,
    handler: Arc<HandlerShared>,
    redactor: Redactor,
    auth: Option<Arc<ServerAuth>>,
}

impl Open<'_> {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The handshake's failure as text, classified (`Failed::Verdict`).
    fn failed(&self, e: &ClientInitializeError) -> Failed {
        let why = format!("initialize failed: {}", describe(e));
        match e {
            ClientInitializeError::NoCompatibleProtocolVersion { .. }
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::LegacyFallbackFailed { .. } => Failed::Verdict(why),
            _ => Failed::Other(why),
        }
    }

    async fn session(&self, lifecycle: ClientLifecycleMode) -> Result<Connection, Failed> {
        let (config, handler, auth) = (self.config, &self.handler, &self.auth);
        let ms = self.timeout.as_millis();
        let timed_out = || Failed::Other(format!("initialize timed out after {ms} ms"));
        match &config.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let mut child = child::spawn(&config.id, command, args, env, cwd.as_deref()).await?;
                let stdin = child.stdin.take().ok_or("child has no stdin")?;
                let stdout = child.stdout.take().ok_or("child has no stdout")?;
                if let Some(stderr) = child.stderr.take() {
                    tokio::spawn(child::forward_stderr(config.id.clone(), stderr, self.redactor.clone()));
                }
                let child = ChildProc::own(child);
                let mut exited = child.exited.clone();
                let transport = BoundedStdio::new(stdout, stdin, self.max_message_bytes);
                let direct = transport.direct();
                let shared = handler.clone();
                direct.on_notice(move |text| call_logs::take(&shared.in_flight, text));
                let served = tokio::select! {
                    r = tokio::time::timeout(self.left(), Handler(handler.clone()).serve_with_lifecycle(transport, lifecycle)) => r,
                    why = exited.wait_for(|e| e.is_some()) => {
                        let why = why.map(|w| w.clone().unwrap_or_default()).unwrap_or_default();
                        return Err(Failed::Other(format!("{why} during initialize")));
                    }
                };
                let service = match served {
                    Err(_) => return Err(timed_out()),
                    Ok(Err(e)) => return Err(self.failed(&e)),
                    Ok(Ok(s)) => s,
                };
                let mut connection = Connection::new(service, handler.clone(), Some(child), None);
                connection.direct = Some(direct);
                Ok(connection)
            }
            Transport::Http { url, headers } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                use rmcp::transport::StreamableHttpClientTransport;
                let mut map = HashMap::new();
                for (k, v) in headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| format!("invalid HTTP header name {k:?}"))?;
                    let mut value = http::HeaderValue::from_str(v.expose())
                        .map_err(|_| format!("invalid value for HTTP header {k:?}"))?;
                    // Keeps it out of any `Debug` of a request (hyper, reqwest).
                    value.set_sensitive(true);
                    map.insert(name, value);
                }
                install_tls_provider();
                let transport_config = StreamableHttpClientTransportConfig::with_uri(url.expose()).custom_headers(map);
                let served = match auth {
                    // OAuth: requests carry the server's bearer token; a 401/403 starts authorization.
                    Some(auth) => {
                        // Saved tokens are read from the host and their server found again first.
                        let Ok(client) = tokio::time::timeout(self.left(), auth.http_client()).await else {
                            return Err(Failed::Other(format!("initialize timed out after {ms} ms (loading saved OAuth tokens)")));
                        };
                        let transport = StreamableHttpClientTransport::with_client(client, transport_config);
                        tokio::time::timeout(self.left(), Handler(handler.clone()).serve_with_lifecycle(transport, lifecycle)).await
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::from_config(transport_config);
                        tokio::time::timeout(self.left(), Handler(handler.clone()).serve_with_lifecycle(transport, lifecycle)).await
                    }
                };
                let service = match served {
                    Err(_) => return Err(timed_out()),
                    Ok(Err(e)) => {
                        // A 401 (or 403 insufficient_scope) carries the challenge that starts OAuth.
                        if let (Some(auth), Some(challenge)) = (auth, e.auth_challenge()) {
                            return Err(Failed::Other(auth.challenged(challenge.to_owned())));
                        }
                        return Err(self.failed(&e));
                    }
                    Ok(Ok(s)) => s,
                };
                Ok(Connection::new(service, handler.clone(), None, auth.clone()))
            }
        }
    }
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
        Connection {
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            handler,
            child,
            auth,
            direct: None,
            version,
            request_meta,
            _listening: listening,
            resource_streams: Mutex::new(HashMap::new()),
        }
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
        let mut tools: Vec<McpTool> = Vec::new();
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
            for tool in page.tools {
                let tool = to_mcp_tool(serde_json::to_value(&tool).unwrap_or(Value::Null));
                match tool {
                    Some(t) if tools.iter().any(|o| o.name == t.name) => {
                        tracing::warn!(server = %self.handler.server_id, tool = %t.name, "duplicate tool name; keeping the first");
                    }
                    Some(t) => tools.push(t),
                    None => tracing::warn!(server = %self.handler.server_id, "tool without a name; skipped"),
                }
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() => {
                    if !seen_cursors.insert(next.clone()) {
                        return Err(CatalogError::Mcp(format!("tools/list repeated cursor {next:?}")));
                    }
                    cursor = Some(next);
                }
                _ => return Ok(hints.listed(tools)),
            }
        }
        Err(CatalogError::Mcp(format!("tools/list has more than {MAX_PAGES} pages")))
    }

    /// One `tools/call`, under the rules of `call.rs`. Returns the `CallToolResult` as JSON; a
    /// tool-level failure is `Ok` with `isError: true`, only protocol/transport failures are
    /// `Err`. `call_id` names the call in the questions the server asks meanwhile, whether as
    /// requests (2025-11-25) or as input-required results (2026-07-28, `mrtr.rs`), which are
    /// asked of the host or, under `Inputs::PassThrough`, handed back as `Answer::InputRequired`.
    #[allow(clippy::too_many_arguments)]
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Value,
        limits: call::Limits,
        cancel: CancellationToken,
        progress: Option<mpsc::UnboundedSender<Value>>,
        call_id: Option<&str>,
        inputs: &mrtr::Inputs,
    ) -> Result<mrtr::Answer, CatalogError> {
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
    pub(super) fn caller_meta(&self, capabilities: &Value) -> Option<RequestMetaObject> {
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

/// `notifications/cancelled` for the direct call `id`, as one line.
fn cancelled_line(id: RequestId, reason: &'static str) -> Vec<u8> {
    let param = CancelledNotificationParam::new(Some(id), Some(reason.into()));
    let notice = ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(CancelledNotification::new(param)));
    let mut line = serde_json::to_vec(&notice).unwrap_or_default();
    line.push(b'\n');
    line
}

/// reqwest is built with rustls but no crypto provider (the default one, aws-lc, is a heavy C
/// build); we install ring once, unless the process already chose a provider.
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An error and its causes on one line, without rmcp's Rust type names: the root cause
/// (refused connection, bad certificate) is what a user needs to see.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut next = Some(e);
    while let Some(err) = next {
        let mut text = err.to_string();
        // rmcp prints `Transport [rmcp::transport::worker::WorkerTransport<...>]`.
        while let (Some(a), Some(b)) = (text.find(" ["), text.find(']')) {
            if b < a || !text[a..b].contains("::") {
                break;
            }
            text.replace_range(a..=b, "");
        }
        if !out.contains(text.as_str()) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        next = err.source();
    }
    // reqwest quotes the URL it failed on, query (a token) included.
    crate::secret::redact_urls_in(&out).into_owned()
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

fn service_error(what: &str, timeout: Duration, e: ServiceError) -> CatalogError {
    match e {
        ServiceError::Timeout { .. } => CatalogError::timed_out(what, timeout),
        ServiceError::McpError(data) => call::rpc_error(Some(data.code.0), &data.message, data.data),
        ServiceError::TransportClosed => CatalogError::closed(what),
        ServiceError::Cancelled { .. } => CatalogError::Cancelled,
        other => CatalogError::Mcp(crate::secret::redact_urls_in(&format!("{what}: {other}")).into_owned()),
    }
}

fn to_mcp_tool(v: Value) -> Option<McpTool> {
    let name = v.get("name")?.as_str()?.to_owned();
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let nonnull = |k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
    Some(McpTool {
        title: text("title"),
        description: text("description").unwrap_or_default(),
        input_schema: nonnull("inputSchema").unwrap_or_else(|| serde_json::json!({"type": "object"})),
        output_schema: nonnull("outputSchema"),
        annotations: nonnull("annotations"),
        name,
    })
}
