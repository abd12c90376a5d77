//! A tool entry: what the registry knows of one tool.

use super::predicate::Predicate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Defer {
    /// Always inline.
    Never,
    /// Always behind the meta-tools (unless approval-gated).
    Always,
    /// Deferred with the rest of the auto pool when the plan's gates say so.
    #[default]
    Auto,
}

/// Where an entry came from; set by the sidecar, never by the host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Source {
    Builtin,
    #[default]
    Host,
    #[serde(rename_all = "camelCase")]
    Mcp { server_id: String, tool_name: String },
}

/// A tool entry as the host registers it (`registry/register`) and as the registry keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Wire name: what the model emits. Unique; must match `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
    pub name: String,
    /// Grouping for search and the prompt section: `web`, `kb`, `mcp:<serverId>`, or the host's own.
    pub namespace: String,
    /// Full description, sent to the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// One line for search results; the description's first line when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What search shows for the namespace, e.g. `mcp:GitHub`; the namespace when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub defer: Defer,
    /// A call needs the host's approval first. Such tools are never deferred.
    #[serde(default)]
    pub approval: bool,
    /// When absent the entry is always active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies: Option<Predicate>,
    /// MCP tool annotations (hints), kept as the server sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// An MCP tool's view and who may call it (MCP Apps' `_meta.ui`). Set by the sidecar from
    /// the server's definition: whatever the host sends here is replaced.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub ui: Option<crate::apps::ToolUi>,
    /// Set by the sidecar: whatever the host sends here is replaced.
    #[serde(default, skip_deserializing)]
    pub source: Source,
}

impl ToolEntry {
    pub fn summary(&self) -> &str {
        match &self.summary {
            Some(s) => s,
            None => self.description.lines().next().unwrap_or("").trim(),
        }
    }

    pub fn namespace_label(&self) -> &str {
        self.namespace_label.as_deref().unwrap_or(&self.namespace)
    }
}

/// What `registry/list` and `registry/selectActive` show of an entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntrySummary {
    pub name: String,
    pub namespace: String,
    pub namespace_label: String,
    pub summary: String,
    pub defer: Defer,
    pub approval: bool,
    pub source: Source,
    /// An MCP tool's view and who may call it (MCP Apps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<crate::apps::ToolUi>,
}

impl From<&ToolEntry> for EntrySummary {
    fn from(e: &ToolEntry) -> Self {
        EntrySummary {
            name: e.name.clone(),
            namespace: e.namespace.clone(),
            namespace_label: e.namespace_label().to_string(),
            summary: e.summary().to_string(),
            defer: e.defer,
            approval: e.approval,
            ui: e.ui.clone(),
            // The host shows it: the server's own name with its hidden characters shown.
            source: match &e.source {
                Source::Mcp { server_id, tool_name } => Source::Mcp { server_id: server_id.clone(), tool_name: super::hidden::visible(tool_name).into_owned() },
                other => other.clone(),
            },
        }
    }
}
