//! Per-tool overrides (`gateway.overrides`, issue 43 §2): what clients and the model see of an
//! upstream MCP tool — its name, title, description, visibility, default arguments and
//! annotations — changed after pinning, so that the pins keep judging the upstream definition
//! (a rug pull under an override is still held) and a renamed tool is still called by its
//! upstream name.
//!
//! Keys are `<server id>/<upstream tool name>`. What can be refused without the servers' lists
//! is refused when the config is read (`check`); a name that collides with another tool's only
//! once the lists are known is not taken (the tool keeps its usual name) and said (`collisions`).

use crate::registry::{wire_name, ToolEntry, RESERVED};
use crate::settings::ToolOverride;
use serde_json::Value;
use std::collections::BTreeMap;

/// By `<server>/<tool>`.
pub type Overrides = BTreeMap<String, ToolOverride>;

/// The key of a server's tool.
pub fn key(server: &str, tool: &str) -> String {
    format!("{server}/{tool}")
}

/// Refuses a key that is not `server/tool`, a name that is not a valid wire name or is a
/// meta-tool's, and two overrides that give one name (naming both).
pub fn check(overrides: &Overrides) -> Result<(), String> {
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for (k, o) in overrides {
        match k.split_once('/') {
            Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {}
            _ => return Err(format!("gateway.overrides: {k:?} is not \"<server>/<tool>\"")),
        }
        let Some(name) = &o.name else { continue };
        if !wire_name::is_valid(name) || RESERVED.contains(&name.as_str()) {
            return Err(format!("gateway.overrides[{k:?}].name {name:?} is not a usable tool name (letters, digits, _ and -, at most 64, not a meta-tool's)"));
        }
        if o.hidden {
            return Err(format!("gateway.overrides[{k:?}] both renames and hides the tool: choose one"));
        }
        if let Some(other) = names.insert(name, k) {
            return Err(format!("gateway.overrides: {other:?} and {k:?} both name a tool {name:?}"));
        }
    }
    Ok(())
}

/// `entry` (an upstream tool's, as synced) as the override says; the name is the caller's.
pub fn apply(entry: &mut ToolEntry, o: &ToolOverride) {
    if let Some(d) = &o.description {
        entry.description = d.clone();
    }
    if let Some(more) = &o.description_append {
        if entry.description.is_empty() {
            entry.description = more.clone();
        } else {
            entry.description = format!("{}\n\n{more}", entry.description);
        }
    }
    if let Some(a) = &o.annotations {
        let mut merged = entry.annotations.as_ref().and_then(Value::as_object).cloned().unwrap_or_default();
        merged.extend(a.clone());
        entry.annotations = Some(Value::Object(merged));
    }
    if let Some(args) = o.arguments.as_ref().filter(|a| !a.defaults.is_empty()) {
        // A default in the schema, and the property no longer required: the call validates
        // without it, and the executor fills it in before the tool runs.
        let schema = &mut entry.input_schema;
        if let Some(obj) = schema.as_object_mut() {
            let props = obj.entry("properties").or_insert_with(|| Value::Object(Default::default()));
            if let Some(props) = props.as_object_mut() {
                for (k, v) in &args.defaults {
                    let p = props.entry(k.clone()).or_insert_with(|| Value::Object(Default::default()));
                    if let Some(p) = p.as_object_mut() {
                        p.insert("default".into(), v.clone());
                    }
                }
            }
            if let Some(Value::Array(required)) = obj.get_mut("required") {
                required.retain(|r| r.as_str().is_none_or(|r| !args.defaults.contains_key(r)));
            }
        }
    }
}

/// Names an override would give that another tool already has: (the override's key, the
/// name, the other tool's wire name's owner as `server/tool`).
pub fn collisions<'a>(overrides: &'a Overrides, wires: &[(String, String)]) -> Vec<(&'a str, &'a str, String)> {
    let mut out = Vec::new();
    for (k, o) in overrides {
        let Some(name) = &o.name else { continue };
        for (owner, wire) in wires {
            if wire == name && owner != k {
                out.push((k.as_str(), name.as_str(), owner.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ArgumentOverride;
    use serde_json::json;

    fn entry() -> ToolEntry {
        serde_json::from_value(json!({"name": "mcp__gh__createIssue", "namespace": "mcp:gh", "description": "Create an issue.",
            "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}, "title": {"type": "string"}}, "required": ["repo", "title"]},
            "annotations": {"readOnlyHint": false, "title": "Create"}}))
        .unwrap()
    }

    #[test]
    fn an_override_changes_what_is_seen() {
        let mut e = entry();
        let o = ToolOverride {
            description_append: Some("Always in the team's repo.".into()),
            arguments: Some(ArgumentOverride { defaults: [("repo".to_string(), json!("team/app"))].into_iter().collect() }),
            annotations: Some(json!({"destructiveHint": false}).as_object().unwrap().clone()),
            ..ToolOverride::default()
        };
        apply(&mut e, &o);
        assert_eq!(e.description, "Create an issue.\n\nAlways in the team's repo.");
        assert_eq!(e.input_schema["properties"]["repo"]["default"], "team/app");
        assert_eq!(e.input_schema["required"], json!(["title"]));
        assert_eq!(e.annotations, Some(json!({"readOnlyHint": false, "title": "Create", "destructiveHint": false})));
        let mut e = entry();
        apply(&mut e, &ToolOverride { description: Some("Open a ticket.".into()), ..ToolOverride::default() });
        assert_eq!(e.description, "Open a ticket.");
    }

    #[test]
    fn what_can_be_refused_early_is() {
        let named = |n: &str| ToolOverride { name: Some(n.into()), ..ToolOverride::default() };
        let ok: Overrides = [("gh/create_issue".to_string(), named("new_issue")), ("fs/read".to_string(), named("read"))].into_iter().collect();
        assert!(check(&ok).is_ok());
        let twice: Overrides = [("gh/a".to_string(), named("same")), ("fs/b".to_string(), named("same"))].into_iter().collect();
        let why = check(&twice).unwrap_err();
        assert!(why.contains("\"fs/b\"") && why.contains("\"gh/a\"") && why.contains("\"same\""), "{why}");
        let bad: Overrides = [("nokey".to_string(), ToolOverride::default())].into_iter().collect();
        assert!(check(&bad).unwrap_err().contains("<server>/<tool>"));
        let reserved: Overrides = [("gh/a".to_string(), named("tool_search"))].into_iter().collect();
        assert!(check(&reserved).is_err());
        let spaced: Overrides = [("gh/a".to_string(), named("has space"))].into_iter().collect();
        assert!(check(&spaced).is_err());
    }

    #[test]
    fn a_name_another_tool_has_is_a_collision() {
        let o: Overrides = [("gh/a".to_string(), ToolOverride { name: Some("mcp__fs__read".into()), ..ToolOverride::default() })].into_iter().collect();
        let wires = vec![("fs/read".to_string(), "mcp__fs__read".to_string()), ("gh/a".to_string(), "mcp__gh__a".to_string())];
        assert_eq!(collisions(&o, &wires), vec![("gh/a", "mcp__fs__read", "fs/read".to_string())]);
    }
}
