//! One configured server: its last-known-good tool list, its status, its live connection, and
//! the background refresh job that keeps them current.
//!
//! Invariants:
//! - Reads (`snapshot`, `status`) take a short std mutex and never await: they can never wait
//!   on a server.
//! - At most one refresh per server runs at a time; every caller asking meanwhile awaits the
//!   same one (`in_flight` is a shared future of a spawned task, so a caller that goes away
//!   does not abort it).
//! - A failed refresh never drops the last-known-good list; it sets Error and schedules one
//!   automatic retry after an exponential back-off. Explicit refreshes skip the back-off and
//!   the warm-up concurrency limit.
//! - Events are edge-triggered: `DidChange` only when (state, error, tool count, tools, held
//!   tools) changed, `ToolsChanged` only when a different list was stored.
//! - A list's `ttlMs` (2026-07-28) schedules the next automatic refresh, no sooner than
//!   `TTL_FLOOR` and no later than `TTL_CAP`; a reader never waits for it. `ttlMs: 0` (what
//!   rmcp fills in for a server that says nothing) and a missing ttl schedule nothing: such a
//!   list is fresh until list_changed or an explicit refresh, as a 2025-11-25 one, rather than
//!   re-read every second. A `cacheScope: private` list is kept in memory only (`persist`).
//! - The held tools (`pins.rs`) are recomputed under the data lock whenever the list, the pins
//!   or the rules (trust, approval settings) change, so `held` always describes the current
//!   list. While the pins are read from disk `held` is `None`: sync keeps what it had and calls
//!   are refused.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use futures::future::{BoxFuture, FutureExt, Shared as SharedFuture};
use tokio::sync::{mpsc, Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::auth::AuthHost;
use super::authorize::ServerAuth;
use super::cache::{self, CachedList};
use super::lock;
use super::pins::{self, Held, Pins, Rules, ToolPin};
use super::resources::Extras;
use super::client::{self, Connection, Listed};
use super::config::{CatalogOptions, ServerConfig, Transport};
use super::error::CatalogError;
use super::status::{now_rfc3339, CatalogEvent, HeldTools, ServerState, ServerStatus};
use super::tool::McpTool;

/// Bounds of a ttl-scheduled refresh: a server asking every millisecond is re-read once a
/// second; one asking for a day is still re-read hourly.
pub(crate) const TTL_FLOOR: std::time::Duration = std::time::Duration::from_secs(1);
pub(crate) const TTL_CAP: std::time::Duration = std::time::Duration::from_secs(3600);

/// What every server shares with the catalog.
pub(crate) struct Shared {
    pub opts: CatalogOptions,
    pub events: mpsc::UnboundedSender<CatalogEvent>,
    pub warm_slots: Arc<Semaphore>,
    /// Where the servers' questions go (`elicit.rs`).
    pub host: Arc<dyn super::elicit::AskHost>,
    /// The user and the host's secrets, for servers that need OAuth.
    pub auth_host: Arc<dyn AuthHost>,
}

impl Shared {
    pub fn asker(&self) -> super::elicit::Asker {
        super::elicit::Asker { host: self.host.clone(), asks: self.opts.host_asks, timeout: self.opts.elicitation_timeout }
    }
}

pub(crate) type RefreshFuture = SharedFuture<BoxFuture<'static, ServerStatus>>;
type ConnectFuture = SharedFuture<BoxFuture<'static, Result<Arc<Connection>, CatalogError>>>;

/// The session slot. A std mutex held for a few assignments: the connect itself runs in its
/// own task, awaited through `Connecting`'s shared future, outside the lock.
enum Session {
    Idle,
    /// `abort` ends the connect early (restart, stop); it is a child of the server's stop token.
    Connecting { fut: ConnectFuture, abort: CancellationToken },
    Live(Arc<Connection>),
}

/// The mutable part of a server, behind a std mutex held only for a few assignments.
#[derive(Default)]
pub(crate) struct Data {
    pub state: Option<ServerState>,
    pub error: Option<String>,
    /// `None`: cold (never warmed, nothing on disk). `Some(vec![])`: warmed and empty.
    pub tools: Option<Vec<McpTool>>,
    pub refreshed_at: Option<String>,
    failures: u32,
    retry_at: Option<Instant>,
    retry_scheduled: bool,
    /// Some automatic refresh was started: a cold read must not start another.
    pub kicked: bool,
    /// The list on disk is still being read: a read is cold but must not start a refresh.
    pub loading: bool,
    in_flight: Option<(RefreshFuture, Arc<Notify>)>,
    rerun: bool,
    last_published: Option<(ServerState, Option<String>, Option<usize>)>,
    /// The approved definitions; `None` while they are read from disk.
    pins: Option<Pins>,
    /// The tools of the current list that the pins hold; `None` while the pins load.
    held: Option<Held>,
    held_published: Held,
    /// The last list was `cacheScope: private`: not written to disk.
    private: bool,
    /// Bumped per stored list: a ttl timer of an older list does nothing.
    ttl_generation: u64,
    /// Resources, templates and prompts (`resources.rs`), last-known-good like `tools`.
    pub extras: Option<Extras>,
}

pub(crate) struct Server {
    pub id: String,
    pub identity: String,
    config: Mutex<ServerConfig>,
    pub data: Mutex<Data>,
    session: Mutex<Session>,
    stop: CancellationToken,
    persist_lock: Arc<Mutex<()>>,
    shared: Arc<Shared>,
    /// OAuth for an HTTP server the host gave no `Authorization` header.
    auth: Option<Arc<ServerAuth>>,
    /// The last `auto` connect ended on 2025-11-25: the next goes straight to `initialize`.
    /// Forgotten when a connect fails, so a server that changed is asked again.
    legacy: AtomicBool,
}

impl Server {
    /// `carry` is the last-known-good list of a previous incarnation with the same identity,
    /// `pins` the approvals of a previous incarnation with the same id.
    /// The list from disk is read off the async threads and shows up (with a `DidChange`) as
    /// soon as it is loaded, unless a refresh got a fresh list first; the pins are read first.
    pub fn new(config: ServerConfig, shared: Arc<Shared>, carry: Option<CachedList>, pins: Option<Pins>) -> Arc<Self> {
        let identity = config.identity_hash();
        let cache_dir = if carry.is_none() { shared.opts.cache_dir.clone() } else { None };
        let pins_dir = if pins.is_none() { shared.opts.cache_dir.clone() } else { None };
        let data = Data {
            state: Some(if config.enabled { ServerState::Connecting } else { ServerState::Disabled }),
            refreshed_at: carry.as_ref().and_then(|c| c.refreshed_at.clone()),
            extras: carry.as_ref().and_then(|c| c.extras.clone()),
            tools: carry.map(|c| c.tools),
            loading: cache_dir.is_some(),
            // Without a cacheDir, pins live in memory only.
            pins: pins.or_else(|| pins_dir.is_none().then(Pins::default)),
            ..Data::default()
        };
        let stop = CancellationToken::new();
        let auth = match &config.transport {
            Transport::Http { url, headers } if !headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")) => {
                Some(ServerAuth::new(&config.id, url.expose(), config.oauth.clone(), shared.auth_host.clone(), stop.clone()))
            }
            _ => None,
        };
        let server = Arc::new(Server {
            id: config.id.clone(),
            identity,
            config: Mutex::new(config),
            data: Mutex::new(data),
            session: Mutex::new(Session::Idle),
            stop,
            persist_lock: Arc::new(Mutex::new(())),
            shared,
            auth,
            legacy: AtomicBool::new(false),
        });
        if let Some(auth) = &server.auth {
            let weak = Arc::downgrade(&server);
            auth.set_on_done(Arc::new(move |outcome| {
                if let Some(me) = weak.upgrade() {
                    me.authorized(outcome);
                }
            }));
        }
        let mut d = lock(&server.data);
        let persist_pins = server.reevaluate(&mut d);
        server.publish(&mut d, false);
        drop(d);
        if persist_pins {
            server.persist_pins();
        }
        if cache_dir.is_some() || pins_dir.is_some() {
            let me = server.clone();
            tokio::task::spawn_blocking(move || {
                if let Some(dir) = pins_dir {
                    let loaded = pins::load(&dir, &me.id);
                    me.apply_pins(loaded);
                }
                if let Some(dir) = cache_dir {
                    let cached = cache::load(&dir, &me.id, &me.identity);
                    me.apply_cached(cached);
                }
            });
        }
        server
    }

    fn apply_cached(self: &Arc<Self>, cached: Option<CachedList>) {
        let mut d = lock(&self.data);
        d.loading = false;
        if let (Some(list), None) = (cached, &d.tools) {
            d.tools = Some(list.tools);
            d.refreshed_at = list.refreshed_at;
            if list.extras.is_some() {
                d.extras = list.extras;
                let _ = self.shared.events.send(CatalogEvent::ExtrasChanged { server_id: self.id.clone() });
            }
            let persist_pins = self.reevaluate(&mut d);
            self.publish(&mut d, true);
            drop(d);
            if persist_pins {
                self.persist_pins();
            }
        }
    }

    fn apply_pins(self: &Arc<Self>, loaded: Pins) {
        let mut d = lock(&self.data);
        if d.pins.is_none() {
            d.pins = Some(loaded);
        }
        let persist_pins = self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        if persist_pins {
            self.persist_pins();
        }
    }

    fn rules(&self) -> Rules {
        Rules::of(&lock(&self.config))
    }

    /// Recompute the held tools after the list, the pins or the rules changed; a list seen
    /// for the first time (or under `auto`) is approved here. Returns whether the pins changed.
    fn reevaluate(&self, d: &mut Data) -> bool {
        let rules = self.rules();
        let Data { pins, tools, held, .. } = d;
        match (pins.as_mut(), tools.as_deref()) {
            (None, _) => {
                *held = None;
                false
            }
            (Some(_), None) => {
                *held = Some(Held::default());
                false
            }
            (Some(p), Some(tools)) => {
                let changed = p.observe(tools, rules.trust);
                *held = Some(p.held(tools, &rules));
                changed
            }
        }
    }

    /// The pins, if read (for a successor with the same id).
    pub fn pins(&self) -> Option<Pins> {
        lock(&self.data).pins.clone()
    }

    /// Names of the held tools of the current list; `None` while the pins are read from disk.
    pub fn held(&self) -> Option<Held> {
        lock(&self.data).held.clone()
    }

    fn pins_loading(&self) -> CatalogError {
        CatalogError::NotConnected(format!(
            "the approved tool definitions of MCP server {} are still being read; try again",
            self.id
        ))
    }

    /// Every tool of the current list with its pin state (and a diff when changed).
    pub fn pin_report(&self) -> Result<Vec<ToolPin>, CatalogError> {
        let rules = self.rules();
        let d = lock(&self.data);
        let pins = d.pins.as_ref().ok_or_else(|| self.pins_loading())?;
        Ok(pins.report(d.tools.as_deref().unwrap_or_default(), &rules))
    }

    /// Make the current definitions of `names` the approved ones, unless one changed since the
    /// user reviewed its fingerprint in `reviewed`.
    pub fn approve(self: &Arc<Self>, names: &[String], reviewed: &BTreeMap<String, String>) -> Result<(), CatalogError> {
        let mut d = lock(&self.data);
        let tools = d.tools.clone().unwrap_or_default();
        let Some(pins) = d.pins.as_mut() else { return Err(self.pins_loading()) };
        pins.approve(&tools, names, reviewed).map_err(|refused| match refused {
            pins::Refused::NotInList(tools) => CatalogError::NotInList { server: self.id.clone(), tools },
            pins::Refused::ChangedSinceReview(tools) => CatalogError::ChangedSinceReview { server: self.id.clone(), tools },
        })?;
        self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        self.persist_pins();
        Ok(())
    }

    /// Approves the held tools whose current definitions the pins on disk approve: what
    /// `toolreg pins --approve` (another process) wrote. Only approvals are taken from the
    /// file, never its absence or its other records, so nothing approved here is lost.
    /// Returns whether anything was approved.
    pub fn adopt_disk_approvals(self: &Arc<Self>) -> bool {
        let Some(dir) = self.shared.opts.cache_dir.clone() else { return false };
        let disk = pins::load(&dir, &self.id);
        let rules = self.rules();
        let mut d = lock(&self.data);
        let tools = d.tools.clone().unwrap_or_default();
        let Some(held) = d.held.clone() else { return false };
        let adopt: Vec<String> = tools.iter().filter(|t| held.contains(&t.name) && disk.approves(t, &rules)).map(|t| t.name.clone()).collect();
        let Some(pins) = d.pins.as_mut() else { return false };
        if adopt.is_empty() || pins.approve(&tools, &adopt, &BTreeMap::new()).is_err() {
            return false;
        }
        tracing::info!(server = %self.id, tools = ?adopt, "approved on disk by another process");
        self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        // The file then holds both processes' approvals.
        self.persist_pins();
        true
    }

    /// Writes the pins now, on this thread (a command that exits next cannot leave it to a
    /// background task).
    pub fn store_pins(&self) -> std::io::Result<()> {
        let Some(dir) = &self.shared.opts.cache_dir else { return Ok(()) };
        let _guard = lock(&self.persist_lock);
        let Some(pins) = self.pins() else { return Ok(()) };
        pins::store(dir, &self.id, &pins)
    }

    /// Why a call to `tool` must not run now (its current definition is not approved).
    pub fn refusal(&self, tool: &str) -> Option<String> {
        let rules = self.rules();
        let d = lock(&self.data);
        let Some(pins) = &d.pins else { return Some(self.pins_loading().to_string()) };
        let current = d.tools.iter().flatten().find(|t| t.name == tool)?;
        pins.refusal(&self.id, current, &rules, &(self.shared.opts.review.0)(&self.id, tool))
    }

    /// Whether a call to `tool` waits for the user, under the current configuration. Fails
    /// closed: it asks if the tool's current annotations ask or its approved ones did, so no
    /// change of list between this question and the call's pin check spares the question.
    pub fn asks_approval(&self, tool: &str) -> bool {
        let config = self.config();
        let d = lock(&self.data);
        let current = d.tools.iter().flatten().find(|t| t.name == tool);
        let approved = d.pins.as_ref().and_then(|p| p.approved_tool(tool));
        config.asks_approval(tool, current.and_then(|t| t.annotations.as_ref()))
            || approved.is_some_and(|a| config.asks_approval(tool, a.annotations.as_ref()))
    }

    pub fn config(&self) -> ServerConfig {
        lock(&self.config).clone()
    }

    /// Why the server waits for the user to authorize, if it does.
    pub fn needs_user(&self) -> Option<String> {
        self.auth.as_ref()?.needs_user()
    }

    /// An authorization flow runs (its page not yet answered).
    pub fn authorizing(&self) -> bool {
        self.auth.as_ref().is_some_and(|a| a.flow_running())
    }

    /// An authorization flow ended: refresh with the new tokens, or show why it failed.
    fn authorized(self: &Arc<Self>, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                {
                    let mut d = lock(&self.data);
                    d.failures = 0;
                    d.retry_at = None;
                }
                // Now, or right after a refresh that is running (it may have met the 401).
                self.on_list_changed();
            }
            Err(e) => self.record_failure(e),
        }
    }

    /// Display name, tool filters and trust change in place: they do not touch the connection.
    pub fn set_config(self: &Arc<Self>, config: ServerConfig) {
        *lock(&self.config) = config;
        let mut d = lock(&self.data);
        let persist_pins = self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        if persist_pins {
            self.persist_pins();
        }
    }

    pub fn enabled(&self) -> bool {
        lock(&self.config).enabled
    }

    pub fn last_known_good(&self) -> Option<CachedList> {
        let d = lock(&self.data);
        d.tools.as_ref().map(|t| CachedList { tools: t.clone(), refreshed_at: d.refreshed_at.clone(), extras: d.extras.clone() })
    }

    pub fn status(&self) -> ServerStatus {
        let name = lock(&self.config).name.clone();
        let protocol_version = match &*lock(&self.session) {
            Session::Live(conn) => Some(conn.protocol_version()),
            _ => None,
        };
        let d = lock(&self.data);
        ServerStatus {
            id: self.id.clone(),
            name,
            state: d.state.unwrap_or(ServerState::Connecting),
            error: d.error.clone(),
            tool_count: d.tools.as_ref().map(Vec::len),
            refreshed_at: d.refreshed_at.clone(),
            cached: d.tools.is_some(),
            protocol_version,
        }
    }

    fn publish(&self, d: &mut Data, tools_changed: bool) {
        let state = d.state.unwrap_or(ServerState::Connecting);
        let sig = (state, d.error.clone(), d.tools.as_ref().map(Vec::len));
        let held = d.held.clone().unwrap_or_else(|| d.held_published.clone());
        let held_changed = held != d.held_published;
        if d.last_published.as_ref() != Some(&sig) || tools_changed || held_changed {
            let _ = self.shared.events.send(CatalogEvent::DidChange {
                server_id: self.id.clone(),
                status: state,
                tool_count: sig.2,
                held: held_changed
                    .then(|| HeldTools { changed_tools: held.changed.clone(), new_tools: held.new.clone() }),
            });
            d.last_published = Some(sig);
            d.held_published = held;
        }
        if tools_changed {
            let _ = self.shared.events.send(CatalogEvent::ToolsChanged { server_id: self.id.clone() });
        }
    }

    /// Join the running refresh or start one. Automatic ones wait for a warm-up slot and
    /// respect back-off (returning `None` while backing off); explicit ones do neither.
    pub fn start_refresh(self: &Arc<Self>, explicit: bool) -> Option<RefreshFuture> {
        let mut d = lock(&self.data);
        if let Some((fut, urgent)) = &d.in_flight {
            if explicit {
                urgent.notify_one();
            }
            return Some(fut.clone());
        }
        if self.stop.is_cancelled() || !self.enabled() {
            return None;
        }
        if !explicit && d.retry_at.is_some_and(|t| t > Instant::now()) {
            return None;
        }
        // Waiting for the user: only their authorization (or the host) starts the next try.
        if !explicit && self.needs_user().is_some() {
            return None;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let urgent = Arc::new(Notify::new());
        if explicit {
            urgent.notify_one();
        }
        let me = self.clone();
        let fut: RefreshFuture = async move { rx.await.unwrap_or_else(|_| me.status()) }.boxed().shared();
        d.in_flight = Some((fut.clone(), urgent.clone()));
        d.kicked = true;
        drop(d);

        let me = self.clone();
        tokio::spawn(async move {
            let slots = me.shared.warm_slots.clone();
            let permit = tokio::select! {
                p = slots.acquire_owned() => p.ok(),
                _ = urgent.notified() => None,
                _ = me.stop.cancelled() => None,
            };
            let status = if me.stop.is_cancelled() { me.status() } else { me.refresh_now().await };
            drop(permit);
            let rerun = {
                let mut d = lock(&me.data);
                d.in_flight = None;
                std::mem::take(&mut d.rerun)
            };
            let _ = tx.send(status);
            if rerun {
                me.start_refresh(false);
            }
        });
        Some(fut)
    }

    /// `notifications/tools/list_changed`: refresh now, or again right after the running one
    /// (which may have read the list before the change).
    fn on_list_changed(self: &Arc<Self>) {
        {
            let mut d = lock(&self.data);
            if d.in_flight.is_some() {
                d.rerun = true;
                return;
            }
        }
        self.start_refresh(true);
    }

    async fn refresh_now(self: &Arc<Self>) -> ServerStatus {
        let result = tokio::select! {
            r = self.fetch() => r,
            _ = self.stop.cancelled() => Err("server stopped".to_owned()),
        };
        if self.stop.is_cancelled() {
            return self.status();
        }
        match result {
            Ok(listed) => self.record_success(listed),
            Err(e) => self.record_failure(e),
        }
        self.status()
    }

    /// The tools, and the extras the server declares (`None` when their fetch failed: the
    /// old ones are kept, and the tools still count as refreshed).
    async fn fetch(self: &Arc<Self>) -> Result<(Listed, Option<Extras>), String> {
        let conn = self.connection().await.map_err(|e| e.to_string())?;
        match conn.list_tools(self.shared.opts.list_timeout).await {
            Ok(listed) => {
                let extras = match conn.list_extras(self.shared.opts.list_timeout).await {
                    Ok(extras) => Some(extras.unwrap_or_default()),
                    Err(e) => {
                        tracing::warn!(server = %self.id, error = %self.config().redact(&e.to_string()), "MCP resources/prompts refresh failed; keeping the last lists");
                        None
                    }
                };
                Ok((listed, extras))
            }
            Err(e) => {
                // A session that timed out or closed is not worth reusing.
                if matches!(e, CatalogError::Timeout { .. } | CatalogError::Closed(_)) || !conn.is_alive() {
                    self.drop_connection(&conn);
                }
                Err(e.to_string())
            }
        }
    }

    fn record_success(self: &Arc<Self>, (listed, extras): (Listed, Option<Extras>)) {
        if let Some(auth) = &self.auth {
            auth.succeeded();
        }
        let Listed { tools, ttl, private } = listed;
        let mut d = lock(&self.data);
        if let Some(extras) = extras.filter(|e| d.extras.as_ref() != Some(e)) {
            d.extras = Some(extras);
            let _ = self.shared.events.send(CatalogEvent::ExtrasChanged { server_id: self.id.clone() });
        }
        let changed = d.tools.as_ref() != Some(&tools);
        d.tools = Some(tools);
        d.private = private;
        d.ttl_generation = d.ttl_generation.wrapping_add(1);
        let generation = d.ttl_generation;
        d.refreshed_at = Some(now_rfc3339());
        d.state = Some(ServerState::Ready);
        d.error = None;
        d.failures = 0;
        d.retry_at = None;
        let persist_pins = self.reevaluate(&mut d);
        self.publish(&mut d, changed);
        drop(d);
        self.persist();
        if persist_pins {
            self.persist_pins();
        }
        if let Some(ttl) = ttl.filter(|t| !t.is_zero()) {
            self.refresh_after(ttl.clamp(TTL_FLOOR, TTL_CAP), generation);
        }
    }

    /// The list stored as `generation` goes stale after `delay`: refresh then, unless another
    /// list was stored meanwhile (it has its own timer) or the server stopped.
    fn refresh_after(self: &Arc<Self>, delay: std::time::Duration, generation: u64) {
        self.after(delay, move |me| {
            if lock(&me.data).ttl_generation == generation {
                tracing::debug!(server = %me.id, "tool list past its ttlMs; refreshing");
                me.start_refresh(false);
            }
        });
    }

    /// Runs `then` after `delay`, unless the server stopped or went meanwhile.
    fn after(self: &Arc<Self>, delay: std::time::Duration, then: impl FnOnce(Arc<Self>) + Send + 'static) {
        let me = Arc::downgrade(self);
        let stop = self.stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.cancelled() => return,
            }
            if let Some(me) = me.upgrade() {
                then(me);
            }
        });
    }

    pub fn record_failure(self: &Arc<Self>, error: String) {
        // Every failure a host can see (status, list, events) and the log pass here.
        let error = self.config().redact(&error);
        if let Some(why) = self.needs_user() {
            // Waiting for the user: no back-off retry; the flow's end refreshes.
            tracing::info!(server = %self.id, reason = %why, "MCP server needs authorization");
            let mut d = lock(&self.data);
            d.state = Some(ServerState::NeedsAuth);
            d.error = Some(self.config().redact(&why));
            self.publish(&mut d, false);
            return;
        }
        tracing::warn!(server = %self.id, %error, "MCP tool refresh failed");
        let mut d = lock(&self.data);
        d.state = Some(ServerState::Error);
        d.error = Some(error);
        d.failures = d.failures.saturating_add(1);
        let opts = &self.shared.opts;
        let factor = 1u32.checked_shl(d.failures.saturating_sub(1).min(20)).unwrap_or(u32::MAX);
        let delay = opts.backoff_base.saturating_mul(factor).min(opts.backoff_max);
        d.retry_at = Some(Instant::now() + delay);
        self.publish(&mut d, false);
        let schedule = !std::mem::replace(&mut d.retry_scheduled, true);
        drop(d);
        if schedule {
            self.after(delay, |me| {
                let still_failing = {
                    let mut d = lock(&me.data);
                    d.retry_scheduled = false;
                    d.state == Some(ServerState::Error)
                };
                if still_failing {
                    me.start_refresh(false);
                }
            });
        }
    }

    /// Write the current list to disk off the async threads; the lock plus reading the list
    /// inside it means the last write always carries the newest list.
    fn persist(self: &Arc<Self>) {
        let Some(dir) = self.shared.opts.cache_dir.clone() else { return };
        let me = self.clone();
        let persist_lock = self.persist_lock.clone();
        tokio::task::spawn_blocking(move || {
            let _guard = lock(&persist_lock);
            let Some(list) = me.last_known_good() else { return };
            let written = if lock(&me.data).private {
                cache::remove(&dir, &me.id)
            } else {
                cache::store(&dir, &me.id, &me.identity, &list)
            };
            if let Err(e) = written {
                tracing::warn!(server = %me.id, error = %e, "cannot write MCP tool cache");
            }
        });
    }

    /// Write the pins to disk off the async threads, like `persist` (same lock, newest value).
    fn persist_pins(self: &Arc<Self>) {
        let Some(dir) = self.shared.opts.cache_dir.clone() else { return };
        let me = self.clone();
        let persist_lock = self.persist_lock.clone();
        tokio::task::spawn_blocking(move || {
            let _guard = lock(&persist_lock);
            let Some(pins) = me.pins() else { return };
            if let Err(e) = pins::store(&dir, &me.id, &pins) {
                tracing::warn!(server = %me.id, error = %e, "cannot write the approved MCP tool definitions");
            }
        });
    }

    /// The live session, connecting if there is none (bounded by the connect timeout). Every
    /// caller during a connect awaits the same one; no lock is held while it runs, so a
    /// restart, a stop or a status read never waits behind a slow server's handshake.
    pub async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, CatalogError> {
        let pending = {
            let mut slot = lock(&self.session);
            match &*slot {
                Session::Live(conn) if conn.is_alive() => return Ok(conn.clone()),
                Session::Connecting { fut, .. } => fut.clone(),
                Session::Live(_) | Session::Idle => {
                    if let Session::Live(old) = std::mem::replace(&mut *slot, Session::Idle) {
                        let grace = self.shared.opts.stop_grace;
                        tokio::spawn(async move { old.close(grace).await });
                    }
                    if self.stop.is_cancelled() {
                        return Err(CatalogError::NotConnected("server stopped".into()));
                    }
                    let abort = self.stop.child_token();
                    let fut = self.start_connect(abort.clone());
                    *slot = Session::Connecting { fut: fut.clone(), abort };
                    fut
                }
            }
        };
        pending.await
    }

    /// Spawn one connect; the caller stores the returned future as `Session::Connecting`
    /// (it holds the slot's lock meanwhile, so the task cannot finish before that).
    fn start_connect(self: &Arc<Self>, abort: CancellationToken) -> ConnectFuture {
        {
            let mut d = lock(&self.data);
            if d.state != Some(ServerState::Connecting) {
                d.state = Some(ServerState::Connecting);
                self.publish(&mut d, false);
            }
        }
        let weak: Weak<Server> = Arc::downgrade(self);
        let on_list_changed = Box::new(move || {
            if let Some(s) = weak.upgrade() {
                s.on_list_changed();
            }
        });
        let (events, server_id) = (self.shared.events.clone(), self.id.clone());
        let on_updated = Box::new(move |uri| {
            let _ = events.send(CatalogEvent::ResourceUpdated { server_id: server_id.clone(), uri });
        });
        let (tx, rx) = tokio::sync::oneshot::channel();
        let me = self.clone();
        let fut: ConnectFuture = async move {
            rx.await.unwrap_or_else(|_| Err(CatalogError::NotConnected("connect abandoned".into())))
        }
        .boxed()
        .shared();
        let mine = fut.clone();
        tokio::spawn(async move {
            let opts = &me.shared.opts;
            let config = me.config();
            let connected = tokio::select! {
                r = client::connect(&config, opts.connect_timeout, opts.max_message_bytes, on_list_changed, on_updated, me.shared.asker(), me.auth.clone(), me.legacy.load(Ordering::Relaxed)) => r,
                _ = abort.cancelled() => Err("connect abandoned (restart or stop)".into()),
            };
            me.legacy.store(connected.as_ref().is_ok_and(|c| c.has_initialize()), Ordering::Relaxed);
            let result = me.finish_connect(&mine, connected);
            let _ = tx.send(result);
        });
        fut
    }

    /// Store a finished connect, unless a restart or stop replaced it meanwhile.
    fn finish_connect(
        self: &Arc<Self>,
        mine: &ConnectFuture,
        connected: Result<Connection, String>,
    ) -> Result<Arc<Connection>, CatalogError> {
        let mut slot = lock(&self.session);
        let current = matches!(&*slot, Session::Connecting { fut, .. } if fut.ptr_eq(mine));
        let conn = match connected {
            Ok(c) => Arc::new(c),
            Err(e) => {
                if current {
                    *slot = Session::Idle;
                }
                return Err(CatalogError::NotConnected(e));
            }
        };
        if !current || self.stop.is_cancelled() {
            drop(slot);
            let grace = self.shared.opts.stop_grace;
            tokio::spawn(async move { conn.close(grace).await });
            return Err(CatalogError::NotConnected("the connection was replaced (restart or stop)".into()));
        }
        *slot = Session::Live(conn.clone());
        drop(slot);
        self.watch_exit(&conn);
        // Connected outside a refresh (a call): the status is Connecting and a restarted
        // server may have other tools, so list them now.
        if lock(&self.data).in_flight.is_none() {
            self.start_refresh(true);
        }
        Ok(conn)
    }

    /// Take the session out of the slot (aborting a connect in progress).
    fn take_session(&self) -> Option<Arc<Connection>> {
        match std::mem::replace(&mut *lock(&self.session), Session::Idle) {
            Session::Live(conn) => Some(conn),
            Session::Connecting { abort, .. } => {
                abort.cancel();
                None
            }
            Session::Idle => None,
        }
    }

    /// A child that dies (crash, kill) turns the server to Error at once, not at the next use.
    fn watch_exit(self: &Arc<Self>, conn: &Arc<Connection>) {
        let weak = Arc::downgrade(self);
        let conn_weak = Arc::downgrade(conn);
        let stop = self.stop.clone();
        let conn = conn.clone();
        tokio::spawn(async move {
            let why = tokio::select! {
                why = conn.exited() => why,
                _ = stop.cancelled() => return,
            };
            drop(conn);
            let (Some(me), Some(conn)) = (weak.upgrade(), conn_weak.upgrade()) else { return };
            let current = matches!(&*lock(&me.session), Session::Live(c) if Arc::ptr_eq(c, &conn));
            if current && !me.stop.is_cancelled() {
                me.drop_connection(&conn);
                me.record_failure(why);
            }
        });
    }

    fn drop_connection(&self, conn: &Arc<Connection>) {
        {
            let mut slot = lock(&self.session);
            if matches!(&*slot, Session::Live(c) if Arc::ptr_eq(c, conn)) {
                *slot = Session::Idle;
            }
        }
        let conn = conn.clone();
        let grace = self.shared.opts.stop_grace;
        tokio::spawn(async move { conn.close(grace).await });
    }

    /// Restart: close the session, forget the back-off, then refresh on a new session.
    pub async fn restart(self: &Arc<Self>) -> Option<ServerStatus> {
        let running = lock(&self.data).in_flight.as_ref().map(|(f, _)| f.clone());
        if let Some(old) = self.take_session() {
            old.close(self.shared.opts.stop_grace).await;
        }
        if let Some(running) = running {
            running.await;
        }
        {
            let mut d = lock(&self.data);
            d.failures = 0;
            d.retry_at = None;
        }
        if let Some(auth) = &self.auth {
            auth.reset();
        }
        Some(self.start_refresh(true)?.await)
    }

    /// Synchronous half of `stop`, for drop paths: background work ends and the session
    /// (and with it the child's process group) goes once its last user lets go.
    pub fn cancel(&self) {
        self.stop.cancel();
    }

    /// For good: no more refreshes, the session closed, the child group killed.
    pub async fn stop(&self) {
        self.stop.cancel();
        if let Some(old) = self.take_session() {
            old.close(self.shared.opts.stop_grace).await;
        }
    }
}

#[cfg(test)]
#[path = "refresh_tests.rs"]
mod tests;
