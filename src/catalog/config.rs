//! How the host configures the catalog: one `ServerConfig` per MCP server as the host sends it,
//! and the catalog's own knobs (`CatalogOptions`).
//!
//! These are wire types (serde + schemars, camelCase) so the protocol layer can embed them as is.
//! Invariants: env values, header values and URL credentials are `Secret`/`SecretUrl`, so no
//! `Debug` or `Display` of a config prints them; the cache identity of a server depends only on
//! how we reach it (command, args, cwd, URL without credentials), never on its display name,
//! tool filters or credentials, so renaming a server or rotating its token keeps its cache warm.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::policy::{ApprovalPolicy, Trust};
use crate::secret::{Secret, SecretUrl};

fn default_true() -> bool {
    true
}

// `Debug` is derived: the secret-bearing fields are `Secret`/`SecretUrl`, which print redacted.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    pub id: String,
    pub name: String,
    #[serde(default = "default_true")]
    pub enabled: bool,
    pub transport: Transport,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    #[serde(default)]
    pub approval_tools: Vec<String>,
    /// `pinned` (default): a tool whose definition changed, or that appeared after the first
    /// list, is held until the host approves it (`catalog/approveTools`). `auto`: accept changes.
    #[serde(default)]
    pub trust: Trust,
    /// Hold the first tool list and every tool added later until the user approves them
    /// (`catalog/approveTools`, `toolreg pins`), whatever `trust` says: what a server added
    /// from a registry (`catalog/resolveRegistryServer`, `toolreg add`) starts with.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quarantine: bool,
    /// Which of the server's tools ask the user before they run, besides `approvalTools`.
    #[serde(default)]
    pub approval: ApprovalPolicy,
    /// OAuth for an `http` server (MCP authorization): a pre-registered client and flow
    /// choices. Without it a server that answers 401 is still authorized, with a client this
    /// sidecar registers (client ID metadata document or dynamic registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<super::auth::OAuthConfig>,
    /// The MCP revision to speak with the server; see `ProtocolChoice`.
    #[serde(default, skip_serializing_if = "ProtocolChoice::is_auto")]
    pub protocol_version: ProtocolChoice,
    /// A stdio server's confinement (Linux: Landlock, namespaces, limits): `true` the default
    /// profile, `false` none, or a policy widening or narrowing it. Absent: the default profile
    /// where the kernel can give it, else none; `catalog/status` says which (`sandbox`).
    /// Ignored for `http` servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::confine::Sandbox>,
    /// Labels for the gateway's profiles (`gateway.profiles`' tag expressions); the sidecar
    /// keeps them and does nothing with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// This server's own bounds, over the global ones (`initialize.timeouts`): a slow
    /// research tool its long `callMs`, a quick lookup a short one.
    #[serde(default, skip_serializing_if = "ServerTimeouts::is_empty")]
    pub timeouts: ServerTimeouts,
    /// An `http` server's own proxy (`http://user:pass@host:port`, `socks5://...`) over the
    /// environment's `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY`; its credentials are secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<SecretUrl>,
}

/// The bounds on an MCP server's work, in milliseconds: every server's in
/// `initialize.timeouts` (which carries these fields), one server's in its own `timeouts`, each
/// field there absent keeping the global value.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ServerTimeouts {
    /// Spawning or connecting to an MCP server, including its handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<u64>,
    /// One whole `tools/list` of an MCP server, all pages (and its resource and prompt lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_ms: Option<u64>,
    /// One tool call (and a resource read, a prompt get, a completion); the global value
    /// bounds a host tool's call too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_ms: Option<u64>,
}

impl ServerTimeouts {
    fn is_empty(&self) -> bool {
        *self == ServerTimeouts::default()
    }

    fn pick(own: Option<u64>, global: Duration) -> Duration {
        // A year, as `initialize.timeouts` is clamped: no `Instant` overflow.
        own.map(|ms| Duration::from_millis(ms.min(365 * 24 * 3600 * 1000))).unwrap_or(global)
    }

    pub fn connect(&self, global: Duration) -> Duration {
        Self::pick(self.connect_ms, global)
    }

    pub fn list(&self, global: Duration) -> Duration {
        Self::pick(self.list_ms, global)
    }

    pub fn call(&self, global: Duration) -> Duration {
        Self::pick(self.call_ms, global)
    }
}

/// `auto` (default): ask the server (`server/discover`) and speak 2026-07-28 if it can, else
/// fall back to the `initialize` handshake of 2025-11-25; a 2025-11-25 verdict is kept while
/// the sidecar runs, so reconnects do not ask again. `2025-11-25`: only `initialize` (for a
/// server that never answers an unknown request: `auto` waits 10 s for it at each start).
/// `2026-07-28`: only `server/discover`; a server without it fails to connect.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProtocolChoice {
    #[default]
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl ProtocolChoice {
    fn is_auto(&self) -> bool {
        *self == ProtocolChoice::Auto
    }
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, Secret>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    Http {
        url: SecretUrl,
        #[serde(default)]
        headers: BTreeMap<String, Secret>,
    },
    /// The legacy HTTP+SSE transport (MCP 2024-11-05): `GET url` for the event stream, messages
    /// POSTed where its `endpoint` event says. Headers, secrets and `proxy` as for `http`.
    Sse {
        url: SecretUrl,
        #[serde(default)]
        headers: BTreeMap<String, Secret>,
    },
}

impl ServerConfig {
    /// How a stdio server is started, as the sandbox's profile needs it; `None` for HTTP.
    pub(crate) fn launch(&self) -> Option<crate::confine::Launch<'_>> {
        let Transport::Stdio { command, args, env, cwd } = &self.transport else { return None };
        let env = env.iter().map(|(k, v)| (k.as_str(), v.expose())).collect();
        Some(crate::confine::Launch { command, args, env, cwd: cwd.as_deref() })
    }

    /// Whether a call to `tool` waits for the user under this configuration.
    pub fn asks_approval(&self, tool: &str, annotations: Option<&Value>) -> bool {
        self.approval.asks(&self.approval_tools, tool, annotations)
    }

    /// Hex digest of how the server is reached: command, args and cwd, or the URL without its
    /// credentials (userinfo and query values). Never env or header values: a rotated token
    /// keeps the cache warm, and no digest of a credential reaches the disk. The cache on disk
    /// is only trusted for the same identity.
    pub fn identity_hash(&self) -> String {
        let reached = match &self.transport {
            Transport::Stdio { command, args, cwd, .. } => {
                serde_json::json!({"type": "stdio", "command": command, "args": args, "cwd": cwd})
            }
            Transport::Http { url, .. } => serde_json::json!({"type": "http", "url": url.redacted()}),
            Transport::Sse { url, .. } => serde_json::json!({"type": "sse", "url": url.redacted()}),
        };
        let bytes = serde_json::to_vec(&reached).unwrap_or_default();
        data_encoding::HEXLOWER.encode(&Sha256::digest(&bytes)[..16])
    }
    /// Every secret value toolreg knows for this server as a server may print it: env and
    /// header values (also the part after a scheme word, `Bearer xyz`: servers quote either),
    /// URL userinfo and query values, the OAuth client secret.
    pub fn secret_values(&self) -> Vec<String> {
        let mut secrets: Vec<&Secret> = match &self.transport {
            Transport::Stdio { env, .. } => env.values().collect(),
            Transport::Http { headers, .. } | Transport::Sse { headers, .. } => headers.values().collect(),
        };
        secrets.extend(self.oauth.as_ref().and_then(|o| o.client_secret.as_ref()));
        secrets.extend(self.oauth.iter().flat_map(|o| o.grant_secrets()));
        let mut out = Vec::new();
        for secret in secrets {
            let whole = secret.expose();
            out.push(whole.to_owned());
            if let Some((_, bare)) = whole.split_once(' ') {
                out.push(bare.to_owned());
            }
        }
        if let Transport::Http { url, .. } | Transport::Sse { url, .. } = &self.transport {
            out.extend(url.secret_parts());
        }
        if let Some(proxy) = &self.proxy {
            out.extend(proxy.secret_parts());
        }
        out
    }

    /// `text` (an error, possibly quoting the server or its HTTP client) with URL credentials
    /// and this server's own secret values redacted: a server that echoes the token it was
    /// given does not get it into a status or an answer. Values of 4 bytes and more: this text
    /// is the server's own (the log, shared by all, redacts from 8: `secret::redactor`).
    pub fn redact(&self, text: &str) -> String {
        let out = crate::secret::redact_urls_in(text);
        let values = self.secret_values().into_iter().filter(|v| v.len() >= 4).collect();
        let out = crate::secret::redactor::scrub(&out, values);
        // And every live secret the log knows (this server's current OAuth tokens among them).
        crate::secret::redactor::logged(&out).into_owned()
    }
}

/// Knobs of the catalog. Every MCP interaction is bounded by one of the timeouts.
#[derive(Clone, Debug)]
pub struct CatalogOptions {
    pub cache_dir: Option<PathBuf>,
    /// Spawn/connect plus the MCP `initialize` handshake.
    pub connect_timeout: Duration,
    /// One whole `tools/list`, all pages together.
    pub list_timeout: Duration,
    pub call_timeout: Duration,
    /// Automatic refreshes running at once; explicit refreshes do not wait for a slot.
    pub max_concurrent_warm: usize,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// Grace between SIGTERM and SIGKILL when stopping a child.
    pub stop_grace: Duration,
    /// The largest single message read from a stdio server; a response over it fails its
    /// request at once with an error naming the limit (`stdio.rs`).
    pub max_message_bytes: usize,
    /// The largest tool result handed on; larger ones are cut with a note (`result_cap.rs`).
    pub max_result_bytes: usize,
    /// Which of the servers' questions the host answers (`elicit.rs`), and how long one waits.
    pub host_asks: super::elicit::HostAsks,
    pub elicitation_timeout: Duration,
    /// How a held tool's refusal tells the person to review it, in the face's words.
    pub review: ReviewHint,
    /// Where stdio servers' commands are looked for (`launch`).
    pub spawn: super::launch::SpawnSettings,
}

/// The sentence ending a held tool's refusal, given its server and tool: what to do to review
/// it where the caller is (the sidecar's host shows `catalog/pins`; `toolreg mcp` names the
/// `toolreg pins` command), so a refusal reached from a script reads as a direct call's.
#[derive(Clone)]
pub struct ReviewHint(pub std::sync::Arc<dyn Fn(&str, &str) -> String + Send + Sync>);

impl Default for ReviewHint {
    fn default() -> Self {
        ReviewHint(std::sync::Arc::new(|_, _| "The host must review it (catalog/pins) before it can run.".to_owned()))
    }
}

impl std::fmt::Debug for ReviewHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReviewHint")
    }
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            cache_dir: None,
            connect_timeout: Duration::from_secs(30),
            list_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(300),
            max_concurrent_warm: 4,
            backoff_base: Duration::from_secs(2),
            backoff_max: Duration::from_secs(300),
            stop_grace: Duration::from_millis(500),
            max_message_bytes: super::stdio::DEFAULT_MAX_MESSAGE_BYTES,
            max_result_bytes: super::result_cap::DEFAULT_MAX_RESULT_BYTES,
            host_asks: super::elicit::HostAsks::default(),
            elicitation_timeout: Duration::from_secs(300),
            review: ReviewHint::default(),
            spawn: super::launch::SpawnSettings::default(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn config_wire_shape_and_secret_free_debug() {
        let json = serde_json::json!({"id": "a", "name": "A",
            "transport": {"type": "stdio", "command": "x", "env": {"TOKEN": "s3cret"}}});
        let cfg: ServerConfig = serde_json::from_value(json.clone()).unwrap();
        assert!(cfg.enabled);
        assert!(!format!("{cfg:?}").contains("s3cret"));
        assert!(format!("{cfg:?}").contains("TOKEN"));
        // The wire form is unchanged: the host gets back exactly what it sent.
        assert_eq!(serde_json::to_value(&cfg).unwrap()["transport"]["env"], json["transport"]["env"]);
        let http: Transport = serde_json::from_value(serde_json::json!(
            {"type": "http", "url": "http://u:pw@x/m?key=k3y", "headers": {"Authorization": "Bearer s3cret"}}))
        .unwrap();
        let debug = format!("{http:?}");
        assert!(!debug.contains("s3cret") && !debug.contains("k3y") && !debug.contains("pw"), "{debug}");
    }

    pub(in crate::catalog) fn http(url: &str, auth: &str) -> ServerConfig {
        serde_json::from_value(serde_json::json!({"id": "w", "name": "W",
            "transport": {"type": "http", "url": url, "headers": {"Authorization": auth}}}))
        .unwrap()
    }

    #[test]
    fn identity_is_how_the_server_is_reached_never_its_credentials() {
        let a = http("https://u:one@h/mcp?token=one", "Bearer one");
        let b = http("https://u:two@h/mcp?token=two", "Bearer two");
        assert_eq!(a.identity_hash(), b.identity_hash());
        assert_ne!(a.identity_hash(), http("https://h/other?token=one", "Bearer one").identity_hash());
        let stdio = |env: &str, args: &[&str]| -> ServerConfig {
            serde_json::from_value(serde_json::json!({"id": "s", "name": "S",
                "transport": {"type": "stdio", "command": "srv", "args": args, "env": {"KEY": env}}}))
            .unwrap()
        };
        assert_eq!(stdio("one", &[]).identity_hash(), stdio("two", &[]).identity_hash());
        assert_ne!(stdio("one", &[]).identity_hash(), stdio("one", &["--x"]).identity_hash());
    }
}
