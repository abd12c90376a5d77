//! Handlers: from protocol types, call the domain, back to protocol types. Nothing else.

use super::Ctx;
use crate::service::{Marking, RenderError};
use crate::service::PlanOptions;
use crate::protocol::error::clip;
use crate::protocol::*;
use crate::service::{EntrySummary, RegistryError};
use std::path::Path;
use crate::catalog::{Catalog, CatalogOptions, HostAsks};
use crate::service::{PlanAsk, PlanQuery, Planned, Service, Telemetry};
use std::sync::Arc;
use std::time::Duration;

pub fn handle_initialize(ctx: &Ctx, p: InitializeParams) -> Result<InitializeResult, RpcError> {
    if let Some(log) = &p.log {
        if let Some(file) = &log.file {
            ctx.log.to_file(Path::new(file)).map_err(|e| {
                RpcError::new(ErrorCode::INVALID_PARAMS, format!("cannot open log file {file:?}: {e}"))
            })?;
        }
        if let Some(level) = &log.level {
            ctx.log
                .set_level(level)
                .map_err(|e| RpcError::new(ErrorCode::INVALID_PARAMS, format!("bad log level {level:?}: {e}")))?;
        }
    }
    // Checked before anything is kept: a refused initialize changes nothing.
    let code_limits = p.code_mode.as_ref().map(code_limits).transpose()?;
    if let Some(spawn) = &p.spawn {
        spawn.check().map_err(|e| RpcError::new(ErrorCode::INVALID_PARAMS, e).with_data(serde_json::json!({"field": "spawn.paths"})))?;
    }
    let budget = p.results.as_ref().map(ResultSettings::budget).transpose().map_err(|(field, why)| {
        RpcError::new(ErrorCode::INVALID_PARAMS, format!("results.{field} {why}")).with_data(serde_json::json!({"field": format!("results.{field}")}))
    })?;
    // Opened first of what is kept (its directory made now): a bad path refuses initialize.
    let audit = match &p.audit {
        Some(a) if !ctx.service.audit().is_on() => {
            let host = p.client_info.as_ref().map(|c| c.name.clone());
            Some(crate::service::Audit::open(a, crate::service::AuditFace::Sidecar, host).map_err(|e| {
                RpcError::new(ErrorCode::INVALID_PARAMS, format!("audit: {e}")).with_data(serde_json::json!({"field": "audit.file"}))
            })?)
        }
        _ => None,
    };
    // Started once (the process's); a bad header or URL refuses initialize, naming no value.
    if let Some(t) = p.telemetry.as_ref().filter(|_| !Telemetry::global().is_on()) {
        let started = Telemetry::start(t, &|k| std::env::var(k).ok())
            .map_err(|e| RpcError::new(ErrorCode::INVALID_PARAMS, e).with_data(serde_json::json!({"field": "telemetry"})))?;
        started.install();
    }
    let semantic = match &p.search {
        Some(search) => start_semantic(ctx, search, p.cache_dir.as_deref())?,
        None => None,
    };
    if let Some(limits) = code_limits {
        let _ = ctx.code_limits.set(limits);
    }
    if let Some(budget) = budget {
        ctx.service.set_budget(budget, None);
    }
    if let Some(audit) = audit {
        ctx.service.set_audit(audit);
    }
    *ctx.host.lock().unwrap_or_else(|e| e.into_inner()) = p.capabilities.clone();
    *ctx.mcp_registry.lock().unwrap_or_else(|e| e.into_inner()) = p.mcp_registry.clone().unwrap_or_default();
    let t = clamp(&p.timeouts);
    *ctx.timeouts.lock().unwrap_or_else(|e| e.into_inner()) = t.clone();
    let ms = |v: Option<u64>, default: Duration| v.map(Duration::from_millis).unwrap_or(default);
    let defaults = CatalogOptions::default();
    let opts = CatalogOptions {
        cache_dir: p.cache_dir.as_ref().map(std::path::PathBuf::from),
        connect_timeout: ms(t.servers.connect_ms, defaults.connect_timeout),
        list_timeout: ms(t.servers.list_ms, defaults.list_timeout),
        call_timeout: ms(t.servers.call_ms, defaults.call_timeout),
        max_message_bytes: p.mcp.max_message_bytes.map_or(defaults.max_message_bytes, |b| b as usize),
        max_result_bytes: p.mcp.max_result_bytes.map_or(defaults.max_result_bytes, |b| b as usize),
        host_asks: HostAsks {
            elicitation: p.capabilities.elicitation,
            sampling: p.capabilities.sampling,
            roots: p.capabilities.roots,
            views: p.capabilities.renders_views(),
        },
        elicitation_timeout: ms(t.elicitation_ms, defaults.elicitation_timeout),
        spawn: p.spawn.clone().unwrap_or_default(),
        ..defaults
    };
    let questions = Arc::new(super::host::Questions(ctx.out.clone()));
    let auth_host = Arc::new(super::auth_host::HostAuth {
        out: ctx.out.clone(),
        open_url: p.capabilities.open_url,
        secrets: p.capabilities.secrets,
    });
    if let Some(dir) = &p.cache_dir {
        // The store opens on the blocking pool, not on this main loop: plans meanwhile get no
        // usage-driven tools, and `usage/list` waits for it (`usage::book`).
        if ctx.service.usage.begin(Path::new(dir)) {
            let book = ctx.service.usage.clone();
            tokio::task::spawn_blocking(move || book.load());
        }
        // Remembered approvals: a call before the store is open asks, as without a grant.
        let (grants, dir) = (ctx.service.grants.clone(), std::path::PathBuf::from(dir));
        tokio::task::spawn_blocking(move || grants.open(&dir));
    }
    let _ = ctx.catalog.set(Catalog::with_hosts(opts, ctx.catalog_events.clone(), questions, auth_host));
    if let Some(semantic) = semantic {
        ctx.service.set_semantic(semantic);
    }
    if let Some(client) = &p.client_info {
        tracing::info!(client = %client.name, version = ?client.version, "initialize");
    }
    // The tokenizer takes ~150 ms to build: start now, off the request path.
    Service::preload_tokenizer();
    Ok(InitializeResult {
        server_info: ServerInfo { name: "toolreg".into(), version: env!("CARGO_PKG_VERSION").into() },
        protocol_version: PROTOCOL_VERSION.into(),
        capabilities: ServerCapabilities {
            methods: ctx.methods.get().cloned().unwrap_or_default(),
            encodings: vec!["o200k_base".into(), "cl100k_base".into()],
            max_frame_bytes: ctx.max_frame_bytes,
        },
    })
}

/// `initialize.codeMode` over the defaults; a limit of 0, or a heap over 1 GiB, is refused.
fn code_limits(c: &CodeModeLimits) -> Result<crate::service::Limits, RpcError> {
    c.limits().map_err(|(field, why)| {
        RpcError::new(ErrorCode::INVALID_PARAMS, format!("codeMode.{field} {why}")).with_data(serde_json::json!({"field": format!("codeMode.{field}")}))
    })
}

/// tool_search's semantic signal as the host configured it (`service::semantic`); a refused
/// value names its field.
fn start_semantic(ctx: &Ctx, search: &SearchSettings, cache_dir: Option<&str>) -> Result<Option<Arc<crate::service::Semantic>>, RpcError> {
    let host: Arc<dyn crate::service::Embedder> = Arc::new(super::host::HostEmbedder(ctx.out.clone()));
    Service::start_semantic(search, Some(host), cache_dir.map(std::path::PathBuf::from))
        .map_err(|(field, msg)| RpcError::new(ErrorCode::INVALID_PARAMS, msg).with_data(serde_json::json!({"field": format!("search.{field}")})))
}

fn clamp(t: &Timeouts) -> Timeouts {
    let c = |v: Option<u64>| v.map(|ms| ms.min(MAX_TIMEOUT_MS));
    let s = &t.servers;
    Timeouts {
        servers: ServerTimeouts { connect_ms: c(s.connect_ms), list_ms: c(s.list_ms), call_ms: c(s.call_ms) },
        approval_ms: c(t.approval_ms),
        elicitation_ms: c(t.elicitation_ms),
    }
}

pub fn handle_shutdown(_ctx: &Ctx, _: NoParams) -> Result<Null, RpcError> {
    Ok(Null)
}

fn registry_error(e: RegistryError) -> RpcError {
    let name = match &e {
        RegistryError::InvalidName { name, .. } | RegistryError::InvalidEntry { name, .. } => name.clone(),
        RegistryError::Reserved(name) => name.clone(),
    };
    RpcError::new(ErrorCode::INVALID_ENTRY, e.to_string()).with_data(serde_json::json!({ "name": clip(&name) }))
}

/// Entries in one `registry/register` or sync above which the memory freed after it is given
/// back (`os::release_freed_memory_soon`).
pub const BIG_REGISTRATION: usize = 100;

pub fn handle_register(ctx: &Ctx, p: RegisterParams) -> Result<RegisterResult, RpcError> {
    let big = p.entries.len() >= BIG_REGISTRATION;
    let mut reg = ctx.service.registry_mut();
    let registered = Arc::make_mut(&mut reg).register(p.entries).map_err(registry_error)?;
    if big {
        // The request's parsed entries and the validators' temporaries are freed by now.
        crate::os::release_freed_memory_soon();
    }
    Ok(RegisterResult { registered })
}

pub fn handle_deregister(ctx: &Ctx, p: DeregisterParams) -> Result<DeregisterResult, RpcError> {
    let mut reg = ctx.service.registry_mut();
    Ok(DeregisterResult { removed: Arc::make_mut(&mut reg).deregister(&p.names) })
}

pub fn handle_list(ctx: &Ctx, p: ListParams) -> Result<ListResult, RpcError> {
    Ok(ListResult { entries: ctx.snapshot().list(p.namespace.as_deref(), p.query.as_deref()) })
}

fn scope_value(scope: &Scope) -> serde_json::Value {
    serde_json::to_value(scope).unwrap_or_default()
}

pub fn handle_select_active(ctx: &Ctx, p: SelectActiveParams) -> Result<SelectActiveResult, RpcError> {
    let (active, warnings) = ctx.snapshot().select_active(&scope_value(&p.scope));
    Ok(SelectActiveResult { entries: active.iter().map(|r| EntrySummary::from(&r.entry)).collect(), warnings })
}

pub fn handle_plan(ctx: &Ctx, p: PlanParams) -> Result<PlanReply, RpcError> {
    let scope_json = scope_value(&p.scope);
    let registry = ctx.snapshot();
    let usage_key = p.usage_key.clone().unwrap_or_else(|| Service::usage_key(&scope_json));
    let pick = p.usage.as_ref().map(|u| super::handlers_usage::usage_pick(ctx, &usage_key, p.session.as_deref(), u));
    // tool_exec is offered before rendering, so a native rendering carries it as one more function.
    let code = p.code_mode.map(|_| ctx.code_limits.get().copied().unwrap_or_default());
    let views = ctx.host.lock().unwrap_or_else(|e| e.into_inner()).renders_views();
    let query = plan_query(ctx, &p)?;
    let ask = PlanAsk {
        scope: &scope_json,
        context_window: p.context_window,
        model: p.model.as_deref(),
        client_tools: &p.client_tools,
        usage: pick.as_ref(),
        code: code.as_ref(),
        views,
        query: query.as_ref(),
    };
    let Planned { mut plan, active, warnings } = ctx.service.plan(&registry, &ask);
    if let (Some(session), Some(pick)) = (&p.session, &pick) {
        super::handlers_usage::fix_session(ctx, session, &usage_key, pick, &plan);
    }
    let gated = |r: &crate::service::Registered| asks_approval_now(ctx, r);
    let marking = p.programmatic.map(|programmatic| Marking { programmatic, gated: &gated });
    let rendered = ctx.service.render(&mut plan, &active, p.render, p.search, p.strict, marking.as_ref()).map_err(|e| match &e {
        RenderError::TooManyDeferred { deferred, max } => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string())
            .with_data(serde_json::json!({"render": p.render, "deferred": deferred, "max": max})),
        RenderError::ProgrammaticNeedsNative => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string()).with_data(serde_json::json!({"field": "programmatic"})),
        RenderError::NameTaken(name) => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string()).with_data(serde_json::json!({"field": "programmatic", "name": name})),
        RenderError::GeminiName(name) => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string()).with_data(serde_json::json!({"field": "clientTools", "name": name})),
        RenderError::StrictNeedsOpenai => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string()).with_data(serde_json::json!({"field": "strict", "render": p.render})),
    })?;
    let scope = ctx.service.scope(&plan, &active, PlanOptions { render: p.render, programmatic: p.programmatic, usage_key, code, session: p.session.clone(), strict: p.strict, model: p.model.clone(), ..PlanOptions::default() });
    plan.lean(&p.include);
    if !scope.deferred.is_empty() {
        // Build (or fetch) tool_search's index now, after this reply, so the model's first
        // search does not wait for it; on the warm-up thread, so the next plan does not either.
        // And vectors for the deferred pool (known ones are skipped at once).
        ctx.work.spawn_warmup(ctx.service.plan_warmup(scope.clone(), registry));
    }
    // Hashed with the deferred definitions' digest in their place (`Rendered::hash_basis`),
    // and the whole request written out only when it is sent.
    let headers = rendered.as_ref().and_then(|r| r.headers.clone());
    let basis = rendered.as_ref().map(|r| RawJson(r.hash_basis()));
    let mut result = PlanResult { plan_id: String::new(), plan_hash: String::new(), plan, request: basis, headers, warnings };
    result.plan_hash = plan_hash(&result);
    if p.if_none_match.as_deref() == Some(result.plan_hash.as_str()) {
        return Ok(PlanReply::Unchanged(PlanUnchanged { plan_id: scope.id.clone(), plan_hash: result.plan_hash, unchanged: true }));
    }
    result.request = rendered.map(|r| RawJson(r.request()));
    result.plan_id = scope.id.clone();
    Ok(PlanReply::Plan(Box::new(result)))
}

/// `query` and `queryTools`, checked, with the query's vector when a semantic source has
/// vectors to compare it with (waited for here, on the work pool, up to its own timeout).
fn plan_query(ctx: &Ctx, p: &PlanParams) -> Result<Option<PlanQuery>, RpcError> {
    let max_tools = match p.query_tools {
        None => crate::service::QUERY_TOOLS,
        Some(n) if n as usize <= crate::service::MAX_QUERY_TOOLS => n as usize,
        Some(n) => {
            let max = crate::service::MAX_QUERY_TOOLS;
            return Err(RpcError::new(ErrorCode::INVALID_PARAMS, format!("queryTools is {n}: at most {max} of a query's matches go inline"))
                .with_data(serde_json::json!({"field": "queryTools", "max": max})));
        }
    };
    let Some(text) = p.query.as_deref().map(str::trim).filter(|q| !q.is_empty()) else { return Ok(None) };
    let text: String = text.chars().take(crate::service::QUERY_CHARS).collect();
    let vector = match ctx.service.semantic() {
        // Never on one of the runtime's own threads, where a wait would stall it (plans run on
        // the work pool: `Kind::Heavy`); there the query is searched by its words alone.
        Some(s) if s.any() && max_tools > 0 && tokio::runtime::Handle::try_current().is_err() => ctx.runtime.block_on(ctx.service.query_vectors(&text)),
        _ => None,
    };
    Ok(Some(PlanQuery { text, max_tools, vector }))
}

/// Whether a call of `r` would ask the user now: its entry says so, or its MCP server's current
/// rules do. Fails closed: a tool of a server no longer configured counts as gated.
fn asks_approval_now(ctx: &Ctx, r: &crate::service::Registered) -> bool {
    use crate::service::McpPort;
    match &r.entry.source {
        crate::service::Source::Mcp { server_id, tool_name } => {
            r.entry.approval || crate::service::Mcp(ctx.catalog.get(), None).asks_approval(server_id, tool_name) != Some(false)
        }
        _ => r.entry.approval,
    }
}

/// SHA-256 (first 16 bytes, hex) of the result as sent, with `planId` and `planHash` empty
/// and a native request's deferred definitions standing as their digest: same plan, same
/// hash, whatever the id.
fn plan_hash(r: &PlanResult) -> String {
    use sha2::{Digest, Sha256};
    debug_assert!(r.plan_id.is_empty() && r.plan_hash.is_empty());
    let bytes = serde_json::to_vec(r).unwrap_or_default();
    data_encoding::HEXLOWER.encode(&Sha256::digest(&bytes)[..16])
}

/// `exposition/definitions`: the plan's deferred definitions (issue 55); a plan that is gone is
/// `-32011`, as for a meta-tool under it.
pub fn handle_definitions(ctx: &Ctx, p: DefinitionsParams) -> Result<Definitions, RpcError> {
    let registry = ctx.snapshot();
    ctx.service.plan_definitions(&registry, &p.plan_id, p.names.as_deref(), p.schemas.unwrap_or(true)).map_err(|e| {
        RpcError::new(ErrorCode::UNKNOWN_PLAN, e.to_string()).with_data(serde_json::json!({"planId": p.plan_id}))
    })
}
