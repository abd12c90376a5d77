//! MCP tools into the registry: resolve which tool ids an assistant uses, then sync the
//! servers' cached tools (those selected, and those already registered) into entries.
//!
//! The sync reads the catalog's last-known-good lists only (never a server), so it is fast and
//! never blocks. It is idempotent (an unchanged tool keeps its entry, so cached token counts
//! survive). A selection adds the selected tools and evicts nothing: two conversations may sync
//! different tools of one server, and each request's `scope.mcpToolIds` narrows the registry to
//! its own (`registry::mcp_scope`). A server's entries are evicted only when the server is
//! disabled or removed, or when its list was confirmed and no longer has the tool (or the host
//! disabled it). A cold or failing server without a list keeps what it had.
//! Tools held by their pins (changed or new since the user approved them, `catalog::pins`)
//! are neither resolved nor registered, and a registered one is evicted.

use crate::catalog::{Catalog, ListState, ListToolsResult, ServerConfig};
use crate::overrides::Overrides;
use crate::registry::mcp::{self, ToolId};
use crate::registry::{Registry, Source};
use std::collections::{BTreeMap, BTreeSet};

/// `mcpMode`: which servers an assistant draws tools from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disabled,
    Auto,
    Manual,
}

/// An MCP tool as a registry entry under the wire name `wire` (from `Registry::mcp_wire_names`).
pub fn mcp_entry(
    server_id: &str,
    server_name: &str,
    approval: bool,
    t: &crate::catalog::McpTool,
    wire: String,
) -> crate::registry::ToolEntry {
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
            approval,
            ui: t.ui.clone(),
        },
        wire,
    )
}

/// Every enabled server's cached tools, each with its wire name. Names are decided over all
/// of them at once (`Registry::mcp_wire_names`), whichever servers the caller then uses, so
/// `resolve` and `sync` name every tool alike in the same round.
struct Named {
    /// Each server with its list less the tools its pins hold, and the held names (`None`
    /// while its pins are still loading: such a server is neither resolved nor synced).
    servers: Vec<(ServerConfig, ListToolsResult, Option<BTreeSet<String>>)>,
    /// Per server, its tools' wire names in list order.
    names: Vec<Vec<String>>,
}

fn named(registry: &Registry, catalog: &Catalog, overrides: Option<&Overrides>) -> Named {
    let hidden = |server: &str, tool: &str| overrides.and_then(|o| o.get(&crate::overrides::key(server, tool))).is_some_and(|o| o.hidden);
    let servers: Vec<_> = catalog
        .server_ids()
        .iter()
        .filter_map(|id| {
            let cfg = catalog.config(id).filter(|c| c.enabled)?;
            let mut list = catalog.list_tools(id, false).ok()?;
            let held = catalog.held_tools(id);
            let hold = held.clone().unwrap_or_default();
            list.tools.retain(|t| !hold.contains(&t.name) && !hidden(id, &t.name));
            Some((cfg, list, held))
        })
        .collect();
    let ids: Vec<ToolId> = servers
        .iter()
        .flat_map(|(cfg, list, _)| {
            list.tools.iter().map(|t| ToolId { server_id: &cfg.id, server_name: &cfg.name, tool_name: &t.name })
        })
        .collect();
    let mut flat = registry.mcp_wire_names(&ids).into_iter();
    let mut names: Vec<Vec<String>> = servers.iter().map(|(_, list, _)| flat.by_ref().take(list.tools.len()).collect()).collect();
    if let Some(overrides) = overrides.filter(|o| o.values().any(|o| o.name.is_some())) {
        rename(&servers, &mut names, overrides);
    }
    Named { servers, names }
}

/// Gives the tools their overrides' names, unless another tool has that name (then the tool
/// keeps its usual one, and the collision is logged naming both).
fn rename(servers: &[(ServerConfig, ListToolsResult, Option<BTreeSet<String>>)], names: &mut [Vec<String>], overrides: &Overrides) {
    let wires: Vec<(String, String)> = servers
        .iter()
        .zip(names.iter())
        .flat_map(|((cfg, list, _), names)| list.tools.iter().zip(names).map(|(t, w)| (crate::overrides::key(&cfg.id, &t.name), w.clone())))
        .collect();
    let refused: BTreeSet<&str> = crate::overrides::collisions(overrides, &wires)
        .into_iter()
        .map(|(k, name, other)| {
            tracing::error!(tool = %k, "gateway.overrides[{k:?}].name {name:?} is the name of {other:?}: not renamed");
            k
        })
        .collect();
    for ((cfg, list, _), names) in servers.iter().zip(names.iter_mut()) {
        for (t, wire) in list.tools.iter().zip(names.iter_mut()) {
            let k = crate::overrides::key(&cfg.id, &t.name);
            if let Some(name) = overrides.get(&k).and_then(|o| o.name.as_ref()).filter(|_| !refused.contains(k.as_str())) {
                *wire = name.clone();
            }
        }
    }
}

/// The wire names of every enabled, non-disabled cached tool of the chosen servers.
pub fn resolve(registry: &Registry, catalog: &Catalog, mode: Mode, server_ids: &[String]) -> Vec<String> {
    if mode == Mode::Disabled {
        return Vec::new();
    }
    let n = named(registry, catalog, None);
    let mut ids = BTreeSet::new();
    for ((cfg, _, held), names) in n.servers.iter().zip(&n.names) {
        if held.is_none() || (mode == Mode::Manual && !server_ids.contains(&cfg.id)) {
            continue; // pins still loading, or not chosen
        }
        ids.extend(names.iter().cloned());
    }
    ids.into_iter().collect()
}

pub struct Synced {
    pub registered: Vec<String>,
    pub evicted: Vec<String>,
}

/// `overrides`: the gateway's (`gateway.overrides`); the sidecar has none.
pub fn sync(registry: &mut Registry, catalog: &Catalog, selected: Option<&[String]>, overrides: Option<&Overrides>) -> Synced {
    let selected: Option<BTreeSet<&str>> = selected.map(|s| s.iter().map(String::as_str).collect());
    let mut registered = Vec::new();
    let mut evicted = Vec::new();

    // Entries of servers that are gone or disabled go.
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

    let n = named(registry, catalog, overrides);
    for ((cfg, list, held), names) in n.servers.iter().zip(n.names) {
        if list.state != ListState::Ready {
            continue; // cold or failing without a list: keep what it had
        }
        let id = &cfg.id;
        let Some(held) = held else { continue }; // pins still loading: keep what it had
        // A held tool goes: its registered definition is no longer the server's.
        let held_entries: Vec<String> = registry
            .mcp_entries(id)
            .iter()
            .filter(|r| matches!(&r.entry.source, Source::Mcp { tool_name, .. } if held.contains(tool_name)))
            .map(|r| r.entry.name.clone())
            .collect();
        evicted.extend(registry.deregister(&held_entries));
        let desired: Vec<_> = list
            .tools
            .iter()
            .zip(names)
            .map(|(t, wire)| {
                let mut e = mcp_entry(&cfg.id, &cfg.name, cfg.asks_approval(&t.name, t.annotations.as_ref()), t, wire);
                if let Some(o) = overrides.and_then(|o| o.get(&crate::overrides::key(id, &t.name))) {
                    crate::overrides::apply(&mut e, o);
                }
                e
            })
            .collect();
        // Gone: the confirmed list no longer has the tool (or the host disabled it). What is
        // merely unselected stays: another request's selection may need it, and each
        // request's scope (`mcpToolIds`) says what it sees.
        let listed: BTreeSet<&str> = desired.iter().map(|e| e.name.as_str()).collect();
        let had: BTreeSet<String> = registry.mcp_entries(id).iter().map(|r| r.entry.name.clone()).collect();
        let gone: Vec<String> = had.iter().filter(|n| !listed.contains(n.as_str())).cloned().collect();
        evicted.extend(registry.deregister(&gone));
        // The selected tools come in; those already in are brought up to date.
        for e in desired.into_iter().filter(|e| had.contains(&e.name) || selected.as_ref().is_none_or(|sel| sel.contains(e.name.as_str()))) {
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
    let (id, tool) = held_tool(registry, catalog, wire)?;
    // It names the server's own tool: the model reads it shown.
    catalog.held_refusal(&id, &tool).map(|t| crate::registry::hidden::visible(&t).into_owned())
}

/// (server id, the server's own tool name) of the held tool that `wire` would name.
pub fn held_tool(registry: &Registry, catalog: &Catalog, wire: &str) -> Option<(String, String)> {
    for id in catalog.server_ids() {
        let Some(cfg) = catalog.config(&id).filter(|c| c.enabled) else { continue };
        for tool in catalog.held_tools(&id).unwrap_or_default() {
            if registry.mcp_wire_name(&cfg.id, &cfg.name, &tool) == wire {
                return Some((id, tool));
            }
        }
    }
    None
}
