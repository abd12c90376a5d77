//! A lens on the gateway: what one kind of client sees of the connected servers (a view, in
//! the words; `views.rs` is MCP Apps' views). `/mcp` (and
//! stdio without `--profile`) is the whole view; each of `gateway.profiles` is another, over the
//! same catalog and the same synced registry (`profile.rs` says what it selects).
//!
//! Each view has its own core (`Service`: its registry holds only its tools, so every path, a
//! listed call, `tool_search`, `tool_invoke`, a `tool_exec` script, sees only them), its own
//! listing and usage-driven picks, its own resources and prompts, and its own clients to tell
//! when those change. The usage book, approvals, the audit log and the semantic signal are
//! shared with the whole view (a profile's calls counted under its own usage key).

use super::config::GatewayConfig;
use super::profile::Selection;
use super::resources::Changes;
use super::shelf::Shelf;
use super::{lock, Listing};
use crate::service::{Defer, Registry, Service, Source};
use rmcp::service::{Peer, RoleServer};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::watch;

pub struct Lens {
    /// `None`: the whole view; else the profile's name.
    pub name: Option<String>,
    pub(crate) service: Service,
    listing: RwLock<Arc<Listing>>,
    /// The next resync starts a new gateway session for this view: its usage-driven tools
    /// picked afresh (`usage.rs`).
    repick: AtomicBool,
    /// Connected session clients, told when this view's lists change.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Bumped when the listing's tools change: each `subscriptions/listen` stream of a
    /// 2026-07-28 client on this view tells its client.
    pub(crate) list_changes: watch::Sender<u64>,
    /// The view's resources, templates and prompts, and which of them changed last.
    shelf: RwLock<Arc<Shelf>>,
    pub(crate) shelf_changes: watch::Sender<Changes>,
    /// The profile's own bearer token (`--http`), as last read.
    token: RwLock<Option<crate::secret::Secret>>,
    /// Keeps that token out of every log line and audit record.
    redactor: crate::secret::redactor::Redactor,
    /// The profile left the config: the view lists nothing and runs nothing.
    gone: AtomicBool,
    /// The profile's selection as the config in force compiles it (`select`).
    selected: RwLock<Option<Result<Arc<Selection>, String>>>,
}

/// A view's plan settings: the profile's, each absent one the `gateway` block's.
pub(crate) struct PlanSettings {
    pub defer: Option<Defer>,
    pub defer_servers: BTreeMap<String, Defer>,
    pub code_mode: Option<crate::service::Limits>,
    pub usage: Option<crate::settings::UsagePolicy>,
    pub usage_key: String,
}

impl Lens {
    pub(crate) fn new(name: Option<String>, service: Service, empty: Arc<Listing>) -> Lens {
        Lens {
            name,
            service,
            listing: RwLock::new(empty),
            repick: AtomicBool::new(true),
            peers: Mutex::new(Vec::new()),
            list_changes: watch::channel(0).0,
            shelf: RwLock::default(),
            shelf_changes: watch::channel(Changes::default()).0,
            token: RwLock::new(None),
            redactor: crate::secret::redactor::Redactor::new(Vec::new()),
            gone: AtomicBool::new(false),
            selected: RwLock::new(None),
        }
    }

    /// A profile's view: a core of its own sharing the whole view's usage book, approvals,
    /// audit log (its records marked with the profile), budget and, unless the profile names
    /// its own `search`, semantic signal.
    pub(crate) fn profile(name: &str, whole: &Lens, cfg: &GatewayConfig, semantic: Option<Arc<crate::service::Semantic>>) -> Lens {
        // Call ids stay unique across views: the gateway routes upstream questions by them.
        let prefix: &'static str = Box::leak(format!("mcp-{name}-call-").into_boxed_str());
        let mut service = Service::new(Registry::default(), prefix);
        service.usage = whole.service.usage.clone();
        service.approvals = whole.service.approvals.clone();
        service.grants = whole.service.grants.clone();
        service.set_audit(whole.service.audit().for_profile(name));
        service.set_budget(cfg.budget().unwrap_or_default(), cfg.host.model.as_deref());
        if let Some(s) = semantic.or_else(|| whole.service.semantic().cloned()) {
            service.set_semantic(s);
        }
        let empty = Arc::new(Listing::empty(&service));
        Lens::new(Some(name.to_string()), service, empty)
    }

    pub fn listing(&self) -> Arc<Listing> {
        self.listing.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(super) fn set_listing(&self, next: Listing) {
        *self.listing.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
    }

    /// Replaces the listing when its tools, rendering or pool changed; says whether the tools
    /// (or rendering) did.
    pub(super) fn replace_listing(&self, next: Listing) -> bool {
        let mut cur = self.listing.write().unwrap_or_else(|e| e.into_inner());
        let changed = cur.tools != next.tools || cur.rendering != next.rendering;
        if changed || cur.pool != next.pool {
            *cur = Arc::new(next);
        }
        changed
    }

    pub fn shelf(&self) -> Arc<Shelf> {
        self.shelf.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Takes `next` when it differs; says whether (resources, templates or skills, prompts)
    /// changed.
    pub(crate) fn replace_shelf(&self, next: Shelf) -> Option<(bool, bool)> {
        let mut cur = self.shelf.write().unwrap_or_else(|e| e.into_inner());
        if **cur == next {
            return None;
        }
        let resources = cur.resources != next.resources || cur.templates != next.templates || cur.skills.listed != next.skills.listed;
        let changed = (resources, cur.prompts != next.prompts);
        *cur = Arc::new(next);
        Some(changed)
    }

    pub(super) fn take_repick(&self) -> bool {
        self.repick.swap(false, Ordering::AcqRel)
    }

    pub(super) fn repick_next(&self) {
        self.repick.store(true, Ordering::Release);
    }

    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = lock(&self.peers);
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    pub(crate) fn peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = lock(&self.peers);
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }

    pub(crate) fn token(&self) -> Option<crate::secret::Secret> {
        self.token.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(super) fn set_token(&self, token: Option<crate::secret::Secret>) {
        self.redactor.set(token.iter().map(|t| t.expose().to_string()));
        *self.token.write().unwrap_or_else(|e| e.into_inner()) = token;
    }

    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    pub(super) fn retire(&self) {
        self.gone.store(true, Ordering::Release);
    }

    /// The view's plan settings under `cfg`.
    pub(crate) fn settings(&self, cfg: &GatewayConfig) -> PlanSettings {
        let g = &cfg.gateway;
        let whole = PlanSettings {
            defer: g.defer,
            defer_servers: g.defer_servers.clone(),
            code_mode: g.code_mode,
            usage: g.usage.clone(),
            usage_key: g.usage_key.clone().unwrap_or_else(|| super::usage::DEFAULT_KEY.to_string()),
        };
        let Some(p) = self.name.as_ref().and_then(|n| g.profiles.get(n).map(|p| (n, p))) else { return whole };
        let (name, p) = p;
        PlanSettings {
            defer: p.defer.or(whole.defer),
            defer_servers: p.defer_servers.clone().unwrap_or(whole.defer_servers),
            code_mode: p.code_mode.unwrap_or(whole.code_mode),
            usage: p.usage.clone().or(whole.usage),
            usage_key: p.usage_key.clone().unwrap_or_else(|| format!("profile:{name}")),
        }
    }

    /// Compiles the profile's selection from `cfg` (at start and at each reload): compiled
    /// once, not at every check. One that does not compile selects nothing.
    pub(crate) fn select(&self, cfg: &GatewayConfig) {
        let Some(name) = self.name.as_ref() else { return };
        *self.selected.write().unwrap_or_else(|e| e.into_inner()) = Some(cfg.selection(name).map(Arc::new));
    }

    /// What the view selects: `None` for the whole view. A profile that does not compile (or
    /// left the config) selects nothing.
    fn selection(&self) -> Option<Result<Arc<Selection>, String>> {
        let name = self.name.as_ref()?;
        if self.is_gone() {
            return Some(Err(format!("profile {name:?} is no longer in the config")));
        }
        Some(self.selected.read().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_else(|| Err(format!("profile {name:?} is not compiled yet"))))
    }

    /// Whether upstream tool `tool` of `server` is in this view.
    pub(crate) fn has_tool(&self, server: &str, tool: &str) -> bool {
        self.selection().is_none_or(|s| s.is_ok_and(|s| s.tool(server, tool)))
    }

    /// Whether `server`'s resources and prompts are in this view.
    pub(crate) fn has_server(&self, server: &str) -> bool {
        self.selection().is_none_or(|s| s.is_ok_and(|s| s.server(server)))
    }

    /// The view's registry out of the synced one (`base`, as the sync left it, before any
    /// view placed its tools): its tools, placed by its settings.
    pub(crate) fn registry_from(&self, base: &Registry, cfg: &GatewayConfig) -> Registry {
        let mut r = base.clone();
        match self.selection() {
            None => {}
            Some(Ok(s)) => r.retain(|e| match &e.entry.source {
                Source::Mcp { server_id, tool_name } => s.tool(server_id, tool_name),
                _ => false,
            }),
            Some(Err(why)) => {
                tracing::warn!("{why}: it lists nothing");
                r.retain(|_| false);
            }
        }
        place(&mut r, &self.settings(cfg));
        r
    }
}

/// Places each upstream tool as `defer` / `deferServers` say.
fn place(r: &mut Registry, s: &PlanSettings) {
    let placed = |server: &str| s.defer_servers.get(server).copied().or(s.defer);
    let retagged: Vec<_> = r
        .iter()
        .filter_map(|e| match &e.entry.source {
            Source::Mcp { server_id, .. } => placed(server_id).filter(|d| *d != e.entry.defer),
            _ => None,
        }
        .map(|defer| (e.entry.name.clone(), defer)))
        .collect();
    for (name, defer) in retagged {
        r.set_defer(&name, defer);
    }
}
