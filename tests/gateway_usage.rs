//! Usage in `toolreg mcp` (issue 28) over real pipes, the fixture MCP server upstream: every
//! call the gateway runs (a deferred tool through `tool_invoke`, one called by name, a
//! `tool_exec` script's `tools.call`) is counted and persisted in the state dir, names and
//! counts only, which a sidecar over that dir reads (`usage/list`); the next run's listing places the most used deferred tools inline when
//! `gateway.usage` asks for it; within a run the listing never moves for usage and no
//! `list_changed` is sent for it.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use support::gateway::{fixture, spawn, text, write_config, McpClient};

/// `toolreg mcp` with its per-user state dir at `state` (as `$TOOLREG_STATE_DIR`), initialized.
fn ready(config: &str, state: &Path) -> McpClient {
    let mut c = spawn(config, &[], &[("TOOLREG_STATE_DIR", state.to_str().unwrap())]);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "usage-test", "version": "0"}}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    c.notify("notifications/initialized", json!({}));
    c
}

/// 60 small fixture tools and one from `defs.json` (renamed by `write_def` while serving) in an
/// 8,000-token window: the `auto` pool passes the gates and is deferred behind the meta-tools.
fn config(dir: &Path, gateway: Value) -> String {
    let defs = dir.join("defs.json");
    if !defs.exists() {
        write_def(&defs, "ledgerReport");
    }
    let mut g = json!({"codeMode": true});
    g.as_object_mut().unwrap().extend(gateway.as_object().unwrap().clone());
    let mut server = fixture("fx", &["--tools", "60", "--defs-file", defs.to_str().unwrap(), "--watch-defs"]);
    // Not pinned: a renamed tool is a new tool, which pins would hold.
    server["trust"] = json!("auto");
    write_config(dir, &json!({"contextWindow": 8000, "servers": [server], "gateway": g}))
}

/// Writes one tool, `name`, as the fixture's defs file (atomically: the fixture polls it).
fn write_def(defs: &Path, name: &str) {
    let tools = json!([{"name": name, "description": "Compile the quarterly ledger report.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "integer"}}}}]);
    let tmp = defs.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec(&tools).unwrap()).unwrap();
    std::fs::rename(&tmp, defs).unwrap();
}

/// Waits until `tool_search` finds `name`: the gateway resynced after an upstream change.
fn found_after_resync(c: &mut McpClient, name: &str) {
    let t = std::time::Instant::now();
    loop {
        if text(&c.call("tool_search", json!({"query": "quarterly ledger report"}))).contains(name) {
            return;
        }
        assert!(t.elapsed() < support::TIMEOUT, "{name} never reached tool_search");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The calls in the window per tool under the gateway's usage key, as a sidecar whose
/// `cacheDir` is the gateway's state dir reads them (`usage/list`): they share the counts.
fn counted(state: &Path) -> std::collections::BTreeMap<String, u64> {
    let mut s = support::Sidecar::spawn();
    s.ok("initialize", json!({"cacheDir": state}));
    s.notify("initialized", json!({}));
    let l = s.ok("usage/list", json!({"usageKey": "gateway"}));
    s.shutdown();
    let tools = l["keys"][0]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| (t["name"].as_str().unwrap().to_string(), t["callsInWindow"].as_u64().unwrap())).collect()
}

/// Whether the state dir's store (`state.db` and its journal) holds `text` anywhere.
fn store_holds(state: &Path, text: &str) -> bool {
    std::fs::read_dir(state).unwrap().map(Result::unwrap).filter(|e| e.file_name().to_string_lossy().starts_with("state.db")).any(|e| {
        let bytes = std::fs::read(e.path()).unwrap_or_default();
        bytes.windows(text.len()).any(|w| w == text.as_bytes())
    })
}

fn listed(c: &mut McpClient) -> Vec<Value> {
    c.ok("tools/list", json!({}))["tools"].as_array().unwrap().clone()
}

fn names(tools: &[Value]) -> Vec<String> {
    tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

fn ok(r: Value) -> Value {
    assert_eq!(r["isError"], false, "{r}");
    r
}

#[test]
fn calls_are_counted_and_persisted_and_the_next_run_lists_the_most_used_inline() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let path = config(dir.path(), json!({"usage": {"maxTools": 2}}));

    // Run 1: nothing counted yet, every fx tool deferred.
    let mut c = ready(&path, &state);
    let first = listed(&mut c);
    let first_names = names(&first);
    assert!(first_names.contains(&"tool_search".to_string()) && first_names.contains(&"tool_exec".to_string()), "{first_names:?}");
    assert!(!first_names.iter().any(|n| n.starts_with("mcp__fx__tool")), "deferred at first: {first_names:?}");
    // tool7: found, inspected, invoked three times; tool9: twice from a script; tool11 once by
    // name (a deferred tool called directly still runs); tool13 once through tool_invoke.
    assert!(text(&c.call("tool_search", json!({"query": "generated tool number 7"}))).contains("mcp__fx__tool7"));
    c.call("tool_inspect", json!({"name": "mcp__fx__tool7"}));
    for x in 0..3 {
        ok(c.call("tool_invoke", json!({"name": "mcp__fx__tool7", "params": {"x": x}})));
    }
    let script = "await tools.call('mcp__fx__tool9', {x: 1}); return await tools.call('mcp__fx__tool9', {x: 2});";
    let r = ok(c.call("tool_exec", json!({"code": script})));
    assert!(text(&r).contains("tool_9 called with"), "{r}");
    ok(c.call("mcp__fx__tool11", json!({"x": 1})));
    c.call("tool_inspect", json!({"name": "mcp__fx__tool13"}));
    ok(c.call("tool_invoke", json!({"name": "mcp__fx__tool13", "params": {"x": 1}})));
    // The listing did not move within the run.
    assert_eq!(listed(&mut c), first, "the listing is fixed for the gateway's session");
    assert!(c.finish().success());

    // Persisted in the state dir, as any process over it reads them: names and counts; the
    // meta-tools are not counted, and no result is kept.
    let tools = counted(&state);
    let calls = |n: &str| tools.get(n).copied().unwrap_or(0);
    assert_eq!((calls("mcp__fx__tool7"), calls("mcp__fx__tool9"), calls("mcp__fx__tool11"), calls("mcp__fx__tool13")), (3, 2, 1, 1), "{tools:?}");
    assert!(!tools.contains_key("tool_exec") && !tools.contains_key("tool_invoke") && !tools.contains_key("tool_search"), "{tools:?}");
    assert!(!store_holds(&state, "called with"), "a result in the state dir's store");

    // Run 2: the two most used deferred tools are listed inline, the rest stay deferred.
    let mut c = ready(&path, &state);
    let second = listed(&mut c);
    let fx: Vec<String> = names(&second).into_iter().filter(|n| n.starts_with("mcp__fx__tool")).collect();
    assert_eq!(fx, ["mcp__fx__tool7", "mcp__fx__tool9"], "the two most used, in the plan's order: {:?}", names(&second));
    let search = second.iter().find(|t| t["name"] == "tool_search").unwrap()["description"].as_str().unwrap().to_string();
    assert!(search.contains("DEFERRED_TOOLS"), "the others stay deferred: {search}");
    // A listed tool is called directly; tool13 gets used heavily, the listing stays put.
    assert!(text(&ok(c.call("mcp__fx__tool7", json!({"x": 5})))).contains("tool_7 called with {\"x\":5}"));
    c.call("tool_inspect", json!({"name": "mcp__fx__tool13"}));
    for x in 0..4 {
        ok(c.call("tool_invoke", json!({"name": "mcp__fx__tool13", "params": {"x": x}})));
    }
    // An upstream change that leaves the listed tools as they were (a deferred tool renamed):
    // the gateway resyncs, and keeps the session's usage-driven tools.
    write_def(&dir.path().join("defs.json"), "ledgerSummary");
    found_after_resync(&mut c, "mcp__fx__ledgerSummary");
    assert_eq!(listed(&mut c), second, "calls made during a run apply from the next one");
    assert!(c.finish().success());

    // Run 3: tool13 (5 calls) now leads; tool7 (4) follows; tool9 (2) is out at maxTools 2
    // (listed in the plan's order).
    let mut c = ready(&path, &state);
    let fx: Vec<String> = names(&listed(&mut c)).into_iter().filter(|n| n.starts_with("mcp__fx__tool")).collect();
    assert_eq!(fx, ["mcp__fx__tool13", "mcp__fx__tool7"]);
    assert!(c.finish().success());

    // Without `gateway.usage`, counted calls place nothing: the listing is as on a first run.
    let plain = config(dir.path(), json!({}));
    let mut c = ready(&plain, &state);
    let without = names(&listed(&mut c));
    assert!(!without.iter().any(|n| n.starts_with("mcp__fx__tool")), "usage is off unless configured: {without:?}");
    c.call("tool_inspect", json!({"name": "mcp__fx__tool9"}));
    ok(c.call("tool_invoke", json!({"name": "mcp__fx__tool9", "params": {"x": 1}})));
    assert!(c.finish().success());
    assert_eq!(counted(&state)["mcp__fx__tool9"], 3, "still counted with usage off");
}

#[test]
fn a_config_reload_starts_a_new_session_announced_with_list_changed() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let path = config(dir.path(), json!({}));
    let mut c = ready(&path, &state);
    let before = names(&listed(&mut c));
    assert!(!before.iter().any(|n| n.starts_with("mcp__fx__tool")), "{before:?}");
    c.call("tool_inspect", json!({"name": "mcp__fx__tool3"}));
    for x in 0..3 {
        ok(c.call("tool_invoke", json!({"name": "mcp__fx__tool3", "params": {"x": x}})));
    }
    // Usage turned on in the file: the reload is a new session, picked from the counts now.
    // (A list_changed may have come earlier: the first lists arrived while initializing.)
    config(dir.path(), json!({"usage": {}}));
    let mut after = before.clone();
    for _ in 0..3 {
        assert!(c.wait_note("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no list_changed after the reload: {:?}", c.notes);
        after = names(&listed(&mut c));
        if after != before {
            break;
        }
    }
    assert!(after.contains(&"mcp__fx__tool3".to_string()), "{after:?}");
    assert!(c.finish().success());
}
