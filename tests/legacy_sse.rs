//! Legacy HTTP+SSE servers (MCP 2024-11-05 transport, issue 53), through the sidecar: one
//! configured as `type: "sse"`, and one as `type: "http"` whose `initialize` POST the server
//! refuses (405), tried again as legacy SSE at the same URL; both list and call their tools and
//! `catalog/status` says `transport: "sse"`. The server is the official Python SDK's SSE server
//! (tests/sse/legacy_server.py).
mod support;
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use support::*;

struct Legacy {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Legacy {
    fn start() -> Legacy {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("url");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sse/legacy_server.py");
        let child = Command::new("python3").arg(script).arg(&port_file).stdout(Stdio::null()).spawn().expect("python3 runs");
        let url = wait_for_file(&port_file);
        Legacy { child, url, _dir: dir }
    }
}

impl Drop for Legacy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn settled(s: &mut Sidecar, id: &str) -> Value {
    s.server_in(id, &["ready", "error"])
}

#[test]
fn a_legacy_sse_server_by_type_and_by_fallback_lists_and_calls_its_tools() {
    let legacy = Legacy::start();
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [
        {"id": "old", "name": "old", "transport": {"type": "sse", "url": legacy.url}},
        {"id": "guess", "name": "guess", "transport": {"type": "http", "url": legacy.url}}
    ]}));
    for id in ["old", "guess"] {
        let me = settled(&mut s, id);
        assert_eq!(me["state"], "ready", "{me}");
        assert_eq!(me["transport"], "sse", "{me}");
        let list = s.ok_past_notes("catalog/listTools", json!({"serverId": id}));
        assert!(list["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"), "{list}");
        s.ok_past_notes("registry/syncMcp", json!({}));
        let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{id}__echo"), "arguments": {"text": id}}));
        assert!(r["isError"] != true && r["output"]["value"].to_string().contains(&format!("legacy echo: {id}")), "{r}");
    }
    s.shutdown();
}
