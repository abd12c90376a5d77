//! The registry's generic API, read-only: `GET /v0.1/servers?search=&limit=&cursor=` and
//! `GET /v0.1/servers/{name}/versions/{version|latest}` (the name and version URL-encoded),
//! each retried once under `/v0` when the registry answers 404 (a registry that has only that
//! version of the API). Every request, retry included, ends within the settings' timeout: a
//! registry that is down or slow is an error naming it, never a wait.

use std::time::Duration;

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::Value;

use super::McpRegistryError;
use crate::settings::McpRegistrySettings;

pub const DEFAULT_URL: &str = "https://registry.modelcontextprotocol.io";
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Client {
    base: String,
    timeout: Duration,
    http: reqwest::Client,
}

/// What a registry answered with a 200, or its status.
enum Got {
    Body(Value),
    Status(u16),
}

impl Client {
    pub fn new(settings: &McpRegistrySettings) -> Result<Client, McpRegistryError> {
        let base = settings.url.as_deref().unwrap_or(DEFAULT_URL).trim_end_matches('/').to_owned();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(McpRegistryError::Settings(format!("mcpRegistry.url must be an http(s) URL, not {:?}", crate::secret::SecretUrl::new(base.clone()).redacted())));
        }
        let timeout = settings.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        if timeout.is_zero() {
            return Err(McpRegistryError::Settings("mcpRegistry.timeoutMs must be above 0".into()));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().timeout(timeout).build().map_err(|e| McpRegistryError::Unreachable(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client { base, timeout, http })
    }

    /// The registry's URL as errors show it (credentials redacted).
    pub fn shown(&self) -> String {
        crate::secret::SecretUrl::new(self.base.clone()).redacted()
    }

    /// One page of a search: the raw `servers` entries and the next cursor.
    pub async fn search(&self, query: &str, limit: u32, cursor: Option<&str>) -> Result<(Vec<Value>, Option<String>), McpRegistryError> {
        let path = {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("search", query).append_pair("limit", &limit.to_string());
            if let Some(c) = cursor {
                q.append_pair("cursor", c);
            }
            format!("servers?{}", q.finish())
        };
        match self.get_versioned(&path).await? {
            Got::Body(body) => {
                let servers = body.get("servers").and_then(Value::as_array).cloned().ok_or_else(|| self.malformed("a list without `servers`"))?;
                let next = body.pointer("/metadata/nextCursor").and_then(Value::as_str).filter(|c| !c.is_empty()).map(str::to_owned);
                Ok((servers, next))
            }
            Got::Status(s) => Err(McpRegistryError::Unreachable(format!("the MCP registry at {} answered HTTP {s} to a search", self.shown()))),
        }
    }

    /// The `server.json` of `name` at `version` (`latest` when `None`).
    pub async fn server(&self, name: &str, version: Option<&str>) -> Result<Value, McpRegistryError> {
        let enc = |s: &str| utf8_percent_encode(s, NON_ALPHANUMERIC).to_string();
        let path = format!("servers/{}/versions/{}", enc(name), enc(version.unwrap_or("latest")));
        match self.get_versioned(&path).await? {
            Got::Body(body) => body.get("server").cloned().ok_or_else(|| self.malformed("a server without `server`")),
            Got::Status(404) => Err(McpRegistryError::Unknown(match version {
                Some(v) => format!("the MCP registry at {} has no server {name:?} at version {v:?}", self.shown()),
                None => format!("the MCP registry at {} has no server {name:?}", self.shown()),
            })),
            Got::Status(s) => Err(McpRegistryError::Unreachable(format!("the MCP registry at {} answered HTTP {s} for {name:?}", self.shown()))),
        }
    }

    /// Both tries within one timeout.
    async fn get_versioned(&self, path: &str) -> Result<Got, McpRegistryError> {
        let tries = async {
            match self.get(&format!("{}/v0.1/{path}", self.base)).await? {
                Got::Status(404) => self.get(&format!("{}/v0/{path}", self.base)).await,
                got => Ok(got),
            }
        };
        tokio::time::timeout(self.timeout, tries).await.map_err(|_| self.slow())?
    }

    fn slow(&self) -> McpRegistryError {
        McpRegistryError::Unreachable(format!("the MCP registry at {} did not answer within {} ms (mcpRegistry.timeoutMs)", self.shown(), self.timeout.as_millis()))
    }

    async fn get(&self, url: &str) -> Result<Got, McpRegistryError> {
        let down = |e: reqwest::Error| {
            if e.is_timeout() {
                return self.slow();
            }
            let why = std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
            McpRegistryError::Unreachable(format!("the MCP registry at {} cannot be reached: {}", self.shown(), crate::secret::redact_urls_in(&why)))
        };
        let response = self.http.get(url).header("accept", "application/json").send().await.map_err(down)?;
        let status = response.status().as_u16();
        if status != 200 {
            return Ok(Got::Status(status));
        }
        let bytes = response.bytes().await.map_err(down)?;
        serde_json::from_slice(&bytes).map(Got::Body).map_err(|e| self.malformed(&format!("not JSON ({e})")))
    }

    fn malformed(&self, what: &str) -> McpRegistryError {
        McpRegistryError::Unreachable(format!("the MCP registry at {} answered {what}", self.shown()))
    }
}
