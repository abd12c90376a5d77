//! Adding a server from an MCP registry (issue 56), as both faces do it: a search, and a
//! document resolved to a quarantined, pinned `ServerConfig` with its inputs. The sidecar
//! answers `catalog/searchRegistry` and `catalog/resolveRegistryServer` with these; the
//! gateway's `toolreg add` resolves, fills and writes the entry. Nothing here waits on a plan
//! or a call, and every registry request is bounded by `mcpRegistry.timeoutMs`.

use super::Service;
use crate::mcp_registry::{self, Entry, McpRegistryError, RegistryPage, Resolved};
use std::collections::BTreeMap;
use std::path::PathBuf;
use crate::settings::McpRegistrySettings;

impl Service {
    /// A page of the registry's servers matching `query`.
    pub async fn search_registry(&self, source: &McpRegistrySettings, query: &str, limit: Option<u32>, cursor: Option<&str>) -> Result<RegistryPage, McpRegistryError> {
        mcp_registry::search(source, query, limit, cursor).await
    }

    /// `name` (at `version`, else the latest) resolved with its `package`-th package or remote
    /// (else the first stdio package whose runtime is on this machine's `PATH`, else the first
    /// remote), its id unique among `taken`.
    pub async fn resolve_registry_server(&self, source: &McpRegistrySettings, name: &str, version: Option<&str>, package: Option<usize>, taken: &[String]) -> Result<Resolved, McpRegistryError> {
        mcp_registry::resolve(source, name, version, package, taken, &crate::catalog::on_path).await
    }

    /// `resolved` as a config file's entry: inputs filled from `values` (else their defaults),
    /// secrets kept out as references (`keep` stores a given one, owner-only, and says where).
    pub fn registry_entry(&self, resolved: &Resolved, values: &BTreeMap<String, String>, keep: &mut dyn FnMut(&str, &str) -> Result<PathBuf, String>) -> Result<Entry, String> {
        mcp_registry::entry::entry(resolved, values, keep)
    }
}
