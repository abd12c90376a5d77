//! `toolreg pins --config FILE [--approve SERVER[/TOOL]...]`: the held tools of every server of
//! a gateway config and what changed, and their approval from a terminal, for a person whose
//! client cannot show the review form (`review.rs`). It reaches each server once, as the
//! gateway's catalog does, so it sees the definitions a call would meet now (a server it cannot
//! reach shows its last-known-good list), and writes the pins where the gateway keeps them
//! (the state database of `GatewayConfig::state_dir`); running gateways and sidecars over that
//! directory adopt them within a second, and at the tool's next call.

use super::config::GatewayConfig;
use super::review;
use crate::catalog::{Catalog, CatalogOptions, McpTool, PinState, ServerState, ToolPin};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// How long one server may take to connect and list.
const REACH: Duration = Duration::from_secs(30);

/// One `--approve` argument, resolved: a server id, and one of its tools or all held ones.
#[derive(Debug, PartialEq)]
struct Target {
    server: String,
    tool: Option<String>,
}

/// `SERVER` or `SERVER/TOOL` against the config's server ids (which may hold a `/`: the
/// longest id that fits wins).
fn resolve(cfg: &GatewayConfig, arg: &str) -> Result<Target, String> {
    if cfg.servers.iter().any(|s| s.id == arg) {
        return Ok(Target { server: arg.to_owned(), tool: None });
    }
    let fits = cfg.servers.iter().filter(|s| arg.len() > s.id.len() + 1 && arg.starts_with(&s.id) && arg[s.id.len()..].starts_with('/'));
    match fits.max_by_key(|s| s.id.len()) {
        Some(s) => Ok(Target { server: s.id.clone(), tool: Some(arg[s.id.len() + 1..].to_owned()) }),
        None => {
            let ids: Vec<&str> = cfg.servers.iter().map(|s| s.id.as_str()).collect();
            Err(format!("no server {arg:?} in the config (its server ids: {}); write SERVER or SERVER/TOOL", ids.join(", ")))
        }
    }
}

/// Runs the command: the report of held tools, or what `approve` approved. `Err` (a non-zero
/// exit) for an unknown server or tool, or a server whose pins cannot be read or written.
pub async fn pins(cfg: GatewayConfig, approve: &[String]) -> Result<String, String> {
    let targets = approve.iter().map(|a| resolve(&cfg, a)).collect::<Result<Vec<_>, _>>()?;
    let Some(dir) = cfg.state_dir() else {
        return Err("no cacheDir in the config and no per-user state directory ($TOOLREG_STATE_DIR, $XDG_STATE_HOME or $HOME): pins are not kept".into());
    };
    let (events, _ignored) = tokio::sync::mpsc::unbounded_channel();
    let catalog = Catalog::new(CatalogOptions { cache_dir: Some(dir.clone()), ..CatalogOptions::default() }, events);
    let servers = cfg.servers.clone();
    let c = catalog.clone();
    // It reads the lists and pins in the state directory.
    tokio::task::spawn_blocking(move || c.set_servers(servers)).await.map_err(|e| e.to_string())?;
    let ids: Vec<String> = cfg.servers.iter().filter(|s| s.enabled).map(|s| s.id.clone()).collect();
    futures::future::join_all(ids.iter().map(|id| tokio::time::timeout(REACH, catalog.refresh(id)))).await;
    let out = match targets.is_empty() {
        true => report(&cfg, &catalog, &ids).await,
        false => approve_targets(&cfg, &catalog, &targets).await,
    };
    let _ = tokio::time::timeout(Duration::from_secs(3), catalog.shutdown()).await;
    out.map(|text| format!("{text}pins kept in {}\n", dir.display()))
}

/// The server's pins once read from disk (read in the background as the catalog starts).
async fn pins_of(catalog: &Catalog, id: &str) -> Result<Vec<ToolPin>, String> {
    for _ in 0..100 {
        if let Ok(p) = catalog.pins(id) {
            return Ok(p);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    catalog.pins(id).map_err(|e| e.to_string())
}

fn current(catalog: &Catalog, id: &str) -> Vec<McpTool> {
    catalog.list_tools(id, true).map(|l| l.tools).unwrap_or_default()
}

/// Every enabled server: reached or not, and each held tool with what changed.
async fn report(cfg: &GatewayConfig, catalog: &Catalog, ids: &[String]) -> Result<String, String> {
    let mut out = String::new();
    let mut held_total = 0;
    for id in ids {
        let status = catalog.server_status(id).map_err(|e| e.to_string())?;
        let name = crate::invisible::visible(&status.name).into_owned();
        let pins = pins_of(catalog, id).await?;
        let held: Vec<&ToolPin> = pins.iter().filter(|p| p.state != PinState::Approved).collect();
        let reached = match (&status.state, &status.error) {
            (ServerState::Ready, _) => String::new(),
            (_, Some(e)) => format!(" (not reached: {e}; its last-known list)"),
            (state, None) => format!(" (not reached: {state:?}; its last-known list)"),
        };
        let _ = writeln!(out, "{id}: {} tools, {} held{reached}", pins.len(), held.len());
        let tools = current(catalog, id);
        for pin in &held {
            let about = review::describe(&name, tools.iter().find(|t| t.name == pin.name), pin);
            for line in about.lines() {
                let _ = writeln!(out, "    {line}");
            }
            let _ = writeln!(out, "    approve: {}", review::approve_command(cfg, id, &pin.name));
        }
        held_total += held.len();
    }
    if held_total > 0 {
        let _ = writeln!(out, "{held_total} held; approve all of a server's with --approve SERVER");
    }
    Ok(out)
}

/// Checks every target before approving any: an unknown tool approves nothing.
async fn approve_targets(cfg: &GatewayConfig, catalog: &Catalog, targets: &[Target]) -> Result<String, String> {
    let mut plan: BTreeMap<String, Vec<ToolPin>> = BTreeMap::new();
    let mut out = String::new();
    for t in targets {
        if !cfg.servers.iter().any(|s| s.id == t.server && s.enabled) {
            return Err(format!("server {} is disabled in the config", t.server));
        }
        let pins = pins_of(catalog, &t.server).await?;
        let chosen: Vec<ToolPin> = match &t.tool {
            None => pins.into_iter().filter(|p| p.state != PinState::Approved).collect(),
            Some(tool) => match pins.into_iter().find(|p| &p.name == tool) {
                Some(p) if p.state == PinState::Approved => {
                    let _ = writeln!(out, "{}/{tool}: already approved", t.server);
                    continue;
                }
                Some(p) => vec![p],
                None => return Err(format!("server {} has no tool named {tool:?} now", t.server)),
            },
        };
        if chosen.is_empty() {
            let _ = writeln!(out, "{}: no held tools", t.server);
        }
        plan.entry(t.server.clone()).or_default().extend(chosen);
    }
    for (id, pins) in plan.iter().filter(|(_, p)| !p.is_empty()) {
        let names: Vec<String> = pins.iter().map(|p| p.name.clone()).collect();
        // Bound to the definitions read in this run: a change since refuses.
        let reviewed: BTreeMap<String, String> = pins.iter().map(|p| (p.name.clone(), p.fingerprint.clone())).collect();
        catalog.approve_tools(id, &names, &reviewed).map_err(|e| e.to_string())?;
        catalog.store_pins(id).map_err(|e| e.to_string())?;
        let name = catalog.config(id).map_or_else(|| id.clone(), |c| crate::invisible::visible(&c.name).into_owned());
        let tools = current(catalog, id);
        for pin in pins {
            let _ = writeln!(out, "approved {id}/{} (fingerprint {})", crate::invisible::visible(&pin.name), &pin.fingerprint[..16.min(pin.fingerprint.len())]);
            for line in review::describe(&name, tools.iter().find(|t| t.name == pin.name), pin).lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approve_argument_is_a_server_or_a_server_and_tool() {
        let cfg = GatewayConfig::parse(
            r#"{"servers": [
                {"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": "x"}},
                {"id": "fx/2", "name": "fx2", "transport": {"type": "stdio", "command": "x"}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(resolve(&cfg, "fx"), Ok(Target { server: "fx".into(), tool: None }));
        assert_eq!(resolve(&cfg, "fx/delete"), Ok(Target { server: "fx".into(), tool: Some("delete".into()) }));
        assert_eq!(resolve(&cfg, "fx/2"), Ok(Target { server: "fx/2".into(), tool: None }));
        assert_eq!(resolve(&cfg, "fx/2/a/b"), Ok(Target { server: "fx/2".into(), tool: Some("a/b".into()) }));
        let err = resolve(&cfg, "gh/issues").unwrap_err();
        assert!(err.contains("no server \"gh/issues\"") && err.contains("fx, fx/2"), "{err}");
        assert!(resolve(&cfg, "fx/").is_err());
    }
}
