//! MCP tools into the registry: resolve which tool ids an assistant uses, then sync the
//! selected servers' cached tools into entries.
//!
//! The sync reads the catalog's last-known-good lists only (never a server), so it is fast and
//! never blocks. It is idempotent (an unchanged tool keeps its entry, so cached token counts
//! survive). A server's entries are evicted only when the server is disabled or removed, or when
//! its list was confirmed and no longer has the tool (or the host deselected or disabled it).
//! A cold or failing server without a list keeps what it had.
//! Tools held by their pins (changed or new since the user approved them, `catalog::pins`)
//! are neither resolved nor registered, and a registered one is evicted.

use crate::catalog::{Catalog, ListState, ServerConfig};
use crate::registry::{mcp, wire_name, Registry, Source};
use std::collections::{BTreeMap, BTreeSet};

/// `mcpMode`: which servers an assistant draws tools from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disabled,
    Auto,
    Manual,
}

/// An MCP tool as a registry entry, under the wire name it has or would get in `registry`.
pub fn mcp_entry(
    registry: &Registry,
    server_id: &str,
    server_name: &str,
    approval_tools: &[String],
    t: &crate::catalog::McpTool,
) -> crate::registry::ToolEntry {
    let wire = registry.mcp_wire_name(server_id, server_name, &t.name);
    mcp::entry(
        &mcp::McpTool {
            server_id,
            server_name,
            tool_name: &t.name,
            title: t.title.as_deref(),
            description: &t.description,
            input_schema: &t.input_schema,
            output_schema: t.output_schema.as_ref(),
            annotations: t.annotations.as_ref(),
            approval: approval_tools.contains(&t.name),
        },
        wire,
    )
}

fn tool_entry(registry: &Registry, cfg: &ServerConfig, t: &crate::catalog::McpTool) -> crate::registry::ToolEntry {
    mcp_entry(registry, &cfg.id, &cfg.name, &cfg.approval_tools, t)
}

/// The wire names of every enabled, non-disabled cached tool of the chosen servers.
pub fn resolve(registry: &Registry, catalog: &Catalog, mode: Mode, server_ids: &[String]) -> Vec<String> {
    if mode == Mode::Disabled {
        return Vec::new();
    }
    let mut ids = BTreeSet::new();
    for id in catalog.server_ids() {
        if mode == Mode::Manual && !server_ids.contains(&id) {
            continue;
        }
        let Some(cfg) = catalog.config(&id).filter(|c| c.enabled) else { continue };
        let Ok(list) = catalog.list_tools(&id, false) else { continue };
        let Some(held) = catalog.held_tools(&id) else { continue };
        for t in list.tools.iter().filter(|t| !held.contains(&t.name)) {
            ids.insert(registry.mcp_wire_name(&cfg.id, &cfg.name, &t.name));
        }
    }
    ids.into_iter().collect()
}

pub struct Synced {
    pub registered: Vec<String>,
    pub evicted: Vec<String>,
}

pub fn sync(registry: &mut Registry, catalog: &Catalog, selected: Option<&[String]>) -> Synced {
    let selected: Option<BTreeSet<&str>> = selected.map(|s| s.iter().map(String::as_str).collect());
    let mut registered = Vec::new();
    let mut evicted = Vec::new();

    // Entries of servers that are gone or disabled go, whatever the selection.
    let mut by_server: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in registry.iter() {
        if let Source::Mcp { server_id, .. } = &r.entry.source {
            by_server.entry(server_id.clone()).or_default().push(r.entry.name.clone());
        }
    }
    for (server, names) in &by_server {
        if !catalog.config(server).is_some_and(|c| c.enabled) {
            evicted.extend(registry.deregister(names));
        }
    }

    for id in catalog.server_ids() {
        let Some(cfg) = catalog.config(&id).filter(|c| c.enabled) else { continue };
        let Ok(list) = catalog.list_tools(&id, false) else { continue };
        if list.state != ListState::Ready {
            continue; // cold or failing without a list: keep what it had
        }
        let Some(held) = catalog.held_tools(&id) else { continue }; // pins still loading
        // A held tool goes whatever the selection: its registered definition is no longer the
        // server's.
        let held_entries: Vec<String> = registry
            .mcp_entries(&id)
            .iter()
            .filter(|r| matches!(&r.entry.source, Source::Mcp { tool_name, .. } if held.contains(tool_name)))
            .map(|r| r.entry.name.clone())
            .collect();
        evicted.extend(registry.deregister(&held_entries));
        // Two tools of one server may camel-case alike: the later one takes the digest form.
        let mut taken = BTreeSet::new();
        let mut desired = Vec::new();
        for t in list.tools.iter().filter(|t| !held.contains(&t.name)) {
            let mut e = tool_entry(registry, &cfg, t);
            if !taken.insert(e.name.clone()) {
                e.name = wire_name::mcp_name(&cfg.name, &cfg.id, &t.name, true);
                taken.insert(e.name.clone());
            }
            desired.push(e);
        }
        if let Some(sel) = &selected {
            // Only servers that own a selected tool are synced.
            if !desired.iter().any(|e| sel.contains(e.name.as_str())) {
                continue;
            }
        }
        let keep: BTreeSet<String> = desired
            .iter()
            .filter(|e| selected.as_ref().is_none_or(|sel| sel.contains(e.name.as_str())))
            .map(|e| e.name.clone())
            .collect();
        let stale: Vec<String> =
            registry.mcp_entries(&id).iter().map(|r| r.entry.name.clone()).filter(|n| !keep.contains(n)).collect();
        evicted.extend(registry.deregister(&stale));
        for e in desired.into_iter().filter(|e| keep.contains(&e.name)) {
            let name = e.name.clone();
            if registry.insert(e) {
                registered.push(name);
            }
        }
    }
    registered.sort();
    evicted.sort();
    Synced { registered, evicted }
}

/// The refusal for a call by wire name to an MCP tool that is held by its pin (and so not
/// registered): the name it would get in `registry`, matched over every enabled server.
pub fn held_refusal(registry: &Registry, catalog: &Catalog, wire: &str) -> Option<String> {
    for id in catalog.server_ids() {
        let Some(cfg) = catalog.config(&id).filter(|c| c.enabled) else { continue };
        for tool in catalog.held_tools(&id).unwrap_or_default() {
            if registry.mcp_wire_name(&cfg.id, &cfg.name, &tool) == wire {
                return catalog.held_refusal(&id, &tool);
            }
        }
    }
    None
}
