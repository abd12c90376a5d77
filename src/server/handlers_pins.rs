//! Handlers of tool pinning (`catalog/pins`, `catalog/approveTools`) and the readable refusal
//! of a direct call to a held tool's wire name.

use super::handlers_tools::{catalog, catalog_error};
use super::Ctx;
use crate::catalog::{CatalogError, ToolPin};
use crate::service::ModelOutput;
use crate::protocol::*;
use crate::invisible;
use serde_json::json;

/// The names a refusal quotes, as the user was shown them (`catalog/pins`).
fn pins_error(e: CatalogError) -> RpcError {
    let e = match e {
        CatalogError::NotInList { server, tools } => CatalogError::NotInList { server, tools: tools.iter().map(|t| invisible::visible(t).into_owned()).collect() },
        CatalogError::ChangedSinceReview { server, tools } => {
            CatalogError::ChangedSinceReview { server, tools: tools.iter().map(|t| invisible::visible(t).into_owned()).collect() }
        }
        other => other,
    };
    match &e {
        CatalogError::NotInList { server, tools } => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string())
            .with_data(json!({"serverId": server, "tools": tools})),
        CatalogError::ChangedSinceReview { server, tools } => RpcError::new(ErrorCode::INVALID_PARAMS, e.to_string())
            .with_data(json!({"serverId": server, "tools": tools, "reason": "changedSinceReview"})),
        _ => catalog_error(e),
    }
}

/// Pins as the user reviews them: names, descriptions before and after and changed paths
/// with every hidden character shown (`\u{202E}`).
fn shown(pins: Vec<ToolPin>) -> PinsResult {
    PinsResult { tools: pins.into_iter().map(invisible::shown).collect() }
}

pub fn handle_pins(ctx: &Ctx, p: ServerIdParams) -> Result<PinsResult, RpcError> {
    Ok(shown(catalog(ctx)?.pins(&p.server_id).map_err(pins_error)?))
}

/// Names may come back as `catalog/pins` showed them: each is taken as the server's own name
/// it is the visible form of (when exactly one is).
pub fn handle_approve_tools(ctx: &Ctx, p: ApproveToolsParams) -> Result<PinsResult, RpcError> {
    let catalog = catalog(ctx)?;
    let list = catalog.list_tools(&p.server_id, true).map(|l| l.tools).unwrap_or_default();
    let names = list.iter().map(|t| t.name.as_str());
    let own = |n: &String| invisible::own_name(names.clone(), n).to_string();
    let tools: Vec<String> = p.tools.iter().map(own).collect();
    let fingerprints = p.fingerprints.iter().map(|(n, f)| (own(n), f.clone())).collect();
    let pins = catalog.approve_tools(&p.server_id, &tools, &fingerprints).map_err(pins_error)?;
    // Kept in the store before the answer, so that every process sees it once the host has it.
    // A failed write leaves the approval in force here and queued for the next write.
    if let Err(e) = catalog.store_pins(&p.server_id) {
        tracing::warn!(server = %p.server_id, error = %e, "the approval holds in this process but is not kept yet");
    }
    ctx.service.audit().record(crate::service::AuditEvent::PinsApproved { server: p.server_id.clone(), tools, by: "host".into() });
    Ok(shown(pins))
}

/// `tool/invoke` of a name that is not registered because its MCP tool is held: a result the
/// model can read, instead of an unknown-tool error.
pub fn held_invoke_result(ctx: &Ctx, name: &str) -> Option<InvokeResult> {
    let text = ctx.service.held_refusal(&ctx.snapshot(), ctx.catalog.get()?, name)?;
    Some(InvokeResult { output: ModelOutput::error(text), is_error: true, raw: None, repaired: None, provider_output: None, ui: None, approved_by: None, cut: None })
}
