//! `toolreg mcp --check`: every enabled server connected once, all at once, each bounded by
//! `TIMEOUT`, and one table row per server, for a person setting the gateway up.
//!
//! It uses the catalog as a run does, with the same `cacheDir` (so the held tools are the ones
//! the gateway would hold) and the same stored OAuth tokens (`tokens.rs`: a server a gateway
//! signed in to is checked signed in), and asks no one: a server that needs authorization says so. Errors
//! are the catalog's, already redacted (`ServerConfig::redact`), cut to one short line.

use super::config::GatewayConfig;
use crate::catalog::{Catalog, CatalogOptions, Diagnosis, SandboxReport, SandboxState, ServerState, ServerStatus};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

/// Per server: spawn or connect, handshake and the first `tools/list`.
pub const TIMEOUT: Duration = Duration::from_secs(15);
const ERROR_CHARS: usize = 100;

/// No one to show an authorization page to.
struct Unasked;

impl super::tokens::Opener for Unasked {
    fn open_url<'a>(&'a self, _: &'a str, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("--check asks no one".to_owned()) })
    }
    fn can_open(&self) -> bool {
        false
    }
}

/// One server's row.
#[derive(Debug, PartialEq)]
pub struct Row {
    pub id: String,
    pub state: ServerState,
    pub protocol: Option<String>,
    pub tools: Option<usize>,
    pub held: usize,
    pub error: Option<String>,
    /// A stdio server's confinement (`catalog/status`'s `sandbox`).
    pub sandbox: Option<SandboxReport>,
    /// Why it does not start (`catalog/status`'s `diagnosis`), printed in full under the table.
    pub diagnosis: Option<Diagnosis>,
}

impl Row {
    /// Disabled servers are shown, not judged.
    fn usable(&self) -> bool {
        matches!(self.state, ServerState::Ready | ServerState::Disabled)
    }
}

pub struct Report {
    pub rows: Vec<Row>,
    /// One line per `gateway.overrides` entry: the tool as clients see it, or why not.
    pub overrides: Vec<(String, bool)>,
    /// One line per profile: its servers and how many tools it lists, or why none.
    pub profiles: Vec<String>,
    /// One line per quarantined server (`quarantine: true`): its held tools and the command
    /// that approves them.
    pub quarantined: Vec<String>,
}

/// Connects every enabled server of `cfg` and reports how each one did, in the config's order.
pub async fn check(cfg: &GatewayConfig) -> Report {
    let (events, _kept) = tokio::sync::mpsc::unbounded_channel();
    let opts = CatalogOptions {
        connect_timeout: TIMEOUT,
        list_timeout: TIMEOUT,
        max_concurrent_warm: cfg.servers.len().max(1),
        ..super::catalog_options(cfg)
    };
    let tokens = cfg.state_dir().map(|d| super::tokens::Tokens::open(&d));
    let auth = Arc::new(super::tokens::StoreAuth { opener: Unasked, tokens });
    let catalog = Catalog::with_hosts(opts, events, Arc::new(crate::catalog::elicit::NoHost), auth);
    let (c, servers) = (catalog.clone(), cfg.servers.clone());
    // It reads the cacheDir: off the reactor.
    let _ = tokio::task::spawn_blocking(move || c.set_servers(servers)).await;
    let rows = futures::future::join_all(cfg.servers.iter().map(|s| row(&catalog, &s.id))).await;
    let overrides = overridden(cfg, &catalog);
    let profiles = profiled(cfg, &catalog);
    let quarantined = cfg
        .servers
        .iter()
        .zip(&rows)
        .filter(|(s, _)| s.quarantine)
        .map(|(s, r)| match r.held {
            0 => format!("{}: quarantined, no tool held (each is approved)", s.id),
            n => format!("{}: quarantined, {n} tool(s) held until approved: {} --approve {}", s.id, super::review::show_command(cfg), s.id),
        })
        .collect();
    let _ = tokio::time::timeout(Duration::from_secs(3), catalog.shutdown()).await;
    Report { rows, overrides, profiles, quarantined }
}

/// What each override makes of its tool, synced as the gateway syncs: (line, fine).
fn overridden(cfg: &GatewayConfig, catalog: &Catalog) -> Vec<(String, bool)> {
    let overrides = &cfg.gateway.overrides;
    if overrides.is_empty() {
        return Vec::new();
    }
    use crate::service::{Registry, Service, SyncAsk};
    let mut reg = Registry::default();
    Service::new(Registry::default(), "check-").sync(&mut reg, catalog, SyncAsk { selected: None, overrides: Some(overrides) });
    overrides
        .iter()
        .map(|(k, o)| {
            let (server, tool) = k.split_once('/').unwrap_or((k.as_str(), ""));
            let listed = catalog.list_tools(server, false).map(|l| l.tools.iter().any(|t| t.name == tool)).unwrap_or(false);
            let entry = reg.iter().find(|r| matches!(&r.entry.source, crate::service::Source::Mcp { server_id, tool_name } if server_id == server && tool_name == tool));
            match (listed, entry) {
                (false, _) => (format!("{k}: {server:?} lists no tool {tool:?} (yet): the override waits for it"), true),
                (true, None) if o.hidden => (format!("{k}: hidden"), true),
                (true, None) => (format!("{k}: not listed (held by its pin, or disabled)"), true),
                (true, Some(r)) => match &o.name {
                    Some(name) if *name != r.entry.name => (format!("{k}: NOT renamed to {name:?}, another tool has that name; listed as {}", r.entry.name), false),
                    _ => (format!("{k}: listed as {}", r.entry.name), true),
                },
            }
        })
        .collect()
}

/// What each profile selects of the servers' current lists (before overrides and pins).
fn profiled(cfg: &GatewayConfig, catalog: &Catalog) -> Vec<String> {
    cfg.gateway
        .profiles
        .keys()
        .map(|name| match cfg.selection(name) {
            Err(why) => format!("{name}: {why}"),
            Ok(s) => {
                let servers: Vec<&str> = cfg.servers.iter().map(|c| c.id.as_str()).filter(|id| s.server(id)).collect();
                let tools: usize = cfg
                    .servers
                    .iter()
                    .map(|c| catalog.list_tools(&c.id, false).map_or(0, |l| l.tools.iter().filter(|t| s.tool(&c.id, &t.name)).count()))
                    .sum();
                let servers = if servers.is_empty() { "no server".to_string() } else { servers.join(", ") };
                format!("{name} (/mcp/{name}): {servers}; {tools} tool(s)")
            }
        })
        .collect()
}

async fn row(catalog: &Catalog, id: &str) -> Row {
    // Shares the refresh `set_servers` started; a disabled server answers at once.
    let done = tokio::time::timeout(TIMEOUT, catalog.refresh(id)).await;
    let status = catalog.server_status(id).ok();
    let mut row = match status {
        Some(ServerStatus { state, protocol_version, tool_count, error, sandbox, diagnosis, .. }) => {
            Row { id: id.to_string(), state, protocol: protocol_version, tools: tool_count, held: 0, error, sandbox, diagnosis }
        }
        None => Row { id: id.to_string(), state: ServerState::Error, protocol: None, tools: None, held: 0, error: None, sandbox: None, diagnosis: None },
    };
    if done.is_err() {
        row.state = ServerState::Error;
        row.error = Some(format!("no answer within {} s", TIMEOUT.as_secs()));
    }
    row.held = catalog.held_tools(id).map_or(0, |h| h.len());
    row
}

impl Report {
    /// Every enabled server is ready.
    pub fn usable(&self) -> bool {
        self.rows.iter().all(Row::usable) && self.overrides.iter().all(|(_, fine)| *fine)
    }

    /// The table, each stdio server's sandbox in full, then a line that says whether the
    /// gateway can serve every server.
    pub fn render(&self) -> String {
        let head = ["SERVER", "STATE", "PROTOCOL", "TOOLS", "HELD", "NEEDS AUTH", "SANDBOX", "ERROR"].map(String::from);
        let cells: Vec<[String; 8]> = std::iter::once(head).chain(self.rows.iter().map(cells)).collect();
        let mut width = [0; 7];
        for row in &cells {
            for (w, c) in width.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        for row in &cells {
            let mut line = String::new();
            for (w, c) in width.iter().zip(row) {
                line.push_str(&format!("{c:<w$}  "));
            }
            line.push_str(&row[7]);
            out.push_str(line.trim_end());
            out.push('\n');
        }
        let sandboxes: Vec<String> = self.rows.iter().filter_map(|r| Some(format!("{}: sandbox {}\n", r.id, r.sandbox.as_ref()?.summary()))).collect();
        if !sandboxes.is_empty() {
            out.push('\n');
            out.extend(sandboxes);
        }
        if !self.quarantined.is_empty() {
            out.push('\n');
            out.extend(self.quarantined.iter().map(|l| format!("{l}\n")));
        }
        for (id, d) in self.rows.iter().filter_map(|r| Some((&r.id, r.diagnosis.as_ref()?))) {
            out.push_str(&diagnosed(id, d));
        }
        if !self.overrides.is_empty() {
            out.push_str("\noverrides:\n");
            for (line, _) in &self.overrides {
                out.push_str(&format!("  {line}\n"));
            }
        }
        if !self.profiles.is_empty() {
            out.push_str("\nprofiles:\n");
            for line in &self.profiles {
                out.push_str(&format!("  {line}\n"));
            }
        }
        let bad = self.rows.iter().filter(|r| !r.usable()).count();
        let enabled = self.rows.iter().filter(|r| r.state != ServerState::Disabled).count();
        match bad {
            0 => out.push_str(&format!("\n{enabled} enabled server(s), all usable\n")),
            n => out.push_str(&format!("\n{n} of {enabled} enabled server(s) not usable\n")),
        }
        out
    }
}

fn cells(r: &Row) -> [String; 8] {
    let state = serde_json::to_value(r.state).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let enabled = r.state != ServerState::Disabled;
    [
        r.id.clone(),
        state,
        or_dash(r.protocol.clone()),
        or_dash(r.tools.map(|n| n.to_string())),
        if enabled { r.held.to_string() } else { "-".into() },
        if r.state == ServerState::NeedsAuth { "yes" } else { "no" }.into(),
        or_dash(r.sandbox.as_ref().map(|s| state_word(s.state))),
        or_dash(r.error.as_deref().map(short)),
    ]
}

/// A server's diagnosis as lines under the table: kind and message, then the facts.
fn diagnosed(id: &str, d: &Diagnosis) -> String {
    let kind = serde_json::to_value(d.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let mut out = format!("\n{id}: {kind}: {}\n", d.message);
    if let Some(code) = d.exit_code {
        out.push_str(&format!("  exit code {code}\n"));
    }
    if let Some(signal) = d.signal {
        out.push_str(&format!("  signal {signal}\n"));
    }
    if !d.looked_in.is_empty() {
        out.push_str("  looked in:\n");
        out.extend(d.looked_in.iter().map(|dir| format!("    {dir}\n")));
    }
    if !d.stderr_tail.is_empty() {
        out.push_str("  its stderr ended with:\n");
        out.extend(d.stderr_tail.iter().map(|line| format!("    {line}\n")));
    }
    out
}

fn state_word(s: SandboxState) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// The first line, at most `ERROR_CHARS` characters.
fn short(error: &str) -> String {
    let line = error.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(ERROR_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Report, Row};
    use crate::catalog::ServerState;

    fn row(id: &str, state: ServerState, error: Option<&str>) -> Row {
        let ready = state == ServerState::Ready;
        Row {
            id: id.into(),
            state,
            protocol: ready.then(|| "2025-11-25".into()),
            tools: ready.then_some(3),
            held: usize::from(ready),
            error: error.map(String::from),
            sandbox: None,
            diagnosis: None,
        }
    }

    #[test]
    fn the_table_has_a_row_per_server_and_judges_only_enabled_ones() {
        let good = Report { rows: vec![row("fx", ServerState::Ready, None), row("off", ServerState::Disabled, None)], overrides: Vec::new(), profiles: Vec::new(), quarantined: Vec::new() };
        assert!(good.usable());
        assert_eq!(
            good.render(),
            "SERVER  STATE     PROTOCOL    TOOLS  HELD  NEEDS AUTH  SANDBOX  ERROR\n\
             fx      ready     2025-11-25  3      1     no          -        -\n\
             off     disabled  -           -      -     no          -        -\n\
             \n1 enabled server(s), all usable\n"
        );
        let long = format!("spawn failed\n{}", "x".repeat(300));
        let bad = Report { rows: vec![row("gh", ServerState::NeedsAuth, Some("authorize first")), row("dead", ServerState::Error, Some(&long))], overrides: Vec::new(), profiles: Vec::new(), quarantined: Vec::new() };
        assert!(!bad.usable());
        let text = bad.render();
        assert!(text.contains("gh      needsAuth  -         -      0     yes         -        authorize first\n"), "{text}");
        assert!(text.contains("  spawn failed\n") && !text.contains("xxx"), "{text}");
        assert!(text.ends_with("2 of 2 enabled server(s) not usable\n"), "{text}");
        let cut = super::short(&"y".repeat(300));
        assert_eq!(cut.chars().count(), super::ERROR_CHARS + 1);
    }
}
