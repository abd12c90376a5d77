//! Servers from an MCP registry (the official MCP Registry or a company's own on its generic
//! API), knowing no JSON-RPC: `client.rs` reads the registry (bounded by `mcpRegistry.timeoutMs`),
//! `document.rs` checks a `server.json` against the official schema and reads it, `resolve.rs`
//! turns it into a quarantined, pinned `ServerConfig` and the inputs the user fills, `entry.rs`
//! into a config file's entry with its secrets kept out as references. Nothing
//! here starts a server or blocks a plan or a call: the faces ask for it, and the host (or
//! `toolreg add`) stores what comes back.

pub mod client;
pub mod document;
pub mod entry;
pub mod resolve;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use entry::{Entry, KeptSecret};
pub use resolve::{fill, InputPlace, RegistryInput, Resolved};

use crate::settings::McpRegistrySettings;

/// A search returns this many servers unless asked for another number, and at most `MAX_LIMIT`.
pub const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;

#[derive(Debug, thiserror::Error)]
pub enum McpRegistryError {
    /// `mcpRegistry` itself is wrong.
    #[error("{0}")]
    Settings(String),
    /// Down, slow, or answering something that is not the registry API.
    #[error("{0}")]
    Unreachable(String),
    /// No such server (or version): the message names it.
    #[error("{0}")]
    Unknown(String),
    /// The document breaks the official schema, or cannot be installed as it is (an unpinned
    /// version, a kind toolreg does not run): the message says why.
    #[error("{0}")]
    Refused(String),
}

/// One server of a search.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RegistryListing {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb` (its packages' registry types), `remote`.
    pub kinds: Vec<String>,
}

/// A page of a search, and the cursor of the next one.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RegistryPage {
    pub servers: Vec<RegistryListing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The registry's servers matching `query`, one entry per name (its latest version when the
/// registry says which is); entries that are not `server.json` documents are skipped.
pub async fn search(settings: &McpRegistrySettings, query: &str, limit: Option<u32>, cursor: Option<&str>) -> Result<RegistryPage, McpRegistryError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let (entries, next_cursor) = client::Client::new(settings)?.search(query, limit, cursor).await?;
    let mut servers: Vec<(RegistryListing, bool)> = Vec::new();
    for entry in entries {
        let latest = entry.pointer("/_meta/io.modelcontextprotocol.registry~1official/isLatest").and_then(Value::as_bool).unwrap_or(false);
        let Some(doc) = entry.get("server").and_then(|s| serde_json::from_value::<document::ServerDoc>(s.clone()).ok()) else { continue };
        let listing = RegistryListing { kinds: doc.kinds(), name: doc.name, title: doc.title, description: doc.description, version: doc.version };
        match servers.iter_mut().find(|(l, _)| l.name == listing.name) {
            Some(seen) if latest && !seen.1 => *seen = (listing, latest),
            Some(_) => {}
            None => servers.push((listing, latest)),
        }
    }
    Ok(RegistryPage { servers: servers.into_iter().map(|(l, _)| l).collect(), next_cursor })
}

/// `name` at `version` (latest when `None`) from the registry, checked against the official
/// schema and resolved with its `package`-th package or remote (`resolve::resolve`).
pub async fn resolve(settings: &McpRegistrySettings, name: &str, version: Option<&str>, package: Option<usize>, taken: &[String], runnable: &(dyn Fn(&str) -> bool + Sync)) -> Result<Resolved, McpRegistryError> {
    if name.trim().is_empty() {
        return Err(McpRegistryError::Unknown("name a server of the registry (e.g. io.github.owner/server)".into()));
    }
    let doc = client::Client::new(settings)?.server(name, version).await?;
    let doc = document::read(&doc).map_err(|e| McpRegistryError::Refused(format!("the registry's server.json of {name:?} breaks the official schema: {e}")))?;
    resolve::resolve(&doc, package, taken, runnable).map_err(McpRegistryError::Refused)
}
