//! `catalog/searchRegistry` and `catalog/resolveRegistryServer` (issue 56): a server from an
//! MCP registry, found and resolved to a quarantined `ServerConfig` the host stores and sends
//! with `catalog/setServers` once its inputs are filled. The results travel as the domain has
//! them (`mcp_registry`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::mcp_registry::{InputPlace, RegistryInput, RegistryListing, RegistryPage, Resolved as ResolvedServer};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchRegistryParams {
    /// Words of the server's name (the registry's `search`).
    pub query: String,
    /// At most this many servers (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveRegistryServerParams {
    /// The server's registry name, e.g. `io.github.owner/server`.
    pub name: String,
    /// One exact version (default: the registry's latest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Which of the document's packages then remotes, by index (default: the first stdio
    /// package this machine can run, else the first remote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<usize>,
}
