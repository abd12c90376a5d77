//! MCP Apps (extension `io.modelcontextprotocol/ui`) through `toolreg mcp`: which clients render
//! views, what a listed tool's `_meta` says, and who a call of an app-only tool is for.
//!
//! Invariants:
//! - A client renders views only when it declared the extension (at `initialize`, or in a
//!   2026-07-28 request's `_meta` client capabilities) and `gateway.views` is on. Only such a
//!   client is listed app-only tools (visibility without `"model"`; its host keeps them from
//!   its model) and may call them; any other client is never shown one, and its call is
//!   refused by `route::call` with the reason.
//! - A listed tool's `_meta` is the upstream's, every key kept, except that a view URI is
//!   rewritten to the form `resources/read` routes to the tool's own server (`Shelf::listed_uri`),
//!   and with `gateway.views` off the `ui` keys are dropped so no host renders a view.
//! - The upstream sessions are shared by every client, so the extension is declared to them
//!   by the config (`gateway.views`), not per client; a 2026-07-28 pass-through request names
//!   its caller's own capabilities, the extension removed when `gateway.views` is off.

use rmcp::model::ClientCapabilities;
use serde_json::Value;

use super::shelf::Shelf;
use crate::service::{Registered, Registry, Service, Source, VIEWS_EXTENSION, VIEW_MIME};

const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// Whether capabilities a client declared say it renders views of the one format servers send
/// (a declaration without `mimeTypes` is taken as that format, as on the sidecar face).
pub(crate) fn declared(caps: Option<&ClientCapabilities>) -> bool {
    let Some(caps) = caps else { return false };
    let caps = serde_json::to_value(caps).unwrap_or(Value::Null);
    let Some(ext) = caps.get("extensions").and_then(|e| e.get(VIEWS_EXTENSION)) else { return false };
    match ext.get("mimeTypes") {
        None => true,
        Some(types) => types.as_array().is_some_and(|t| t.iter().any(|m| m == VIEW_MIME)),
    }
}

/// A 2026-07-28 caller's capabilities as passed upstream: as declared, or without the
/// extension when the gateway serves no views.
pub(crate) fn upstream_caps(mut caps: Value, views: bool) -> Value {
    if !views {
        if let Some(ext) = caps.get_mut("extensions").and_then(Value::as_object_mut) {
            ext.remove(VIEWS_EXTENSION);
        }
    }
    caps
}

/// An upstream tool's `_meta` as listed: view URIs in the form that reaches `server`, or the
/// `ui` keys dropped when `views` is off. `None` when nothing is left.
pub(crate) fn listed_meta(meta: &Value, server: &str, shelf: &Shelf, views: bool) -> Option<Value> {
    let mut meta = meta.as_object()?.clone();
    if !views {
        meta.remove("ui");
        meta.remove(FLAT_RESOURCE_URI);
        return (!meta.is_empty()).then_some(Value::Object(meta));
    }
    if let Some(uri) = meta.get_mut("ui").and_then(|u| u.get_mut("resourceUri")) {
        if let Some(own) = uri.as_str() {
            *uri = Value::String(shelf.listed_uri(server, own));
        }
    }
    if let Some(uri) = meta.get_mut(FLAT_RESOURCE_URI) {
        if let Some(own) = uri.as_str() {
            *uri = Value::String(shelf.listed_uri(server, own));
        }
    }
    Some(Value::Object(meta))
}

/// An MCP tool that only views may call: listed for clients that render, never planned.
pub(crate) fn app_only(r: &Registered) -> bool {
    Service::app_only(r)
}

/// The app-only tools of `registry`, in name order.
pub(crate) fn app_only_tools(registry: &Registry) -> Vec<&Registered> {
    let mut tools: Vec<&Registered> = registry.iter().map(|r| &**r).filter(|r| app_only(r)).collect();
    tools.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));
    tools
}

/// The server a call is a view's call for: a client that renders calling an app-only tool (MCP
/// has no mark for a view's call: the host proxies it as any `tools/call`). `None`: a model's
/// call, under the model's rules.
pub(crate) fn app_of(registry: &Registry, name: &str, renders: bool) -> Option<String> {
    let r = registry.get(name).filter(|r| renders && app_only(r))?;
    match &r.entry.source {
        Source::Mcp { server_id, .. } => Some(server_id.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(v: Value) -> ClientCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_client_renders_when_it_declares_the_extension_for_the_view_format() {
        assert!(declared(Some(&caps(json!({"extensions": {VIEWS_EXTENSION: {"mimeTypes": [VIEW_MIME]}}})))));
        assert!(declared(Some(&caps(json!({"extensions": {VIEWS_EXTENSION: {}}})))));
        assert!(!declared(Some(&caps(json!({"extensions": {VIEWS_EXTENSION: {"mimeTypes": ["text/html"]}}})))));
        assert!(!declared(Some(&caps(json!({"elicitation": {}})))));
        assert!(!declared(None));
    }

    #[test]
    fn views_off_drops_the_ui_keys_and_the_upstream_declaration() {
        let shelf = Shelf::default();
        let meta = json!({"ui": {"resourceUri": "ui://a/v.html"}, "ui/resourceUri": "ui://a/v.html", "other": 1});
        assert_eq!(listed_meta(&meta, "a", &shelf, false), Some(json!({"other": 1})));
        assert_eq!(listed_meta(&json!({"ui": {}}), "a", &shelf, false), None);
        assert_eq!(listed_meta(&meta, "a", &shelf, true), Some(meta.clone()));
        let declared = json!({"extensions": {VIEWS_EXTENSION: {}, "x": {}}, "sampling": {}});
        assert_eq!(upstream_caps(declared.clone(), false), json!({"extensions": {"x": {}}, "sampling": {}}));
        assert_eq!(upstream_caps(declared.clone(), true), declared);
    }
}
