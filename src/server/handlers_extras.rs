//! Handlers of what a server offers beside tools: resources, resource templates, prompts and
//! completions (`catalog/listResources` ... `catalog/complete`).
//!
//! Lists answer from the catalog's last-known-good lists (memory, persisted beside the tools)
//! and never wait on a server; one server's list that offers none is an error naming what it
//! does not offer, so "none" is never mistaken for "not offered". Reads and gets go to the
//! server within the call timeout, cancellable, with the server's questions (elicitation,
//! sampling, 2026-07-28 input requests) put to the host as a call's are.

use super::handlers_tools::{catalog, catalog_error};
use super::{current_cancel, Ctx};
use crate::catalog::{Answer, Ask, CatalogError, Extras, Features, Inputs};
use crate::protocol::error::clip;
use crate::protocol::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Items per page of a merged list.
const PAGE: usize = 100;

/// What one list method reads of a server's extras.
struct Kind {
    method: &'static str,
    offered: fn(&Features) -> bool,
    items: fn(&Extras) -> &[Value],
}

const RESOURCES: Kind = Kind { method: "resources/list", offered: |f| f.resources, items: |e| &e.resources };
const TEMPLATES: Kind = Kind { method: "resources/templates/list", offered: |f| f.resources, items: |e| &e.templates };
const PROMPTS: Kind = Kind { method: "prompts/list", offered: |f| f.prompts, items: |e| &e.prompts };

/// One page of `kind`'s items over the asked servers, each with its `serverId`, and the
/// servers whose lists are not known yet. Items the host's type cannot hold (no name, no uri)
/// are skipped, as a server's malformed entries.
fn page<T: DeserializeOwned>(ctx: &Ctx, p: &ExtrasListParams, kind: &Kind) -> Result<(Vec<T>, Option<String>, Vec<String>), RpcError> {
    let catalog = catalog(ctx)?;
    let ids = match &p.server_id {
        Some(id) => vec![id.clone()],
        None => catalog.server_ids().into_iter().filter(|id| catalog.config(id).is_some_and(|c| c.enabled)).collect(),
    };
    let mut items = Vec::new();
    let mut pending = Vec::new();
    for id in ids {
        let Some(extras) = catalog.extras_known(&id).map_err(catalog_error)? else {
            pending.push(id);
            continue;
        };
        if !(kind.offered)(&extras.features) {
            if p.server_id.is_some() {
                return Err(not_offered(&id, kind.method));
            }
            continue;
        }
        items.extend((kind.items)(&extras).iter().filter_map(|v| with_server(&id, v)));
    }
    let start = match &p.cursor {
        None => 0,
        Some(c) => c.parse::<usize>().ok().filter(|n| *n <= items.len()).ok_or_else(|| {
            RpcError::new(ErrorCode::INVALID_PARAMS, format!("unknown cursor {:?}: pass the nextCursor of the page before", clip(c))).with_data(json!({"cursor": c}))
        })?,
    };
    let end = (start + PAGE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    let page = items.drain(start..end).collect();
    Ok((page, next, pending))
}

fn with_server<T: DeserializeOwned>(server_id: &str, item: &Value) -> Option<T> {
    let mut v = item.as_object()?.clone();
    v.insert("serverId".into(), json!(server_id));
    serde_json::from_value(Value::Object(v)).ok()
}

fn not_offered(server_id: &str, method: &str) -> RpcError {
    RpcError::new(ErrorCode::NOT_OFFERED, format!("MCP server {server_id} does not offer {method}")).with_data(json!({"serverId": server_id, "method": method}))
}

fn ask_error(e: CatalogError) -> RpcError {
    match e {
        CatalogError::NotOffered { server, method } => not_offered(&server, &method),
        CatalogError::Cancelled => RpcError::new(ErrorCode::REQUEST_CANCELLED, "the request was cancelled"),
        CatalogError::Held { server, tool, message } => RpcError::new(ErrorCode::HELD, message).with_data(json!({"serverId": server, "tool": tool})),
        CatalogError::Rpc { code, message, data } => {
            RpcError { code, message: format!("MCP error: {message}"), data: data.map(|d| json!({"upstream": d})) }.with_data(json!({"upstreamCode": code}))
        }
        other => catalog_error(other),
    }
}

pub fn handle_list_resources(ctx: &Ctx, p: ExtrasListParams) -> Result<ResourceList, RpcError> {
    let (resources, next_cursor, pending) = page(ctx, &p, &RESOURCES)?;
    Ok(Page { items: Resources { resources }, next_cursor, pending })
}

pub fn handle_list_templates(ctx: &Ctx, p: ExtrasListParams) -> Result<ResourceTemplateList, RpcError> {
    let (resource_templates, next_cursor, pending) = page(ctx, &p, &TEMPLATES)?;
    Ok(Page { items: ResourceTemplates { resource_templates }, next_cursor, pending })
}

pub fn handle_list_prompts(ctx: &Ctx, p: ExtrasListParams) -> Result<PromptList, RpcError> {
    let (prompts, next_cursor, pending) = page(ctx, &p, &PROMPTS)?;
    Ok(Page { items: Prompts { prompts }, next_cursor, pending })
}

/// `ask` of a request that may ask the host first (elicitation, sampling, input rounds),
/// named `name` in those questions, under a call id of its own.
async fn ask_fulfilled(ctx: &Arc<Ctx>, server_id: &str, ask: Ask, name: &str, params: Value) -> Result<Value, RpcError> {
    let call_id = ctx.service.next_call_id();
    let answer = catalog(ctx)?.ask_with(server_id, ask, name, params, Some(&call_id), current_cancel(), &Inputs::Fulfil).await.map_err(ask_error)?;
    match answer {
        Answer::Complete(v) => Ok(v),
        // `Fulfil` answers the server's questions itself; it never hands them back.
        Answer::InputRequired { .. } => Err(RpcError::new(ErrorCode::INTERNAL_ERROR, format!("{}: the server's input request was not answered", ask.method()))),
        // Tasks are made of tool calls only.
        Answer::Task(_) => Err(RpcError::new(ErrorCode::INTERNAL_ERROR, format!("{}: the server answered with a task", ask.method()))),
    }
}

pub async fn handle_read_resource(ctx: Arc<Ctx>, p: ResourceParams) -> Result<McpResult, RpcError> {
    ask_fulfilled(&ctx, &p.server_id, Ask::ReadResource, &p.uri, json!({"uri": p.uri})).await.map(McpResult)
}

pub async fn handle_get_prompt(ctx: Arc<Ctx>, p: PromptGetParams) -> Result<McpResult, RpcError> {
    let mut params = Map::new();
    params.insert("name".into(), json!(p.name));
    if let Some(arguments) = &p.arguments {
        params.insert("arguments".into(), json!(arguments));
    }
    ask_fulfilled(&ctx, &p.server_id, Ask::GetPrompt, &p.name, Value::Object(params)).await.map(McpResult)
}

pub async fn handle_complete(ctx: Arc<Ctx>, p: CompleteParams) -> Result<CompleteReply, RpcError> {
    let mut params = json!({"ref": p.reference, "argument": p.argument});
    if let Some(context) = p.context {
        params["context"] = context;
    }
    let v = catalog(&ctx)?.ask(&p.server_id, Ask::Complete, params).await.map_err(ask_error)?;
    Ok(CompleteReply { completion: v.get("completion").cloned().unwrap_or_else(|| json!({"values": []})) })
}

/// A server's skills (SEP-2640), asked of it now; no skill file is read.
pub async fn handle_list_skills(ctx: Arc<Ctx>, p: ServerIdParams) -> Result<SkillList, RpcError> {
    let skills = catalog(&ctx)?.list_skills(&p.server_id).await.map_err(ask_error)?;
    Ok(SkillList { skills })
}

/// One skill's files, each verified before the next is read.
pub async fn handle_load_skill(ctx: Arc<Ctx>, p: ResourceParams) -> Result<LoadedSkill, RpcError> {
    let s = catalog(&ctx)?.load_skill(&p.server_id, &p.uri).await.map_err(ask_error)?;
    Ok(LoadedSkill { uri: s.uri, frontmatter: s.frontmatter, files: s.files })
}

pub async fn handle_subscribe(ctx: Arc<Ctx>, p: ResourceParams) -> Result<Empty, RpcError> {
    catalog(&ctx)?.ask(&p.server_id, Ask::Subscribe, json!({"uri": p.uri})).await.map_err(ask_error)?;
    Ok(Empty {})
}

pub async fn handle_unsubscribe(ctx: Arc<Ctx>, p: ResourceParams) -> Result<Empty, RpcError> {
    catalog(&ctx)?.ask(&p.server_id, Ask::Unsubscribe, json!({"uri": p.uri})).await.map_err(ask_error)?;
    Ok(Empty {})
}
