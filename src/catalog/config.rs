//! The catalog's vocabulary: server configuration as the host sends it, tools as we cache them,
//! and the status/event types the host sees.
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
    pub trust: super::pins::Trust,
    /// Which of the server's tools ask the user before they run, besides `approvalTools`.
    #[serde(default)]
    pub approval: ApprovalPolicy,
    /// OAuth for an `http` server (MCP authorization): a pre-registered client and flow
    /// choices. Without it a server that answers 401 is still authorized, with a client this
    /// sidecar registers (client ID metadata document or dynamic registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<super::auth::OAuthConfig>,
}

/// `listed` (default): only `approvalTools` ask. `destructive`: every tool asks unless it
/// declares `readOnlyHint: true` (by the MCP spec a tool without annotations is destructive and
/// open-world). `always`: every tool asks. `approvalTools` ask under every policy.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    #[default]
    Listed,
    Destructive,
    Always,
}

impl ApprovalPolicy {
    /// Whether a call to `tool` waits for the user. `annotations`: the tool's as its server lists
    /// it now; a tool the list no longer has counts as unannotated (destructive).
    pub fn asks(self, approval_tools: &[String], tool: &str, annotations: Option<&Value>) -> bool {
        if approval_tools.iter().any(|t| crate::registry::hidden::names(t, tool)) {
            return true;
        }
        match self {
            ApprovalPolicy::Listed => false,
            ApprovalPolicy::Always => true,
            // Annotations are hints: only an explicit read-only one spares a tool the question.
            ApprovalPolicy::Destructive => annotations.and_then(|a| a.get("readOnlyHint")).and_then(Value::as_bool) != Some(true),
        }
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
}

impl ServerConfig {
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
        };
        let bytes = serde_json::to_vec(&reached).unwrap_or_default();
        hex(&Sha256::digest(&bytes)[..16])
    }
    /// `text` (an error, possibly quoting the server or its HTTP client) with URL credentials
    /// and this server's own env and header values redacted: a server that echoes the token it
    /// was given does not get it into a status or an answer.
    pub fn redact(&self, text: &str) -> String {
        let mut out = crate::secret::redact_urls_in(text).into_owned();
        let mut secrets: Vec<&Secret> = match &self.transport {
            Transport::Stdio { env, .. } => env.values().collect(),
            Transport::Http { headers, .. } => headers.values().collect(),
        };
        secrets.extend(self.oauth.as_ref().and_then(|o| o.client_secret.as_ref()));
        for secret in secrets {
            // Also the part after a scheme word (`Bearer xyz`): servers quote either.
            let whole = secret.expose();
            let bare = whole.split_once(' ').map_or(whole, |(_, rest)| rest);
            for value in [whole, bare] {
                // Too short to be a credential, and replacing it would garble the text.
                if value.len() >= 4 {
                    out = out.replace(value, crate::secret::REDACTED);
                }
            }
        }
        out
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One tool as an MCP server described it (the fields of MCP `Tool` that we keep).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    Connecting,
    Ready,
    Error,
    Disabled,
    /// Waiting for the user to authorize (OAuth), or needing it while the host cannot ask;
    /// `error` says which. Requests to the server fail at once meanwhile.
    #[serde(rename = "needsAuth")]
    NeedsAuth,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub id: String,
    pub name: String,
    pub state: ServerState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<String>,
    /// The server has a last-known-good tool list (from a refresh or from disk).
    pub cached: bool,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ListState {
    /// Never warmed and nothing on disk: distinct from a warmed server with zero tools.
    Cold,
    Ready,
    /// No list yet and the last attempt failed.
    Error,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    pub state: ListState,
    pub tools: Vec<McpTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<String>,
    /// The last refresh's failure, also when a last-known-good list is returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum CatalogEvent {
    /// A server's status, error or tool list changed (not sent for a refresh that changed nothing).
    #[serde(rename_all = "camelCase")]
    DidChange {
        server_id: String,
        status: ServerState,
        tool_count: Option<usize>,
        /// The held tools (pins), when that set differs from the last `DidChange`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        held: Option<HeldTools>,
    },
    /// LSP `$/progress` payload while warming: `value` is a WorkDoneProgress begin/report/end.
    #[serde(rename_all = "camelCase")]
    Progress { token: String, value: Value },
    /// A new, different tool list was stored: the registry should re-sync this server.
    #[serde(rename_all = "camelCase")]
    ToolsChanged { server_id: String },
}

/// The tools of a server held by its pins (names as the server calls them, sorted).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HeldTools {
    pub changed_tools: Vec<String>,
    pub new_tools: Vec<String>,
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
        }
    }
}

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum CatalogError {
    #[error("unknown MCP server: {0}")]
    UnknownServer(String),
    #[error("MCP server is disabled: {0}")]
    Disabled(String),
    #[error("tool {tool} is disabled on MCP server {server}")]
    ToolDisabled { server: String, tool: String },
    #[error("MCP server not connected: {0}")]
    NotConnected(String),
    #[error("MCP {what} timed out after {ms} ms")]
    Timeout { what: String, ms: u64 },
    #[error("cancelled")]
    Cancelled,
    #[error("MCP error: {0}")]
    Mcp(String),
    #[error("MCP connection closed: {0}")]
    Closed(String),
    /// The tool is held by its pin (changed or new since the user approved the server's tools);
    /// the message is written for the model and the user.
    #[error("{message}")]
    Held { server: String, tool: String, message: String },
    /// The server waits for the user to authorize (OAuth); nothing waits for that.
    #[error("{0}")]
    NeedsAuth(String),
    /// `catalog/approveTools` named tools the server's current list does not have.
    #[error("not in the current tool list of MCP server {server}: {}", tools.join(", "))]
    NotInList { server: String, tools: Vec<String> },
    /// `catalog/approveTools` with fingerprints that are no longer the tools' current ones.
    #[error(
        "the definition of {} on MCP server {server} changed after the user reviewed it; nothing was approved: show catalog/pins again",
        tools.join(", ")
    )]
    ChangedSinceReview { server: String, tools: Vec<String> },
}

impl CatalogError {
    /// The same error with its text passed through `ServerConfig::redact`.
    pub fn redacted(self, config: &ServerConfig) -> CatalogError {
        match self {
            CatalogError::Mcp(t) => CatalogError::Mcp(config.redact(&t)),
            CatalogError::Closed(t) => CatalogError::Closed(config.redact(&t)),
            CatalogError::NotConnected(t) => CatalogError::NotConnected(config.redact(&t)),
            CatalogError::NeedsAuth(t) => CatalogError::NeedsAuth(config.redact(&t)),
            other => other,
        }
    }
}

/// RFC 3339 UTC with second precision, without a date crate.
pub(crate) fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(secs)
}

pub(crate) fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }

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

    fn http(url: &str, auth: &str) -> ServerConfig {
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

    #[test]
    fn errors_lose_urls_credentials_and_echoed_secrets() {
        let cfg = http("https://u:pw99@h/mcp?token=tok99", "Bearer sk-99");
        let text = "401 for https://u:pw99@h/mcp?token=tok99: bad token sk-99 (was Bearer sk-99)";
        let red = cfg.redact(text);
        assert_eq!(red, "401 for https://[redacted]@h/mcp?token=[redacted]: bad token [redacted] (was [redacted])");
        let err = CatalogError::Mcp(text.into()).redacted(&cfg);
        assert!(!err.to_string().contains("99"), "{err}");
    }
}
