//! The catalog's `AuthHost` for `toolreg mcp`: how an upstream server's OAuth flow reaches the
//! person, and where its tokens live.
//!
//! - The authorization page goes to a connected client as a URL-mode elicitation (MCP
//!   2025-11-25 `elicitation/create`, `mode: "url"`): to the client of a call in flight when one
//!   can show it, else to any connected client that declared `elicitation.url`. A flow that
//!   starts before any client connected (the usual case: the catalog connects at start) waits
//!   for the first one, at most `FIRST_CLIENT_WAIT`.
//! - Every page is also parked (`Pages`) for as long as its flow awaits the redirect: a
//!   2026-07-28 client takes no request from a server, and the flow starts on a connection, not
//!   inside a call, so such a client gets the page when it calls a tool of that server, as an
//!   input-required URL request (`auth_round.rs`). A flow no client can be asked in still
//!   waits for its redirect (the catalog's bound on the user), so a 2026 client's later call
//!   can take the page.
//! - A client that can be asked neither way has its calls of such a server's tools refused
//!   with the command that authorizes it from a terminal (`toolreg auth`, `terminal_auth.rs`).
//! - Tokens persist in the state directory's store (`tokens.rs`), shared by every gateway of
//!   that directory, which `toolreg auth` writes and `--check` reads too. The catalog's `TokenStore` registers them with the
//!   redactor, as it does for the sidecar; nothing here logs a URL (it carries the flow's
//!   state), a key's value or a token.

use super::client_host::stateless;
use super::tokens::Opener;
use super::Gateway;
use crate::catalog::{Catalog, ServerState};
use futures::future::BoxFuture;
use rmcp::model::ServerRequest;
use rmcp::service::{Peer, RoleServer};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long a flow started before any client connected waits for one.
const FIRST_CLIENT_WAIT: Duration = Duration::from_secs(60);

/// An authorization page waiting for a person, by server id. Its URL carries the flow's
/// `state` and PKCE challenge: never logged, never sealed into a `requestState`.
#[derive(Clone)]
pub struct Page {
    pub url: String,
    pub reason: String,
    pub elicitation_id: String,
}

/// The pages of running flows. An entry outlives its flow until looked up: `current` checks
/// the catalog.
#[derive(Default)]
pub struct Pages {
    pages: Mutex<HashMap<String, (Page, bool)>>,
}

impl Pages {
    fn park(&self, server_id: &str, page: Page) {
        super::lock(&self.pages).insert(server_id.to_owned(), (page, false));
    }

    fn forget(&self, server_id: &str) {
        super::lock(&self.pages).remove(server_id);
    }

    /// The page of `server_id`'s running flow, if one waits.
    pub fn current(&self, catalog: &Catalog, server_id: &str) -> Option<Page> {
        let mut pages = super::lock(&self.pages);
        if !catalog.authorizing(server_id) {
            pages.remove(server_id);
            return None;
        }
        pages.get(server_id).map(|(p, _)| p.clone())
    }

    /// The page went to a client (a 2026-07-28 client's URL request): the flow stops waiting
    /// for another client to show it.
    pub fn taken(&self, server_id: &str) {
        if let Some(entry) = super::lock(&self.pages).get_mut(server_id) {
            entry.1 = true;
        }
    }

    fn was_taken(&self, server_id: &str) -> bool {
        super::lock(&self.pages).get(server_id).is_some_and(|(_, taken)| *taken)
    }
}

/// The gateway's `Opener`; with `tokens::StoreAuth`, the catalog's `AuthHost`.
pub struct ClientAuth {
    gw: OnceLock<Weak<Gateway>>,
    /// The gateway's config file, as the refusal's command names it.
    config_path: String,
    seq: AtomicU64,
    pub pages: Arc<Pages>,
}

impl ClientAuth {
    pub fn new(config_path: String) -> ClientAuth {
        ClientAuth { gw: OnceLock::new(), config_path, seq: AtomicU64::new(0), pages: Arc::default() }
    }

    pub fn attach(&self, gw: &Arc<Gateway>) {
        let _ = self.gw.set(Arc::downgrade(gw));
    }

    /// The client to show the page: one whose call is in flight first, else any connected one
    /// that can; None when no client can. Waits for the first client to connect, unless a
    /// 2026-07-28 client took the page meanwhile.
    async fn client(&self, server_id: &str) -> Option<Peer<RoleServer>> {
        let start = Instant::now();
        loop {
            if self.pages.was_taken(server_id) {
                return None;
            }
            let gw = self.gw.get()?.upgrade()?;
            let calling: Vec<_> = super::lock(&gw.clients.calls).values().cloned().collect();
            let peers = gw.peers_of(server_id);
            if let Some(p) = calling.into_iter().chain(peers.iter().cloned()).find(shows_urls) {
                return Some(p);
            }
            if !peers.is_empty() || start.elapsed() > FIRST_CLIENT_WAIT {
                return None;
            }
            drop(gw);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The client declared URL elicitation and takes requests from a server (before 2026-07-28).
fn shows_urls(peer: &Peer<RoleServer>) -> bool {
    !peer.is_transport_closed()
        && !stateless(peer)
        && peer.peer_info().is_some_and(|i| i.capabilities.elicitation.as_ref().is_some_and(|e| e.url.is_some()))
}

/// What the person reads beside the page.
pub fn message(reason: &str) -> String {
    format!("{reason}. Open this page to let toolreg reach it on your behalf.")
}

/// The config file as the commands the gateway prints name it.
pub fn config_path(cfg: &super::config::GatewayConfig) -> String {
    cfg.path.as_ref().map_or_else(|| "FILE".to_owned(), |p| p.display().to_string())
}

/// What a person who cannot be asked through their client runs instead.
pub fn terminal_hint(config_path: &str, server_id: &str) -> String {
    format!("run `toolreg auth --config {config_path} {server_id}` in a terminal, then restart the MCP client")
}

/// The server whose tool `wire_name` is by its name alone (`mcp__<server id>__<tool>`): how a
/// tool is known before its server could list it.
pub fn server_by_name(catalog: &Catalog, wire_name: &str) -> Option<String> {
    let rest = wire_name.strip_prefix("mcp__")?;
    // The longest id that fits: `a__b` over `a` for `mcp__a__b__t`.
    catalog.server_ids().into_iter().filter(|id| rest.strip_prefix(id.as_str()).is_some_and(|r| r.starts_with("__"))).max_by_key(String::len)
}

/// The isError text for a call of a tool the listing does not have (yet) because its server
/// waits for authorization: a first run lists nothing of such a server. While a flow waits
/// the page went to a client that could show it, if any: the text also says what to do when
/// none could.
pub fn refusal(catalog: &Catalog, config_path: &str, wire_name: &str) -> Option<String> {
    let s = catalog.server_status(&server_by_name(catalog, wire_name)?).ok()?;
    if s.state != ServerState::NeedsAuth {
        return None;
    }
    let why = s.error.unwrap_or_else(|| format!("MCP server {} needs authorization", s.id));
    Some(if why.contains("toolreg auth") { why } else { format!("{why}; if your MCP client did not show you its page, {}", terminal_hint(config_path, &s.id)) })
}

impl Opener for ClientAuth {
    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let hint = terminal_hint(&self.config_path, server_id);
            let id = format!("toolreg-auth-{}", self.seq.fetch_add(1, Ordering::Relaxed) + 1);
            self.pages.park(server_id, Page { url: url.to_owned(), reason: reason.to_owned(), elicitation_id: id.clone() });
            let Some(peer) = self.client(server_id).await else {
                // The flow awaits its redirect: the page, parked, goes to a 2026-07-28 client
                // that calls a tool of this server; other clients are refused with `hint`.
                tracing::info!(server = %server_id, "no connected client shows authorization pages; the page waits for a 2026-07-28 client's call");
                return Ok(());
            };
            let params = json!({"mode": "url", "elicitationId": id, "url": url, "message": message(reason)});
            let request: ServerRequest =
                serde_json::from_value(json!({"method": "elicitation/create", "params": params})).map_err(|e| e.to_string())?;
            tracing::info!(server = %server_id, "asking the client to open the authorization page");
            let answer = peer.send_request(request).await.map_err(|e| format!("the client did not answer: {e}; {hint}"));
            let answer = answer.map(|a| serde_json::to_value(&a).unwrap_or(Value::Null));
            match answer.as_ref().map(|a| a["action"].as_str()) {
                Ok(Some("accept")) => Ok(()),
                other => {
                    self.pages.forget(server_id);
                    match other {
                        Err(e) => Err(e.clone()),
                        Ok(chose) => Err(format!("the user chose {}; {hint}", chose.unwrap_or("nothing"))),
                    }
                }
            }
        })
    }
}
