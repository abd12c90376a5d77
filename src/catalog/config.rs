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
    /// The MCP revision to speak with the server; see `ProtocolChoice`.
    #[serde(default, skip_serializing_if = "ProtocolChoice::is_auto")]
    pub protocol_version: ProtocolChoice,
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
        if !self.reads_hints(approval_tools, tool) {
            return self == ApprovalPolicy::Always || approval_tools.iter().any(|t| crate::invisible::names(t, tool));
        }
        // Annotations are hints: only an explicit read-only one spares a tool the question.
        ApprovalHints::from_annotations(annotations).read_only_hint != Some(true)
    }

    /// Whether `asks` for `tool` depends on its `ApprovalHints`: then the hints are part of what
    /// the user approved, and a change that would spare the tool the question holds it
    /// (`pins.rs`). `asks` reads them exactly in this case.
    pub fn reads_hints(self, approval_tools: &[String], tool: &str) -> bool {
        self == ApprovalPolicy::Destructive && !approval_tools.iter().any(|t| crate::invisible::names(t, tool))
    }
}

/// The annotations an approval decision may rest on, as a tool declares them (MCP
/// `ToolAnnotations`); a value that is not a boolean counts as absent. Absent `readOnlyHint`
/// means false and absent `destructiveHint` means true (MCP spec).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
}

impl ApprovalHints {
    pub fn from_annotations(annotations: Option<&Value>) -> Self {
        let hint = |name: &str| annotations.and_then(|a| a.get(name)).and_then(Value::as_bool);
        ApprovalHints { read_only_hint: hint("readOnlyHint"), destructive_hint: hint("destructiveHint") }
    }

    pub fn of(tool: &McpTool) -> Self {
        Self::from_annotations(tool.annotations.as_ref())
    }

    /// Whether going from `self` to `after` makes the tool look safer, and so could spare it a
    /// question: `readOnlyHint` from not-true to true, or `destructiveHint` from not-false to
    /// false. Both hints count, whatever a policy reads today: pinning more than a decision uses
    /// fails closed. The other direction only adds questions.
    pub fn relaxed_by(self, after: ApprovalHints) -> bool {
        (self.read_only_hint != Some(true) && after.read_only_hint == Some(true))
            || (self.destructive_hint != Some(false) && after.destructive_hint == Some(false))
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
        data_encoding::HEXLOWER.encode(&Sha256::digest(&bytes)[..16])
    }
    /// Every secret value toolreg knows for this server as a server may print it: env and
    /// header values (also the part after a scheme word, `Bearer xyz`: servers quote either),
    /// URL userinfo and query values, the OAuth client secret.
    pub fn secret_values(&self) -> Vec<String> {
        let mut secrets: Vec<&Secret> = match &self.transport {
            Transport::Stdio { env, .. } => env.values().collect(),
            Transport::Http { headers, .. } => headers.values().collect(),
        };
        secrets.extend(self.oauth.as_ref().and_then(|o| o.client_secret.as_ref()));
        let mut out = Vec::new();
        for secret in secrets {
            let whole = secret.expose();
            out.push(whole.to_owned());
            if let Some((_, bare)) = whole.split_once(' ') {
                out.push(bare.to_owned());
            }
        }
        if let Transport::Http { url, .. } = &self.transport {
            out.extend(url.secret_parts());
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
    /// The MCP revision of the live session (`2025-11-25`, `2026-07-28`); absent while there
    /// is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
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
    /// A different set of resources, resource templates or prompts was stored (`resources.rs`).
    #[serde(rename_all = "camelCase")]
    ExtrasChanged { server_id: String },
    /// The server sent `notifications/resources/updated` for `uri` (as the server names it).
    #[serde(rename_all = "camelCase")]
    ResourceUpdated { server_id: String, uri: String },
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
    /// How a held tool's refusal tells the person to review it, in the face's words.
    pub review: ReviewHint,
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
    /// A JSON-RPC error whose code means something to the caller (`call::KEPT_CODES`: a
    /// capability the call needs, params the server refused), kept with its code and `data` so
    /// the gateway can answer its own client with them; the sidecar's model reads the text.
    #[error("MCP error: {message} (JSON-RPC error {code})")]
    Rpc { code: i32, message: String, data: Option<Value> },
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
    /// `what` (an MCP method) got no answer within `after`.
    pub(crate) fn timed_out(what: &str, after: Duration) -> CatalogError {
        CatalogError::Timeout { what: what.into(), ms: after.as_millis() as u64 }
    }

    /// The session ended before `what` (an MCP method) was answered.
    pub(crate) fn closed(what: &str) -> CatalogError {
        CatalogError::Closed(format!("{what}: connection closed"))
    }

    /// The same error with its text passed through `ServerConfig::redact`.
    pub fn redacted(self, config: &ServerConfig) -> CatalogError {
        match self {
            CatalogError::Mcp(t) => CatalogError::Mcp(config.redact(&t)),
            CatalogError::Closed(t) => CatalogError::Closed(config.redact(&t)),
            CatalogError::NotConnected(t) => CatalogError::NotConnected(config.redact(&t)),
            CatalogError::NeedsAuth(t) => CatalogError::NeedsAuth(config.redact(&t)),
            CatalogError::Rpc { code, message, data } => {
                CatalogError::Rpc { code, message: config.redact(&message), data: data.map(|d| redact_strings(config, d)) }
            }
            other => other,
        }
    }
}

/// `value` with every string (keys kept) passed through `ServerConfig::redact`.
fn redact_strings(config: &ServerConfig, value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(config.redact(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|v| redact_strings(config, v)).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, redact_strings(config, v))).collect()),
        other => other,
    }
}

/// RFC 3339 UTC with second precision (`2026-12-01T19:12:37Z`), for `refreshedAt`.
pub(crate) fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the epoch in RFC 3339; RFC 3339 writes years 0 to 9999 only, so a second
/// outside them (a clock gone wild) reads as the epoch.
pub(crate) fn rfc3339(secs: i64) -> String {
    use time::{format_description::well_known::Rfc3339, OffsetDateTime};
    let t = OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .filter(|t| (0..=9999).contains(&t.year()))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    // Whole seconds in UTC: no fraction, `Z` for the offset. Cannot fail within those years.
    t.format(&Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value a hint can take: absent, true, false, and not a boolean.
    fn all_hints() -> Vec<Option<Value>> {
        let values = [None, Some(Value::Bool(true)), Some(Value::Bool(false)), Some(Value::from("yes"))];
        let mut out = vec![None];
        for r in &values {
            for d in &values {
                let mut a = serde_json::Map::new();
                a.extend(r.clone().map(|v| ("readOnlyHint".to_owned(), v)));
                a.extend(d.clone().map(|v| ("destructiveHint".to_owned(), v)));
                a.insert("title".into(), "T".into());
                out.push(Some(Value::Object(a)));
            }
        }
        out
    }

    #[test]
    fn hints_bear_exactly_where_asks_reads_them_and_every_spared_question_is_a_relaxation() {
        let listed = vec!["gated".to_string()];
        for policy in [ApprovalPolicy::Listed, ApprovalPolicy::Destructive, ApprovalPolicy::Always] {
            for tool in ["gated", "other"] {
                for before in all_hints() {
                    for after in all_hints() {
                        let (b, a) = (before.as_ref(), after.as_ref());
                        let (asked, asks) = (policy.asks(&listed, tool, b), policy.asks(&listed, tool, a));
                        if !policy.reads_hints(&listed, tool) {
                            assert_eq!(asked, asks, "{policy:?} {tool}: hints must not matter");
                        }
                        if asked && !asks {
                            let (hb, ha) = (ApprovalHints::from_annotations(b), ApprovalHints::from_annotations(a));
                            assert!(hb.relaxed_by(ha), "{policy:?} {tool}: {b:?} -> {a:?} spares a question");
                        }
                    }
                }
            }
        }
        assert!(ApprovalPolicy::Destructive.asks(&listed, "gated", Some(&serde_json::json!({"readOnlyHint": true}))));
        assert!(!ApprovalPolicy::Destructive.asks(&listed, "other", Some(&serde_json::json!({"readOnlyHint": true}))));
        assert!(ApprovalPolicy::Destructive.asks(&listed, "other", Some(&serde_json::json!({"readOnlyHint": "true"}))));
        let h = |r: Option<bool>, d: Option<bool>| ApprovalHints { read_only_hint: r, destructive_hint: d };
        // Relaxations: towards read-only, towards non-destructive (absent means destructive).
        assert!(h(None, None).relaxed_by(h(Some(true), None)));
        assert!(h(Some(false), None).relaxed_by(h(Some(true), None)));
        assert!(h(None, None).relaxed_by(h(None, Some(false))));
        assert!(h(None, Some(true)).relaxed_by(h(None, Some(false))));
        // Tightenings and no-ops: a hint dropped, readOnlyHint turning false, destructiveHint true.
        assert!(!h(Some(true), Some(false)).relaxed_by(h(None, None)));
        assert!(!h(Some(true), None).relaxed_by(h(Some(false), None)));
        assert!(!h(None, Some(false)).relaxed_by(h(None, Some(true))));
        assert!(!h(Some(true), Some(false)).relaxed_by(h(Some(true), Some(false))));
    }

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
        // Either side of the epoch and of a century that is not a leap year; the last second
        // RFC 3339 can write.
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(rfc3339(253_402_300_800), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(-62_167_219_200), "0000-01-01T00:00:00Z");
        assert_eq!(rfc3339(-62_167_219_201), "1970-01-01T00:00:00Z");
        let now = now_rfc3339();
        assert_eq!((now.len(), &now[4..5], &now[10..11], &now[19..]), (20, "-", "T", "Z"), "{now}");
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
