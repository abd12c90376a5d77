//! Handlers of tool pinning (`catalog/pins`, `catalog/approveTools`) and the readable refusal
//! of a direct call to a held tool's wire name.

use super::handlers_tools::{catalog, catalog_error};
use super::Ctx;
use crate::catalog::CatalogError;
use crate::output::ModelOutput;
use crate::protocol::*;
use serde_json::json;

fn pins_error(e: CatalogError) -> RpcError {
    match &e {
        CatalogError::NotInList { server, tools } => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string())
            .with_data(json!({"serverId": server, "tools": tools})),
        CatalogError::ChangedSinceReview { server, tools } => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string())
            .with_data(json!({"serverId": server, "tools": tools, "reason": "changedSinceReview"})),
        _ => catalog_error(e),
    }
}

pub fn handle_pins(ctx: &Ctx, p: ServerIdParams) -> Result<PinsResult, RpcError> {
    Ok(PinsResult { tools: catalog(ctx)?.pins(&p.server_id).map_err(pins_error)? })
}

pub fn handle_approve_tools(ctx: &Ctx, p: ApproveToolsParams) -> Result<PinsResult, RpcError> {
    Ok(PinsResult { tools: catalog(ctx)?.approve_tools(&p.server_id, &p.tools, &p.fingerprints).map_err(pins_error)? })
}

/// `tool/invoke` of a name that is not registered because its MCP tool is held: a result the
/// model can read, instead of an unknown-tool error.
pub fn held_invoke_result(ctx: &Ctx, name: &str) -> Option<InvokeResult> {
    let text = crate::sync::held_refusal(&ctx.snapshot(), ctx.catalog.get()?, name)?;
    Some(InvokeResult { output: ModelOutput::error(text), is_error: true, raw: None, repaired: None, provider_output: None })
}
