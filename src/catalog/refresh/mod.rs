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
//!
//! Here the server, its refresh and its back-off; `session.rs` holds the session slot and the
//! connect, `approvals.rs` the pins' part of the state, `persist.rs` the reads and writes of
//! `cacheDir`.

mod approvals;
mod persist;
mod session;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::future::{BoxFuture, FutureExt, Shared as SharedFuture};
use tokio::sync::{mpsc, Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::auth::AuthHost;
use super::authorize::ServerAuth;
use super::cache::{self, CachedList};
use super::lock;
use super::pins::{self, Held, Pins};
use super::resources::Extras;
use super::client::Listed;
use super::config::{CatalogOptions, ServerConfig, Transport};
use super::diagnosis::Diagnosis;
use super::error::CatalogError;
use super::status::{now_rfc3339, CatalogEvent, HeldTools, ServerState, ServerStatus};
use super::tool::McpTool;
use session::Session;

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
    /// The store of `cacheDir` the pins are kept in, opened at first use (a blocking thread).
    pub pins_store: std::sync::OnceLock<Arc<dyn crate::store::Store>>,
}

impl Shared {
    pub fn asker(&self) -> super::elicit::Asker {
        super::elicit::Asker { host: self.host.clone(), asks: self.opts.host_asks, timeout: self.opts.elicitation_timeout }
    }
}

pub(crate) type RefreshFuture = SharedFuture<BoxFuture<'static, ServerStatus>>;

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
    /// The approved definitions: the stored record as last read, with `pin_ops` applied on
    /// top; `None` while they are read from the store.
    pins: Option<Pins>,
    /// Changes to the pins not yet written to the store, in order (`persist.rs`).
    pin_ops: Vec<pins::PinOp>,
    /// The store's pins revision read with `pins`: a check finding the same one reads nothing.
    pins_revision: Option<u64>,
    /// The tools of the current list that the pins hold; `None` while the pins load.
    held: Option<Held>,
    held_published: Held,
    /// The last list was `cacheScope: private`: not written to disk.
    private: bool,
    /// Bumped per stored list: a ttl timer of an older list does nothing.
    ttl_generation: u64,
    /// Resources, templates and prompts (`resources.rs`), last-known-good like `tools`.
    pub extras: Option<Extras>,
    /// Why the last connect failed, for a person (`diagnosis.rs`); cleared by a connect.
    pub diagnosis: Option<super::diagnosis::Diagnosis>,
}

pub(crate) struct Server {
    pub id: String,
    pub identity: String,
    config: Mutex<ServerConfig>,
    /// `status`'s sandbox report for the current config, worked out at the first status.
    sandbox: Mutex<Option<crate::confine::SandboxReport>>,
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

impl Drop for Server {
    fn drop(&mut self) {
        // A list of thousands of tools, or tens of MB of them, takes milliseconds to free, and
        // the last reference to a server often goes in a runtime task (its stop, a timer).
        let data = std::mem::take(self.data.get_mut().unwrap_or_else(|e| e.into_inner()));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(move || drop(data));
        }
    }
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
                Some(ServerAuth::new(&config.id, url.expose(), config.oauth.clone(), config.proxy.clone(), shared.auth_host.clone(), stop.clone()))
            }
            _ => None,
        };
        let server = Arc::new(Server {
            id: config.id.clone(),
            identity,
            config: Mutex::new(config),
            sandbox: Mutex::new(None),
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
                if pins_dir.is_some() {
                    let (loaded, revision) = me.shared.load_pins(&me.id);
                    me.apply_pins(loaded, revision);
                }
                if let Some(dir) = cache_dir {
                    let cached = cache::load(&dir, &me.id, &me.identity);
                    me.apply_cached(cached);
                }
            });
        }
        server
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
        *lock(&self.sandbox) = None;
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
        let (name, sandbox) = {
            let config = lock(&self.config);
            (config.name.clone(), self.sandbox_report(&config))
        };
        let (protocol_version, transport) = match &*lock(&self.session) {
            Session::Live(conn) => (Some(conn.protocol_version()), Some(conn.transport().to_owned())),
            _ => (None, None),
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
            transport,
            sandbox,
            diagnosis: d.diagnosis.clone(),
        }
    }

    /// The sandbox a stdio server runs (or would run) under, worked out once per config
    /// (`set_config` forgets it): it looks at the file system and the kernel.
    fn sandbox_report(&self, config: &ServerConfig) -> Option<crate::confine::SandboxReport> {
        let launch = config.launch().filter(|_| config.enabled)?;
        let mut cached = lock(&self.sandbox);
        Some(cached.get_or_insert_with(|| crate::confine::describe(config.sandbox.as_ref(), &launch)).clone())
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
            // Comparing a big list with the last one, checking it against the pins and freeing
            // the old one take milliseconds: off the runtime's threads.
            Ok(listed) => {
                let me = self.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || me.record_success(listed)).await {
                    self.record_failure(format!("storing the tool list failed: {e}"));
                }
            }
            Err(e) => self.record_failure(e),
        }
        self.status()
    }

    /// The tools, and the extras the server declares (`None` when their fetch failed: the
    /// old ones are kept, and the tools still count as refreshed).
    async fn fetch(self: &Arc<Self>) -> Result<(Listed, Option<Extras>), String> {
        let conn = self.connection().await.map_err(|e| e.to_string())?;
        let list_timeout = self.config().timeouts.list(self.shared.opts.list_timeout);
        match conn.list_tools(list_timeout).await {
            Ok(listed) => {
                let extras = match conn.list_extras(list_timeout).await {
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
            let (resources, prompts) = extras.differs_from(d.extras.as_ref());
            d.extras = Some(extras);
            let _ = self.shared.events.send(CatalogEvent::ExtrasChanged { server_id: self.id.clone(), resources, prompts });
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
            let config = self.config();
            let waiting = self.auth.as_ref().is_some_and(|a| a.flow_running());
            let mut d = lock(&self.data);
            d.state = Some(ServerState::NeedsAuth);
            d.error = Some(config.redact(&why));
            // Also after the flow failed, which no connect reports (`authorized`).
            d.diagnosis = Some(Diagnosis::authorization(&config, &why, waiting));
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
mod tests;
