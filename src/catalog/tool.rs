//! A tool as the catalog keeps it: the fields of MCP `Tool` we cache, and a server's list as
//! `list_tools` answers it from memory. Wire types (camelCase) the protocol layer embeds as is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool as an MCP server described it (the fields of MCP `Tool` that we keep).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// The tool's `_meta` as the server sent it (MCP Apps' `ui` among other keys).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// The tool's view and who may call it, as `_meta.ui` says (read once, when listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<crate::apps::ToolUi>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ListState {
    /// Never warmed and nothing on disk: distinct from a warmed server with zero tools.
    Cold,
    Ready,
    /// No list yet and the last attempt failed.
    Error,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    pub state: ListState,
    pub tools: Vec<McpTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<String>,
    /// The last refresh's failure, also when a last-known-good list is returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
