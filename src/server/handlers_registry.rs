//! `catalog/searchRegistry` and `catalog/resolveRegistryServer`: the host's settings and
//! servers in, the service's answer out, its errors as JSON-RPC codes.

use super::Ctx;
use crate::protocol::*;
use crate::service::McpRegistryError;
use serde_json::json;
use std::sync::Arc;

fn settings(ctx: &Ctx) -> McpRegistrySettings {
    ctx.mcp_registry.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn registry_error(e: McpRegistryError, name: Option<&str>) -> RpcError {
    let (code, reason) = match &e {
        McpRegistryError::Settings(_) => (ErrorCode::INVALID_PARAMS, "settings"),
        McpRegistryError::Unreachable(_) => (ErrorCode::REGISTRY_UNREACHABLE, "unreachable"),
        McpRegistryError::Unknown(_) => (ErrorCode::UNKNOWN_SERVER, "notInRegistry"),
        McpRegistryError::Refused(_) => (ErrorCode::REGISTRY_REFUSED, "refused"),
    };
    RpcError::new(code, e.to_string()).with_data(json!({"reason": reason, "name": name}))
}

pub async fn handle_search_registry(ctx: Arc<Ctx>, p: SearchRegistryParams) -> Result<RegistryPage, RpcError> {
    ctx.service.search_registry(&settings(&ctx), &p.query, p.limit, p.cursor.as_deref()).await.map_err(|e| registry_error(e, None))
}

pub async fn handle_resolve_registry_server(ctx: Arc<Ctx>, p: ResolveRegistryServerParams) -> Result<ResolvedServer, RpcError> {
    let taken = ctx.catalog.get().map(|c| c.server_ids()).unwrap_or_default();
    ctx.service
        .resolve_registry_server(&settings(&ctx), &p.name, p.version.as_deref(), p.package, &taken)
        .await
        .map_err(|e| registry_error(e, Some(&p.name)))
}
