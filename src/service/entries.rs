//! What a face shows of registered entries and their content: the hidden-text warning, the
//! tools only views may call, the names upstream tools may be listed under, overridden titles,
//! and a content part as the text the model reads.

use super::{Registered, Registry, Service};
use crate::overrides::Overrides;
use crate::registry::Source;
use serde_json::Value;
use std::collections::HashMap;

impl Service {
    /// What the host or the log reads about an entry that had hidden characters.
    pub fn hidden_message(entry: &Registered) -> String {
        crate::registry::hidden_message(entry)
    }

    /// An MCP tool that only views may call: listed for clients that render, never planned.
    pub fn app_only(r: &Registered) -> bool {
        let ui = r.entry.ui.as_ref();
        matches!(r.entry.source, Source::Mcp { .. }) && r.refused.is_none() && !crate::apps::model_may_call(ui) && ui.is_some_and(crate::apps::ToolUi::for_app)
    }

    /// Wire name to upstream name, for the MCP tools whose upstream name is unique among all
    /// servers, valid, and no registry or meta-tool name; a tool its override renames is
    /// listed by that name, never its upstream one.
    pub fn upstream_names<'r>(registry: &'r Registry, overrides: &Overrides) -> HashMap<&'r str, &'r str> {
        let mut by_own: HashMap<&str, Vec<&str>> = HashMap::new();
        for r in registry.iter() {
            if let Source::Mcp { server_id, tool_name } = &r.entry.source {
                if overrides.get(&crate::overrides::key(server_id, tool_name)).is_some_and(|o| o.name.is_some()) {
                    continue;
                }
                by_own.entry(tool_name.as_str()).or_default().push(r.entry.name.as_str());
            }
        }
        by_own
            .into_iter()
            .filter(|(own, wires)| {
                wires.len() == 1 && !crate::registry::RESERVED.contains(own) && registry.get(own).is_none() && crate::registry::wire_name::is_valid(own)
            })
            .map(|(own, wires)| (wires[0], own))
            .collect()
    }

    /// The titles `overrides` give registered MCP tools, by wire name.
    pub fn override_titles(registry: &Registry, overrides: &Overrides) -> HashMap<String, String> {
        registry
            .iter()
            .filter_map(|r| match &r.entry.source {
                Source::Mcp { server_id, tool_name } => Some((r.entry.name.clone(), overrides.get(&crate::overrides::key(server_id, tool_name))?.title.clone()?)),
                _ => None,
            })
            .collect()
    }

    /// An MCP content part as the text the model reads: its text, or a placeholder naming a
    /// medium's type and size.
    pub fn part_text(part: &Value) -> String {
        crate::output::part_text(part)
    }

    /// A fresh unguessable reference (`results::shelf`): what owns a session's results.
    pub fn new_reference() -> String {
        crate::results::shelf::new_ref()
    }

    /// `v` as canonical JSON (sorted keys, no spaces): what an approval or a pin is bound to.
    pub fn canonical_json(v: &Value) -> String {
        crate::catalog::canonical::canonical(v)
    }
}
