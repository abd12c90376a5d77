//! `Mcp`: invoke's `McpPort` over the `Catalog`, the one way a tool call reaches an upstream MCP
//! server. Both faces run calls through it (`server` for `registry/invoke`, `gateway` for
//! `tools/call`), so it sits beside the core and speaks neither face's protocol: a catalog error
//! becomes the readable text the model gets, a cancellation stays a cancellation. The gateway
//! adds a `Relay`: its caller is an MCP client, which gets the JSON-RPC errors it can act on
//! with their codes and, from 2026-07-28, answers the upstream's input requests itself.

use crate::catalog::{Answer, CallRequest, Catalog, CatalogError, Inputs, Retry, ServerState};
use crate::invoke::{InputAsked, McpCallError, McpPort, TaskMade};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// `None` before the sidecar's host has configured a catalog: every MCP call then fails readably.
/// The relay is the gateway's (`None` on the sidecar face).
pub struct Mcp<'a>(pub Option<&'a Catalog>, pub Option<&'a Relay>);

/// What the gateway's caller takes from an upstream server.
#[derive(Default)]
pub struct Relay {
    /// A caller that answers input requests itself (2026-07-28): `None` has the catalog ask.
    pub pass_through: Option<PassThrough>,
}

pub struct PassThrough {
    /// The caller's `clientCapabilities` (JSON): the upstream asks for no more than these.
    pub capabilities: Value,
    /// This call is a retry: the caller's `inputResponses` and the upstream's state, for the
    /// (server id, tool) that asked (`None`: the caller sent answers with no state of ours,
    /// they go to whichever tool runs).
    pub retry: Option<(Option<(String, String)>, Retry)>,
}

impl Mcp<'_> {
    fn inputs(&self, server_id: &str, tool: &str) -> Inputs {
        let Some(pass) = self.1.and_then(|r| r.pass_through.as_ref()) else { return Inputs::Fulfil };
        let retry = pass.retry.as_ref().filter(|(to, _)| to.as_ref().is_none_or(|(s, t)| s == server_id && t == tool));
        Inputs::PassThrough { capabilities: pass.capabilities.clone(), retry: retry.map(|(_, r)| r.clone()) }
    }
}

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
        let inputs = self.inputs(server_id, tool);
        let request = CallRequest { server: server_id, tool, arguments, cancel, progress: Some(progress), call_id: Some(call_id) };
        match catalog.call_tool_with(request, &inputs).await {
            Ok(Answer::Complete(v)) => Ok(v),
            Ok(Answer::InputRequired { requests, state }) => {
                Err(McpCallError::InputRequired(InputAsked { server_id: server_id.to_owned(), tool: tool.to_owned(), requests, state }))
            }
            Ok(Answer::Task(task)) => Err(McpCallError::Task(TaskMade { server_id: server_id.to_owned(), tool: tool.to_owned(), task })),
            Err(CatalogError::Cancelled) => Err(McpCallError::Cancelled),
            Err(CatalogError::Rpc { code, message, data }) if self.1.is_some() => Err(McpCallError::Rpc { code, message, data }),
            Err(e) => Err(McpCallError::Failed(e.to_string())),
        }
    }

    fn asks_approval(&self, server_id: &str, tool: &str) -> Option<bool> {
        self.0?.asks_approval(server_id, tool)
    }

    fn pin_of(&self, server_id: &str, tool: &str) -> Option<String> {
        self.0?.pin_of(server_id, tool)
    }

    fn held_refusal(&self, server_id: &str, tool: &str) -> Option<String> {
        self.0?.held_refusal(server_id, tool)
    }

    fn held_wire_refusal(&self, registry: &crate::registry::Registry, wire: &str) -> Option<String> {
        crate::sync::held_refusal(registry, self.0?, wire)
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
        let mcp = Mcp(None, None);
        let (tx, _rx) = mpsc::unbounded_channel();
        let why = failure(mcp.call_tool("s", "t", json!({}), CancellationToken::new(), tx, "c1").await);
        assert_eq!(why, "no MCP catalog");
        assert!(mcp.cold_servers().is_empty());
        assert_eq!(mcp.asks_approval("s", "t"), None);
        assert_eq!(mcp.held_refusal("s", "t"), None);
        assert_eq!(mcp.held_wire_refusal(&crate::registry::Registry::default(), "mcp__s__t"), None);
    }

    #[test]
    fn a_retry_goes_only_to_the_tool_that_asked() {
        let retry = Retry { responses: serde_json::from_value(json!({"k": {"action": "accept"}})).unwrap(), state: Some("s".into()) };
        let pass = |to: Option<(&str, &str)>| Relay {
            pass_through: Some(PassThrough { capabilities: json!({"sampling": {}}), retry: Some((to.map(|(s, t)| (s.into(), t.into())), retry.clone())) }),
        };
        let asked = pass(Some(("fx", "t")));
        let mcp = Mcp(None, Some(&asked));
        assert_eq!(mcp.inputs("fx", "t"), Inputs::PassThrough { capabilities: json!({"sampling": {}}), retry: Some(retry.clone()) });
        // Another tool (tool_invoke reaching elsewhere) starts fresh, under the same capabilities.
        assert_eq!(mcp.inputs("fx", "u"), Inputs::PassThrough { capabilities: json!({"sampling": {}}), retry: None });
        // Answers the client sent without a state of ours go to whichever tool runs.
        let any = pass(None);
        assert_eq!(Mcp(None, Some(&any)).inputs("fx", "u"), Inputs::PassThrough { capabilities: json!({"sampling": {}}), retry: Some(retry) });
        // The sidecar, and a gateway client of 2025-11-25, have the catalog ask.
        assert_eq!(Mcp(None, None).inputs("fx", "t"), Inputs::Fulfil);
        assert_eq!(Mcp(None, Some(&Relay::default())).inputs("fx", "t"), Inputs::Fulfil);
    }

    #[tokio::test]
    async fn cold_servers_are_the_enabled_ones_without_a_list() {
        let (events, _rx) = mpsc::unbounded_channel();
        let catalog = Catalog::new(CatalogOptions::default(), events);
        catalog.set_servers(vec![unstartable("on", true), unstartable("off", false)]);
        let mcp = Mcp(Some(&catalog), None);
        assert_eq!(mcp.cold_servers(), ["on"]);
        // A disabled server's call is refused with the catalog's own words.
        let (tx, _rx) = mpsc::unbounded_channel();
        let why = failure(mcp.call_tool("off", "t", json!({}), CancellationToken::new(), tx, "c1").await);
        assert!(why.contains("off"), "{why}");
        catalog.shutdown().await;
    }
}
