//! The fixture MCP catalogs (`../shared/fixtures/mcp-catalogs`: 97 servers, 2,422 tools) as a
//! sync registers them; for the tests and the benches (`benches/*.rs` include this file by path).
#![allow(dead_code)]

use serde_json::{json, Value};
use toolreg::registry::{mcp, ToolEntry};

/// Every tool of every fixture catalog, catalog files in name order: (server, tool definition).
pub fn catalog_tools() -> Vec<(String, Value)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/mcp-catalogs");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut tools = Vec::new();
    for f in files {
        let cat: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let server = cat["server"].as_str().unwrap().to_string();
        for t in cat["tools"].as_array().unwrap() {
            tools.push((server.clone(), t.clone()));
        }
    }
    tools
}

/// The registry entry a sync makes of catalog tool `t` of `server` (server id and name alike),
/// under the wire name `wire`.
pub fn mcp_entry(server: &str, t: &Value, wire: String) -> ToolEntry {
    let empty = json!({});
    mcp::entry(
        &mcp::McpTool {
            server_id: server,
            server_name: server,
            tool_name: t["name"].as_str().unwrap(),
            title: None,
            description: t["description"].as_str().unwrap_or(""),
            input_schema: t.get("inputSchema").unwrap_or(&empty),
            output_schema: None,
            annotations: None,
            approval: false,
            ui: None,
        },
        wire,
    )
}
