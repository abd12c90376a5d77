//! What the host sees of a server: its state and status, and the events the catalog sends
//! when they change. Wire types (camelCase) the protocol layer embeds as is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// How the live session is reached: `stdio`, `http` (Streamable HTTP) or `sse` (legacy
    /// HTTP+SSE, by `type: "sse"` or the fallback of an `http` server); absent while there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// A stdio server's confinement: enforced (and how), off (and why), or refused (the
    /// configuration asks for what the kernel cannot give; the server is not started).
    /// Absent for HTTP and disabled servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::confine::SandboxReport>,
    /// Why the server does not start, for a person to act on (`kind`, the facts, `message`);
    /// present after a failed start or an early death, until a connect succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<super::diagnosis::Diagnosis>,
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
    ExtrasChanged {
        server_id: String,
        /// The resources or resource templates differ.
        resources: bool,
        /// The prompts differ.
        prompts: bool,
    },
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
}
