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

use crate::catalog::{Catalog, ListState, ListToolsResult, McpTool, ServerConfig};
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
    t: &McpTool,
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
    let listed: Vec<Listed> = servers.iter().map(|(cfg, list, _)| Listed { id: &cfg.id, name: &cfg.name, tools: list.tools.iter().collect() }).collect();
    let (names, refused) = wire_names(registry, &listed, overrides);
    for (k, name, other) in refused {
        tracing::error!(tool = %k, "gateway.overrides[{k:?}].name {name:?} is the name of {other:?}: not renamed");
    }
    Named { servers, names }
}

/// One server's tools to name, in its list's order.
struct Listed<'a> {
    id: &'a str,
    name: &'a str,
    tools: Vec<&'a McpTool>,
}

/// Renames refused: (override key, name, the other tool's `server/tool`).
type Refused<'o> = Vec<(&'o str, &'o str, String)>;

/// Per server, its tools' wire names, decided over all of `servers` at once, with their
/// overrides' names unless another tool has that name (then the tool keeps its usual one); and
/// the renames refused so.
fn wire_names<'o>(registry: &Registry, servers: &[Listed], overrides: Option<&'o Overrides>) -> (Vec<Vec<String>>, Refused<'o>) {
    let ids: Vec<ToolId> =
        servers.iter().flat_map(|s| s.tools.iter().map(|t| ToolId { server_id: s.id, server_name: s.name, tool_name: &t.name })).collect();
    let mut flat = registry.mcp_wire_names(&ids).into_iter();
    let mut names: Vec<Vec<String>> = servers.iter().map(|s| flat.by_ref().take(s.tools.len()).collect()).collect();
    let Some(overrides) = overrides.filter(|o| o.values().any(|o| o.name.is_some())) else { return (names, Vec::new()) };
    let wires: Vec<(String, String)> = servers
        .iter()
        .zip(names.iter())
        .flat_map(|(s, names)| s.tools.iter().zip(names).map(|(t, w)| (crate::overrides::key(s.id, &t.name), w.clone())))
        .collect();
    let refused = crate::overrides::collisions(overrides, &wires);
    for (s, names) in servers.iter().zip(names.iter_mut()) {
        for (t, wire) in s.tools.iter().zip(names.iter_mut()) {
            let k = crate::overrides::key(s.id, &t.name);
            if let Some(name) = overrides.get(&k).and_then(|o| o.name.as_ref()).filter(|_| !refused.iter().any(|(r, _, _)| *r == k)) {
                *wire = name.clone();
            }
        }
    }
    (names, refused)
}

/// An MCP tool's entry under `wire`, as its override (if any) says.
fn overridden(server_id: &str, server_name: &str, approval: bool, t: &McpTool, wire: String, overrides: Option<&Overrides>) -> crate::registry::ToolEntry {
    let mut e = mcp_entry(server_id, server_name, approval, t, wire);
    if let Some(o) = overrides.and_then(|o| o.get(&crate::overrides::key(server_id, &t.name))) {
        crate::overrides::apply(&mut e, o);
    }
    e
}

/// A server's last tool list as a host setup file keeps it (`toolreg plan`), no catalog behind it.
pub struct Snapshot<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub enabled: bool,
    pub approval: crate::catalog::ApprovalPolicy,
    pub approval_tools: &'a [String],
    pub disabled_tools: &'a [String],
    pub tools: &'a [McpTool],
}

/// The snapshots' tools into `registry`, named all at once as `sync` names them (the same
/// overrides, the same refused renames), without a catalog: the view `toolreg plan` shows.
pub fn snapshots(registry: &mut Registry, servers: &[Snapshot<'_>], overrides: &Overrides) -> Result<(), String> {
    crate::overrides::check(overrides)?;
    let hidden = |s: &Snapshot, t: &McpTool| overrides.get(&crate::overrides::key(s.id, &t.name)).is_some_and(|o| o.hidden);
    let servers: Vec<&Snapshot> = servers.iter().filter(|s| s.enabled).collect();
    let listed: Vec<Listed> = servers
        .iter()
        .map(|s| Listed {
            id: s.id,
            name: s.name,
            tools: s.tools.iter().filter(|t| !s.disabled_tools.iter().any(|d| crate::registry::hidden::names(d, &t.name)) && !hidden(s, t)).collect(),
        })
        .collect();
    let (names, _) = wire_names(registry, &listed, Some(overrides));
    let entries: Vec<_> = servers
        .iter()
        .zip(&listed)
        .zip(names)
        .flat_map(|((s, l), names)| {
            l.tools.iter().zip(names).map(|(t, wire)| overridden(s.id, s.name, s.approval.asks(s.approval_tools, &t.name, t.annotations.as_ref()), t, wire, Some(overrides)))
        })
        .collect();
    for e in entries {
        registry.insert(e);
    }
    Ok(())
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
            .map(|(t, wire)| overridden(&cfg.id, &cfg.name, cfg.asks_approval(&t.name, t.annotations.as_ref()), t, wire, overrides))
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

/// The held tool `wire` names: by its usual wire name (`held_tool`), or by the name an
/// override gives it (a rug pull under a renamed tool is held, and called by the new name).
pub fn held_named(registry: &Registry, catalog: &Catalog, wire: &str, overrides: Option<&Overrides>) -> Option<(String, String)> {
    held_tool(registry, catalog, wire).or_else(|| {
        let (key, _) = overrides?.iter().find(|(_, o)| o.name.as_deref() == Some(wire) && !o.hidden)?;
        let (server, tool) = key.split_once('/')?;
        catalog.held_tools(server)?.contains(tool).then(|| (server.to_string(), tool.to_string()))
    })
}
