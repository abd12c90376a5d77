//! The core both faces serve: the state a host's sidecar or a gateway keeps (the registry,
//! the plans, the validators, the approvals waiting, usage, the semantic signal) and the
//! operations both run on it the same way (a tool call, vectors for a pool). Each face owns a
//! `Service` and only translates its protocol to these operations and back; what is truly one
//! face's (LSP framing, HTTP sessions, MCP elicitation rounds) stays in that face.

mod audit_log;
mod definitions;
mod entries;
mod mcp_sync;
mod pipeline;
mod planning;
mod registry_install;
mod semantic;
mod tasks;
pub use tasks::TaskFailure;

// What the faces name of the domain: the types they translate to and from their protocol and
// the ports they implement (as rust-analyzer's `ide` re-exports what its LSP layer names), and
// nothing else: no function, no module. Every step a face takes is a method of `Service` (in
// this module's files: `mcp_sync`, `planning`, `entries`, `audit_log`, `semantic`) or of one of
// these types, so a change behind them is a change here, not in two faces (tests/layers.rs).
pub use crate::apps::ToolUi;
pub use crate::approval::{Approvals, Decision, Grant, Grants, Lasts, Remember};
pub use crate::audit::{Audit, AuditSettings, Event as AuditEvent, Face as AuditFace};
pub use crate::embed::{Embedded, Embedder, Purpose, QueryVector};
pub use crate::exposition::definitions::{Definition, Definitions};
pub use crate::exposition::plans::{PlanOptions, PlanScope};
pub use crate::exposition::render::{Marking, RenderError, Rendered};
pub use crate::exposition::sessions::{Pick, Promote, Sessions};
pub use crate::exposition::{Gate, Reason};
pub use crate::invoke::{ApprovalRequest, Call, HostAbilities, HostPort, InputAsked, InvokeError, Invoked, McpPort, Settings, TaskMade};
pub use crate::media::{Media, MediaMode, Reader};
pub use crate::output::{ModelOutput, Part};
pub use crate::registry::{Defer, EntrySummary, Registered, Registry, RegistryError, Source, ToolEntry, Warning};
pub use crate::mcp_registry::{Entry as RegistryEntry, InputPlace, KeptSecret, McpRegistryError, RegistryInput, RegistryPage, Resolved as ResolvedServer};
pub use crate::secret::reference::SecretRef;
pub use crate::overrides::Overrides;
pub use crate::results::Budget;
pub use crate::sandbox::Limits;
pub use crate::telemetry::{Face as TelemetryFace, Request as TelemetryRequest, Telemetry, TelemetrySettings};
pub use crate::sync::Mode as SyncMode;
pub use crate::upstream::{Mcp, PassThrough, Relay};
pub use crate::usage::Tally;
pub use mcp_sync::{Snapshot, SyncAsk, Synced};

pub use crate::embed::Semantic;
pub use crate::exposition::Plan;

/// The usage key of calls under no plan, and the counts' half-life and window (`usage/list`).
pub const DEFAULT_USAGE_KEY: &str = crate::usage::DEFAULT_KEY;
pub const HALF_LIFE_DAYS: u32 = crate::usage::HALF_LIFE_DAYS;
pub const WINDOW_DAYS: u32 = crate::usage::WINDOW_DAYS;
/// The meta-tools' names a face recognizes a call by.
pub const TOOL_SEARCH: &str = crate::exposition::meta_defs::SEARCH;
pub const TOOL_INVOKE: &str = crate::exposition::meta_defs::INVOKE;
/// MCP Apps: the capability's extension key, and the one view format servers send.
pub const VIEWS_EXTENSION: &str = crate::apps::EXTENSION;
pub const VIEW_MIME: &str = crate::apps::VIEW_MIME;

use crate::exposition::plans::PlanStore;
use crate::exposition::sessions;
use crate::exposition::{PlanInput, QueryPick, ToolDefinition};
use serde_json::Value;
use std::collections::BTreeSet;
use crate::usage::book::Book;
use crate::validate::Validators;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock, RwLockWriteGuard};
use tokio_util::sync::CancellationToken;

pub struct Service {
    registry: RwLock<Arc<Registry>>,
    pub plans: PlanStore,
    /// Compiled input schemas, by a tool's definition.
    pub validators: Validators,
    /// Calls waiting for the user's approval.
    pub approvals: Arc<Approvals>,
    /// The approvals the user asked to remember (`approval::grants`).
    pub grants: Arc<Grants>,
    /// Calls counted per usage key (persisted where the face says: cacheDir, the state dir).
    pub usage: Arc<Book>,
    /// `tool_search`'s semantic signal, once the face's settings have started one.
    semantic: OnceLock<Arc<Semantic>>,
    call_seq: AtomicU64,
    /// What a call id the face makes up starts with.
    call_prefix: &'static str,
    /// Whole results cut to the budget, kept for `tool_result_read`.
    pub results: crate::results::Shelf,
    budget: RwLock<(crate::results::Budget, crate::tokenize::EncodingChoice)>,
    /// The audit log (off unless the face's settings name a file), and each server's last
    /// state recorded in it.
    audit: RwLock<Audit>,
    server_states: std::sync::Mutex<std::collections::HashMap<String, crate::catalog::ServerState>>,
    /// Upstream tasks handed to callers under ids of ours (`tasks.rs`).
    tasks: crate::tasks::Book,
}

/// One tool call as a face hands it over: the call, the registry it sees, and the ports that
/// reach its caller (`host`) and the upstream servers (`mcp`).
pub struct CallAsk<'a, H> {
    pub call: Call,
    pub registry: &'a Arc<Registry>,
    pub host: &'a H,
    pub mcp: &'a Mcp<'a>,
    pub settings: Settings,
    pub cancel: CancellationToken,
    /// Every tool the call runs (itself, through `tool_invoke`, a script's calls) counts here.
    pub usage_key: String,
    /// Whose a result cut to the budget is (a gateway session); `None`: the plan's session,
    /// else the plan, else the host (the sidecar).
    pub results_owner: Option<String>,
    /// Who answers this call's approvals, for the audit log: `host`, `client`, `config`.
    pub approver: &'static str,
    /// The session a remembered approval of this call lasts for: the face's (a gateway
    /// client's); `None`: the plan's `session`, else the calls with no session.
    pub session: Option<String>,
}

/// What a face asks a plan of: the request's scope and model, and what it adds.
pub struct PlanAsk<'a> {
    pub scope: &'a Value,
    pub context_window: Option<i64>,
    pub model: Option<&'a str>,
    pub client_tools: &'a [ToolDefinition],
    /// The usage-driven tools to place inline: a session's picks, or the counts now.
    pub usage: Option<&'a Pick>,
    /// Code mode's limits: `tool_exec` is offered within them.
    pub code: Option<&'a crate::sandbox::Limits>,
    /// The client renders MCP Apps views: tools with a view stay inline.
    pub views: bool,
    /// The user's message: the deferred tools that best match it go inline (issue 41).
    pub query: Option<&'a PlanQuery>,
}

/// A plan's query: the user's message, how many of its matches may go inline, and its vector.
pub struct PlanQuery {
    pub text: String,
    pub max_tools: usize,
    /// The query's embeddings when a semantic source is configured, one per model in
    /// `Semantic::models` order (an `Err` says why not).
    pub vector: Option<Vec<Result<crate::embed::QueryVector, String>>>,
}

/// `exposition/plan`'s `queryTools` by default, and at most (`tool_search`'s own cap).
pub const QUERY_TOOLS: usize = 5;
pub const MAX_QUERY_TOOLS: usize = crate::meta::MAX_LIMIT;
/// The start of a query this long is what is searched: a pasted document is not a request.
pub const QUERY_CHARS: usize = 2_000;

/// A plan over the active entries, before a face renders it.
pub struct Planned {
    pub plan: Plan,
    /// The entries the scope made active, in registry order.
    pub active: Vec<Arc<Registered>>,
    /// Entries whose `applies` could not be read, and so are not active.
    pub warnings: Vec<Warning>,
}

impl Service {
    /// `call_prefix` starts the ids of calls whose caller gave none.
    pub fn new(registry: Registry, call_prefix: &'static str) -> Service {
        Service {
            registry: RwLock::new(Arc::new(registry)),
            plans: PlanStore::default(),
            validators: Validators::new(),
            approvals: Arc::default(),
            grants: Arc::default(),
            usage: Arc::default(),
            semantic: OnceLock::new(),
            call_seq: AtomicU64::new(0),
            call_prefix,
            results: crate::results::Shelf::default(),
            budget: RwLock::new((crate::results::Budget::default(), crate::tokenize::for_model(None))),
            audit: RwLock::new(Audit::off()),
            server_states: Default::default(),
            tasks: Default::default(),
        }
    }

    /// The audit log in force.
    pub fn audit(&self) -> Audit {
        self.audit.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Starts recording to `audit` (the face opened it from its settings).
    pub fn set_audit(&self, audit: Audit) {
        *self.audit.write().unwrap_or_else(|e| e.into_inner()) = audit;
    }

    /// A catalog event, as the audit log keeps it: a server's state when it changed (an OAuth
    /// flow when it starts needing the user and when it ends authorized), the tools its pins
    /// hold when that set changed.
    pub fn audit_catalog(&self, ev: &crate::catalog::CatalogEvent) {
        use crate::catalog::{CatalogEvent, ServerState};
        let audit = self.audit();
        let CatalogEvent::DidChange { server_id, status, tool_count, held } = ev else { return };
        if !audit.is_on() {
            return;
        }
        let before = self.server_states.lock().unwrap_or_else(|e| e.into_inner()).insert(server_id.clone(), *status);
        if before != Some(*status) {
            let state = serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            audit.record(AuditEvent::Server { server: server_id.clone(), state, tool_count: *tool_count });
            let phase = match (before, status) {
                (_, ServerState::NeedsAuth) => Some("started"),
                (Some(ServerState::NeedsAuth), ServerState::Ready) => Some("authorized"),
                _ => None,
            };
            if let Some(phase) = phase {
                audit.record(AuditEvent::Oauth { server: server_id.clone(), phase: phase.into() });
            }
        }
        if let Some(h) = held.as_ref().filter(|h| !h.changed_tools.is_empty() || !h.new_tools.is_empty()) {
            audit.record(AuditEvent::PinsHeld { server: server_id.clone(), changed_tools: h.changed_tools.clone(), new_tools: h.new_tools.clone() });
        }
    }

    /// The registry as it is now.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The registry to change: `Arc::make_mut` on it, readers keep their snapshot.
    pub fn registry_mut(&self) -> RwLockWriteGuard<'_, Arc<Registry>> {
        self.registry.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn semantic(&self) -> Option<&Arc<Semantic>> {
        self.semantic.get()
    }

    /// Set once; a second signal is ignored (the first one's vectors are the ones kept).
    pub fn set_semantic(&self, semantic: Arc<Semantic>) {
        let _ = self.semantic.set(semantic);
    }

    /// The result budget as the face's settings set it (default: 25,000 tokens).
    pub fn budget(&self) -> crate::results::Budget {
        self.budget.read().unwrap_or_else(|e| e.into_inner()).0
    }

    /// The budget, and the model whose tokenizer counts a result when its call names no plan
    /// (a plan's own model counts otherwise).
    pub fn set_budget(&self, budget: crate::results::Budget, model: Option<&str>) {
        *self.budget.write().unwrap_or_else(|e| e.into_inner()) = (budget, crate::tokenize::for_model(model));
    }

    /// A fresh call id for a call whose caller named none.
    pub fn next_call_id(&self) -> String {
        format!("{}{}", self.call_prefix, self.call_seq.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Runs one call through the call pipeline (`pipeline`: every step around the core, in
    /// order): the direct path, a meta-tool scoped to its plan, or a `tool_exec` script
    /// (`route::call`), each tool it runs counted under the request's usage key. An answer
    /// over the result budget is cut, and its whole kept for its owner to read with
    /// `tool_result_read`, which is answered there (it reads the shelf, never a tool).
    /// (The pipeline's own future, not one around it: a debug build's stack holds it once.)
    pub fn call<'a, H: HostPort>(&'a self, req: CallAsk<'a, H>) -> impl std::future::Future<Output = Result<Invoked, InvokeError>> + 'a {
        pipeline::call(self, req)
    }

    /// The plan over what `ask.scope` makes active: the policy and its gates
    /// (`exposition::plan`), the usage-driven tools, and `tool_exec` when code mode is on.
    pub fn plan(&self, registry: &Registry, ask: &PlanAsk<'_>) -> Planned {
        let (active, warnings) = registry.select_active(ask.scope);
        // With a query, the pool the plan defers is searched for it while planning, and the
        // best matches go inline.
        let matches = ask.query.map(|q| move |pool: &[String]| self.best_matches(registry, pool, q));
        let input = PlanInput {
            active: &active,
            context_window: ask.context_window,
            model: ask.model,
            client_tools: ask.client_tools,
            usage: ask.usage.map(Pick::input),
            views: ask.views,
            query: ask.query.zip(matches.as_ref()).map(|(q, matches)| QueryPick { matches, max_tools: q.max_tools }),
        };
        let mut plan = crate::exposition::plan(&input);
        if let Some(limits) = ask.code {
            crate::code_mode::offer(&mut plan, &active, limits);
        }
        if self.budget().is_on() {
            crate::exposition::meta_defs::offer_result_read(&mut plan);
        }
        crate::telemetry::global().deferred(if plan.decision.deferred { plan.tokens.deferred } else { 0 });
        Planned { plan, active, warnings }
    }

    /// The tools of a plan's deferred `pool` that best match the query, best first, with their
    /// notes: a few more than may move, since a `defer: always` one or one over the budget is
    /// passed.
    fn best_matches(&self, registry: &Registry, pool: &[String], q: &PlanQuery) -> Vec<sessions::Promote> {
        let semantic = self.semantic().map(|s| (&**s, q.vector.clone()));
        let names = crate::meta::best_matches(registry, pool, &q.text, q.max_tools * 2 + 8, semantic);
        names
            .into_iter()
            .enumerate()
            .map(|(i, name)| sessions::Promote { name, note: format!("match {} for the user's message", i + 1) })
            .collect()
    }

    /// The plan's scope for its meta-tools, `tool_exec` and the calls made under its id (its
    /// deferred pool, inline tools and the rest of what `active` holds, kept in the plan store
    /// under a new id).
    pub fn scope(&self, plan: &Plan, active: &[Arc<Registered>], mut options: PlanOptions) -> Arc<PlanScope> {
        options.encoding.get_or_insert(plan.encoding);
        let deferred: BTreeSet<String> = plan.deferred_names().map(str::to_string).collect();
        let inline: BTreeSet<String> = plan.tools.iter().map(|t| t.name.clone()).collect();
        options.also = active.iter().map(|r| &r.entry.name).filter(|n| !deferred.contains(*n) && !inline.contains(*n)).cloned().collect();
        self.plans.create_with(deferred, inline, options)
    }

    /// Vectors for these tools, in the background (known ones are skipped at once): asked
    /// before a plan defers them, so the model's first search finds them embedded.
    pub fn want_vectors<'r>(&self, tools: impl IntoIterator<Item = &'r Arc<Registered>>) {
        if let Some(semantic) = self.semantic() {
            semantic.want(crate::meta::embedding_texts(tools));
        }
    }
}
