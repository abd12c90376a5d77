//! `toolreg mcp`: the registry served as an MCP server, so that any MCP client is a toolreg host.
//! The second face beside `server` (the sidecar's JSON-RPC), over the same core: the catalog
//! reaches the upstream servers, `sync` turns their lists into registry entries, `exposition`
//! plans what `tools/list` shows, and every `tools/call` goes through `route::call` with an
//! `invoke::Executor`, exactly as `registry/invoke` does. Only the ports differ: here the host
//! is an MCP client (approval by elicitation, progress as `notifications/progress`).
//!
//! Invariants:
//! - `tools/list` answers from memory (the current `Listing`), never from an upstream server;
//!   only the first list after start may wait, at most `warmup_ms`, for servers that have no
//!   cached list yet.
//! - The listing is rebuilt when the catalog changes; it is replaced when its tools or its
//!   deferred pool's content (names, definitions) differ, and when its tools differ every
//!   connected client is sent `notifications/tools/list_changed`. (A deferred tool renamed
//!   upstream leaves the namespace counts, so the listed tools, as they were: its plan must
//!   still change, or the meta-tools would search the old pool until the plan expired.)
//!   The listing has a second form for clients that render MCP Apps views (`listing.rs`,
//!   `views.rs`), compared and announced alike.
//!   Resources, templates and prompts are aggregated beside it (`resources.rs`, named by
//!   `shelf.rs`), under the same rules.
//! - Usage never moves the listing by itself: its usage-driven tools are fixed per gateway
//!   session (`usage.rs`), and a new session starts only at start, at a config reload, or when
//!   the catalog changed the listed tools anyway.
//! - A gated call runs only after the user approved it through elicitation, or when the config
//!   trusts the client; otherwise it is refused with a readable `isError` result.
//! - stdout is the MCP stream (stdio mode); logs go to stderr or a file.

mod auth_host;
mod auth_round;
pub mod check;
mod client_host;
pub mod config;
mod http;
mod listen_tasks;
mod listing;
mod pages;
mod passthru;
mod add_cli;
mod approvals_cli;
mod pins_cli;
pub mod profile;
mod reload;
mod resources;
mod review;
mod review_round;
mod rounds;
mod seal;
mod search;
mod session;
mod shelf;
mod skills;
mod sse_poll;
mod tasks;
mod terminal_auth;
mod tokens;
mod traced;
mod usage;
mod lens;
mod views;

use crate::catalog::{Catalog, CatalogEvent, CatalogOptions, HostAsks, ServerState};
use crate::service::Promote;
use crate::service::Registry;
use crate::service::Service;
use config::GatewayConfig;
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

pub use http::{new_token, TOKEN_ENV};
pub use add_cli::{add, AddAsk};
pub use pins_cli::pins;
pub use approvals_cli::{approvals, Revoke};
pub use reload::ConfigFile;
pub use search::describe as describe_search;
pub use terminal_auth::authorize_from_terminal;
pub use lens::Lens;

const DEFAULT_WARMUP: Duration = Duration::from_secs(5);

/// What `tools/list` answers, and the plan its meta-tools are scoped to.
pub struct Listing {
    /// MCP `Tool` objects, in the plan's order.
    pub tools: Vec<Value>,
    /// The same for a client that renders MCP Apps views (`views.rs`): tools with a view
    /// inline, then the app-only tools. `tools` when `gateway.views` is off.
    pub rendering: Vec<Value>,
    pub plan_id: String,
    /// Listed name to wire name, for tools listed under their upstream name (`toolNames`).
    pub aliases: HashMap<String, String>,
    /// Inline definitions, meta-tools and the deferred section together, in tokens.
    pub tokens: u64,
    pub deferred: usize,
    /// Hash of the deferred pool: each name with its entry's `content_hash`, in name order.
    pub pool: u64,
    /// The tools listed for their usage, with their notes: the gateway session's picks, which
    /// later plans of the session keep (`usage.rs`).
    pub picks: Arc<Vec<Promote>>,
}

impl Listing {
    /// Nothing listed yet: before the first resync.
    fn empty(service: &Service) -> Listing {
        Listing {
            tools: Vec::new(),
            rendering: Vec::new(),
            aliases: HashMap::new(),
            plan_id: service.plans.create(BTreeSet::new(), BTreeSet::new()).id.clone(),
            tokens: 0,
            deferred: 0,
            pool: 0,
            picks: Arc::default(),
        }
    }
}

/// The one gateway behind every client session (one for stdio, one per HTTP session).
pub struct Gateway {
    pub(crate) catalog: Catalog,
    /// `/mcp`: every server. Its core (`Service`) holds the registry `resync` syncs from the
    /// catalog, the usage book (persisted in the state dir, `usage.rs`), approvals, the audit
    /// log and the semantic signal (the config's `search`, fixed at start), which the
    /// profiles' views share.
    pub(crate) whole: Arc<Lens>,
    /// `gateway.profiles`' views by name, following the config (`reconfigure`).
    profiles: RwLock<BTreeMap<String, Arc<Lens>>>,
    /// Replaced whole when the config file changes (`reload.rs`); read through `config()`.
    cfg: RwLock<Arc<GatewayConfig>>,
    /// Whether every server has a list or has failed, as of the last resync: the first
    /// `tools/list` waits on it during warm-up.
    warm: watch::Sender<bool>,
    /// Held through a whole resync, so two (the first, and one for a catalog event) never
    /// interleave and leave an older listing last.
    resyncing: Mutex<()>,
    /// The connected clients and the calls they are waiting on.
    pub(crate) clients: Clients,
    /// The state of 2026-07-28 approval rounds (`rounds`).
    pub(crate) rounds: Rounds,
    /// Who subscribed to which upstream resource.
    pub(crate) resources: resources::Resources,
    started: Instant,
}

/// Who is connected, and where an upstream's question during a call goes.
pub(crate) struct Clients {
    /// Calls in flight by call id, with the client that made them: where an upstream server's
    /// question (elicitation, sampling) during that call goes.
    pub(crate) calls: Mutex<HashMap<String, Peer<RoleServer>>>,
    /// Authorization pages of running OAuth flows, for 2026-07-28 clients (`auth_round`).
    pub(crate) auth_pages: Arc<auth_host::Pages>,
}

/// What 2026-07-28 approval rounds need between a question and its answer.
pub(crate) struct Rounds {
    /// Seals each round's `requestState`; an error when the OS gave no randomness, and then
    /// such clients are not asked (their gated calls refused).
    sealer: Result<seal::Sealer, String>,
    /// Nonces of approval states already answered, with when: each state runs one call.
    pub(crate) spent_states: Mutex<HashMap<String, Instant>>,
}

impl Rounds {
    /// The sealer, or the reason there is none as the MCP error.
    pub(crate) fn sealer(&self) -> Result<&seal::Sealer, rmcp::ErrorData> {
        self.sealer.as_ref().map_err(|e| rmcp::ErrorData::internal_error(e.clone(), None))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the meta-tools of a plan over `deferred` reach: each name with its definition's hash.
/// Cheap (one pass over hashes the registry keeps), so every resync can compare it.
fn pool_hash(deferred: &BTreeSet<String>, registry: &Registry) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for name in deferred {
        name.hash(&mut h);
        registry.get(name).map(|r| r.content_hash).hash(&mut h);
    }
    h.finish()
}

impl Gateway {
    /// Starts the catalog on the config's servers (connecting in the background) and builds
    /// the first listing from whatever is cached.
    /// `audit`: the audit log, opened from `gateway.audit` by the caller (a bad path stops
    /// the command before anything starts).
    pub fn start(cfg: GatewayConfig, audit: crate::service::Audit) -> Arc<Gateway> {
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let opts = CatalogOptions {
            // Upstream questions go to the client of the call; `client_host` declines what it
            // cannot ask.
            // MCP Apps: the sessions are shared, so the config decides, not a client (`views.rs`).
            host_asks: HostAsks { elicitation: true, sampling: true, roots: false, views: cfg.gateway.views() },
            // A held tool reached from a script is refused as a direct call is (`review`).
            review: review::hint(&cfg),
            ..catalog_options(&cfg)
        };
        if opts.cache_dir.is_none() {
            tracing::warn!("no cacheDir and no per-user state directory ($TOOLREG_STATE_DIR, $XDG_STATE_HOME, $HOME): approved tool definitions last only this run");
        }
        let asker = Arc::new(client_host::Questions::default());
        // Upstream OAuth: the page through a client's URL elicitation, tokens in the state
        // directory's store, shared with the other gateways of that directory (`tokens.rs`).
        let tokens = cfg.state_dir().map(|d| tokens::Tokens::open(&d));
        let auth = Arc::new(tokens::StoreAuth { opener: auth_host::ClientAuth::new(auth_host::config_path(&cfg)), tokens });
        let catalog = Catalog::with_hosts(opts, events_tx, asker.clone(), auth.clone());
        if !cfg.host.entries.is_empty() {
            tracing::warn!("{} host entries in the config are skipped: a gateway has no host to run them", cfg.host.entries.len());
        }
        let service = Service::new(Registry::default(), "mcp-call-");
        service.set_audit(audit);
        service.set_budget(cfg.budget().unwrap_or_default(), cfg.host.model.as_deref());
        if let Some(semantic) = search::start(cfg.search.as_ref(), cfg.state_dir()) {
            service.set_semantic(semantic);
        }
        let empty = Arc::new(Listing::empty(&service));
        // Usage persists beside the pins; read below, before the first listing is planned.
        if let Some(dir) = cfg.state_dir() {
            service.usage.begin(&dir);
        }
        let whole = Arc::new(Lens::new(None, service, empty));
        let profiles = RwLock::new(BTreeMap::new());
        let gw = Arc::new(Gateway {
            catalog,
            whole,
            profiles,
            cfg: RwLock::new(Arc::new(cfg)),
            warm: watch::channel(false).0,
            resyncing: Mutex::new(()),
            clients: Clients {
                calls: Mutex::new(HashMap::new()),
                auth_pages: auth.opener.pages.clone(),
            },
            rounds: Rounds { sealer: seal::Sealer::new(), spent_states: Mutex::new(HashMap::new()) },
            resources: resources::Resources::default(),
            started: Instant::now(),
        });
        gw.follow_profiles(&gw.config());
        asker.attach(&gw);
        auth.opener.attach(&gw);
        Service::preload_tokenizer();
        // The catalog reads its cacheDir as it takes the servers, and planning counts tokens
        // (the tokenizer may still be loading): both off the reactor.
        let first = gw.clone();
        let state_dir = first.config().state_dir();
        tokio::task::spawn_blocking(move || {
            first.whole.service.usage.load();
            // Remembered approvals, in the state dir's store; `toolreg approvals` lists and
            // revokes them.
            if let Some(dir) = state_dir {
                first.whole.service.grants.open(&dir);
            }
            first.catalog.set_servers(first.config().servers.clone());
            let warm = first.all_listed();
            first.resync(warm)
        });
        tokio::spawn(follow_catalog(Arc::downgrade(&gw), events_rx));
        gw
    }

    /// The config in force: the file's last valid content.
    pub fn config(&self) -> Arc<GatewayConfig> {
        self.cfg.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The view of profile `name`, while the config has it.
    pub fn profile(&self, name: &str) -> Option<Arc<Lens>> {
        self.profiles.read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
    }

    /// Every view: the whole one first, then the profiles by name.
    pub(crate) fn views(&self) -> Vec<Arc<Lens>> {
        let profiles = self.profiles.read().unwrap_or_else(|e| e.into_inner());
        std::iter::once(self.whole.clone()).chain(profiles.values().cloned()).collect()
    }

    /// The session clients of every lens that has `server_id` (where its OAuth page may go).
    pub(crate) fn peers_of(&self, server_id: &str) -> Vec<Peer<RoleServer>> {
        self.views().iter().filter(|l| l.has_server(server_id)).flat_map(|l| l.peers()).collect()
    }

    /// The profiles' views as `cfg` has them: new ones made, kept ones their tokens read again,
    /// those gone retired (their clients then see nothing); returns the retired ones.
    fn follow_profiles(&self, cfg: &GatewayConfig) -> Vec<Arc<Lens>> {
        let mut profiles = self.profiles.write().unwrap_or_else(|e| e.into_inner());
        let gone: Vec<String> = profiles.keys().filter(|n| !cfg.gateway.profiles.contains_key(*n)).cloned().collect();
        let retired: Vec<Arc<Lens>> = gone.iter().filter_map(|n| profiles.remove(n)).collect();
        for v in &retired {
            v.retire();
        }
        for (name, p) in &cfg.gateway.profiles {
            let view = profiles.entry(name.clone()).or_insert_with(|| {
                // Its vectors apart from the whole gateway's: another model writes other vectors.
                let semantic = p.search.as_ref().filter(|s| Some(*s) != cfg.search.as_ref()).and_then(|s| search::start(Some(s), cfg.state_dir().map(|d| d.join("profiles").join(name))));
                Arc::new(Lens::profile(name, &self.whole, cfg, semantic))
            });
            let token = p.token.as_ref().map(|t| t.read());
            view.set_token(match token {
                None => None,
                Some(Ok(t)) => Some(t),
                Some(Err(why)) => {
                    // Fail closed: without its token the profile opens only with the gateway's.
                    tracing::warn!(profile = %name, "profile token not read, only the gateway's token opens it: {why}");
                    None
                }
            });
            view.service.set_budget(cfg.budget().unwrap_or_default(), cfg.host.model.as_deref());
            view.select(cfg);
        }
        retired
    }

    /// Takes a new config while serving: its servers (unchanged ones keep their sessions), its
    /// plan settings, profiles and `gateway` block, then a resync announced as any other.
    /// `cacheDir` is the catalog's, fixed at start: a change waits for the next one.
    pub(crate) async fn reconfigure(self: &Arc<Self>, cfg: GatewayConfig) {
        let cur = self.config();
        if cfg.gateway.cache_dir != cur.gateway.cache_dir {
            tracing::warn!("gateway.cacheDir changed: it takes effect when toolreg mcp restarts");
        }
        if cfg.search != cur.search {
            tracing::warn!("search changed: it takes effect when toolreg mcp restarts");
        }
        for (name, p) in &cfg.gateway.profiles {
            if cur.gateway.profiles.get(name).is_some_and(|old| old.search != p.search) {
                tracing::warn!(profile = %name, "the profile's search changed: it takes effect when toolreg mcp restarts");
            }
        }
        if cfg.gateway.views() != cur.gateway.views() {
            // The upstream sessions were opened with the old declaration (`views.rs`).
            tracing::warn!("gateway.views changed: the lists follow now, what upstream servers are told waits for a restart");
        }
        if !cfg.host.entries.is_empty() {
            tracing::warn!("{} host entries in the config are skipped: a gateway has no host to run them", cfg.host.entries.len());
        }
        if cfg.gateway.audit != cur.gateway.audit {
            tracing::warn!("gateway.audit changed: it takes effect when toolreg mcp restarts");
        }
        if cfg.gateway.telemetry != cur.gateway.telemetry {
            tracing::warn!("gateway.telemetry changed: it takes effect when toolreg mcp restarts");
        }
        self.whole.service.audit().record(crate::service::AuditEvent::Reload { applied: true, servers: Some(cfg.servers.len()), reason: None });
        let servers = cfg.servers.clone();
        self.whole.service.set_budget(cfg.budget().unwrap_or_default(), cfg.host.model.as_deref());
        let retired = self.follow_profiles(&cfg);
        *self.cfg.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(cfg);
        // A reload starts a new gateway session: usage (and `gateway.usage`) as they are now.
        for view in self.views() {
            view.repick_next();
        }
        // Reads the cacheDir of new servers: off the reactor, as at start.
        let gw = self.clone();
        let _ = tokio::task::spawn_blocking(move || gw.catalog.set_servers(servers)).await;
        // A retired profile's clients are told its lists are now empty.
        for view in retired {
            let (gw, v) = (self.clone(), view.clone());
            let _ = tokio::task::spawn_blocking(move || {
                let _one = lock(&gw.resyncing);
                // Nothing: its clients' calls find no tool, its list only the meta-tools.
                *v.service.registry_mut() = Arc::new(Registry::default());
                gw.relisted(&v, &Registry::default())
            })
            .await;
            view.replace_shelf(shelf::Shelf::default());
            self.announce(&view).await;
        }
        self.sync_and_announce().await;
    }

    /// How long a user may take to answer an approval, and so how long its round's state lives.
    pub(crate) fn approval_timeout(&self) -> Duration {
        self.config().gateway.approval_timeout_ms.map_or(crate::service::Settings::APPROVAL_TIMEOUT, Duration::from_millis)
    }

    /// The whole view's listing (`/mcp`).
    pub fn listing(&self) -> Arc<Listing> {
        self.whole.listing()
    }

    /// `view`'s listing, after waiting (only during warm-up) for servers with no list yet.
    pub async fn listing_when_warm(&self, view: &Lens) -> Arc<Listing> {
        let deadline = self.started + self.config().gateway.warmup_ms.map_or(DEFAULT_WARMUP, Duration::from_millis);
        let mut warm = self.warm.subscribe();
        let _ = tokio::time::timeout_at(deadline.into(), warm.wait_for(|w| *w)).await;
        view.listing()
    }

    /// Every enabled server has a list (cached or fetched) or has failed.
    fn all_listed(&self) -> bool {
        self.catalog.status().iter().all(|s| s.cached || s.state != ServerState::Connecting)
    }

    /// The catalog's lists into the registry, each view's registry out of it, and a new
    /// listing for each view whose plan changed.
    /// `warm`: `all_listed()` as read before the sync (and before the shelf's rebuild), so
    /// whatever lists it counted, the sync and the shelf then see. Returns the views whose
    /// listed tools changed.
    fn resync(&self, warm: bool) -> Vec<Arc<Lens>> {
        let _one = lock(&self.resyncing);
        let cfg = self.config();
        let base = {
            let mut reg = self.whole.service.registry_mut();
            let r = Arc::make_mut(&mut reg);
            // Entries already warned about (see below), by what the model reads of them.
            let warned: HashMap<String, u64> =
                r.iter().filter(|e| e.hidden > 0 || e.refused.is_some()).map(|e| (e.entry.name.clone(), e.content_hash)).collect();
            let synced = self.whole.service.sync(r, &self.catalog, crate::service::SyncAsk { selected: None, overrides: Some(&cfg.gateway.overrides) });
            // Said once per entry, when it comes in or what the model reads of it changes, not at
            // every resync (a re-placed entry is registered again each time).
            for name in &synced.registered {
                match r.get(name) {
                    Some(e) if warned.get(name) == Some(&e.content_hash) => {}
                    Some(e) if e.refused.is_some() => tracing::warn!(tool = %name, "not offered: {}", e.refused.as_deref().unwrap_or_default()),
                    Some(e) if e.hidden > 0 => tracing::warn!(tool = %name, "{}", Service::hidden_message(e)),
                    _ => {}
                }
            }
            let base = r.clone();
            *r = self.whole.registry_from(&base, &cfg);
            base
        };
        let mut changed = Vec::new();
        for view in self.views() {
            if view.name.is_some() {
                *view.service.registry_mut() = Arc::new(view.registry_from(&base, &cfg));
            }
            if self.relisted(&view, &view.service.registry()) {
                changed.push(view);
            }
        }
        self.warm.send_replace(warm);
        changed
    }

    /// `view`'s listing over its registry; whether its tools changed. Under `resyncing`.
    fn relisted(&self, view: &Lens, snapshot: &Registry) -> bool {
        // The session's usage-driven tools, unless a new session starts now: at start, after a
        // reload, or when the catalog changed the listed tools anyway (`usage.rs`).
        let fresh = view.take_repick();
        let kept = view.listing().picks.clone();
        let mut next = self.plan(view, snapshot, self.usage_pick(view, (!fresh).then_some(&kept)).as_ref());
        if !fresh && view.settings(&self.config()).usage.is_some() && next.tools != view.listing().tools {
            next = self.plan(view, snapshot, self.usage_pick(view, None).as_ref());
        }
        view.replace_listing(next)
    }

    /// The plan id for `view`'s meta-tool calls: plans expire (`PLAN_TTL`), the view's lives
    /// on. An expired one is planned again on the blocking pool: planning counts tokens, and
    /// the `resyncing` lock it takes may be held by a resync for as long.
    pub(crate) async fn plan_id(self: &Arc<Self>, view: &Arc<Lens>) -> String {
        let l = view.listing();
        if view.service.plans.get(&l.plan_id).is_some() {
            return l.plan_id.clone();
        }
        let (gw, view, kept) = (self.clone(), view.clone(), l.picks.clone());
        let replan = tokio::task::spawn_blocking(move || {
            let _one = lock(&gw.resyncing);
            // The same session: its usage-driven tools stay.
            let next = gw.plan(&view, &view.service.registry(), gw.usage_pick(&view, Some(&kept)).as_ref());
            let id = next.plan_id.clone();
            view.set_listing(next);
            id
        });
        // The job only fails by panicking: the call then finds no plan and says so.
        replan.await.unwrap_or(l.plan_id.clone())
    }

    /// Resyncs now (off the reactor) and tells the clients of each view whose listed tools
    /// changed: after a catalog event, and when a held tool was just approved and its call
    /// waits on it.
    pub(crate) async fn relist(self: &Arc<Self>) {
        self.relist_as(self.all_listed()).await
    }

    /// `relist` with `warm` read by the caller (`resync`).
    async fn relist_as(self: &Arc<Self>, warm: bool) {
        let g = self.clone();
        let changed = tokio::task::spawn_blocking(move || g.resync(warm)).await.unwrap_or_default();
        for view in changed {
            self.announce(&view).await;
        }
    }

    /// Tells `view`'s clients that its listed tools changed.
    async fn announce(&self, view: &Lens) {
        let l = view.listing();
        tracing::info!(profile = view.name.as_deref().unwrap_or("-"), tools = l.tools.len(), deferred = l.deferred, tokens = l.tokens, for_usage = l.picks.len(), "tools/list changed");
        view.list_changes.send_modify(|n| *n = n.wrapping_add(1));
        for peer in view.peers() {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("list_changed not delivered: {e}");
            }
        }
    }
}

/// Catalog events rebuild the listing; a changed one is announced to every client.
async fn follow_catalog(gw: std::sync::Weak<Gateway>, mut events: mpsc::UnboundedReceiver<CatalogEvent>) {
    while let Some(ev) = events.recv().await {
        let Some(gw) = gw.upgrade() else { return };
        gw.whole.service.audit_catalog(&ev);
        match &ev {
            CatalogEvent::Progress { .. } => continue,
            CatalogEvent::DidChange { server_id, status, .. } => tracing::debug!(server = %server_id, ?status, "upstream changed"),
            CatalogEvent::ToolsChanged { server_id } => tracing::debug!(server = %server_id, "upstream tools changed"),
            CatalogEvent::ExtrasChanged { server_id, .. } => tracing::debug!(server = %server_id, "upstream resources or prompts changed"),
            CatalogEvent::ResourceUpdated { server_id, uri } => {
                gw.resources.updated(server_id, uri).await;
                continue;
            }
        }
        gw.sync_and_announce().await;
    }
}

impl Gateway {
    /// The shelves and the listings over the catalog as it is now; each list that changed is
    /// announced to the clients of its view.
    async fn sync_and_announce(self: &Arc<Self>) {
        // Warm as read before the shelf's rebuild: a server that listed after this read is in
        // neither, so the first lists never say warm over a shelf that lacks a listed server.
        let warm = self.all_listed();
        for view in self.views() {
            self.resources.rebuild(&self.catalog, &view, &|id: &str| view.has_server(id)).await;
        }
        self.relist_as(warm).await;
    }
}

/// The catalog's options for a config: what `toolreg mcp` and `--check` share. Never in
/// memory only: pins must outlive the run to defend against a rug pull.
pub(crate) fn catalog_options(cfg: &GatewayConfig) -> CatalogOptions {
    CatalogOptions { cache_dir: cfg.state_dir(), spawn: cfg.gateway.spawn.clone().unwrap_or_default(), ..CatalogOptions::default() }
}

/// How `toolreg mcp` is reached.
pub enum Listen {
    Stdio,
    /// Streamable HTTP on a loopback address, behind a bearer token.
    Http { addr: SocketAddr, token: String },
}

/// Serves until stdin closes (stdio) or a signal; returns the exit code. With `file`, its
/// changes are taken while serving (`reload.rs`).
/// `profile`: stdio serves that profile's view (`--profile`), else the whole one.
pub async fn run(cfg: GatewayConfig, listen: Listen, file: Option<ConfigFile>, audit: crate::service::Audit, profile: Option<String>) -> i32 {
    let gw = Gateway::start(cfg, audit);
    if let Some(file) = file {
        tokio::spawn(reload::watch(Arc::downgrade(&gw), file));
    }
    let view = match profile.as_deref().map(|p| gw.profile(p).ok_or(p)) {
        None => gw.whole.clone(),
        Some(Ok(v)) => v,
        Some(Err(p)) => {
            tracing::error!("no profile is named {p:?} in gateway.profiles");
            return 2;
        }
    };
    let code = match listen {
        Listen::Stdio => session::serve_stdio(gw.clone(), view).await,
        Listen::Http { addr, token } => http::serve(gw.clone(), addr, token).await,
    };
    let _ = tokio::time::timeout(Duration::from_secs(3), gw.catalog.shutdown()).await;
    // A usage write queued on the blocking pool may never start once the runtime ends.
    let book = gw.whole.service.usage.clone();
    let _ = tokio::task::spawn_blocking(move || book.flush()).await;
    let audit = gw.whole.service.audit();
    let _ = tokio::task::spawn_blocking(move || audit.flush(Duration::from_secs(2))).await;
    code
}

#[cfg(test)]
mod tests {
    use super::pool_hash;
    use crate::service::{Registry, ToolEntry};
    use serde_json::json;
    use std::collections::BTreeSet;

    fn registry(tools: &[(&str, &str)]) -> Registry {
        let mut r = Registry::default();
        for (name, description) in tools {
            let e: ToolEntry = serde_json::from_value(json!({"name": name, "namespace": "mcp:fx", "description": description, "inputSchema": {"type": "object"}})).unwrap();
            r.insert(e);
        }
        r
    }

    fn pool(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_pool_hash_follows_names_and_definitions() {
        let before = registry(&[("a", "Does a."), ("b", "Does b.")]);
        let same = pool_hash(&pool(&["a", "b"]), &before);
        assert_eq!(same, pool_hash(&pool(&["a", "b"]), &registry(&[("a", "Does a."), ("b", "Does b.")])));
        let renamed = registry(&[("a", "Does a."), ("c", "Does b.")]);
        assert_ne!(same, pool_hash(&pool(&["a", "c"]), &renamed));
        let redescribed = registry(&[("a", "Does a."), ("b", "Does b better.")]);
        assert_ne!(same, pool_hash(&pool(&["a", "b"]), &redescribed));
    }
}
