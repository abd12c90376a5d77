//! `CatalogError`, the one error type of the catalog's public calls, and the redaction every
//! error text passes before it leaves (`CatalogError::redacted`): a server that echoes its
//! token must not get it into a status or an answer.

use std::time::Duration;

use serde_json::Value;

use super::config::ServerConfig;

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
    /// The server did not declare the capability `method` needs (resources, prompts,
    /// completions, subscriptions).
    #[error("MCP server {server} does not offer {method}")]
    NotOffered { server: String, method: String },
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
pub(super) fn redact_strings(config: &ServerConfig, value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(config.redact(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|v| redact_strings(config, v)).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, redact_strings(config, v))).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::config::tests::http;

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
