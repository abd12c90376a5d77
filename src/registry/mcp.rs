//! MCP tools as registry entries: namespace `mcp:<serverId>`, wire name from `wire_name`,
//! `auto` policy, except the server's "always ask" tools: `never` + approval-gated.

use super::entry::{Defer, Source, ToolEntry};
use super::{wire_name, Registry};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

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
    /// Its view and who may call it (MCP Apps).
    pub ui: Option<crate::apps::ToolUi>,
}

/// Who an MCP tool is, for naming: server id and raw name are its identity, the server's
/// display name is what the wire name shows.
#[derive(Clone, Copy, Debug)]
pub struct ToolId<'a> {
    pub server_id: &'a str,
    pub server_name: &'a str,
    pub tool_name: &'a str,
}

impl Registry {
    /// The wire names of `tools`, decided together: the one naming rule that
    /// `registry/resolveMcpToolIds`, `registry/syncMcp` and `toolreg plan` share, so a name
    /// one of them gives is the name the others use, in the same round.
    ///
    /// A tool with an entry keeps its name (a name never changes under a model). The others,
    /// in the given order, take the plain name when neither an entry nor an earlier tool of
    /// `tools` holds it, else the digest form: two servers with one display name, or
    /// `get_user` beside `getUser`, give two names at once. A tool given twice gets one name.
    pub fn mcp_wire_names(&self, tools: &[ToolId]) -> Vec<String> {
        let mut owned: HashMap<(&str, &str), &str> = HashMap::new();
        for r in self.iter() {
            if let Source::Mcp { server_id, tool_name } = &r.entry.source {
                owned.insert((server_id.as_str(), tool_name.as_str()), r.entry.name.as_str());
            }
        }
        let mut names: Vec<Option<String>> = tools.iter().map(|t| owned.get(&(t.server_id, t.tool_name)).map(|n| n.to_string())).collect();
        let mut claimed: HashSet<String> = names.iter().flatten().cloned().collect();
        let mut given: HashMap<(&str, &str), usize> = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            if names[i].is_some() {
                continue;
            }
            if let Some(&j) = given.get(&(t.server_id, t.tool_name)) {
                names[i] = names[j].clone();
                continue;
            }
            let plain = wire_name::mcp_name(t.server_name, t.server_id, t.tool_name, false);
            let name = if claimed.contains(&plain) || self.get(&plain).is_some() {
                wire_name::mcp_name(t.server_name, t.server_id, t.tool_name, true)
            } else {
                plain
            };
            claimed.insert(name.clone());
            given.insert((t.server_id, t.tool_name), i);
            names[i] = Some(name);
        }
        names.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// The wire name one tool has, or would get alone (see `mcp_wire_names`).
    pub fn mcp_wire_name(&self, server_id: &str, server_name: &str, tool: &str) -> String {
        self.mcp_wire_names(&[ToolId { server_id, server_name, tool_name: tool }]).remove(0)
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
        ui: t.ui.clone(),
        source: Source::Mcp { server_id: t.server_id.to_string(), tool_name: t.tool_name.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::wire_name::{digest, mcp_name};
    use serde_json::json;

    fn id<'a>(server_id: &'a str, server_name: &'a str, tool_name: &'a str) -> ToolId<'a> {
        ToolId { server_id, server_name, tool_name }
    }

    fn tool<'a>(server_id: &'a str, name: &'a str, schema: &'a Value) -> McpTool<'a> {
        McpTool {
            server_id,
            server_name: "GitHub",
            tool_name: name,
            title: None,
            description: "d",
            input_schema: schema,
            output_schema: None,
            annotations: None,
            ui: None,
            approval: false,
        }
    }

    #[test]
    fn colliding_tools_get_distinct_names_in_one_round() {
        let r = Registry::default();
        let names = r.mcp_wire_names(&[
            id("a", "GitHub", "create_issue"),
            id("b", "GitHub", "create_issue"),
            id("a", "GitHub", "get_user"),
            id("a", "GitHub", "getUser"),
            id("a", "GitHub", "get_user"),
        ]);
        assert_eq!(
            names,
            [
                "mcp__gitHub__createIssue".to_string(),
                format!("mcp__gitHub__createIssue_{}", digest("b", "create_issue")),
                "mcp__gitHub__getUser".to_string(),
                format!("mcp__gitHub__getUser_{}", digest("a", "getUser")),
                "mcp__gitHub__getUser".to_string(),
            ]
        );
    }

    #[test]
    fn an_entry_keeps_its_name_and_holds_the_plain_one() {
        let mut r = Registry::default();
        let schema = json!({"type": "object"});
        // b's tool was registered first: it keeps the plain name, a's takes the digest form.
        r.insert(entry(&tool("b", "create_issue", &schema), "mcp__gitHub__createIssue".into()));
        let names = r.mcp_wire_names(&[id("a", "GitHub", "create_issue"), id("b", "GitHub", "create_issue")]);
        assert_eq!(names, [mcp_name("GitHub", "a", "create_issue", true), "mcp__gitHub__createIssue".to_string()]);
        // A host entry holding the plain name counts too.
        r.register(vec![serde_json::from_value(json!({"name": "mcp__gitHub__x", "namespace": "h", "description": "", "inputSchema": {}})).unwrap()]).unwrap();
        assert_eq!(r.mcp_wire_name("a", "GitHub", "x"), mcp_name("GitHub", "a", "x", true));
    }
}
