//! Real MCP servers under the sandbox's default profile (issue 40), run the way users run them
//! and asked for explicitly (`sandbox: true`, so a kernel that cannot give it fails the test
//! rather than running them unconfined): `@modelcontextprotocol/server-filesystem` with its
//! allowed directory, `server-memory` with its memory file, `server-everything`, and the Python
//! `mcp-server-time`, through the sidecar (`toolreg serve`) and the gateway (`toolreg mcp`).
//! Their files live directly in the host's /tmp, of which each server sees its own copy: only
//! the named-path rule opens them, bound back at the same path (issue 50); the gateway's
//! `--check` shows each one's confinement.
mod support;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use support::gateway::{text, write_config, McpClient};
use support::*;

/// The four servers, confined, with their data under `data`.
fn servers(data: &Path) -> Value {
    let allowed = data.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let memory = data.join("memory/memory.jsonl");
    std::fs::create_dir_all(memory.parent().unwrap()).unwrap();
    json!([
        {"id": "fs", "name": "fs", "sandbox": true, "transport": {"type": "stdio", "command": "node",
            "args": [reference_server("server-filesystem"), allowed]}},
        {"id": "memory", "name": "memory", "sandbox": true, "transport": {"type": "stdio", "command": "node",
            "args": [reference_server("server-memory")], "env": {"MEMORY_FILE_PATH": memory}}},
        {"id": "everything", "name": "everything", "sandbox": true, "transport": {"type": "stdio", "command": "node",
            "args": [reference_server("server-everything"), "stdio"]}},
        {"id": "time", "name": "time", "sandbox": true, "transport": {"type": "stdio", "command": "python3",
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}
    ])
}

fn data_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("toolreg-servers-").tempdir_in("/tmp").unwrap()
}

/// What each server's calls must show, whichever face ran them: `call(server, tool, args)`.
fn exercise(data: &Path, mut call: impl FnMut(&str, &str, Value) -> (String, bool)) {
    let note = data.join("allowed/note.txt");
    let (t, err) = call("fs", "write_file", json!({"path": note, "content": "confined and working"}));
    assert!(!err, "{t}");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "confined and working");
    let (t, err) = call("fs", "read_text_file", json!({"path": note}));
    assert!(!err && t.contains("confined and working"), "{t}");
    let (t, err) = call("memory", "create_entities", json!({"entities": [{"name": "toolreg", "entityType": "project", "observations": ["sandboxed"]}]}));
    assert!(!err, "{t}");
    let (t, err) = call("memory", "read_graph", json!({}));
    assert!(!err && t.contains("sandboxed"), "{t}");
    assert!(std::fs::read_to_string(data.join("memory/memory.jsonl")).unwrap().contains("sandboxed"));
    let (t, err) = call("everything", "echo", json!({"message": "hello from the sandbox"}));
    assert!(!err && t.contains("hello from the sandbox"), "{t}");
    let (t, err) = call("time", "get_current_time", json!({"timezone": "UTC"}));
    assert!(!err && t.contains("UTC"), "{t}");
}

#[test]
fn real_servers_run_unchanged_in_the_sandbox_through_the_sidecar() {
    let data = data_dir();
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 30000, "listMs": 30000}}));
    s.ok("catalog/setServers", json!({"servers": servers(data.path())}));
    let start = Instant::now();
    let status = loop {
        let st = s.ok_past_notes("catalog/status", json!({}));
        let servers = st["servers"].as_array().unwrap().clone();
        if servers.iter().all(|x| x["state"] == "ready") {
            break servers;
        }
        assert!(start.elapsed() < Duration::from_secs(90), "not all ready: {st}");
        std::thread::sleep(Duration::from_millis(100));
    };
    for server in &status {
        assert_eq!(server["sandbox"]["state"], "enforced", "{server}");
        assert!(server["sandbox"]["private"].as_array().unwrap().contains(&json!("/tmp")), "{server}");
    }
    let fs = status.iter().find(|x| x["id"] == "fs").unwrap();
    let allowed = std::fs::canonicalize(data.path().join("allowed")).unwrap();
    assert!(fs["sandbox"]["writable"].as_array().unwrap().contains(&json!(allowed.to_str().unwrap())), "{fs}");
    let memory = status.iter().find(|x| x["id"] == "memory").unwrap();
    assert!(memory["sandbox"]["writable"].to_string().contains("$MEMORY_FILE_PATH"), "{memory}");
    s.ok_past_notes("registry/syncMcp", json!({}));
    exercise(data.path(), |server, tool, args| {
        let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{server}__{}", camel(tool)), "arguments": args}));
        let text = r["output"]["value"].as_str().map(str::to_owned).unwrap_or_else(|| r["output"]["value"].to_string());
        (text, r["isError"] == true)
    });
    s.shutdown();
}

#[test]
fn real_servers_run_unchanged_in_the_sandbox_through_the_gateway() {
    let data = data_dir();
    let config = json!({"servers": servers(data.path()), "gateway": {"defer": "never", "warmupMs": 60000}});
    let path = write_config(data.path(), &config);
    // `--check` first: every server ready, and its confinement shown.
    let out = std::process::Command::new(bin()).args(["mcp", "--config", &path, "--check"])
        .env("TOOLREG_STATE_DIR", data.path().join("state")).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", String::from_utf8_lossy(&out.stderr));
    for id in ["fs", "memory", "everything", "time"] {
        assert!(table.contains(&format!("\n{id}: sandbox enforced (Landlock ABI ")), "{table}");
    }
    let mut c = McpClient::ready(&path, json!({}));
    exercise(data.path(), |server, tool, args| {
        let r = c.call(&format!("mcp__{server}__{}", camel(tool)), args);
        (text(&r), r["isError"] == true)
    });
    assert!(c.finish().success());
}
