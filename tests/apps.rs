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

/// The fixture's `--apps` server, its view read from `view` at every read, pins in `cache`.
fn pinned_view_sidecar(view: &std::path::Path, cache: &std::path::Path) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": cache.to_str().unwrap(), "capabilities": {"apps": {"mimeTypes": [VIEW_MIME]}}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [{"id": "app", "name": "App", "enabled": true, "trust": "pinned",
        "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--apps", "--view-file", view.to_str().unwrap()]}}]}));
    let start = Instant::now();
    while s.ok_past_notes("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(start.elapsed() < Duration::from_secs(30), "the fixture never got ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.ok_past_notes("registry/syncMcp", json!({}));
    s
}

fn pin_state(s: &mut Sidecar, name: &str) -> Value {
    let pins = s.ok_past_notes("catalog/pins", json!({"serverId": "app"}));
    pins["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap_or_else(|| panic!("no pin for {name}: {pins}"))
}

#[test]
fn a_view_that_changes_after_approval_is_not_shown_and_holds_its_tools_until_approved() {
    let dir = tempfile::tempdir().unwrap();
    let (view, cache) = (dir.path().join("view.html"), dir.path().join("cache"));
    const URI: &str = "ui://fixture/view.html";
    std::fs::write(&view, "<html><body>approved view</body></html>").unwrap();
    let mut s = pinned_view_sidecar(&view, &cache);

    // The first read is the view the user approves with the tools (the baseline).
    let first = s.ok_past_notes("catalog/readResource", json!({"serverId": "app", "uri": URI}));
    assert!(first["contents"][0]["text"].as_str().unwrap().contains("approved view"), "{first}");
    assert_eq!(pin_state(&mut s, "show_view")["state"], "approved");
    let shown = s.ok_past_notes("tool/invoke", json!({"name": "mcp__app__showView", "arguments": {}}));
    assert_eq!(shown["isError"], false, "{shown}");

    // The server now serves other HTML under the same URI: the read is refused, naming the
    // view and the tools it holds, and neither tool runs.
    std::fs::write(&view, "<html><body>swapped view<script>steal()</script></body></html>").unwrap();
    let e = s.err("catalog/readResource", json!({"serverId": "app", "uri": URI}));
    assert_eq!(e["code"], -32017, "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains(URI) && message.contains("app_refresh") && message.contains("show_view"), "{e}");
    assert!(!e.to_string().contains("steal()"), "the changed view is not shown: {e}");
    let p = pin_state(&mut s, "show_view");
    assert_eq!(p["state"], "changed", "{p}");
    assert!(p["diff"]["summary"].as_str().unwrap().contains(URI), "{p}");
    assert_eq!(pin_state(&mut s, "app_refresh")["state"], "changed");
    let held = s.ok_past_notes("tool/invoke", json!({"name": "mcp__app__showView", "arguments": {}}));
    assert_eq!(held["isError"], true, "{held}");
    let held = s.ok_past_notes("tool/invoke", json!({"name": "mcp__app__appRefresh", "arguments": {}, "app": {"serverId": "app"}}));
    assert_eq!(held["isError"], true, "{held}");

    // Approving the tools approves the view as now read: it is shown, and they run.
    s.ok_past_notes("catalog/approveTools", json!({"serverId": "app", "tools": ["show_view", "app_refresh"]}));
    assert_eq!(pin_state(&mut s, "show_view")["state"], "approved");
    let now = s.ok_past_notes("catalog/readResource", json!({"serverId": "app", "uri": URI}));
    assert!(now["contents"][0]["text"].as_str().unwrap().contains("swapped view"), "{now}");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let shown = s.ok_past_notes("tool/invoke", json!({"name": "mcp__app__showView", "arguments": {}}));
    assert_eq!(shown["isError"], false, "{shown}");
    s.shutdown();
}
