//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): a tool may name a view (a
//! `ui://` resource of its server, HTML a host renders) and say who may call it: the model,
//! the view, or both. This module reads what a tool's `_meta` says; the registry, the plans,
//! the call path and both faces act on it.
//!
//! Fail closed: a `visibility` that is not a list of strings is read as an empty list, so the
//! tool is offered to neither the model nor a view.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The extension's id in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of a view's HTML.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
/// The flat key older servers (and the SDK, for them) still write beside `ui.resourceUri`.
const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// A tool's view and who may call the tool, as its `_meta.ui` says.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    /// The `ui://` resource the host renders for this tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool: `"model"`, `"app"` (its view). Absent: both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<String>>,
}

impl ToolUi {
    /// What a tool's `_meta` says, or `None` when it says nothing of views.
    pub fn of(meta: Option<&Value>) -> Option<ToolUi> {
        let meta = meta?.as_object()?;
        let ui = meta.get("ui").and_then(Value::as_object);
        let resource_uri = ui
            .and_then(|u| u.get("resourceUri"))
            .or_else(|| meta.get(FLAT_RESOURCE_URI))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let visibility = ui.and_then(|u| u.get("visibility")).map(|v| match v.as_array() {
            Some(items) if items.iter().all(Value::is_string) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        });
        (resource_uri.is_some() || visibility.is_some()).then_some(ToolUi { resource_uri, visibility })
    }

    fn allows(&self, who: &str) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.iter().any(|w| w == who))
    }

    /// The model may see and call the tool.
    pub fn for_model(&self) -> bool {
        self.allows("model")
    }

    /// A view of the tool's server may call it.
    pub fn for_app(&self) -> bool {
        self.allows("app")
    }
}

/// Whether a tool with `ui` (or none) is offered to the model.
pub fn model_may_call(ui: Option<&ToolUi>) -> bool {
    ui.is_none_or(ToolUi::for_model)
}

/// Whether a tool's result has a view a host renders: it names one and the model may call it.
pub fn has_view(ui: Option<&ToolUi>) -> bool {
    ui.is_some_and(|u| u.resource_uri.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_nested_form_and_the_flat_form_both_name_the_view() {
        let nested = ToolUi::of(Some(&json!({"ui": {"resourceUri": "ui://a/v.html"}}))).unwrap();
        let flat = ToolUi::of(Some(&json!({"ui/resourceUri": "ui://a/v.html"}))).unwrap();
        assert_eq!(nested, flat);
        assert_eq!(nested.resource_uri.as_deref(), Some("ui://a/v.html"));
        assert!(nested.for_model() && nested.for_app());
        assert_eq!(ToolUi::of(Some(&json!({"progressToken": 1}))), None);
        assert_eq!(ToolUi::of(None), None);
    }

    #[test]
    fn visibility_decides_who_may_call() {
        let app_only = ToolUi::of(Some(&json!({"ui": {"resourceUri": "ui://a", "visibility": ["app"]}}))).unwrap();
        assert!(!app_only.for_model() && app_only.for_app());
        assert!(!model_may_call(Some(&app_only)));
        let model_only = ToolUi::of(Some(&json!({"ui": {"visibility": ["model"]}}))).unwrap();
        assert!(model_only.for_model() && !model_only.for_app());
        assert!(model_may_call(None));
    }

    #[test]
    fn a_malformed_visibility_is_read_as_nobody() {
        for bad in [json!("app"), json!([1]), json!({"app": true})] {
            let ui = ToolUi::of(Some(&json!({"ui": {"resourceUri": "ui://a", "visibility": bad}}))).unwrap();
            assert!(!ui.for_model() && !ui.for_app(), "{bad}");
        }
    }
}
