//! The MCP catalog: which servers the host configured, what tools each one offers, and calls
//! through them. toolreg is a real MCP client to those servers.
//!
//! Invariants (SPEC 3):
//! - Reads never wait on a server. `list_tools`, `status`, `config` answer from memory under
//!   short std mutexes; only `refresh`, `restart`, `call_tool` and `shutdown` await, and each
//!   is bounded by a timeout. A hanging server delays nothing about another one.
//! - Work is driven in the background: warming at `set_servers` (bounded concurrency), a cold
//!   read, `tools/list_changed`, back-off retries. See `refresh.rs` for the per-server rules.
//! - The last-known-good list survives failures and restarts (`cache.rs`).
//! - Children die with us (`client/`, `child.rs`).
//! - Tools whose definition changed (approval hints that would spare a question included), or
//!   that appeared, after the user accepted a server's tools are held (`pins.rs`): `held_tools` names them for sync, and `call_tool` refuses
//!   them against the current list, whatever the registry still holds.
//! - No JSON-RPC here and no dependency on the rest of the crate but the leaf `secret`: the
//!   server layer maps `CatalogEvent`s and `CatalogError`s to the host protocol.
//! - No credential reaches a status, an error or the log: config fields are `Secret`s, and
//!   every failure text passes `ServerConfig::redact`.
//!
//! Locks: every std mutex here guards a few assignments and is never held across an await
//! (connects and refreshes run in their own tasks, awaited through shared futures). A poisoned
//! mutex is recovered with `lock()` (`PoisonError::into_inner`), as in the rest of the crate:
//! the guarded data is plain values whose every state is valid, and one panicked task must not
//! turn every later status read into a panic. Lock order where two nest: `session` before
//! `data` before `config`, and `data` before an OAuth phase (`authorize.rs`).
//!
//! Unbounded channels: `events` (to the server loop) carries edges only: a status change per
//! server state transition, paced by back-off and single-flight refreshes, and a few progress
//! messages per `set_servers`. Progress sinks of a call carry what the server sends, one message
//! at a time through the stdio reader, each under `max_message_bytes`; the consumer (invoke)
//! forwards them to the host as they come, without awaiting.

pub mod auth;
mod authorize;
pub(crate) mod cache;
mod call;
mod call_logs;
pub(crate) mod canonical;
mod child;
mod client;
mod config;
pub mod credential;
mod diagnosis;
mod dpop;
mod launch;
mod error;
mod grant;
mod jwt;
mod mrtr;
mod pages;
pub mod elicit;
mod listen;
pub mod pins;
mod policy;
mod proxy;
mod refresh;
pub mod resources;
mod skills;
mod frontmatter;
mod tasks;
mod result_cap;
mod rotated;
mod status;
mod stdio;
mod tokens;
mod tool;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{json, Value};
use tokio::sync::{mpsc, Semaphore};

pub use config::{CatalogOptions, ProtocolChoice, ReviewHint, ServerConfig, ServerTimeouts, Transport};
pub use call::CallRequest;
pub use error::CatalogError;
pub use policy::{ApprovalHints, ApprovalPolicy, Trust};
pub use status::{CatalogEvent, HeldTools, ServerState, ServerStatus};
pub use diagnosis::{Diagnosis, DiagnosisKind};
pub use launch::{on_path, ShellEnv, SpawnSettings};
// The sandbox of a stdio server, as each face configures and shows it.
pub use crate::confine::{Sandbox, SandboxLimits, SandboxPolicy, SandboxReport, SandboxState};
pub use tool::{ListState, ListToolsResult, McpTool};
pub use elicit::{AskHost, ElicitAction, ElicitMode, ElicitParams, ElicitResult, HostAsks, Root, RootsParams, RootsResult, SampleParams};
pub use mrtr::{Answer, Inputs, Retry};
pub use auth::{AuthHost, Grant, IdpConfig, NoAuthHost, OAuthConfig};
pub use credential::Credential;
pub use skills::LoadedSkill;
pub use pins::{PinDiff, PinState, ToolPin};
pub use resources::{Ask, Extras, Features};
pub use tasks::{tasks_capabilities, TaskAsk};
use refresh::{Server, Shared};

/// The catalog's one policy for poisoned mutexes: recover the data (see the module docs).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How often a catalog checks whether another process changed the pins (well within the 5 s in
/// which a tool approved elsewhere is announced).
const PINS_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Clone)]
pub struct Catalog {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    servers: Mutex<BTreeMap<String, Arc<Server>>>,
    warm_seq: AtomicU64,
    /// Pins of servers removed from the set, kept for the life of the process: a server that
    /// comes back is not re-baselined (the only copy when there is no cacheDir).
    retired_pins: Mutex<BTreeMap<String, pins::Pins>>,
}

impl Drop for Inner {
    /// A catalog dropped without `shutdown` still takes its children down.
    fn drop(&mut self) {
        for server in self.servers.get_mut().unwrap_or_else(PoisonError::into_inner).values() {
            server.cancel();
        }
    }
}

impl Catalog {
    pub fn new(opts: CatalogOptions, events: mpsc::UnboundedSender<CatalogEvent>) -> Self {
        Self::with_hosts(opts, events, Arc::new(elicit::NoHost), Arc::new(NoAuthHost))
    }

    /// A catalog whose servers' questions (elicitation, sampling) go to `host`, as far as
    /// `opts.host_asks` says the host answers them, and whose servers reach the user and the
    /// host's secrets through `auth_host` when they need OAuth authorization.
    pub fn with_hosts(
        opts: CatalogOptions,
        events: mpsc::UnboundedSender<CatalogEvent>,
        host: Arc<dyn AskHost>,
        auth_host: Arc<dyn AuthHost>,
    ) -> Self {
        let slots = opts.max_concurrent_warm.max(1);
        let shared = Arc::new(Shared { opts, events, warm_slots: Arc::new(Semaphore::new(slots)), host, auth_host, pins_store: Default::default() });
        let catalog = Catalog {
            inner: Arc::new(Inner {
                shared,
                servers: Mutex::new(BTreeMap::new()),
                warm_seq: AtomicU64::new(0),
                retired_pins: Mutex::new(BTreeMap::new()),
            }),
        };
        catalog.watch_pins();
        catalog
    }

    /// Adopts what other processes store in the pins (approvals, held views) within about
    /// `PINS_CHECK`, so that a tool approved elsewhere is released and announced (`DidChange`
    /// with the held tools, hence `catalog/didChange` and `tools/list_changed`) though nothing
    /// happens here. A check is one revision read; the records are read only when it moved.
    /// Ends with the catalog.
    fn watch_pins(&self) {
        let (Some(_), Ok(runtime)) = (&self.inner.shared.opts.cache_dir, tokio::runtime::Handle::try_current()) else { return };
        let inner = Arc::downgrade(&self.inner);
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(PINS_CHECK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(inner) = inner.upgrade() else { return };
                let shared = inner.shared.clone();
                let servers: Vec<Arc<Server>> = lock(&inner.servers).values().cloned().collect();
                drop(inner);
                let check = tokio::task::spawn_blocking(move || {
                    let Some((store, _)) = shared.pins_store() else { return };
                    let Ok(revision) = store.revision(pins::stored::KIND) else { return };
                    for s in servers {
                        s.adopt_stored(Some(revision));
                    }
                });
                let _ = check.await;
            }
        });
    }

    /// Replace the configured set. Unchanged servers keep their session; a changed name or
    /// tool filter is applied in place; a changed transport (credentials included), `sandbox`
    /// or `enabled` restarts the server, keeping its list when the identity (the transport without
    /// credentials) is the same. Never waits for a server.
    ///
    /// A new server's last-known-good list and pins are read from `cacheDir` before this
    /// returns (bounded by `cache::MAX_FILE_BYTES` each), so the first `list_tools` after it
    /// already serves the persisted list: call it off the async threads (the server runs it on
    /// the blocking pool, the gateway before its first resync).
    pub fn set_servers(&self, servers: Vec<ServerConfig>) {
        let mut disk = self.read_disk(&servers);
        let mut to_stop = Vec::new();
        let mut to_warm = Vec::new();
        {
            let mut map = lock(&self.inner.servers);
            let mut old = std::mem::take(&mut *map);
            for cfg in servers {
                if map.contains_key(&cfg.id) {
                    tracing::warn!(server = %cfg.id, "duplicate MCP server id; keeping the first");
                    continue;
                }
                let id = cfg.id.clone();
                let server = match old.remove(&id) {
                    // The identity ignores credentials; a rotated token still needs a new session.
                    Some(s)
                        if s.enabled() == cfg.enabled
                            && s.config().transport == cfg.transport
                            && s.config().oauth == cfg.oauth
                            && s.config().protocol_version == cfg.protocol_version
                            && s.config().sandbox == cfg.sandbox =>
                    {
                        s.set_config(cfg);
                        s
                    }
                    Some(s) => {
                        let carry = (s.identity == cfg.identity_hash()).then(|| s.last_known_good()).flatten();
                        let pins = s.pins();
                        to_stop.push(s);
                        let enabled = cfg.enabled;
                        let s = Server::new(cfg, self.inner.shared.clone(), carry, pins);
                        if enabled {
                            to_warm.push(s.clone());
                        }
                        s
                    }
                    None => {
                        let enabled = cfg.enabled;
                        let (list, from_disk) = disk.remove(&id).unwrap_or_default();
                        let pins = lock(&self.inner.retired_pins).remove(&id).or(from_disk);
                        let s = Server::new(cfg, self.inner.shared.clone(), list, pins);
                        if enabled {
                            to_warm.push(s.clone());
                        }
                        s
                    }
                };
                map.insert(id, server);
            }
            let mut retired = lock(&self.inner.retired_pins);
            for s in old.values() {
                if let Some(p) = s.pins() {
                    retired.insert(s.id.clone(), p);
                }
            }
            drop(retired);
            to_stop.extend(old.into_values());
        }
        for s in to_stop {
            tokio::spawn(async move { s.stop().await });
        }
        self.warm(to_warm);
    }

    /// The list and pins in `cacheDir` of each server `set_servers` will create (an id not
    /// configured yet): file reads, done before the servers lock is taken. Servers that
    /// exist already keep what they have in memory.
    fn read_disk(&self, servers: &[ServerConfig]) -> BTreeMap<String, (Option<cache::CachedList>, Option<pins::Pins>)> {
        let Some(dir) = self.inner.shared.opts.cache_dir.as_deref() else { return BTreeMap::new() };
        let known: std::collections::BTreeSet<String> = lock(&self.inner.servers).keys().cloned().collect();
        let mut read = BTreeMap::new();
        for cfg in servers.iter().filter(|cfg| !known.contains(&cfg.id)) {
            // The first of two configs with one id is the one kept.
            read.entry(cfg.id.clone()).or_insert_with(|| (cache::load(dir, &cfg.id, &cfg.identity_hash()), Some(self.inner.shared.load_pins(&cfg.id).0)));
        }
        read
    }

    /// Start an automatic refresh of each server and report the whole as one `$/progress`.
    fn warm(&self, servers: Vec<Arc<Server>>) {
        let jobs: Vec<_> = servers.iter().filter_map(|s| Some((s.id.clone(), s.start_refresh(false)?))).collect();
        if jobs.is_empty() {
            return;
        }
        let seq = self.inner.warm_seq.fetch_add(1, Ordering::Relaxed);
        let token = format!("toolreg/catalog/warm/{seq}");
        let events = self.inner.shared.events.clone();
        let total = jobs.len();
        let progress = move |value: Value| {
            let _ = events.send(CatalogEvent::Progress { token: token.clone(), value });
        };
        progress(json!({"kind": "begin", "title": "Warming MCP servers", "cancellable": false,
            "message": format!("0/{total}"), "percentage": 0}));
        tokio::spawn(async move {
            let mut pending: FuturesUnordered<_> =
                jobs.into_iter().map(|(id, fut)| async move { (id, fut.await) }).collect();
            let mut done = 0usize;
            while let Some((id, status)) = pending.next().await {
                done += 1;
                let state = serde_json::to_value(status.state).unwrap_or(Value::Null);
                let state = state.as_str().unwrap_or("");
                progress(json!({"kind": "report", "message": format!("{done}/{total} {id}: {state}"),
                    "percentage": done * 100 / total}));
            }
            progress(json!({"kind": "end", "message": format!("{total} MCP servers warmed")}));
        });
    }

    fn server(&self, server_id: &str) -> Result<Arc<Server>, CatalogError> {
        lock(&self.inner.servers)
            .get(server_id)
            .cloned()
            .ok_or_else(|| CatalogError::UnknownServer(server_id.to_owned()))
    }

    fn enabled_server(&self, server_id: &str) -> Result<Arc<Server>, CatalogError> {
        let server = self.server(server_id)?;
        if !server.enabled() {
            return Err(CatalogError::Disabled(server_id.to_owned()));
        }
        Ok(server)
    }

    /// The last-known-good list, from memory only. A cold server (never warmed, nothing on
    /// disk, no refresh ever started) gets exactly one background refresh.
    pub fn list_tools(&self, server_id: &str, include_disabled: bool) -> Result<ListToolsResult, CatalogError> {
        let server = self.enabled_server(server_id)?;
        let config = server.config();
        let (result, kick) = {
            let d = lock(&server.data);
            let state = match (&d.tools, &d.error) {
                (Some(_), _) => ListState::Ready,
                (None, Some(_)) => ListState::Error,
                (None, None) => ListState::Cold,
            };
            let tools = d
                .tools
                .iter()
                .flatten()
                .filter(|t| include_disabled || !config.disabled_tools.iter().any(|d| crate::invisible::names(d, &t.name)))
                .cloned()
                .collect();
            let result = ListToolsResult { state, tools, refreshed_at: d.refreshed_at.clone(), error: d.error.clone() };
            (result, state == ListState::Cold && !d.kicked && !d.loading)
        };
        if kick {
            server.start_refresh(false);
        }
        Ok(result)
    }

    /// Refresh now, sharing a refresh already running; skips back-off. Failures keep the
    /// last-known-good list and come back as an Error status, not as `Err`.
    pub async fn refresh(&self, server_id: &str) -> Result<ServerStatus, CatalogError> {
        let server = self.enabled_server(server_id)?;
        match server.start_refresh(true) {
            Some(fut) => Ok(fut.await),
            None => Err(CatalogError::Disabled(server_id.to_owned())),
        }
    }

    pub async fn restart(&self, server_id: &str) -> Result<ServerStatus, CatalogError> {
        let server = self.enabled_server(server_id)?;
        server.restart().await.ok_or_else(|| CatalogError::Disabled(server_id.to_owned()))
    }

    /// Every configured server, sorted by id.
    pub fn status(&self) -> Vec<ServerStatus> {
        let servers: Vec<_> = lock(&self.inner.servers).values().cloned().collect();
        servers.iter().map(|s| s.status()).collect()
    }

    pub fn server_status(&self, server_id: &str) -> Result<ServerStatus, CatalogError> {
        Ok(self.server(server_id)?.status())
    }

    /// An authorization flow of `server_id` runs: the user was (or is about to be) given its
    /// page, and the flow awaits the redirect.
    pub fn authorizing(&self, server_id: &str) -> bool {
        self.server(server_id).is_ok_and(|s| s.authorizing())
    }

    /// Why `server_id` waits for a user its host cannot ask, or whose flow failed (a restart
    /// tries again); None while a flow runs or nothing waits.
    pub fn auth_blocked(&self, server_id: &str) -> Option<String> {
        let server = self.server(server_id).ok()?;
        if server.authorizing() {
            return None;
        }
        server.needs_user()
    }

    pub fn config(&self, server_id: &str) -> Option<ServerConfig> {
        self.server(server_id).ok().map(|s| s.config())
    }

    /// Whether a call to `tool` of `server_id` waits for the user, decided now from the server's
    /// current configuration and the tool's annotations in its current list and in its approved
    /// definition (either asking asks); `None` when no such server is configured.
    pub fn asks_approval(&self, server_id: &str, tool: &str) -> Option<bool> {
        Some(self.server(server_id).ok()?.asks_approval(tool))
    }

    /// The fingerprint `tool`'s pins approve it by, for a server that pins (`trust: "pinned"`).
    pub fn pin_of(&self, server_id: &str, tool: &str) -> Option<String> {
        self.server(server_id).ok()?.pin_of(tool)
    }

    pub fn server_ids(&self) -> Vec<String> {
        lock(&self.inner.servers).keys().cloned().collect()
    }

    /// Every tool of the server's current list with its pin state (`catalog/pins`).
    pub fn pins(&self, server_id: &str) -> Result<Vec<ToolPin>, CatalogError> {
        self.server(server_id)?.pin_report()
    }

    /// Make the current definitions of `tools` the approved ones (`catalog/approveTools`);
    /// `reviewed`: the fingerprints the user was shown, checked against the current ones.
    pub fn approve_tools(
        &self,
        server_id: &str,
        tools: &[String],
        reviewed: &std::collections::BTreeMap<String, String>,
    ) -> Result<Vec<ToolPin>, CatalogError> {
        let server = self.server(server_id)?;
        server.approve(tools, reviewed)?;
        server.pin_report()
    }

    /// The tools of the server's current list that are held (changed or new since approved);
    /// `None` while its pins are being read from disk (so hold nothing new, evict nothing).
    pub fn held_tools(&self, server_id: &str) -> Option<std::collections::BTreeSet<String>> {
        match self.server(server_id) {
            Ok(s) => s.held().map(|h| h.names()),
            Err(_) => Some(Default::default()),
        }
    }

    /// Adopts the server's pins as stored now, when another process changed them since they
    /// were read (approved a held tool, say); returns whether they changed. Blocking (a read of
    /// the store).
    pub fn adopt_stored_pins(&self, server_id: &str) -> bool {
        self.server(server_id).is_ok_and(|s| s.adopt_stored(None))
    }

    /// Writes the server's pin changes to the store now and waits for it (`toolreg pins
    /// --approve`, `catalog/approveTools`: answered once the approval is kept). Blocking.
    pub fn store_pins(&self, server_id: &str) -> Result<(), CatalogError> {
        self.server(server_id)?.write_pins().map_err(|e| CatalogError::Mcp(format!("cannot write the pins of {server_id}: {e}")))
    }

    /// Why a call to `tool` must not run now (held by its pin), for the model; `None` if it may.
    pub fn held_refusal(&self, server_id: &str, tool: &str) -> Option<String> {
        self.server(server_id).ok()?.refusal(tool)
    }

    /// `tools/call` through the server's session (connecting if it has none). The result is
    /// the MCP `CallToolResult` as JSON; `isError: true` results are `Ok`. What the caller gives
    /// (cancellation, a progress sink, the id naming the call in the server's questions) is
    /// described on `CallRequest`. The rules the call obeys whichever way it travels (timeout, result checks, size cap) are in
    /// `call.rs`.
    pub async fn call_tool(&self, request: CallRequest<'_>) -> Result<Value, CatalogError> {
        match self.call_tool_with(request, &Inputs::Fulfil).await? {
            Answer::Complete(v) => Ok(v),
            // `Fulfil` answers every input request itself.
            Answer::InputRequired { .. } => Err(CatalogError::Mcp(format!("{}: the server still asks for input", call::METHOD))),
            Answer::Task(_) => Err(CatalogError::Mcp(format!("{}: the server made a task, which this call did not ask for", call::METHOD))),
        }
    }

    /// `call_tool`, with what to do about the server's input requests (`Inputs`): under
    /// `PassThrough` they come back as `Answer::InputRequired`, for the caller to answer.
    pub async fn call_tool_with(&self, request: CallRequest<'_>, inputs: &Inputs) -> Result<Answer, CatalogError> {
        let (server_id, tool, cancel) = (request.server, request.tool, &request.cancel);
        let server = self.enabled_server(server_id)?;
        let config = server.config();
        if config.disabled_tools.iter().any(|t| crate::invisible::names(t, tool)) {
            return Err(CatalogError::ToolDisabled { server: server_id.to_owned(), tool: tool.to_owned() });
        }
        // Checked against the list as it is now: the registry may hold an older definition.
        // Held here: another process may have approved it since the last check of the store.
        if server.refusal(tool).is_some() && self.inner.shared.opts.cache_dir.is_some() {
            let s = server.clone();
            let _ = tokio::task::spawn_blocking(move || s.adopt_stored(None)).await;
        }
        if let Some(message) = server.refusal(tool) {
            return Err(CatalogError::Held { server: server_id.to_owned(), tool: tool.to_owned(), message });
        }
        // Waiting for the user to authorize: fail now, never wait for them.
        if let Some(why) = server.needs_user() {
            return Err(CatalogError::NeedsAuth(why));
        }
        let conn = tokio::select! {
            c = server.connection() => c,
            _ = cancel.cancelled() => return Err(CatalogError::Cancelled),
        };
        let conn = conn.inspect_err(|e| server.record_failure(e.to_string())).map_err(|e| e.redacted(&config))?;
        let opts = &self.inner.shared.opts;
        let limits = call::Limits { timeout: config.timeouts.call(opts.call_timeout), max_result_bytes: opts.max_result_bytes };
        conn.call_tool(request, limits, inputs)
            .await
            .inspect_err(|e| {
                if let CatalogError::NeedsAuth(why) = e {
                    server.record_failure(why.clone());
                }
            })
            .map_err(|e| e.redacted(&config))
    }

    /// Stop every server and wait until their children are gone.
    pub async fn shutdown(&self) {
        let servers: Vec<_> = std::mem::take(&mut *lock(&self.inner.servers)).into_values().collect();
        futures::future::join_all(servers.iter().map(|s| s.stop())).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn unstartable(id: &str) -> ServerConfig {
        serde_json::from_value(json!({"id": id, "name": id,
            "transport": {"type": "stdio", "command": "/nonexistent/toolreg-test-server",
                          "env": {"TOKEN": "s3cret-value"}}}))
        .unwrap()
    }

    async fn until_error(cat: &Catalog, id: &str) -> ServerStatus {
        for _ in 0..200 {
            let s = cat.server_status(id).unwrap();
            if s.state == ServerState::Error {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{id} never failed");
    }

    #[tokio::test]
    async fn failing_server_reports_error_once_and_never_blocks_reads() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let opts = CatalogOptions { backoff_base: Duration::from_secs(60), ..Default::default() };
        let cat = Catalog::new(opts, tx);
        cat.set_servers(vec![unstartable("bad")]);
        let st = until_error(&cat, "bad").await;
        assert!(!st.cached && st.tool_count.is_none());
        assert!(!st.error.as_deref().unwrap().contains("s3cret"));
        let list = cat.list_tools("bad", false).unwrap();
        assert_eq!((list.state, list.tools.len()), (ListState::Error, 0));
        // An explicit refresh skips the one-minute back-off, and the same failure again is
        // not news: no second Error event.
        assert_eq!(cat.refresh("bad").await.unwrap().state, ServerState::Error);
        let mut errors = 0;
        while let Ok(event) = rx.try_recv() {
            if let CatalogEvent::DidChange { status: ServerState::Error, .. } = event {
                errors += 1;
            }
        }
        // Error, then Connecting for the explicit retry, then Error again.
        assert_eq!(errors, 2);
        assert!(matches!(cat.refresh("nope").await, Err(CatalogError::UnknownServer(_))));
        cat.shutdown().await;
        assert!(cat.status().is_empty());
    }

    #[tokio::test]
    async fn a_rotated_credential_restarts_the_session_under_the_same_identity() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let cat = Catalog::new(CatalogOptions::default(), tx);
        let a = unstartable("a");
        cat.set_servers(vec![a.clone()]);
        let before = cat.server("a").unwrap();
        let mut rotated = a.clone();
        let Transport::Stdio { env, .. } = &mut rotated.transport else { unreachable!() };
        env.insert("TOKEN".into(), crate::secret::Secret::new("rotated"));
        cat.set_servers(vec![rotated]);
        let after = cat.server("a").unwrap();
        // A new session (the old one holds the old token), the same cache identity.
        assert!(!Arc::ptr_eq(&before, &after));
        assert_eq!(before.identity, after.identity);
        cat.set_servers(vec![a.clone()]);
        let again = cat.server("a").unwrap();
        cat.set_servers(vec![a]);
        assert!(Arc::ptr_eq(&again, &cat.server("a").unwrap()), "an unchanged config keeps its session");
        cat.shutdown().await;
    }

    #[tokio::test]
    async fn set_servers_diffs_by_identity() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let cat = Catalog::new(CatalogOptions::default(), tx);
        let mut a = unstartable("a");
        cat.set_servers(vec![a.clone(), unstartable("b")]);
        assert_eq!(cat.server_ids(), ["a", "b"]);
        a.name = "Renamed".into();
        a.enabled = false;
        cat.set_servers(vec![a]);
        assert_eq!(cat.server_ids(), ["a"]);
        let st = cat.server_status("a").unwrap();
        assert_eq!((st.name.as_str(), st.state), ("Renamed", ServerState::Disabled));
        assert!(matches!(cat.list_tools("a", false), Err(CatalogError::Disabled(_))));
        cat.shutdown().await;
    }
}
