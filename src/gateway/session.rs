//! One MCP client session: rmcp's `ServerHandler` over the shared `Gateway`. Handlers are
//! sandwiches as in `server`: MCP types in, the core (listing, `route::call`), MCP types out.
//!
//! A 2026-07-28 client has no session to be told on: it opens `subscriptions/listen`, and each
//! stream is told of every listing change (`Gateway::list_changes`). `tools/list` says
//! `ttlMs: 0, cacheScope: private`: the list is answered from memory (asking again is cheap),
//! a change is announced at once, and what a client sees depends on the gateway's config.

use super::client_host::{ApprovalRound, Asking, ClientHost};
use super::resources::{Caller, Subscribed};
use super::review::{self, Review};
use super::auth_round::{self, Authorized};
use super::review_round::{self, Reviewed};
use super::{passthru, rounds, Gateway, Lens, Listing};
use crate::service::Decision;
use crate::service::{Call, HostAbilities, InvokeError, Invoked, Settings};
use crate::service::CallAsk;
use crate::service::{MediaMode, ModelOutput, Part};
use crate::service::{Mcp, PassThrough, Relay};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CancelTaskParams, GetTaskParams, GetTaskResult, UpdateTaskParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ResultType,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::sync::Arc;

#[derive(Clone)]
pub struct Session {
    pub gw: Arc<Gateway>,
    /// What this client sees: the whole gateway, or a profile's lens.
    pub lens: Arc<Lens>,
    /// Whose the results cut in this MCP session are (`results`): only it reads them.
    pub owner: String,
    /// Served over `--http`: the session spans its requests itself (`traced.rs`).
    http: bool,
}

impl Session {
    pub fn new(gw: Arc<Gateway>, lens: Arc<Lens>) -> Session {
        Session { gw, lens, http: false, owner: format!("mcp-session:{}", crate::service::Service::new_reference()) }
    }
}

impl Session {
    /// A session of `--http`, which spans its main requests itself.
    pub fn over_http(gw: Arc<Gateway>, lens: Arc<Lens>) -> Session {
        let mut s = Session::new(gw, lens);
        s.http = true;
        s
    }

    /// `work` in a span of `method` (over `--http`; stdio's `Traced` spans every request).
    fn traced<'a, T>(&self, method: &str, context: &RequestContext<RoleServer>, work: impl std::future::Future<Output = Result<T, ErrorData>> + 'a) -> impl std::future::Future<Output = Result<T, ErrorData>> + 'a
    where
        T: 'a,
    {
        self.spanned(self.span(method, context), work)
    }

    fn span(&self, method: &str, context: &RequestContext<RoleServer>) -> Option<crate::service::TelemetryRequest> {
        if self.http { super::traced::request_of(method, context, "tcp") } else { None }
    }

    /// `work` boxed before anything holds it: rmcp's request handling holds a handler's future
    /// by value, a few levels deep and, in a debug build, once more in each level's stack frame,
    /// so a handler's future is kept a pointer's size (a tool call's is the whole pipeline's).
    fn spanned<'a, T>(&self, span: Option<crate::service::TelemetryRequest>, work: impl std::future::Future<Output = Result<T, ErrorData>> + 'a) -> impl std::future::Future<Output = Result<T, ErrorData>> + 'a
    where
        T: 'a,
    {
        crate::service::TelemetryRequest::traced(span, Box::pin(work), super::traced::failure::<T>)
    }
}

impl Drop for Session {
    /// The session's kept results go with it.
    fn drop(&mut self) {
        self.lens.service.results.forget(&self.owner);
        self.lens.service.grants.forget_session(&self.owner);
    }
}

const INSTRUCTIONS: &str = "toolreg serves the tools of several MCP servers. Tools listed here are called directly; \
the others are found with tool_search, read with tool_inspect and run with tool_invoke.";

/// A listen stream's resource subscriptions, left however the stream ends (rmcp may drop the
/// `listen` future rather than let it return).
struct Unsubscribing {
    gw: Arc<Gateway>,
    lens: Arc<Lens>,
    uris: Vec<String>,
    stream: Subscribed,
}

impl Drop for Unsubscribing {
    fn drop(&mut self) {
        let (gw, lens, uris, stream) = (self.gw.clone(), self.lens.clone(), std::mem::take(&mut self.uris), self.stream.clone());
        if uris.is_empty() {
            return;
        }
        tokio::spawn(async move {
            for uri in uris {
                let _ = super::resources::unsubscribe(&gw, &lens, uri, stream.clone()).await;
            }
        });
    }
}

/// Removes a call from the in-flight map however the call ends.
pub(crate) struct InFlight<'a>(pub(crate) &'a Gateway, pub(crate) String);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        super::lock(&self.0.clients.calls).remove(&self.1);
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> InitializeResult {
        let mut capabilities = super::resources::capabilities(&self.lens);
        super::tasks::declare(&mut capabilities);
        super::skills::declare(&mut capabilities, &self.lens.shelf());
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "serverInfo": {"name": "toolreg", "version": env!("CARGO_PKG_VERSION")},
            "instructions": INSTRUCTIONS
        }))
        .expect("a valid InitializeResult")
    }

    /// Waits for the warm-up as `tools/list` does: the capabilities say which of resources,
    /// prompts and completions the upstreams offer, known once they listed.
    async fn initialize(&self, request: InitializeRequestParams, context: RequestContext<RoleServer>) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.gw.listing_when_warm(&self.lens).await;
        self.negotiate_initialize(&request)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.gw.listing_when_warm(&self.lens).await;
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info()))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(info) = context.peer.peer_info() {
            tracing::info!(client = %info.client_info.name, elicitation = info.capabilities.elicitation.is_some(), "client initialized");
        }
        self.lens.add_peer(context.peer);
    }

    // Logging is deprecated by SEP-2577 but still in 2025-11-25, which clients speak.
    #[allow(deprecated)]
    async fn set_level(&self, request: rmcp::model::SetLevelRequestParams, _context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        // Accepted; the gateway's own log goes to stderr or its file, not to the client.
        tracing::debug!(level = ?request.level, "logging/setLevel");
        Ok(())
    }

    async fn list_tools(&self, request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        self.traced("tools/list", &context, self.list_tools_now(cursor(request), &context)).await
    }

    /// The listed tool, for rmcp to check a 2026 request's `Mcp-Param-*` headers against the
    /// `x-mcp-header` parameters it declares.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let listing = self.lens.listing();
        let tool = listing.tools.iter().chain(&listing.rendering).find(|t| t["name"] == name)?;
        serde_json::from_value(tool.clone()).ok()
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(super::resources::accepted(requested, &self.lens.shelf()))
    }

    /// Tells the stream of list changes, and of updates to the resources it subscribed to
    /// (each a subscriber until the stream ends, however it ends: `Unsubscribing`).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let stream = Subscribed::Stream(self.gw.resources.next_stream(), context.sink().clone());
        let uris = context.accepted().resource_subscriptions.clone().unwrap_or_default();
        let _leave = Unsubscribing { gw: self.gw.clone(), lens: self.lens.clone(), uris: uris.clone(), stream: stream.clone() };
        // The tasks it named, followed while it is open (`tasks::follow_listened`).
        let _tasks = super::tasks::follow_listened(self, &context);
        for uri in uris {
            // Acknowledged already: a refusal now can only be logged.
            if let Err(e) = super::resources::subscribe(&self.gw, &self.lens, uri.clone(), stream.clone()).await {
                tracing::warn!(%uri, "resource subscription of a listen stream failed: {}", e.message);
            }
        }
        let mut changes = self.lens.list_changes.subscribe();
        changes.mark_unchanged();
        let mut extras = self.lens.shelf_changes.subscribe();
        let mut seen = *extras.borrow_and_update();
        let accepted = context.accepted();
        let tools = accepted.tools_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if tools && context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
                changed = extras.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let now = *extras.borrow_and_update();
                    let sink = context.sink();
                    if resources && now.resources != seen.resources && sink.notify_resource_list_changed().await.is_err() {
                        return Ok(());
                    }
                    if prompts && now.prompts != seen.prompts && sink.notify_prompt_list_changed().await.is_err() {
                        return Ok(());
                    }
                    seen = now;
                }
                _ = context.cancelled() => return Ok(()),
            }
        }
    }

    async fn list_resources(&self, request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        super::resources::list_resources(&self.gw, &self.lens, cursor(request)).await
    }

    async fn list_resource_templates(&self, request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourceTemplatesResult, ErrorData> {
        super::resources::list_resource_templates(&self.gw, &self.lens, cursor(request)).await
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        self.traced("resources/read", &context, super::resources::read_resource(&self.gw, &self.lens, request, &Caller::of(&context))).await
    }

    #[allow(deprecated)] // legacy-only in 2026-07-28; 2025-11-25 clients subscribe this way
    async fn subscribe(&self, request: SubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        super::resources::subscribe(&self.gw, &self.lens, request.uri, Subscribed::Session(context.peer)).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(&self, request: UnsubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        super::resources::unsubscribe(&self.gw, &self.lens, request.uri, Subscribed::Session(context.peer)).await
    }

    async fn list_skills(&self, request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<rmcp::model::ListSkillsResult, ErrorData> {
        super::skills::list(&self.gw, &self.lens, cursor(request)).await
    }

    async fn get_skill(&self, request: rmcp::model::GetSkillRequestParams, _context: RequestContext<RoleServer>) -> Result<rmcp::model::GetSkillResult, ErrorData> {
        super::skills::get(&self.gw, &self.lens, request).await
    }

    async fn read_resource_directory(&self, request: rmcp::model::ReadResourceDirectoryRequestParams, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        super::skills::read_directory(&self.gw, &self.lens, request).await
    }

    async fn list_prompts(&self, request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListPromptsResult, ErrorData> {
        super::resources::list_prompts(&self.gw, &self.lens, cursor(request)).await
    }

    async fn get_prompt(&self, request: GetPromptRequestParams, context: RequestContext<RoleServer>) -> Result<GetPromptResponse, ErrorData> {
        self.traced("prompts/get", &context, super::resources::get_prompt(&self.gw, &self.lens, request, &Caller::of(&context))).await
    }

    async fn get_task(&self, request: GetTaskParams, context: RequestContext<RoleServer>) -> Result<GetTaskResult, ErrorData> {
        super::tasks::get(self, &context, &request.task_id).await
    }

    async fn update_task(&self, request: UpdateTaskParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        super::tasks::update(self, &context, &request.task_id, request.input_responses).await
    }

    async fn cancel_task(&self, request: CancelTaskParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        super::tasks::cancel(self, &context, &request.task_id).await
    }

    async fn complete(&self, request: CompleteRequestParams, _context: RequestContext<RoleServer>) -> Result<CompleteResult, ErrorData> {
        super::resources::complete(&self.gw, &self.lens, request).await
    }

    /// A held tool the user approves when asked (`review`) runs in the same call, once the
    /// listing has it.
    /// A 2026-07-28 client's retry that answers a held tool's review round (`review_round`) or
    /// an authorization page (`auth_round`) is settled first; the call then runs as a first
    /// round.
    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        // The span is described before the context moves into the call.
        let span = self.span("tools/call", &context);
        self.spanned(span, self.call_tool_now(request, context)).await
    }
}

impl Session {
    async fn call_tool_now(&self, mut request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        if context.protocol_version().is_some_and(|v| !v.has_initialize()) {
            let (state, responses) = (request.request_state.as_deref(), request.input_responses.as_ref());
            let reviewed = review_round::answered(&self.gw, &request.name, state, responses)?;
            if !matches!(reviewed, Reviewed::NotOurs) {
                (request.request_state, request.input_responses) = (None, None);
            }
            match reviewed {
                Reviewed::Answered(Review::Refused(text)) => return Ok(to_result(Invoked::error(text)).into()),
                Reviewed::Answered(Review::Approved) => self.gw.relist().await,
                Reviewed::NotOurs | Reviewed::AskAgain => {}
            }
            // A retry that answers an authorization page (`auth_round`): the server is ready,
            // or the call is refused; then, a call of a server whose flow waits gets its page.
            let (state, responses) = (request.request_state.as_deref(), request.input_responses.as_ref());
            match auth_round::answered(&self.gw, &request.name, state, responses).await? {
                Authorized::NotOurs => {}
                Authorized::Refused(text) => return Ok(to_result(Invoked::error(text)).into()),
                Authorized::Ready | Authorized::AskAgain => (request.request_state, request.input_responses) = (None, None),
            }
            let capabilities = context.meta.client_capabilities();
            let shows_urls = capabilities.as_ref().and_then(|c| c.elicitation.as_ref()).is_some_and(|e| e.url.is_some());
            if let Some(server) = shows_urls.then(|| auth_round::target(&self.gw, &self.lens, &request.name, request.arguments.as_ref())).flatten() {
                if let Some(round) = auth_round::ask(&self.gw, &request.name, &server)? {
                    return Ok(round);
                }
            }
        }
        // A long call over an HTTP session's stream gets that stream closed (`sse_poll`).
        let poll = self.gw.config().gateway.sse_poll_after_ms.map(std::time::Duration::from_millis);
        // Each attempt boxed: the block would hold two of them otherwise (see `spanned`).
        super::sse_poll::polled(&context, poll, async {
            match Box::pin(self.call_once(request.clone(), &context)).await? {
                Step::Done(r) => Ok::<_, ErrorData>(r),
                Step::Approved => {
                    self.gw.relist().await;
                    match Box::pin(self.call_once(request, &context)).await? {
                        Step::Done(r) => Ok(r),
                        Step::Approved => Err(ErrorData::internal_error("the approved tool is still held", None)),
                    }
                }
            }
        })
        .await
    }
}

/// How one attempt at a call ended.
enum Step {
    Done(CallToolResponse),
    /// It was a held tool, and the user just approved it: call again.
    Approved,
}

impl Session {
    async fn list_tools_now(&self, cursor: Option<String>, context: &RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        let listing = self.gw.listing_when_warm(&self.lens).await;
        // A client that renders MCP Apps views gets its own form (`views.rs`).
        let pick: fn(&Listing) -> &[Value] = if self.renders(context) { |l| &l.rendering } else { |l| &l.tools };
        let (tools, next) = super::pages::cut("tools/list", listing, pick, cursor).await?;
        let mut result: ListToolsResult =
            serde_json::from_value(json!({"tools": tools})).map_err(|e| ErrorData::internal_error(format!("tool list: {e}"), None))?;
        result.next_cursor = next;
        // Required from 2026-07-28; JSON without it reads as None. rmcp strips it for older peers.
        result.result_type = Some(ResultType::COMPLETE);
        result.ttl_ms = Some(0);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    /// The client declared that it renders MCP Apps views (in this 2026-07-28 request's
    /// `_meta`, else at `initialize`), and the gateway serves them.
    fn renders(&self, context: &RequestContext<RoleServer>) -> bool {
        let capabilities = context.meta.client_capabilities().or_else(|| context.peer.peer_info().map(|i| i.capabilities.clone()));
        self.gw.config().gateway.views() && super::views::declared(capabilities.as_ref())
    }

    async fn call_once(&self, request: CallToolRequestParams, context: &RequestContext<RoleServer>) -> Result<Step, ErrorData> {
        let gw = &self.gw;
        // A client that calls before it lists (it knew the names) waits for the warm-up too.
        let listing = gw.listing_when_warm(&self.lens).await;
        let called = request.name.to_string();
        let name = called.clone();
        let name = listing.aliases.get(&name).cloned().unwrap_or(name);
        let arguments = request.arguments.map(Value::Object).unwrap_or_else(|| json!({}));
        // A 2026-07-28 request names its client's capabilities in `_meta`; a session's, at start.
        let capabilities = context.meta.client_capabilities().or_else(|| context.peer.peer_info().map(|i| i.capabilities.clone()));
        let elicits = capabilities.as_ref().is_some_and(|c| c.elicitation.is_some());
        // A 2026-07-28 client is asked by input-required results, never by a request of ours.
        let stateless = context.protocol_version().is_some_and(|v| !v.has_initialize());
        let approval_timeout = gw.approval_timeout();
        // It also answers an upstream's input requests itself: its retry's state is either a
        // pass-through's (`passthru`) or an approval round's (`rounds`).
        let mut relay = Relay::default();
        let (mut approval_state, mut approved) = (request.request_state.as_deref(), None);
        if stateless {
            let caps = serde_json::to_value(capabilities.unwrap_or_default()).unwrap_or_else(|_| json!({}));
            let caps = super::views::upstream_caps(caps, gw.config().gateway.views());
            let opened = passthru::open(gw, &name, caps.clone(), approval_state, request.input_responses.as_ref())?;
            relay.pass_through = Some(match opened {
                Some(o) => {
                    (approval_state, approved) = (None, o.approved);
                    o.pass
                }
                None => PassThrough { capabilities: caps, retry: None },
            });
        }
        let asking = match (gw.config().gateway.trusted_client, elicits, stateless) {
            (true, _, _) => Some(Asking::Trusted),
            (false, true, false) => Some(Asking::Elicit),
            (false, true, true) => Some(Asking::Round(Arc::new(match approved {
                // Approved in an earlier round of this very call (the digest still binds it).
                Some(digest) => ApprovalRound { answered: Some((digest, Decision::ONCE)), ..ApprovalRound::default() },
                None => rounds::answered(gw, &name, approval_state, request.input_responses.as_ref())?,
            }))),
            (false, false, _) => None,
        };
        let approves = asking.is_some();
        let approver = if matches!(asking, Some(Asking::Trusted)) { "config" } else { "client" };
        let round = match &asking {
            Some(Asking::Round(r)) => Some(r.clone()),
            _ => None,
        };
        let lens = &self.lens;
        let registry = lens.service.registry();
        if let Some((server_id, tool)) = held_target(gw, lens, &registry, &name, &arguments) {
            return held(gw, &called, &server_id, &tool, elicits, stateless, context).await;
        }
        let host = ClientHost {
            peer: context.peer.clone(),
            asking,
            approvals: lens.service.approvals.clone(),
            registry: registry.clone(),
            catalog: gw.catalog.clone(),
            progress_token: context.meta.get_progress_token(),
        };
        let mcp = Mcp(Some(&gw.catalog), Some(&relay));
        let settings = Settings { abilities: HostAbilities { approval: approves, host_tools: false, repair: false }, approval_timeout };
        let call_id = lens.service.next_call_id();
        super::lock(&gw.clients.calls).insert(call_id.clone(), context.peer.clone());
        let _in_flight = InFlight(gw, call_id.clone());
        let scoped = crate::service::Service::plan_scoped(&name);
        let plan_id = if scoped { Some(gw.plan_id(lens).await) } else { None };
        // An app-only tool called by a client that renders is its view's call (`views.rs`).
        let app = super::views::app_of(&registry, &name, self.renders(context));
        let call = Call { name: name.clone(), arguments, call_id, plan_id, app };
        // Each tool the call runs counts (usage): a listed one, tool_invoke's, a script's.
        let request = CallAsk { call, registry: &registry, host: &host, mcp: &mcp, settings, cancel: context.ct.clone(), usage_key: gw.usage_key(lens), results_owner: Some(if stateless { STATELESS.to_string() } else { self.owner.clone() }), approver, session: Some(if stateless { STATELESS.to_string() } else { self.owner.clone() }) };
        let outcome = lens.service.call(request).await;
        // The call stopped at its approval: the question goes back as this round's result.
        if let Some(asked) = round.as_ref().and_then(|r| super::lock(&r.asked).take()) {
            return rounds::ask(gw, &host, &name, &asked, approval_timeout).map(|r| Step::Done(r.into()));
        }
        let done = |r: CallToolResult| Ok(Step::Done(r.into()));
        match outcome {
            Ok(done_) => done(to_result_for(done_, lens.service.budget().media)),
            Err(InvokeError::UnknownTool(_)) => match held_by_name(gw, lens, &registry, &name) {
                Some((server_id, tool)) => held(gw, &called, &server_id, &tool, elicits, stateless, context).await,
                // A tool of a server waiting for authorization: say how to give it.
                None => match super::auth_host::server_by_name(&gw.catalog, &name)
                    .filter(|s| lens.has_server(s))
                    .and_then(|_| super::auth_host::refusal(&gw.catalog, &super::auth_host::config_path(&gw.config()), &name))
                {
                    Some(refusal) => done(to_result(Invoked::error(refusal))),
                    None => Err(ErrorData::invalid_params(format!("no tool is named {name:?}; tools/list has them"), Some(json!({"name": name})))),
                },
            },
            Err(InvokeError::Cancelled) => Err(ErrorData::internal_error("the call was cancelled", None)),
            // The upstream asks the client (2026-07-28); an approval given this round goes along.
            Err(InvokeError::InputRequired(asked)) => {
                let approved = round.as_ref().and_then(|r| match &r.answered {
                    Some((digest, Decision::Approve { .. })) => Some(digest.clone()),
                    _ => None,
                });
                passthru::ask(gw, &name, asked, approved.as_deref()).map(|r| Step::Done(r.into()))
            }
            Err(InvokeError::Rpc { code, message, data }) => Err(super::tasks::refused(&called, code, message, data)),
            // The upstream made a task of it (the client declared the tasks extension).
            Err(InvokeError::Task(made)) => super::tasks::created(self, context, &made).map(Step::Done),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }
}

/// The held tool a call reaches, found before routing: the tool `tool_invoke` names (it left
/// the plan with the listing), or a tool the registry still has from an older list while the
/// catalog holds it (a cached list synced before the pins were read). Either is put before the
/// person as a held tool's direct call is, never refused with the catalog's own wording.
fn held_target(gw: &Gateway, lens: &Lens, registry: &crate::service::Registry, name: &str, arguments: &Value) -> Option<(String, String)> {
    let invoked = name == crate::service::TOOL_INVOKE;
    let target = if invoked { arguments.get("name")?.as_str()? } else { name };
    match registry.get(target).map(|r| &r.entry.source) {
        Some(crate::service::Source::Mcp { server_id, tool_name }) => {
            gw.catalog.held_tools(server_id)?.contains(tool_name).then(|| (server_id.clone(), tool_name.clone()))
        }
        Some(_) => None,
        // Another lens's held tool is no tool here.
        None if invoked => held_by_name(gw, lens, registry, target),
        None => None,
    }
}

/// The held tool of this lens that `name` names: by its usual wire name, or by the name its
/// override gives it (a rug pull under a renamed tool is held, and called by the new name).
fn held_by_name(gw: &Gateway, lens: &Lens, registry: &crate::service::Registry, name: &str) -> Option<(String, String)> {
    let cfg = gw.config();
    lens.service.held_tool(registry, &gw.catalog, name, Some(&cfg.gateway.overrides)).filter(|(s, t)| lens.has_tool(s, t))
}

/// A call of the held `tool` of `server_id` (`called` as the client named it): the person
/// reviews it if the client can ask them, else the refusal names the command to run.
async fn held(gw: &Gateway, called: &str, server_id: &str, tool: &str, elicits: bool, stateless: bool, context: &RequestContext<RoleServer>) -> Result<Step, ErrorData> {
    gw.whole.service.audit_held(&gw.whole.service.next_call_id(), called, server_id, tool);
    let refused = |text: String| Ok(Step::Done(to_result(Invoked::error(text)).into()));
    // A 2026-07-28 client that can show a form is asked by an input-required round.
    if elicits && stateless {
        return match review_round::ask(gw, called, server_id, tool)? {
            Ok(round) => Ok(Step::Done(round)),
            Err(Review::Approved) => Ok(Step::Approved),
            Err(Review::Refused(text)) => refused(text),
        };
    }
    // Asked by a request of ours: a 2026-07-28 client takes none.
    let ask = (elicits && !stateless).then_some(&context.peer);
    match review::review(gw, ask, server_id, tool).await {
        Review::Approved => Ok(Step::Approved),
        Review::Refused(text) => refused(text),
    }
}

/// The upstream server's own result when the tool ran (content, structured content, isError as
/// they came); otherwise the model-ready text the core produced (refusals, meta-tools). Marked
/// complete, as 2026-07-28 requires (rmcp strips the mark for older peers).
fn to_result(done: Invoked) -> CallToolResult {
    to_result_for(done, MediaMode::Model)
}

/// `to_result`, with the upstream's images and audio named, not passed, under `media:
/// "placeholder"` (the gateway config's `results.media`).
pub(super) fn to_result_for(done: Invoked, media: MediaMode) -> CallToolResult {
    let mut result = call_result(done, media);
    result.result_type = Some(ResultType::COMPLETE);
    result
}

/// The owner of results cut for 2026-07-28 clients, which have no session: their refs are
/// random and unguessable, so holding one is the right to read it.
pub(super) const STATELESS: &str = "stateless";

fn call_result(done: Invoked, media: MediaMode) -> CallToolResult {
    // Cut to the budget: the tool's result cut the same way, or the cut text.
    let cut = done.cut.as_ref().map(|c| json!({"ref": c.reference, "shownTokens": c.shown_tokens, "totalTokens": c.total_tokens}));
    let cut_result = done.cut.and_then(|c| c.result);
    let raw = match cut {
        Some(_) => cut_result,
        None => done.raw,
    };
    let mut value = match raw {
        Some(mut raw) if raw.get("content").is_some_and(Value::is_array) => {
            raw["isError"] = json!(done.is_error);
            if media == MediaMode::Placeholder {
                name_media(&mut raw);
            }
            raw
        }
        // A script's media (tool_exec) go on as MCP parts after its text.
        _ => match done.output {
            ModelOutput::Content(parts) => json!({"content": parts.iter().map(mcp_part).collect::<Vec<_>>(), "isError": done.is_error}),
            other => json!({"content": [{"type": "text", "text": other.text()}], "isError": done.is_error}),
        },
    };
    if let Some(cut) = cut {
        value["_meta"]["toolreg/cut"] = cut;
    }
    serde_json::from_value(value).unwrap_or_else(|e| {
        serde_json::from_value(json!({"content": [{"type": "text", "text": format!("the tool's result could not be read: {e}")}], "isError": true}))
            .expect("a valid CallToolResult")
    })
}

/// A model output's part as an MCP content part.
fn mcp_part(part: &Part) -> Value {
    match part {
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::ImageData { data, media_type } => json!({"type": "image", "data": data, "mimeType": media_type}),
        Part::FileData { data, media_type, .. } => json!({"type": "audio", "data": data, "mimeType": media_type}),
    }
}

/// Images, audio and blob resources of an upstream result as the text placeholders the
/// sidecar's model reads.
fn name_media(raw: &mut Value) {
    let Some(parts) = raw.get_mut("content").and_then(Value::as_array_mut) else { return };
    for part in parts.iter_mut() {
        let media = matches!(part.get("type").and_then(Value::as_str), Some("image" | "audio")) || part.get("resource").is_some_and(|r| r.get("blob").is_some());
        if media {
            *part = json!({"type": "text", "text": crate::service::Service::part_text(part)});
        }
    }
}

/// The cursor of a list request, if any.
fn cursor(request: Option<PaginatedRequestParams>) -> Option<String> {
    request.and_then(|r| r.cursor)
}

/// Serves one client on stdin/stdout until it closes stdin or a signal arrives.
pub async fn serve_stdio(gw: Arc<Gateway>, lens: Arc<Lens>) -> i32 {
    let service = match super::traced::Traced::new(Session::new(gw, lens), "pipe").serve(rmcp::transport::stdio_pipes()).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("MCP session did not start: {e}");
            return 1;
        }
    };
    let ct = service.cancellation_token();
    tokio::select! {
        r = service.waiting() => match r {
            Ok(reason) => {
                tracing::info!(?reason, "client gone");
                0
            }
            Err(e) => {
                tracing::error!("MCP session ended: {e}");
                1
            }
        },
        code = super::http::signal() => {
            ct.cancel();
            code
        }
    }
}
