//! MCP wire names over the real binary, against the project's fixture MCP server: tools whose
//! plain names collide (two servers with one display name; `get_user` beside `getUser` in one
//! server) get distinct names from `registry/resolveMcpToolIds`, and `registry/syncMcp` registers
//! every one of them under that name in the same round.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

fn fixture() -> &'static str {
    fixture_mcp()
}

fn init(s: &mut Sidecar, cache_dir: Option<&std::path::Path>) {
    let mut p = json!({"timeouts": {"connectMs": 3000, "listMs": 3000}});
    if let Some(d) = cache_dir {
        p["cacheDir"] = json!(d.to_str().unwrap());
    }
    s.ok("initialize", p);
}

/// The whole response to a request (result or error); catalog notifications are skipped.
fn reply(s: &mut Sidecar, method: &str, params: Value) -> Value {
    s.call_noting(method, params, &mut Vec::new())
}

fn wait_ready(s: &mut Sidecar, id: &str) {
    let start = Instant::now();
    loop {
        let st = s.ok_past_notes("catalog/status", json!({}));
        if st["servers"].as_array().unwrap().iter().any(|x| x["id"] == id && x["state"] == "ready") {
            return;
        }
        assert!(start.elapsed() < TIMEOUT, "{id} never became ready");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn quit(mut s: Sidecar) {
    s.ok_past_notes("shutdown", Value::Null);
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

/// Resolve, then sync what was resolved: every resolved name is registered at once, each
/// registered entry is one of the resolved names, and a second round changes nothing.
fn resolve_then_sync(s: &mut Sidecar) -> Vec<String> {
    let ids = strings(&s.ok_past_notes("registry/resolveMcpToolIds", json!({"assistant": {"mcpMode": "auto"}}))["toolIds"]);
    let synced = s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": ids}));
    assert_eq!(strings(&synced["registered"]), ids, "the first round registers every resolved tool");
    let again = strings(&s.ok_past_notes("registry/resolveMcpToolIds", json!({"assistant": {"mcpMode": "auto"}}))["toolIds"]);
    assert_eq!(again, ids, "names are stable");
    assert_eq!(s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": ids})), json!({"registered": [], "evicted": []}));
    ids
}

#[test]
fn two_servers_with_one_display_name_get_every_tool_in_one_round() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    let server = |id: &str| json!({"id": id, "name": "Same", "transport": {"type": "stdio", "command": fixture(), "args": ["--tools", "1"]}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("a"), server("b")]}));
    wait_ready(&mut s, "a");
    wait_ready(&mut s, "b");
    let ids = resolve_then_sync(&mut s);
    assert_eq!(ids.len(), 6, "echo, stats and tool_0 of each server: {ids:?}");
    let entries = s.ok_past_notes("registry/list", json!({"query": "mcp__same__echo"}))["entries"].clone();
    let sources: Vec<&Value> = entries.as_array().unwrap().iter().map(|e| &e["source"]).collect();
    assert_eq!(sources.len(), 2, "{entries}");
    assert!(sources.contains(&&json!({"kind": "mcp", "serverId": "a", "toolName": "echo"})));
    assert!(sources.contains(&&json!({"kind": "mcp", "serverId": "b", "toolName": "echo"})));
    quit(s);
}

#[test]
fn tools_that_camel_case_alike_in_one_server_get_two_names_in_one_round() {
    // The fixture's tool names are fixed, so the colliding pair is put into its persisted
    // list, and a restarted sidecar answers from that list while the server hangs.
    let dir = tempfile::tempdir().unwrap();
    let flags = dir.path().join("flags");
    let script = format!("exec '{}' $(cat '{}')", fixture(), flags.display());
    // trust auto: the injected pair appears after the first list, which pinning would hold.
    let cfg = json!({"id": "dup", "name": "Dup", "trust": "auto", "transport": {"type": "stdio", "command": "sh", "args": ["-c", script]}});
    std::fs::write(&flags, "--tools 1").unwrap();
    let cache = dir.path().join("cache");
    let mut s = Sidecar::spawn();
    init(&mut s, Some(&cache));
    s.ok_past_notes("catalog/setServers", json!({"servers": [cfg.clone()]}));
    wait_ready(&mut s, "dup");
    quit(s);
    let file = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("mcp-"))
        .expect("the tool cache file");
    let mut cached: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for name in ["get_user", "getUser"] {
        let tool = json!({"name": name, "description": format!("{name}: one user"), "inputSchema": {"type": "object"}});
        cached["tools"].as_array_mut().unwrap().push(tool);
    }
    std::fs::write(&file, serde_json::to_vec(&cached).unwrap()).unwrap();

    std::fs::write(&flags, "--hang-list").unwrap();
    let mut s = Sidecar::spawn();
    init(&mut s, Some(&cache));
    s.ok_past_notes("catalog/setServers", json!({"servers": [cfg]}));
    // The cache and pins files are read in the background; until then resolve and sync skip
    // the server.
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let listed = s.ok_past_notes("catalog/listTools", json!({"serverId": "dup"}))["tools"].as_array().unwrap().len();
        if listed == 5 && reply(&mut s, "catalog/pins", json!({"serverId": "dup"})).get("result").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the cached list ({listed} tools) or the pins of dup were never read");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ids = resolve_then_sync(&mut s);
    assert_eq!(ids.len(), 5, "{ids:?}");
    let users: Vec<&String> = ids.iter().filter(|n| n.starts_with("mcp__dup__getUser")).collect();
    assert_eq!(users.len(), 2, "{ids:?}");
    assert!(users.contains(&&"mcp__dup__getUser".to_string()), "the first listed keeps the plain name: {ids:?}");
    let listed = s.ok_past_notes("registry/list", json!({"namespace": "mcp:dup", "query": "one user"}))["entries"].clone();
    let raw: Vec<&str> = listed.as_array().unwrap().iter().map(|e| e["source"]["toolName"].as_str().unwrap()).collect();
    assert_eq!(raw.len(), 2, "{listed}");
    assert!(raw.contains(&"get_user") && raw.contains(&"getUser"), "{listed}");
    quit(s);
}
