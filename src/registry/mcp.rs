//! MCP tools as registry entries: namespace `mcp:<serverId>`, wire name from `wire_name`,
//! `auto` policy, except the server's "always ask" tools: `never` + approval-gated.

use super::entry::{Defer, Source, ToolEntry};
use super::{wire_name, Registry};
use serde_json::Value;

/// One MCP tool as the catalog knows it, with what the registry needs of its server.
pub struct McpTool<'a> {
    pub server_id: &'a str,
    pub server_name: &'a str,
    pub tool_name: &'a str,
    pub title: Option<&'a str>,
    pub description: &'a str,
    pub input_schema: &'a Value,
    pub output_schema: Option<&'a Value>,
    pub annotations: Option<&'a Value>,
    pub approval: bool,
}

impl Registry {
    /// The wire name this tool has, or would get: its existing entry's name if it has one;
    /// else the plain name, or the digest form when the plain one belongs to another tool.
    pub fn mcp_wire_name(&self, server_id: &str, server_name: &str, tool: &str) -> String {
        let is_this = |name: &str| {
            self.get(name).is_some_and(|r| {
                matches!(&r.entry.source, Source::Mcp { server_id: s, tool_name: t } if s == server_id && t == tool)
            })
        };
        let plain = wire_name::mcp_name(server_name, server_id, tool, false);
        if self.get(&plain).is_none() || is_this(&plain) {
            return plain;
        }
        wire_name::mcp_name(server_name, server_id, tool, true)
    }
}

pub fn entry(t: &McpTool, wire: String) -> ToolEntry {
    let description = match (t.description.trim(), t.title) {
        ("", Some(title)) => title.to_string(),
        ("", None) => format!("{} (from MCP server {})", t.tool_name, t.server_name),
        (d, _) => d.to_string(),
    };
    ToolEntry {
        name: wire,
        namespace: format!("mcp:{}", t.server_id),
        namespace_label: Some(format!("mcp:{}", t.server_name)),
        description,
        summary: None,
        input_schema: if t.input_schema.is_object() { t.input_schema.clone() } else { serde_json::json!({"type": "object"}) },
        output_schema: t.output_schema.cloned(),
        defer: if t.approval { Defer::Never } else { Defer::Auto },
        approval: t.approval,
        applies: None,
        annotations: t.annotations.cloned(),
        source: Source::Mcp { server_id: t.server_id.to_string(), tool_name: t.tool_name.to_string() },
    }
}
