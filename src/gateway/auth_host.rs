//! The catalog's `AuthHost` for `toolreg mcp`: how an upstream server's OAuth flow reaches the
//! person, and where its tokens live.
//!
//! - The authorization page goes to a connected client as a URL-mode elicitation (MCP
//!   2025-11-25 `elicitation/create`, `mode: "url"`): to the client of a call in flight when one
//!   can show it, else to any connected client that declared `elicitation.url`. A flow that
//!   starts before any client connected (the usual case: the catalog connects at start) waits
//!   for the first one, at most `FIRST_CLIENT_WAIT`.
//! - A 2026-07-28 client takes no request from a server, and the flow starts on a connection,
//!   not inside its `tools/call`, so there is no call to end with an input-required URL request:
//!   such clients, and clients without URL elicitation, are not asked. The server then waits in
//!   `needsAuth`, and its calls are refused with the command that authorizes it from a terminal
//!   (`toolreg auth`, `terminal_auth.rs`).
//! - Tokens persist in owner-only files under the gateway's state directory (`token_file.rs`),
//!   which `toolreg auth` writes too. The catalog's `TokenStore` registers them with the
//!   redactor, as it does for the sidecar; nothing here logs a URL, a key's value or a token.

use super::client_host::stateless;
use super::token_file::Opener;
use super::Gateway;
use crate::catalog::{Catalog, ServerState};
use futures::future::BoxFuture;
use rmcp::model::ServerRequest;
use rmcp::service::{Peer, RoleServer};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long a flow started before any client connected waits for one.
const FIRST_CLIENT_WAIT: Duration = Duration::from_secs(60);

/// The gateway's `Opener`; with `token_file::FileAuth`, the catalog's `AuthHost`.
pub struct ClientAuth {
    gw: OnceLock<Weak<Gateway>>,
    /// The gateway's config file, as the refusal's command names it.
    config_path: String,
    seq: AtomicU64,
}

impl ClientAuth {
    pub fn new(config_path: String) -> ClientAuth {
        ClientAuth { gw: OnceLock::new(), config_path, seq: AtomicU64::new(0) }
    }

    pub fn attach(&self, gw: &Arc<Gateway>) {
        let _ = self.gw.set(Arc::downgrade(gw));
    }

    /// The client to show the page: one whose call is in flight first, else any connected one
    /// that can; None when no client can. Waits for the first client to connect.
    async fn client(&self) -> Option<Peer<RoleServer>> {
        let start = Instant::now();
        loop {
            let gw = self.gw.get()?.upgrade()?;
            let calling: Vec<_> = super::lock(&gw.calls).values().cloned().collect();
            let peers = gw.peers();
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

/// What a person who cannot be asked through their client runs instead.
pub fn terminal_hint(config_path: &str, server_id: &str) -> String {
    format!("run `toolreg auth --config {config_path} {server_id}` in a terminal, then restart the MCP client")
}

/// The isError text for a call of a tool the listing does not have (yet) because its server
/// waits for authorization: a first run lists nothing of such a server.
pub fn refusal(catalog: &Catalog, wire_name: &str) -> Option<String> {
    catalog.status().into_iter().find_map(|s| {
        let ours = wire_name.strip_prefix("mcp__")?.strip_prefix(s.id.as_str())?.starts_with("__");
        (ours && s.state == ServerState::NeedsAuth).then(|| s.error.unwrap_or_else(|| format!("MCP server {} needs authorization", s.id)))
    })
}

impl Opener for ClientAuth {
    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let hint = terminal_hint(&self.config_path, server_id);
            let Some(peer) = self.client().await else {
                return Err(format!("no connected MCP client can show it (none declared URL elicitation); {hint}"));
            };
            let id = format!("toolreg-auth-{}", self.seq.fetch_add(1, Ordering::Relaxed) + 1);
            let params = json!({"mode": "url", "elicitationId": id, "url": url,
                "message": format!("{reason}. Open this page to let toolreg reach it on your behalf.")});
            let request: ServerRequest =
                serde_json::from_value(json!({"method": "elicitation/create", "params": params})).map_err(|e| e.to_string())?;
            tracing::info!(server = %server_id, "asking the client to open the authorization page");
            let answer = peer.send_request(request).await.map_err(|e| format!("the client did not answer: {e}; {hint}"))?;
            let answer = serde_json::to_value(&answer).unwrap_or(Value::Null);
            match answer["action"].as_str() {
                Some("accept") => Ok(()),
                other => Err(format!("the user chose {}; {hint}", other.unwrap_or("nothing"))),
            }
        })
    }
}
