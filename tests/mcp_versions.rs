//! The MCP revision the catalog speaks with each server, over the real binary and the fixture:
//! 2026-07-28 with a server that answers `server/discover` with it (calls on the direct stdio
//! path carry the per-request `_meta`), 2025-11-25 through the fallback otherwise, a pin in
//! `protocolVersion`, and a legacy verdict remembered across reconnects; over stdio and
//! Streamable HTTP.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

fn server(id: &str, args: &[&str], protocol: Option<&str>) -> Value {
    let mut s = json!({"id": id, "name": id, "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(), "args": args}});
    if let Some(v) = protocol {
        s["protocolVersion"] = json!(v);
    }
    s
}

fn start(servers: Value) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 5000, "listMs": 5000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": servers}));
    s
}

/// The server's status once it is no longer connecting.
fn settled(s: &mut Sidecar, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let st = s.ok_past_notes("catalog/status", json!({}));
        let me = st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).unwrap().clone();
        if me["state"] != "connecting" {
            return me;
        }
        assert!(start.elapsed() < TIMEOUT, "{id} still connecting: {me}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `stats` of server `id` through `tool/invoke` (the direct stdio path), as JSON.
fn stats(s: &mut Sidecar, id: &str) -> Value {
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{id}__stats"), "arguments": {}}));
    assert_eq!(r["isError"], false, "{r}");
    serde_json::from_str(r["output"]["value"].as_str().unwrap()).unwrap()
}

#[test]
fn a_modern_server_is_spoken_to_on_2026_and_a_direct_call_carries_the_meta() {
    let mut s = start(json!([server("modern", &["--modern"], None)]));
    let st = settled(&mut s, "modern");
    assert_eq!((&st["state"], &st["protocolVersion"]), (&json!("ready"), &json!("2026-07-28")), "{st}");
    // The server saw the version in the call's own `_meta`: there is no session to remember it.
    assert_eq!(stats(&mut s, "modern")["version"], "2026-07-28");
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__modern__echo", "arguments": {"say": "hi \"there\""}}));
    assert_eq!(r["output"]["value"], json!({"say": "hi \"there\""}).to_string(), "{r}");
    s.shutdown();
}

#[test]
fn a_legacy_server_falls_back_to_initialize_once_and_is_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("discovers");
    let discovers = || std::fs::read_to_string(&count).unwrap_or_default().lines().count();
    let mut s = start(json!([server("old", &["--discover-count-file", count.to_str().unwrap()], None)]));
    let st = settled(&mut s, "old");
    assert_eq!((&st["state"], &st["protocolVersion"]), (&json!("ready"), &json!("2025-11-25")), "{st}");
    // A session's requests carry no version of their own.
    assert_eq!(stats(&mut s, "old")["version"], Value::Null);
    assert_eq!(discovers(), 1);
    s.ok_past_notes("catalog/restart", json!({"serverId": "old"}));
    assert_eq!(settled(&mut s, "old")["protocolVersion"], "2025-11-25");
    assert_eq!(discovers(), 1, "the verdict is kept: no second probe");
    s.shutdown();
}

#[test]
fn a_server_that_knows_discover_but_not_2026_is_reconnected_with_initialize() {
    let mut s = start(json!([server("pinned", &["--discover-old"], None)]));
    let st = settled(&mut s, "pinned");
    assert_eq!((&st["state"], &st["protocolVersion"]), (&json!("ready"), &json!("2025-11-25")), "{st}");
    assert_eq!(stats(&mut s, "pinned")["version"], Value::Null);
    s.shutdown();
}

#[test]
fn over_streamable_http_too() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (modern, legacy) = (HttpFixture::start(a.path(), &["--modern"]), HttpFixture::start(b.path(), &[]));
    let http = |id: &str, url: &str| json!({"id": id, "name": id, "enabled": true, "transport": {"type": "http", "url": url}});
    let mut s = start(json!([http("webnew", &modern.url), http("webold", &legacy.url)]));
    for (id, want, seen) in [("webnew", "2026-07-28", json!("2026-07-28")), ("webold", "2025-11-25", Value::Null)] {
        let st = settled(&mut s, id);
        assert_eq!((&st["state"], &st["protocolVersion"]), (&json!("ready"), &json!(want)), "{st}");
        assert_eq!(stats(&mut s, id)["version"], seen, "{id}");
    }
    s.shutdown();
}

#[test]
fn a_pinned_version_is_the_one_spoken() {
    let mut s = start(json!([
        server("modern-pinned-old", &["--modern"], Some("2025-11-25")),
        server("old-pinned-new", &[], Some("2026-07-28")),
    ]));
    let st = settled(&mut s, "modern-pinned-old");
    assert_eq!((&st["state"], &st["protocolVersion"]), (&json!("ready"), &json!("2025-11-25")), "{st}");
    let st = settled(&mut s, "old-pinned-new");
    assert_eq!(st["state"], "error", "{st}");
    assert!(st.get("protocolVersion").is_none(), "{st}");
    let bad = s.call_noting("catalog/setServers", json!({"servers": [server("x", &[], Some("2024-01-01"))]}), &mut Vec::new());
    assert!(bad["error"].to_string().contains("2024-01-01"), "{bad}");
    s.shutdown();
}

/// Whether server `id`'s list in the catalog has a tool named `name`.
fn lists(s: &mut Sidecar, id: &str, name: &str) -> bool {
    let list = s.ok_past_notes("catalog/listTools", json!({"serverId": id}));
    list["tools"].as_array().unwrap().iter().any(|t| t["name"] == name)
}

#[test]
fn a_modern_servers_list_change_arrives_on_its_listen_stream() {
    // The fixture's change timer starts at the first `subscriptions/listen`: the notice can only
    // come through the stream the catalog opened.
    let mut s = start(json!([server("live26", &["--modern", "--tools", "1", "--change-after-ms", "300"], None)]));
    assert_eq!(settled(&mut s, "live26")["protocolVersion"], "2026-07-28");
    let start = Instant::now();
    while !lists(&mut s, "live26", "tool_added") {
        assert!(start.elapsed() < TIMEOUT, "the listen stream never refreshed the list");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!lists(&mut s, "live26", "tool_0"));
    s.shutdown();
}

#[test]
fn a_ttl_schedules_the_next_refresh_and_a_private_list_stays_off_disk() {
    let dir = tempfile::tempdir().unwrap();
    let defs = dir.path().join("defs.json");
    let cache = dir.path().join("cache");
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 5000, "listMs": 5000}, "cacheDir": cache.to_str().unwrap()}));
    let defs_arg = ["--modern", "--defs-file", defs.to_str().unwrap()];
    let ttl: Vec<&str> = defs_arg.iter().copied().chain(["--ttl-ms", "1000"]).collect();
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("ttl", &ttl, None), server("private", &defs_arg, None)]}));
    settled(&mut s, "ttl");
    settled(&mut s, "private");
    assert!(!lists(&mut s, "ttl", "later"));
    // No notice, no explicit refresh: only the ttl brings the new tool.
    std::fs::write(&defs, json!([{"name": "later", "description": "d", "inputSchema": {"type": "object"}}]).to_string()).unwrap();
    let start = Instant::now();
    while !lists(&mut s, "ttl", "later") {
        assert!(start.elapsed() < Duration::from_secs(5), "ttlMs never refreshed the list");
        std::thread::sleep(Duration::from_millis(50));
    }
    // rmcp's default hints (ttlMs 0, private): no timer, and nothing written to disk.
    assert!(!lists(&mut s, "private", "later"));
    let files: Vec<String> = std::fs::read_dir(&cache).map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    assert!(files.iter().any(|f| f.starts_with("mcp-ttl-")), "{files:?}");
    assert!(!files.iter().any(|f| f.starts_with("mcp-private-")), "{files:?}");
    s.shutdown();
}
