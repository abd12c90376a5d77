//! Which synced MCP entries a request's scope admits: `scope.mcpToolIds`, when present, names
//! them by wire name (as the seed's synced entries apply only when their id is in it); absent
//! or `null`, every synced entry is active.
//!
//! This is what lets two conversations of different assistants use different tools of one
//! server at once: `registry/syncMcp` registers what either selected, and each request's scope
//! narrows it. Entries the host registered itself follow their own `applies` only, even in an
//! `mcp:` namespace: the rule is for the sidecar's synced entries.

use serde_json::Value;
use std::collections::HashSet;

/// The scope's MCP rule, read once per `select_active` (a set: a scope lists thousands).
pub enum McpScope<'a> {
    /// No `mcpToolIds`: every synced entry.
    All,
    /// Only these wire names.
    Only(HashSet<&'a str>),
    /// `mcpToolIds` is not a list: no synced entry is active (fail closed), each named.
    Unreadable(String),
}

impl<'a> McpScope<'a> {
    pub fn of(scope: &'a Value) -> McpScope<'a> {
        match scope.get("mcpToolIds") {
            None | Some(Value::Null) => McpScope::All,
            Some(Value::Array(ids)) => McpScope::Only(ids.iter().filter_map(Value::as_str).collect()),
            Some(other) => McpScope::Unreadable(format!("\"mcpToolIds\" is {}, not a list", crate::registry::predicate::kind(other))),
        }
    }

    /// Whether the synced entry `name` is active: `Err` says why it could not be told.
    pub fn admits(&self, name: &str) -> Result<bool, String> {
        match self {
            McpScope::All => Ok(true),
            McpScope::Only(ids) => Ok(ids.contains(name)),
            McpScope::Unreadable(why) => Err(why.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_admits_all_a_list_its_names_anything_else_none() {
        assert_eq!(McpScope::of(&json!({})).admits("mcp__gh__search"), Ok(true));
        assert_eq!(McpScope::of(&json!({"mcpToolIds": null})).admits("mcp__gh__search"), Ok(true));
        let scope = json!({"mcpToolIds": ["mcp__gh__search"]});
        let only = McpScope::of(&scope);
        assert_eq!(only.admits("mcp__gh__search"), Ok(true));
        assert_eq!(only.admits("mcp__gh__fork"), Ok(false));
        assert_eq!(McpScope::of(&json!({"mcpToolIds": []})).admits("mcp__gh__search"), Ok(false));
        assert!(McpScope::of(&json!({"mcpToolIds": "mcp__gh__search"})).admits("mcp__gh__search").is_err());
    }
}
