//! `toolreg auth --config FILE SERVER`: one upstream server's OAuth flow from a terminal, for
//! a person whose MCP client cannot show an authorization page. The URL goes to stderr and to
//! the system browser (`xdg-open`, `open`, `start`, or `$TOOLREG_BROWSER`; a browser that does not open is not an
//! error: the URL is printed), the loopback redirect ends it, and the tokens land in the file
//! the gateway reads (`tokens.rs`), so the next `toolreg mcp` run starts authorized.
//!
//! The flow is the catalog's own (`catalog/authorize.rs`): a catalog of that one server
//! connects, meets the 401, and runs it through this module's `AuthHost`. No second
//! implementation of discovery, registration or PKCE.

use super::config::GatewayConfig;
use super::tokens::{Opener, StoreAuth, Tokens};
use crate::catalog::{Catalog, CatalogOptions, ServerState, Transport};
use futures::future::BoxFuture;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The catalog's own bound on the user (5 min) plus the servers' minute, and some slack.
const WHOLE_FLOW: Duration = Duration::from_secs(7 * 60);

struct Terminal {
    /// The flow reached the user: success means "authorized", not "already authorized".
    asked: AtomicBool,
}

impl Opener for Terminal {
    fn open_url<'a>(&'a self, url: &'a str, _server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.asked.store(true, Ordering::Relaxed);
        // The person at this terminal asked for this page: stderr is theirs, not a log.
        eprintln!("{reason}. Open this page to authorize toolreg (opening your browser):\n\n  {url}\n");
        open_browser(url);
        Box::pin(async { Ok(()) })
    }
}

/// The system's browser on `url` (`$TOOLREG_BROWSER`, a command, when set: tests set `true`),
/// not waited for; whatever it prints is dropped.
fn open_browser(url: &str) {
    let chosen = std::env::var_os("TOOLREG_BROWSER").filter(|v| !v.is_empty());
    let mut cmd = if let Some(program) = chosen {
        std::process::Command::new(program)
    } else if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    cmd.arg(url).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    if let Ok(mut child) = cmd.spawn() {
        // Reaped in the background: xdg-open may wait for the browser.
        std::thread::spawn(move || child.wait());
    }
}

/// Authorizes `server` (an id, or a name) of `cfg`: Ok with the line to print, Err with why not.
pub async fn authorize_from_terminal(cfg: &GatewayConfig, server: &str) -> Result<String, String> {
    let ids: Vec<&str> = cfg.servers.iter().map(|s| s.id.as_str()).collect();
    let mut config = cfg
        .servers
        .iter()
        .find(|s| s.id == server)
        .or_else(|| cfg.servers.iter().find(|s| s.name == server))
        .cloned()
        .ok_or_else(|| format!("the config has no server {server:?} (its servers: {})", ids.join(", ")))?;
    if !matches!(config.transport, Transport::Http { .. }) {
        return Err(format!("server {} is not reached over HTTP: only Streamable HTTP servers use OAuth", config.id));
    }
    let dir = cfg.state_dir().ok_or("no directory to keep the tokens in: set gateway.cacheDir or $TOOLREG_STATE_DIR")?;
    let host = Arc::new(StoreAuth { opener: Terminal { asked: AtomicBool::new(false) }, tokens: Some(Tokens::open(&dir)) });
    let (events, _quiet) = tokio::sync::mpsc::unbounded_channel();
    let catalog = Catalog::with_hosts(CatalogOptions::default(), events, Arc::new(crate::catalog::elicit::NoHost), host.clone());
    let id = config.id.clone();
    config.enabled = true;
    catalog.set_servers(vec![config]);
    let outcome = wait(&catalog, &id, &host.opener).await;
    catalog.shutdown().await;
    outcome
}

/// Until the server is ready (authorized) or its flow failed.
async fn wait(catalog: &Catalog, id: &str, host: &Terminal) -> Result<String, String> {
    let start = Instant::now();
    loop {
        let status = catalog.server_status(id).map_err(|e| e.to_string())?;
        let error = status.error.unwrap_or_default();
        match status.state {
            ServerState::Ready if host.asked.load(Ordering::Relaxed) => {
                return Ok(format!("server {id} authorized; tokens saved for `toolreg mcp`"));
            }
            ServerState::Ready => return Ok(format!("server {id} is already authorized, or needs no authorization")),
            ServerState::Error => return Err(format!("server {id}: {error}")),
            // While the flow runs the reason says it waits for the user; any other is its end.
            ServerState::NeedsAuth if !error.contains("waiting for the user") => return Err(error),
            _ => {}
        }
        if start.elapsed() > WHOLE_FLOW {
            return Err(format!("server {id}: no authorization within {} s", WHOLE_FLOW.as_secs()));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
