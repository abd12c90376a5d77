//! Handlers of the catalog, MCP sync, invoke and approval methods.

use super::host::Host;
use super::{current_cancel, Ctx};
use crate::catalog::{Catalog, CatalogError, ListToolsResult, ServerStatus};
use crate::service::{Call, HostAbilities, InvokeError, Settings};
use crate::service::CallAsk;
use crate::protocol::*;
use crate::service::{SyncAsk, SyncMode as Mode};
use crate::service::Mcp;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

pub(super) fn catalog(ctx: &Ctx) -> Result<&Catalog, RpcError> {
    ctx.catalog.get().ok_or_else(|| RpcError::new(ErrorCode::SERVER_NOT_INITIALIZED, "the catalog starts at initialize"))
}

pub(super) fn catalog_error(e: CatalogError) -> RpcError {
    match &e {
        CatalogError::UnknownServer(id) => RpcError::new(ErrorCode::UNKNOWN_SERVER, e.to_string()).with_data(json!({"serverId": id})),
        CatalogError::Disabled(id) => RpcError::new(ErrorCode::SERVER_DISABLED, e.to_string()).with_data(json!({"serverId": id})),
        _ => RpcError::new(ErrorCode::INTERNAL_ERROR, e.to_string()),
    }
}

/// `Serial`: on the blocking pool, as the catalog reads the new servers' cacheDir files.
pub fn handle_set_servers(ctx: &Ctx, p: SetServersParams) -> Result<Empty, RpcError> {
    let mut seen = std::collections::BTreeSet::new();
    for s in &p.servers {
        if s.id.is_empty() || !seen.insert(s.id.as_str()) {
            return Err(RpcError::new(ErrorCode::INVALID_PARAMS, format!("server ids must be unique and non-empty: {:?}", s.id)));
        }
    }
    catalog(ctx)?.set_servers(p.servers);
    Ok(Empty {})
}

/// The server's list as the user should review it: every hidden character shown (`\u{202E}`),
/// never kept raw and never dropped (the registry's entries are the cleaned ones).
pub fn handle_list_tools(ctx: &Ctx, p: ListToolsParams) -> Result<ListToolsResult, RpcError> {
    let mut list = catalog(ctx)?.list_tools(&p.server_id, p.include_disabled).map_err(catalog_error)?;
    for t in &mut list.tools {
        for s in [Some(&mut t.name), t.title.as_mut(), Some(&mut t.description)].into_iter().flatten() {
            if let std::borrow::Cow::Owned(o) = crate::invisible::visible(s) {
                *s = o;
            }
        }
        for v in [Some(&mut t.input_schema), t.output_schema.as_mut(), t.annotations.as_mut()].into_iter().flatten() {
            crate::invisible::show(v);
        }
    }
    Ok(list)
}

pub async fn handle_refresh(ctx: Arc<Ctx>, p: ServerIdParams) -> Result<ServerStatus, RpcError> {
    catalog(&ctx)?.refresh(&p.server_id).await.map_err(catalog_error)
}

pub async fn handle_restart(ctx: Arc<Ctx>, p: ServerIdParams) -> Result<ServerStatus, RpcError> {
    catalog(&ctx)?.restart(&p.server_id).await.map_err(catalog_error)
}

pub fn handle_status(ctx: &Ctx, _: NoParams) -> Result<CatalogStatusResult, RpcError> {
    Ok(CatalogStatusResult { servers: catalog(ctx)?.status() })
}

pub fn handle_resolve(ctx: &Ctx, p: ResolveParams) -> Result<ResolveResult, RpcError> {
    let mode = match p.assistant.mcp_mode {
        McpMode::Disabled => Mode::Disabled,
        McpMode::Auto => Mode::Auto,
        McpMode::Manual => Mode::Manual,
    };
    Ok(ResolveResult { tool_ids: ctx.service.resolve(&ctx.snapshot(), catalog(ctx)?, mode, &p.assistant.mcp_server_ids) })
}

/// `SerialRegistry`: on the blocking pool, the only writer while it runs. The new registry is
/// built beside the current one and swapped in, so the lock is held for the swap alone.
pub fn handle_sync(ctx: &Ctx, p: SyncParams) -> Result<SyncResult, RpcError> {
    let catalog = catalog(ctx)?;
    let mut reg = ctx.current();
    let s = ctx.service.sync(Arc::make_mut(&mut reg), catalog, SyncAsk { selected: p.selected_tool_ids.as_deref(), overrides: None });
    *ctx.service.registry_mut() = reg.clone();
    if s.registered.len() >= super::handlers::BIG_REGISTRATION {
        crate::os::release_freed_memory_soon();
    }
    // Vectors for the synced tools, in the background, before a plan defers them.
    if let Some(vectors) = ctx.service.mcp_vectors(reg) {
        ctx.work.spawn(vectors);
    }
    Ok(SyncResult { registered: s.registered, evicted: s.evicted })
}

/// The view a host renders for a result of `name` (MCP Apps), when the tool names one.
fn view_of(registry: &crate::service::Registry, name: &str) -> Option<ViewRef> {
    let entry = &registry.get(name)?.entry;
    let crate::service::Source::Mcp { server_id, .. } = &entry.source else { return None };
    let resource_uri = entry.ui.as_ref()?.resource_uri.clone()?;
    Some(ViewRef { server_id: server_id.clone(), resource_uri })
}

pub async fn handle_invoke(ctx: Arc<Ctx>, p: InvokeParams) -> Result<InvokeResult, RpcError> {
    let caps = ctx.host.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let t = ctx.timeouts.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let registry = ctx.snapshot();
    let host = Host { out: &ctx.out, call_timeout: Duration::from_millis(t.servers.call_ms.unwrap_or(300_000)) };
    let mcp = Mcp(ctx.catalog.get(), None);
    let settings = Settings {
        abilities: HostAbilities { approval: caps.approval, host_tools: caps.host_tools, repair: caps.repair },
        approval_timeout: t.approval_ms.map_or(Settings::APPROVAL_TIMEOUT, Duration::from_millis),
    };
    // Each tool the call runs counts under its plan's usage key; a plan that is gone or none:
    // the default key.
    let usage_key = p.plan_id.as_deref().and_then(|id| ctx.service.plans.get(id)).map_or_else(|| crate::service::DEFAULT_USAGE_KEY.to_string(), |s| s.usage_key.clone());
    let call_id = p.call_id.unwrap_or_else(|| ctx.service.next_call_id());
    let call = Call { name: p.name, arguments: p.arguments, call_id, plan_id: p.plan_id, app: p.app.map(|a| a.server_id) };
    let request = CallAsk { call, registry: &registry, host: &host, mcp: &mcp, settings, cancel: current_cancel(), usage_key, results_owner: None, approver: "host", session: None };
    let result = ctx.service.call(request).await;
    // A held MCP tool is not registered; say why it did not run (pins).
    if let Err(InvokeError::UnknownTool(name)) = &result {
        if let Some(held) = super::handlers_pins::held_invoke_result(&ctx, name) {
            return Ok(held);
        }
    }
    match result {
        Ok(done) => {
            let ui = done.ran.as_ref().and_then(|ran| view_of(&registry, &ran.name));
            let cut = done.cut.map(|c| ResultCut { reference: c.reference, shown_tokens: c.shown_tokens as u64, total_tokens: c.total_tokens as u64 });
            let approved_by = done.ran.as_ref().and_then(|ran| ran.approved_by).map(str::to_string);
            Ok(InvokeResult { output: done.output, is_error: done.is_error, raw: done.raw, repaired: done.repaired, provider_output: done.provider_output, ui, cut, approved_by })
        }
        Err(e) => Err(match &e {
            InvokeError::UnknownTool(name) => RpcError::new(ErrorCode::UNKNOWN_TOOL, e.to_string()).with_data(json!({"name": name})),
            InvokeError::PlanRequired(name) => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string()).with_data(json!({"name": name})),
            InvokeError::UnknownPlan(id) => RpcError::new(ErrorCode::UNKNOWN_PLAN, e.to_string()).with_data(json!({"planId": id})),
            InvokeError::Cancelled => RpcError::new(ErrorCode::REQUEST_CANCELLED, e.to_string()),
            // The sidecar's port (`Mcp` without a `Relay`) makes upstream errors the model's text
            // and answers input requests through the host: neither reaches here.
            InvokeError::Rpc { .. } | InvokeError::InputRequired(_) | InvokeError::Task(_) => RpcError::new(ErrorCode::INTERNAL_ERROR, e.to_string()),
        }),
    }
}
