//! `gateway.profiles` (issue 43 §1) through the real `toolreg mcp` and two fixture servers: a
//! profile's own token opens its `/mcp/<profile>` and nothing else; a tool outside a profile is
//! unreachable by every path (listed, `tool_search`, `tool_invoke`, a `tool_exec` script,
//! resources and prompts of servers outside it); `--profile` serves one over stdio; a bad tag
//! expression or an unknown server stops the gateway with the reason; `--check` shows each
//! profile; a reload adds and removes profiles; audit records name the profile.

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::gateway::{fixture, rpc_2026 as rpc, spawn, spawn_http, text, write_config, McpClient};

const MAIN: &str = "main-token-0123456789abcdef";
const FILES: &str = "files-token-0123456789abcdef";

/// `fs` (tagged files) serves resources and prompts; `web` (tagged web) its plain tools.
fn config(dir: &std::path::Path, profiles: Value) -> String {
    let mut fs = fixture("fs", &["--conformance"]);
    fs["tags"] = json!(["files", "local"]);
    let mut web = fixture("web", &["--tools", "2"]);
    web["tags"] = json!(["web"]);
    let audit = dir.join("audit.jsonl");
    write_config(dir, &json!({"servers": [fs, web], "gateway": {"defer": "never", "profiles": profiles,
        "audit": {"path": audit}}}))
}

fn profiles() -> Value {
    json!({
        "files": {"tags": "files and not web", "token": {"env": "FILES_TOKEN"}, "defer": "always", "codeMode": true},
        "web": {"servers": ["web"], "tools": {"deny": ["web/stats"]}}
    })
}

/// `toolreg mcp --http 127.0.0.1:0` with the main token; its address.
fn start_http(path: &str) -> (McpClient, String) {
    spawn_http(path, &[("TOOLREG_MCP_TOKEN", MAIN), ("FILES_TOKEN", FILES)])
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"].as_array().unwrap_or_else(|| panic!("no tools: {list}")).iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// The listing once both servers are in it (the first lists wait for the warm-up).
fn listed(addr: &str, path: &str, token: &str, until: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + support::TIMEOUT;
    loop {
        let (status, r) = rpc(addr, path, token, "tools/list", json!({}));
        assert_eq!(status, 200, "tools/list on {path}");
        let n = names(&r);
        if until(&n) || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn call_text(addr: &str, path: &str, token: &str, name: &str, arguments: Value) -> (bool, String) {
    let (status, r) = rpc(addr, path, token, "tools/call", json!({"name": name, "arguments": arguments}));
    assert_eq!(status, 200, "tools/call {name} on {path}");
    match r.get("result") {
        Some(result) => (result["isError"] == true, text(result)),
        None => (true, r["error"]["message"].as_str().unwrap_or_default().to_string()),
    }
}

#[test]
fn a_profiles_token_opens_that_profile_only_and_its_tools_are_the_only_ones_it_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), profiles());
    let (c, addr) = start_http(&path);

    // Tokens: the profile's opens its path only; the gateway's opens every path.
    assert_eq!(rpc(&addr, "/mcp/files", FILES, "tools/list", json!({})).0, 200);
    assert_eq!(rpc(&addr, "/mcp/web", FILES, "tools/list", json!({})).0, 401, "a profile's token opens no other profile");
    assert_eq!(rpc(&addr, "/mcp", FILES, "tools/list", json!({})).0, 401, "nor the whole gateway");
    assert_eq!(rpc(&addr, "/mcp/web", "wrong-token-0123456789", "tools/list", json!({})).0, 401);
    assert_eq!(rpc(&addr, "/mcp/nope", MAIN, "tools/list", json!({})).0, 404, "a path naming no profile");
    assert_eq!(rpc(&addr, "/mcp/nope", FILES, "tools/list", json!({})).0, 401, "only the gateway's token learns which profiles exist");

    let whole = listed(&addr, "/mcp", MAIN, |n| n.iter().any(|t| t.starts_with("mcp__fs__")) && n.iter().any(|t| t.starts_with("mcp__web__")));
    assert!(whole.contains(&"mcp__web__stats".to_string()) && whole.contains(&"mcp__fs__echo".to_string()), "{whole:?}");

    // `web`: its server only, less the denied tool.
    let web = listed(&addr, "/mcp/web", MAIN, |n| n.iter().any(|t| t.starts_with("mcp__web__")));
    assert!(web.contains(&"mcp__web__tool0".to_string()) && web.contains(&"mcp__web__echo".to_string()), "{web:?}");
    assert!(!web.iter().any(|t| t.starts_with("mcp__fs__")) && !web.contains(&"mcp__web__stats".to_string()), "{web:?}");
    let (err, said) = call_text(&addr, "/mcp/web", MAIN, "mcp__web__echo", json!({"x": 1}));
    assert!(!err && said.contains("\"x\":1"), "{said}");
    let (err, said) = call_text(&addr, "/mcp/web", MAIN, "mcp__web__stats", json!({}));
    assert!(err && said.contains("no tool is named"), "a denied tool is no tool here: {said}");
    let (err, said) = call_text(&addr, "/mcp/web", MAIN, "mcp__fs__echo", json!({}));
    assert!(err && said.contains("no tool is named"), "another server's tool is no tool here: {said}");

    // `files`: every tool deferred behind the meta-tools, `tool_exec` listed.
    let files = listed(&addr, "/mcp/files", FILES, |n| n.iter().any(|t| t == "tool_search"));
    assert!(files.contains(&"tool_invoke".to_string()) && files.contains(&"tool_exec".to_string()), "{files:?}");
    assert!(!files.iter().any(|t| t.starts_with("mcp__")), "the profile's own defer: {files:?}");
    let (_, found) = call_text(&addr, "/mcp/files", FILES, "tool_search", json!({"query": "echo", "limit": 20}));
    assert!(found.contains("mcp__fs__echo") && !found.contains("mcp__web__"), "search sees the profile's tools only: {found}");
    let (err, said) = call_text(&addr, "/mcp/files", FILES, "tool_inspect", json!({"name": "mcp__web__echo"}));
    assert!(err && !said.contains("Return the arguments"), "inspect reads no tool outside the profile: {said}");
    let (err, said) = call_text(&addr, "/mcp/files", FILES, "tool_inspect", json!({"name": "mcp__fs__echo"}));
    assert!(!err && said.contains("Return the arguments"), "{said}");
    let (err, said) = call_text(&addr, "/mcp/files", FILES, "tool_invoke", json!({"name": "mcp__fs__echo", "arguments": {}}));
    assert!(!err && said.trim() == "{}", "echo ran: {said}");
    let (err, said) = call_text(&addr, "/mcp/files", FILES, "tool_invoke", json!({"name": "mcp__web__echo", "arguments": {}}));
    assert!(err && !said.contains("called with"), "tool_invoke of a tool outside the profile: {said}");
    let (err, said) = call_text(&addr, "/mcp/files", FILES, "tool_exec", json!({"code": "return await tools.call('mcp__web__echo', {z: 3});"}));
    assert!(err && !said.contains("\"z\":3"), "a script reaches no tool outside the profile: {said}");
    let (err, said) = call_text(&addr, "/mcp/files", FILES, "tool_exec", json!({"code": "return await tools.call('mcp__fs__echo', {z: 3});"}));
    assert!(!err && said.contains('3'), "{said}");

    // Resources and prompts: the profile's servers' only.
    let (_, r) = rpc(&addr, "/mcp/files", FILES, "resources/list", json!({}));
    assert!(r["result"]["resources"].as_array().is_some_and(|l| l.iter().any(|x| x["uri"] == "test://static-text")), "{r}");
    let (_, r) = rpc(&addr, "/mcp/web", MAIN, "resources/list", json!({}));
    assert_eq!(r["result"]["resources"], json!([]), "web's server offers no resources: {r}");
    let (_, r) = rpc(&addr, "/mcp/web", MAIN, "resources/read", json!({"uri": "test://static-text"}));
    assert!(r.get("error").is_some(), "a resource of a server outside the profile cannot be read: {r}");
    let (_, r) = rpc(&addr, "/mcp/web", MAIN, "prompts/list", json!({}));
    assert_eq!(r["result"]["prompts"], json!([]), "{r}");
    let (_, r) = rpc(&addr, "/mcp/files", FILES, "resources/read", json!({"uri": "test://static-text"}));
    assert!(r["result"]["contents"].is_array(), "{r}");

    // The audit log names the profile of each call.
    let audit = dir.path().join("audit.jsonl");
    let deadline = Instant::now() + support::TIMEOUT;
    let records = loop {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        let records: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).filter(|r: &Value| r["event"] == "call").collect();
        if records.iter().any(|r| r["tool"] == "mcp__fs__echo" && r["reached"] == "tool_exec") || Instant::now() > deadline {
            break records;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let web_call = records.iter().find(|r| r["tool"] == "mcp__web__echo" && r["outcome"] == "ok").expect("web's call recorded");
    assert_eq!(web_call["profile"], "web", "{web_call}");
    let invoked = records.iter().find(|r| r["tool"] == "mcp__fs__echo" && r["reached"] == "tool_invoke").expect("files' call recorded");
    assert_eq!(invoked["profile"], "files", "{invoked}");
    let logged: Vec<String> = c.stderr.try_iter().collect();
    let audited = std::fs::read_to_string(&audit).unwrap();
    assert!(!logged.iter().any(|l| l.contains(FILES)) && !audited.contains(FILES), "a profile's token is never logged");
}

#[test]
fn profile_serves_one_profile_over_stdio_and_an_unknown_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), profiles());
    let mut c = spawn(&path, &["--profile", "web"], &[]);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "{r}");
    c.notify("notifications/initialized", json!({}));
    let deadline = Instant::now() + support::TIMEOUT;
    let tools = loop {
        let tools = c.tool_names();
        if tools.iter().any(|t| t.starts_with("mcp__web__")) || Instant::now() > deadline {
            break tools;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(tools.contains(&"mcp__web__echo".to_string()) && !tools.iter().any(|t| t.starts_with("mcp__fs__") || t == "mcp__web__stats"), "{tools:?}");
    let r = c.request("prompts/list", json!({}));
    assert_eq!(r["result"]["prompts"], json!([]), "{r}");
    drop(c);

    let mut bad = spawn(&path, &["--profile", "nope"], &[]);
    let status = support::exit_of(&mut bad.child, "an unknown profile");
    assert_eq!(status.code(), Some(2));
    let said: Vec<String> = bad.stderr.iter().collect();
    assert!(said.iter().any(|l| l.contains("\"nope\"") && l.contains("files, web")), "{said:?}");
}

#[test]
fn a_bad_tag_expression_or_an_unknown_server_stops_the_gateway_and_check_shows_profiles() {
    for (profiles, why) in [
        (json!({"p": {"tags": "files and (web"}}), "gateway.profiles.p: tags \"files and (web\""),
        (json!({"p": {"servers": ["fs", "nope"]}}), "gateway.profiles.p: servers names \"nope\""),
        (json!({"a/b": {}}), "profile name \"a/b\""),
        (json!({"p": {"tools": {"allow": ["fs/*"], "block": []}}}), "unknown field `block`"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = config(dir.path(), profiles.clone());
        for extra in [&[][..], &["--check"][..]] {
            let mut c = spawn(&path, extra, &[]);
            let status = support::exit_of(&mut c.child, "a bad profile");
            assert_eq!(status.code(), Some(2), "{profiles} {extra:?}");
            // The reader thread ends at the child's EOF: every line is in.
            let said: Vec<String> = c.stderr.iter().collect();
            assert!(said.iter().any(|l| l.contains(why)), "{profiles} {extra:?}: {said:?}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), profiles());
    let out = std::process::Command::new(support::bin())
        .args(["mcp", "--config", &path, "--check"])
        .env("TOOLREG_STATE_DIR", dir.path().join("state"))
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("files (/mcp/files): fs; "), "{table}");
    assert!(table.contains("web (/mcp/web): web; 3 tool(s)"), "tool_0, tool_1, echo; not stats: {table}");
}

#[test]
fn a_reload_adds_and_removes_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), json!({"web": {"servers": ["web"]}}));
    let (_c, addr) = start_http(&path);
    listed(&addr, "/mcp/web", MAIN, |n| n.iter().any(|t| t.starts_with("mcp__web__")));
    assert_eq!(rpc(&addr, "/mcp/files", MAIN, "tools/list", json!({})).0, 404);
    // A stdio client of the profile that goes away.
    let mut stdio = spawn(&path, &["--profile", "web"], &[]);
    let r = stdio.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "{r}");
    stdio.notify("notifications/initialized", json!({}));
    let deadline = Instant::now() + support::TIMEOUT;
    while !stdio.tool_names().contains(&"mcp__web__echo".to_string()) {
        assert!(Instant::now() < deadline, "the profile never listed its tools");
        std::thread::sleep(Duration::from_millis(100));
    }
    stdio.clear_notes();

    config(dir.path(), json!({"files": {"servers": ["fs"]}}));
    let deadline = Instant::now() + support::TIMEOUT;
    while rpc(&addr, "/mcp/files", MAIN, "tools/list", json!({})).0 != 200 {
        assert!(Instant::now() < deadline, "the added profile was never served");
        std::thread::sleep(Duration::from_millis(200));
    }
    let files = listed(&addr, "/mcp/files", MAIN, |n| n.iter().any(|t| t.starts_with("mcp__fs__")));
    assert!(files.iter().all(|t| !t.starts_with("mcp__web__")), "{files:?}");
    assert_eq!(rpc(&addr, "/mcp/web", MAIN, "tools/list", json!({})).0, 404, "the removed profile is gone");

    // Its stdio client is told, and then sees and reaches nothing.
    assert!(stdio.wait_note("notifications/tools/list_changed", support::TIMEOUT).is_some(), "the removed profile's client was not told");
    let left = stdio.tool_names();
    assert!(!left.iter().any(|t| t.starts_with("mcp__")), "a removed profile lists no tool: {left:?}");
    let r = stdio.request("tools/call", json!({"name": "mcp__web__echo", "arguments": {}}));
    assert!(r.get("error").is_some() || r["result"]["isError"] == true, "a removed profile runs no tool: {r}");
}
