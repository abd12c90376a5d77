//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on `toolreg mcp`: the
//! upstreams' skills offered to the gateway's client, over the shelf (`shelf/skills.rs`).
//!
//! Invariants:
//! - Declared when some upstream of the lens declares it (and resources, which skills are
//!   made of), with `directoryRead: true` when some upstream of the lens serves
//!   `resources/directory/read`.
//! - `skills/list` and `skills/get` answer from the shelf (the catalog's last-known-good
//!   `skills/list` entries), never from an upstream; a URI no listed skill has is -32602.
//! - A skill's files are resources: `resources/read` reaches them as any resource
//!   (`resources.rs`). `resources/directory/read` goes to the server whose skill holds the
//!   directory, within the call timeout; its children are named as the client named the
//!   directory (qualified when it was). The upstream's pages are read whole and cut into the
//!   gateway's own (`pages.rs`), as every list it serves.

use rmcp::model::{GetSkillRequestParams, GetSkillResult, ListResourcesResult, ListSkillsResult, ReadResourceDirectoryRequestParams, ResultType, SKILLS_EXTENSION_ID};
use rmcp::ErrorData;
use serde_json::{json, Value};

use super::resources::{failed, invalid, listed, parse};
use super::shelf::{qualified_uri, Route, Shelf};
use super::{Gateway, Lens};
use crate::catalog::Ask;

/// Adds the extension to the gateway's capabilities when the lens's upstreams offer it.
pub fn declare(capabilities: &mut Value, shelf: &Shelf) {
    let f = shelf.features;
    if f.skills && f.resources {
        let settings = if f.directory_read { json!({"directoryRead": true}) } else { json!({}) };
        capabilities["extensions"][SKILLS_EXTENSION_ID] = settings;
    }
}

pub(crate) async fn list(gw: &Gateway, lens: &Lens, cursor: Option<String>) -> Result<ListSkillsResult, ErrorData> {
    listed(gw, lens, ("skills/list", "skills"), |s| &s.skills.listed, cursor).await
}

pub(crate) async fn get(gw: &Gateway, lens: &Lens, request: GetSkillRequestParams) -> Result<GetSkillResult, ErrorData> {
    gw.listing_when_warm(lens).await;
    let shelf = lens.shelf();
    let skill = shelf.skills.get(&request.uri).map_err(|why| ErrorData::invalid_params(why, Some(json!({"uri": request.uri}))))?;
    parse("skills/get", json!({"skill": skill, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}))
}

pub(crate) async fn read_directory(gw: &Gateway, lens: &Lens, request: ReadResourceDirectoryRequestParams) -> Result<ListResourcesResult, ErrorData> {
    gw.listing_when_warm(lens).await;
    let shelf = lens.shelf();
    let route = shelf.directory(&request.uri).map_err(invalid)?;
    if !shelf.server_features(&route.server).directory_read {
        return Err(invalid(format!("MCP server {} does not serve resources/directory/read", route.server)));
    }
    // The client's cursor is the gateway's own (`pages.rs`): the upstream's pages are read
    // whole, then cut.
    let mut params = serde_json::to_value(&request).unwrap_or_else(|_| json!({}));
    params["uri"] = json!(route.own);
    let mut v = whole_directory(gw, &route, params).await?;
    if request.uri != route.own {
        for child in v["resources"].as_array_mut().into_iter().flatten() {
            if let Some(uri) = child["uri"].as_str().map(|u| qualified_uri(&route.server, u)) {
                child["uri"] = json!(uri);
            }
        }
    }
    let children = std::sync::Arc::new(v["resources"].take());
    let pick: fn(&Value) -> &[Value] = |v| v.as_array().map_or(&[], Vec::as_slice);
    let (children, next) = super::pages::cut(Ask::ReadDirectory.method(), children, pick, request.cursor).await?;
    v["resources"] = json!(children);
    v["nextCursor"] = json!(next);
    let mut result: ListResourcesResult = parse(Ask::ReadDirectory.method(), v)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// Upstreams' pages of a directory at most; past them the listing is refused, not cut short.
const MAX_UPSTREAM_PAGES: usize = 100;

/// The upstream's first result, with the children of all its pages.
async fn whole_directory(gw: &Gateway, route: &Route, mut params: Value) -> Result<Value, ErrorData> {
    let method = Ask::ReadDirectory.method();
    if let Some(p) = params.as_object_mut() {
        p.remove("cursor");
    }
    let mut first: Option<Value> = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_UPSTREAM_PAGES {
        let mut page = gw.catalog.ask(&route.server, Ask::ReadDirectory, params.clone()).await.map_err(|e| failed(route, method, e))?;
        let next = page.as_object_mut().and_then(|p| p.remove("nextCursor"));
        match &mut first {
            None => first = Some(page),
            Some(f) => {
                let more = page["resources"].as_array_mut().map(std::mem::take).unwrap_or_default();
                if let Some(all) = f["resources"].as_array_mut() {
                    all.extend(more);
                }
            }
        }
        match next.as_ref().and_then(Value::as_str) {
            Some(c) if !c.is_empty() && seen.insert(c.to_owned()) => params["cursor"] = json!(c),
            Some(c) if !c.is_empty() => return Err(failed_with(route, format!("{method} repeated cursor {c:?}"))),
            _ => return Ok(first.unwrap_or_default()),
        }
    }
    Err(failed_with(route, format!("{method} has more than {MAX_UPSTREAM_PAGES} pages")))
}

fn failed_with(route: &Route, why: String) -> ErrorData {
    ErrorData::internal_error(format!("{why} on MCP server {}", route.server), Some(json!({"server": route.server})))
}
