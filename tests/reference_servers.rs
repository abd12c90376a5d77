//! The official MCP reference servers (npm: server-everything, server-memory; PyPI:
//! mcp-server-time), installed by `.ci/run` from the registries, driven through the real binary:
//! warm-up, sync, and real tool calls over stdio and Streamable HTTP, and the MCP revision each
//! is spoken to on.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

use support::reference_server as node_server;

fn ok(s: &mut Sidecar, method: &str, params: Value) -> Value {
    let id = s.next_id();
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let m = s.recv();
        if m.get("id") == Some(&json!(id)) {
            return m.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {m}"));
        }
    }
}

fn wait_ready(s: &mut Sidecar, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let st = ok(s, "catalog/status", json!({}));
        let me = st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).unwrap().clone();
        if me["state"] == "ready" {
            return me;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{id} not ready: {me}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn text(r: &Value) -> String {
    assert_eq!(r["isError"], false, "{r}");
    r["output"]["value"].as_str().map(str::to_string).unwrap_or_else(|| r["output"]["value"].to_string())
}

#[test]
fn everything_memory_and_time_over_stdio() {
    let mem_dir = tempfile::tempdir().unwrap();
    let mem_file = mem_dir.path().join("memory.jsonl");
    let mut s = Sidecar::spawn();
    ok(&mut s, "initialize", json!({"timeouts": {"connectMs": 30000, "listMs": 30000}}));
    ok(&mut s, "catalog/setServers", json!({"servers": [
        {"id": "everything", "name": "Everything", "enabled": true, "transport": {"type": "stdio", "command": "node", "args": [node_server("server-everything"), "stdio"]}},
        {"id": "memory", "name": "Memory", "enabled": true, "transport": {"type": "stdio", "command": "node", "args": [node_server("server-memory")], "env": {"MEMORY_FILE_PATH": mem_file.to_str().unwrap()}}},
        {"id": "time", "name": "Time", "enabled": true, "transport": {"type": "stdio", "command": "python3", "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}
    ]}));
    let everything = wait_ready(&mut s, "everything");
    assert!(everything["toolCount"].as_u64().unwrap() >= 10);
    let memory = wait_ready(&mut s, "memory");
    assert_eq!(memory["toolCount"], 9);
    let time = wait_ready(&mut s, "time");
    assert_eq!(time["toolCount"], 2);
    // The TS SDK 1.x servers answer `server/discover` with -32601: `initialize` after it. The
    // Python SDK 2.x one speaks 2026-07-28, so its calls carry `_meta` (or it refuses them).
    assert_eq!(everything["protocolVersion"], "2025-11-25", "{everything}");
    assert_eq!(memory["protocolVersion"], "2025-11-25", "{memory}");
    assert_eq!(time["protocolVersion"], "2026-07-28", "{time}");
    let synced = ok(&mut s, "registry/syncMcp", json!({}));
    let registered: Vec<&str> = synced["registered"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    for name in ["mcp__everything__echo", "mcp__memory__createEntities", "mcp__memory__readGraph", "mcp__time__getCurrentTime"] {
        assert!(registered.contains(&name), "{name} not in {registered:?}");
    }

    let echo = ok(&mut s, "tool/invoke", json!({"name": "mcp__everything__echo", "arguments": {"message": "hello toolreg"}}));
    assert!(text(&echo).contains("hello toolreg"), "{echo}");

    let created = ok(&mut s, "tool/invoke", json!({"name": "mcp__memory__createEntities", "arguments": {"entities": [{"name": "toolreg", "entityType": "project", "observations": ["a sidecar"]}]}}));
    text(&created);
    let graph = ok(&mut s, "tool/invoke", json!({"name": "mcp__memory__readGraph", "arguments": {}}));
    assert!(text(&graph).contains("a sidecar"), "{graph}");

    let now = ok(&mut s, "tool/invoke", json!({"name": "mcp__time__getCurrentTime", "arguments": {"timezone": "UTC"}}));
    assert!(text(&now).contains("UTC"), "{now}");
    // A tool error is a result the model reads, not a protocol error.
    let bad = ok(&mut s, "tool/invoke", json!({"name": "mcp__time__getCurrentTime", "arguments": {"timezone": "Not/AZone"}}));
    assert_eq!(bad["isError"], true, "{bad}");
    s.shutdown();
}

#[test]
fn everything_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = std::process::Command::new("node")
        .args([node_server("server-everything"), "streamableHttp".into()])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(30), "server-everything did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut s = Sidecar::spawn();
    ok(&mut s, "initialize", json!({}));
    let url = format!("http://127.0.0.1:{port}/mcp");
    ok(&mut s, "catalog/setServers", json!({"servers": [{"id": "web", "name": "Everything HTTP", "enabled": true, "transport": {"type": "http", "url": url, "headers": {"X-Secret": "do-not-log"}}}]}));
    // Over HTTP it answers a sessionless `server/discover` with 400: a legacy verdict.
    assert_eq!(wait_ready(&mut s, "web")["protocolVersion"], "2025-11-25");
    ok(&mut s, "registry/syncMcp", json!({}));
    let echo = ok(&mut s, "tool/invoke", json!({"name": "mcp__everythingHttp__echo", "arguments": {"message": "over http"}}));
    assert!(text(&echo).contains("over http"), "{echo}");
    s.shutdown();
    let _ = server.kill();
    let _ = server.wait();
}
