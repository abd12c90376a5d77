//! `Mcp`: invoke's `McpPort` over the `Catalog`, the one way a tool call reaches an upstream MCP
//! server. Both faces run calls through it (`server` for `registry/invoke`, `gateway` for
//! `tools/call`), so it sits beside the core and speaks neither face's protocol: a catalog error
//! becomes the readable text the model gets, a cancellation stays a cancellation.

use crate::catalog::{Catalog, CatalogError, ServerState};
use crate::invoke::{McpCallError, McpPort};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// `None` before the sidecar's host has configured a catalog: every MCP call then fails readably.
pub struct Mcp<'a>(pub Option<&'a Catalog>);

impl McpPort for Mcp<'_> {
    async fn call_tool(
        &self,
        server_id: &str,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Value>,
        call_id: &str,
    ) -> Result<Value, McpCallError> {
        let Some(catalog) = self.0 else { return Err(McpCallError::Failed("no MCP catalog".into())) };
        match catalog.call_tool(server_id, tool, arguments, cancel, Some(progress), Some(call_id)).await {
            Ok(v) => Ok(v),
            Err(CatalogError::Cancelled) => Err(McpCallError::Cancelled),
            Err(e) => Err(McpCallError::Failed(e.to_string())),
        }
    }

    fn asks_approval(&self, server_id: &str, tool: &str) -> Option<bool> {
        self.0?.asks_approval(server_id, tool)
    }

    fn held_refusal(&self, server_id: &str, tool: &str) -> Option<String> {
        self.0?.held_refusal(server_id, tool)
    }

    /// A disabled server is not waited for: it will never have a list.
    fn cold_servers(&self) -> Vec<String> {
        let Some(catalog) = self.0 else { return Vec::new() };
        catalog
            .status()
            .into_iter()
            .filter(|s| !s.cached && s.state != ServerState::Disabled)
            .map(|s| s.id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CatalogOptions, ServerConfig};
    use serde_json::json;

    /// A server that never starts: it stays without a list.
    fn unstartable(id: &str, enabled: bool) -> ServerConfig {
        serde_json::from_value(json!({"id": id, "name": id, "enabled": enabled,
            "transport": {"type": "stdio", "command": "/nonexistent/toolreg-test-server"}}))
        .unwrap()
    }

    fn failure(r: Result<Value, McpCallError>) -> String {
        match r {
            Err(McpCallError::Failed(why)) => why,
            other => panic!("want a failure, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn without_a_catalog_every_call_fails_readably_and_nothing_is_cold() {
        let mcp = Mcp(None);
        let (tx, _rx) = mpsc::unbounded_channel();
        let why = failure(mcp.call_tool("s", "t", json!({}), CancellationToken::new(), tx, "c1").await);
        assert_eq!(why, "no MCP catalog");
        assert!(mcp.cold_servers().is_empty());
        assert_eq!(mcp.asks_approval("s", "t"), None);
        assert_eq!(mcp.held_refusal("s", "t"), None);
    }

    #[tokio::test]
    async fn cold_servers_are_the_enabled_ones_without_a_list() {
        let (events, _rx) = mpsc::unbounded_channel();
        let catalog = Catalog::new(CatalogOptions::default(), events);
        catalog.set_servers(vec![unstartable("on", true), unstartable("off", false)]);
        let mcp = Mcp(Some(&catalog));
        assert_eq!(mcp.cold_servers(), ["on"]);
        // A disabled server's call is refused with the catalog's own words.
        let (tx, _rx) = mpsc::unbounded_channel();
        let why = failure(mcp.call_tool("off", "t", json!({}), CancellationToken::new(), tx, "c1").await);
        assert!(why.contains("off"), "{why}");
        catalog.shutdown().await;
    }
}
