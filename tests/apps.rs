//! MCP Apps on the sidecar face (issue 39 §2), with the official ext-apps example servers
//! (`server-basic-vanillajs`: `get-time` with a view; `server-system-monitor`:
//! `get-system-info` with a view and `poll-system-stats`, which only its view may call) and
//! server-everything for a pool large enough to defer.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

const VIEW_MIME: &str = "text/html;profile=mcp-app";

/// A sidecar with the three servers synced; `apps`: the host renders views.
fn sidecar(apps: bool) -> Sidecar {
    let mut s = Sidecar::spawn();
    let caps = if apps { json!({"apps": {"mimeTypes": [VIEW_MIME]}}) } else { json!({}) };
    s.ok("initialize", json!({"capabilities": caps, "timeouts": {"connectMs": 30000, "listMs": 30000}}));
    s.ok("catalog/setServers", json!({"servers": [
        {"id": "clock", "name": "Clock", "enabled": true, "transport": {"type": "stdio", "command": "node", "args": [reference_server("server-basic-vanillajs"), "--stdio"]}},
        {"id": "monitor", "name": "Monitor", "enabled": true, "transport": {"type": "stdio", "command": "node", "args": [reference_server("server-system-monitor"), "--stdio"]}},
        {"id": "everything", "name": "Everything", "enabled": true, "transport": {"type": "stdio", "command": "node", "args": [reference_server("server-everything"), "stdio"]}}
    ]}));
    let start = Instant::now();
    loop {
        let st = s.ok("catalog/status", json!({}));
        if st["servers"].as_array().unwrap().iter().all(|x| x["state"] == "ready") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "not ready: {st}");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.ok("registry/syncMcp", json!({}));
    s
}

fn text(r: &Value) -> String {
    r["output"]["value"].as_str().map(str::to_string).unwrap_or_else(|| r["output"]["value"].to_string())
}

/// A plan under a small window, so that the auto pool is deferred.
fn tight_plan(s: &mut Sidecar) -> Value {
    s.ok("exposition/plan", json!({"scope": {}, "contextWindow": 2000, "model": "gpt-4o", "include": ["deferred"]}))
}

#[test]
fn tools_carry_their_view_and_app_only_tools_are_never_the_models() {
    let mut s = sidecar(true);
    let listed = s.ok("registry/list", json!({}));
    let entry = |name: &str| listed["entries"].as_array().unwrap().iter().find(|e| e["name"] == name).cloned().unwrap_or_else(|| panic!("{name} in {listed}"));
    assert_eq!(entry("mcp__clock__getTime")["ui"], json!({"resourceUri": "ui://get-time/mcp-app.html"}));
    assert_eq!(entry("mcp__monitor__pollSystemStats")["ui"]["visibility"], json!(["app"]));
    let tools = s.ok("catalog/listTools", json!({"serverId": "clock"}));
    assert_eq!(tools["tools"][0]["_meta"]["ui"]["resourceUri"], "ui://get-time/mcp-app.html", "{tools}");

    let plan = tight_plan(&mut s);
    let inline: Vec<&str> = plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    let deferred: Vec<&str> = plan["deferred"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!deferred.is_empty() && inline.contains(&"tool_search"), "the pool is deferred: {plan}");
    // Tools with a view stay inline for a host that renders them, and say which view.
    for name in ["mcp__clock__getTime", "mcp__monitor__getSystemInfo"] {
        assert!(inline.contains(&name), "{name} inline: {inline:?}");
        assert_eq!(plan["placements"][name]["reason"], "view", "{plan}");
        assert!(plan["placements"][name]["ui"]["resourceUri"].as_str().unwrap().starts_with("ui://"), "{plan}");
    }
    // The app-only tool is nowhere in the model's view.
    let poll = "mcp__monitor__pollSystemStats";
    assert!(!inline.contains(&poll) && !deferred.contains(&poll) && plan["placements"].get(poll).is_none(), "{plan}");
    let plan_id = plan["planId"].as_str().unwrap();
    let found = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "poll system stats cpu memory"}, "planId": plan_id}));
    assert!(!found.to_string().contains("pollSystemStats"), "{found}");
    let through = s.ok("tool/invoke", json!({"name": "tool_invoke", "arguments": {"name": poll, "arguments": {}}, "planId": plan_id}));
    assert_eq!(through["isError"], true, "{through}");
    let direct = s.ok("tool/invoke", json!({"name": poll, "arguments": {}}));
    assert_eq!(direct["isError"], true, "{direct}");
    assert!(text(&direct).contains("view"), "{direct}");
    s.shutdown();
}

#[test]
fn a_host_without_views_gets_view_tools_deferred_like_any_other() {
    let mut s = sidecar(false);
    let plan = tight_plan(&mut s);
    let deferred: Vec<&str> = plan["deferred"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(deferred.contains(&"mcp__clock__getTime"), "{plan}");
    assert!(!deferred.contains(&"mcp__monitor__pollSystemStats"), "{plan}");
    s.shutdown();
}

#[test]
fn views_are_read_unchanged_and_calls_for_a_view_reach_only_its_server() {
    let mut s = sidecar(true);
    let time = s.ok("tool/invoke", json!({"name": "mcp__clock__getTime", "arguments": {}}));
    assert_eq!(time["isError"], false, "{time}");
    assert_eq!(time["ui"], json!({"serverId": "clock", "resourceUri": "ui://get-time/mcp-app.html"}), "{time}");
    let plain = s.ok("tool/invoke", json!({"name": "mcp__everything__echo", "arguments": {"message": "hi"}}));
    assert!(plain.get("ui").is_none(), "{plain}");

    let view = s.ok("catalog/readResource", json!({"serverId": "clock", "uri": "ui://get-time/mcp-app.html"}));
    let content = &view["contents"][0];
    assert_eq!(content["mimeType"], VIEW_MIME, "{view}");
    assert!(content["text"].as_str().unwrap().to_lowercase().contains("<html"), "the view's HTML");
    let listed = s.ok("catalog/listResources", json!({"serverId": "monitor"}));
    assert!(listed["resources"].as_array().unwrap().iter().any(|r| r["uri"] == "ui://system-monitor/mcp-app.html" && r["mimeType"] == VIEW_MIME), "{listed}");

    // The view's own server's app-only tool runs for the view.
    let stats = s.ok("tool/invoke", json!({"name": "mcp__monitor__pollSystemStats", "arguments": {}, "app": {"serverId": "monitor"}}));
    assert_eq!(stats["isError"], false, "{stats}");
    assert!(stats["raw"].to_string().to_lowercase().contains("memory"), "{stats}");
    // Another server's view may not call it, nor a host tool, nor a tool of another server.
    let cross = s.ok("tool/invoke", json!({"name": "mcp__monitor__pollSystemStats", "arguments": {}, "app": {"serverId": "clock"}}));
    assert_eq!(cross["isError"], true, "{cross}");
    assert!(text(&cross).contains("own server"), "{cross}");
    let other = s.ok("tool/invoke", json!({"name": "mcp__everything__echo", "arguments": {"message": "x"}, "app": {"serverId": "clock"}}));
    assert_eq!(other["isError"], true, "{other}");
    // A tool without a visibility is open to its server's view too.
    let own = s.ok("tool/invoke", json!({"name": "mcp__clock__getTime", "arguments": {}, "app": {"serverId": "clock"}}));
    assert_eq!(own["isError"], false, "{own}");
    s.shutdown();
}

/// What the fixture server saw the client declare, through a host with or without views.
fn declared_by_sidecar(apps: bool) -> String {
    let mut s = Sidecar::spawn();
    let caps = if apps { json!({"apps": {}}) } else { json!({}) };
    s.ok("initialize", json!({"capabilities": caps}));
    s.ok("catalog/setServers", json!({"servers": [{"id": "caps", "name": "Caps", "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--elicit"]}}]}));
    let start = Instant::now();
    while s.ok("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(start.elapsed() < Duration::from_secs(30), "the fixture never got ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.ok("registry/syncMcp", json!({}));
    let r = s.ok("tool/invoke", json!({"name": "mcp__caps__clientCaps", "arguments": {}}));
    assert_eq!(r["isError"], false, "{r}");
    s.shutdown();
    text(&r)
}

#[test]
fn servers_hear_the_client_renders_views_only_when_the_host_does() {
    let with = declared_by_sidecar(true);
    assert!(with.contains("io.modelcontextprotocol/ui") && with.contains(VIEW_MIME), "{with}");
    let without = declared_by_sidecar(false);
    assert!(!without.contains("io.modelcontextprotocol/ui"), "{without}");
}
