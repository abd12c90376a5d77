//! `toolreg mcp` over real pipes with the fixture MCP server upstream: the listing is the plan
//! and comes from the cache, changes are announced, gated calls ask by elicitation, fail closed,
//! or run for a trusted client, deferred tools are reached through the meta-tools; an upstream
//! that re-lists a gated tool as read-only does not shed the question (its pin holds it); a
//! deferred tool renamed upstream is reachable under its new name at once, though the listing
//! itself (namespace counts) did not change.

mod support;

use serde_json::json;
use std::time::Duration;
use support::gateway::{fixture, fixture_via_env, spawn, text, write_config, McpClient};
use support::write_delete_def;

fn names_of(list: &[String], server: &str) -> Vec<String> {
    let prefix = format!("mcp__{server}__");
    let mut v: Vec<String> = list.iter().filter(|n| n.starts_with(&prefix)).cloned().collect();
    v.sort();
    v
}

#[test]
fn tools_list_answers_from_the_cache_while_an_upstream_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let config = |extra: &str| json!({"servers": [fixture_via_env("fx", extra)],
        "gateway": {"cacheDir": cache, "defer": "never", "warmupMs": 600_000}});
    // First run: the server answers, its list lands in the cache.
    let path = write_config(dir.path(), &config("--tools 3"));
    let mut first = McpClient::ready(&path, json!({}));
    let listed = names_of(&first.tool_names(), "fx");
    assert!(listed.contains(&"mcp__fx__tool2".to_string()), "{listed:?}");
    assert!(first.finish().success());
    // Second run: the same server hangs in tools/list. The warm-up allows ten minutes, so only
    // the cached list can answer before the test's timeout.
    let path = write_config(dir.path(), &config("--tools 3 --hang-list"));
    let mut second = McpClient::ready(&path, json!({}));
    assert_eq!(names_of(&second.tool_names(), "fx"), listed);
    // And a call still goes through: the session is live, only its list hangs.
    let r = second.call("mcp__fx__echo", json!({"a": 1}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("\"a\":1"), "{r}");
}

#[test]
fn list_changed_is_sent_when_an_upstream_list_changes() {
    let dir = tempfile::tempdir().unwrap();
    // The change is the test's to make (the defs file, watched by the fixture), after the first
    // listing: a timer could fire before a loaded machine has the gateway listing at all.
    let defs = dir.path().join("defs.json");
    write_def(&defs, "ledgerReport");
    let mut server = fixture("fx", &["--tools", "2", "--defs-file", defs.to_str().unwrap(), "--watch-defs"]);
    server["trust"] = json!("auto");
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({}));
    let before = c.tool_names();
    assert!(before.contains(&"mcp__fx__ledgerReport".to_string()), "{before:?}");
    write_def(&defs, "ledgerSummary");
    // Each list_changed is followed by a list; the one after the upstream's change shows it.
    // (One may come earlier: the first lists arrived while the client was initializing.)
    let mut after = before.clone();
    for _ in 0..3 {
        assert!(c.wait_note("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no list_changed: {:?}", c.notes);
        after = c.tool_names();
        if after != before {
            break;
        }
    }
    assert!(after.contains(&"mcp__fx__ledgerSummary".to_string()) && !after.contains(&"mcp__fx__ledgerReport".to_string()), "{after:?}");
}

fn gated(dir: &std::path::Path, trusted: bool) -> String {
    let calls = dir.join("calls.txt");
    let mut server = fixture("fx", &["--calls-file", calls.to_str().unwrap()]);
    server["approvalTools"] = json!(["echo"]);
    write_config(dir, &json!({"servers": [server], "gateway": {"trustedClient": trusted}}))
}

fn calls(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("calls.txt")).unwrap_or_default()
}

#[test]
fn a_gated_call_is_refused_when_the_client_cannot_be_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = McpClient::ready(&gated(dir.path(), false), json!({}));
    assert!(c.tool_names().contains(&"mcp__fx__echo".to_string()));
    let r = c.call("mcp__fx__echo", json!({"x": 1}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("approval"), "{r}");
    assert!(c.asked.is_empty(), "nothing may be asked of a client without elicitation: {:?}", c.asked);
    // An ungated tool of the same server runs.
    assert_eq!(c.call("mcp__fx__stats", json!({}))["isError"], false);
    assert_eq!(calls(dir.path()), "stats\n", "the gated tool must not have run");
}

#[test]
fn a_trusted_client_runs_gated_calls_without_being_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = McpClient::ready(&gated(dir.path(), true), json!({"elicitation": {"form": {}}}));
    let r = c.call("mcp__fx__echo", json!({"x": 1}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("\"x\":1"), "{r}");
    assert!(c.asked.is_empty(), "a trusted client is not asked: {:?}", c.asked);
    assert_eq!(calls(dir.path()), "echo\n");
}

#[test]
fn a_gated_call_asks_by_elicitation_and_runs_only_when_approved() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = McpClient::ready(&gated(dir.path(), false), json!({"elicitation": {"form": {}}}));
    let answers = std::sync::Arc::new(std::sync::Mutex::new(vec!["deny", "approve"]));
    let a = answers.clone();
    c.answer = Box::new(move |m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        let decision = a.lock().unwrap().pop().unwrap();
        json!({"action": "accept", "content": {"decision": decision}})
    });
    let r = c.call("mcp__fx__echo", json!({"x": 1}));
    assert_eq!(r["isError"], false, "{r}");
    let asked = &c.asked[0]["params"];
    assert_eq!(asked["mode"], "form", "{asked}");
    let message = asked["message"].as_str().unwrap();
    assert!(message.contains("echo") && message.contains("fx") && message.contains("\"x\": 1"), "{message}");
    let r = c.call("mcp__fx__echo", json!({"x": 2}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("denied"), "{r}");
    // A client that dismisses the form does not approve either.
    c.answer = Box::new(|_| json!({"action": "cancel"}));
    assert_eq!(c.call("mcp__fx__echo", json!({"x": 3}))["isError"], true);
    assert_eq!(calls(dir.path()), "echo\n", "only the approved call ran");
}

#[test]
fn deferred_tools_are_found_inspected_and_invoked_through_the_meta_tools() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--tools", "30"])], "gateway": {"defer": "always"}}));
    let mut c = McpClient::ready(&path, json!({}));
    let list = c.ok("tools/list", json!({}));
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tool_search", "tool_inspect", "tool_invoke", "tool_result_read"], "{names:?}");
    let search = tools[0]["description"].as_str().unwrap();
    assert!(search.contains("DEFERRED_TOOLS") && search.contains("mcp:fx"), "the deferred section belongs in tool_search: {search}");
    let found = text(&c.call("tool_search", json!({"query": "generated tool number 7"})));
    assert!(found.contains("mcp__fx__tool7"), "{found}");
    let sig = text(&c.call("tool_inspect", json!({"name": "mcp__fx__tool7"})));
    assert!(sig.contains("x"), "{sig}");
    let r = c.call("tool_invoke", json!({"name": "mcp__fx__tool7", "params": {"x": "5"}}));
    assert_eq!(r["isError"], false, "{r}");
    // "5" was repaired to 5 (deterministic repair) before the upstream call.
    assert!(text(&r).contains("tool_7 called with {\"x\":5}"), "{r}");
}

#[test]
fn an_unknown_tool_is_a_protocol_error_and_the_process_ends_with_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &[])]}));
    let mut c = McpClient::ready(&path, json!({}));
    let r = c.request("tools/call", json!({"name": "no_such_tool", "arguments": {}}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(c.finish().success());
}

#[test]
fn a_bad_config_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [{"id": "a"}]}));
    let mut c = spawn(&path, &[], &[]);
    let status = c.child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
    let err: Vec<String> = c.stderr.iter().collect();
    assert!(err.iter().any(|l| l.contains("not a usable config")), "{err:?}");
}

#[test]
fn an_upstream_log_message_during_a_call_reaches_the_calling_client() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--conformance"])], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({}));
    // Verbatim, all three, in order and before the call's result: the last is written just
    // before the result on stdio, so a few rounds would catch it arriving late or not at all.
    for round in 0..8 {
        c.notes.clear();
        let r = c.ok("tools/call", json!({"name": "mcp__fx__testToolWithLogging", "arguments": {}}));
        assert_eq!(text(&r), "Tool with logging executed successfully", "{r}");
        let logs: Vec<_> = c.notes.iter().filter(|n| n["method"] == "notifications/message").map(|n| n["params"].clone()).collect();
        let expected: Vec<_> = ["Tool execution started", "Tool processing data", "Tool execution completed"]
            .iter()
            .map(|d| json!({"level": "info", "data": d}))
            .collect();
        assert_eq!(logs, expected, "round {round}; notes: {:?}", c.notes);
    }
}

#[test]
fn a_burst_of_upstream_log_messages_all_arrive_in_order_before_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--log-burst", "300"])], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({}));
    // The server writes 300 lines and its answer at once: handled one task each by rmcp, the
    // last ones used to come after the result or be dropped (the call had ended).
    for round in 0..3 {
        c.notes.clear();
        let r = c.ok("tools/call", json!({"name": "mcp__fx__logBurst", "arguments": {}}));
        assert_eq!(text(&r), "logged 300", "{r}");
        let logs: Vec<_> = c.notes.iter().filter(|n| n["method"] == "notifications/message").map(|n| n["params"]["data"].clone()).collect();
        let expected: Vec<_> = (0..300).map(|i| json!(format!("line {i}"))).collect();
        assert_eq!(logs, expected, "round {round}");
    }
}

#[test]
fn progress_and_an_upstream_elicitation_reach_the_client_and_cancellation_reaches_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--slow-call-ms", "400", "--elicit"])], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({"elicitation": {"form": {}}}));
    assert!(c.tool_names().contains(&"mcp__fx__slow".to_string()));
    // Progress: the upstream's notifications come back under the client's own token.
    let r = c.ok("tools/call", json!({"name": "mcp__fx__slow", "arguments": {}, "_meta": {"progressToken": "p-7"}}));
    assert_eq!(text(&r), "slow done", "{r}");
    let progress: Vec<_> = c.notes.iter().filter(|n| n["method"] == "notifications/progress").collect();
    assert!(!progress.is_empty(), "no progress: {:?}", c.notes);
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "p-7"), "{progress:?}");
    // An upstream server's question during a call goes to the client that made the call.
    c.answer = Box::new(|m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        assert_eq!(m["params"]["message"], "Who are you?", "{m}");
        json!({"action": "accept", "content": {"nick": "ada"}})
    });
    let r = c.call("mcp__fx__ask", json!({}));
    assert!(text(&r).contains("\"nick\":\"ada\""), "{r}");
    assert_eq!(c.asked.len(), 1);
    // Cancellation: notifications/cancelled for our call reaches the upstream server.
    c.send(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {"name": "mcp__fx__slow", "arguments": {}}}));
    std::thread::sleep(Duration::from_millis(100));
    c.notify("notifications/cancelled", json!({"requestId": 900, "reason": "test"}));
    let mut cancelled = 0;
    for _ in 0..50 {
        let stats = c.call("mcp__fx__stats", json!({}));
        cancelled = serde_json::from_str::<serde_json::Value>(&text(&stats)).unwrap()["cancelled"].as_u64().unwrap();
        if cancelled == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(cancelled, 1, "the upstream call was not cancelled");
}

#[test]
fn upstream_names_are_listed_and_called_when_unique() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("a", &["--tools", "1"]), fixture("b", &[])],
        "gateway": {"defer": "never", "toolNames": "upstream"}}));
    let mut c = McpClient::ready(&path, json!({}));
    let mut names = c.tool_names();
    names.sort();
    // `echo` and `stats` are on both servers: full names; `tool_0` only on a: its own name.
    assert_eq!(names, ["mcp__a__echo", "mcp__a__stats", "mcp__b__echo", "mcp__b__stats", "tool_0", "tool_result_read"], "{names:?}");
    let r = c.call("tool_0", json!({"x": 3}));
    assert_eq!(text(&r), "tool_0 called with {\"x\":3}", "{r}");
    // A 2025-11-25 peer gets no resultType (2026-07-28 only; tests/gateway_http.rs).
    assert!(r.get("resultType").is_none(), "{r}");
    assert!(c.ok("tools/list", json!({})).get("resultType").is_none());
    // The full name still works (tool_search and tool_invoke speak it).
    assert_eq!(text(&c.call("mcp__a__tool0", json!({"x": 4}))), "tool_0 called with {\"x\":4}");
}

#[test]
fn an_upstream_that_relists_a_gated_tool_as_read_only_gets_it_held_not_run_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let defs = dir.path().join("defs.json");
    write_delete_def(&defs, json!({"readOnlyHint": false}));
    let calls_file = dir.path().join("calls.txt");
    let mut server = fixture("fx", &["--defs-file", defs.to_str().unwrap(), "--watch-defs", "--calls-file", calls_file.to_str().unwrap()]);
    server["approval"] = json!("destructive");
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({"elicitation": {"form": {}}}));
    c.answer = Box::new(|_| json!({"action": "accept", "content": {"decision": "approve"}}));
    let r = c.call("mcp__fx__delete", json!({}));
    assert_eq!((r["isError"].clone(), c.asked.len()), (json!(false), 1), "{r}");
    // The upstream now calls it read-only (and announces a new list): the gateway holds it.
    write_delete_def(&defs, json!({"readOnlyHint": true}));
    let t = std::time::Instant::now();
    while c.tool_names().contains(&"mcp__fx__delete".to_string()) {
        assert!(t.elapsed() < support::TIMEOUT, "the relaxed tool stayed listed");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The person is asked to review the change (and says no), never asked to run it.
    c.answer = Box::new(|_| json!({"action": "decline"}));
    let r = c.call("mcp__fx__delete", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("readOnlyHint annotation went from false to true") && text(&r).contains("not run"), "{r}");
    assert_eq!(c.asked.len(), 2, "one review: {:?}", c.asked);
    assert_eq!(c.asked[1]["params"]["requestedSchema"]["properties"]["approve"]["type"], "boolean", "{:?}", c.asked);
    assert_eq!(std::fs::read_to_string(&calls_file).unwrap(), "delete\n", "the held tool did not run");
}

/// Writes one tool, `name`, as the fixture's defs file (atomically: the fixture polls it).
fn write_def(defs: &std::path::Path, name: &str) {
    let tools = json!([{"name": name, "description": "Compile the quarterly ledger report.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "integer"}}}}]);
    let tmp = defs.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec(&tools).unwrap()).unwrap();
    std::fs::rename(&tmp, defs).unwrap();
}

#[test]
fn a_deferred_tool_renamed_upstream_is_found_and_invoked_under_its_new_name() {
    let dir = tempfile::tempdir().unwrap();
    let defs = dir.path().join("defs.json");
    write_def(&defs, "ledgerReport");
    let mut server = fixture("fx", &["--tools", "3", "--defs-file", defs.to_str().unwrap(), "--watch-defs"]);
    // Not pinned: a renamed tool is a new tool, which pins would hold.
    server["trust"] = json!("auto");
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "always"}}));
    let mut c = McpClient::ready(&path, json!({}));
    let found = text(&c.call("tool_search", json!({"query": "quarterly ledger report"})));
    assert!(found.contains("mcp__fx__ledgerReport"), "{found}");
    let listed = c.ok("tools/list", json!({}));
    // Renamed upstream: same namespace, same count, so the listing the client sees is the same.
    write_def(&defs, "ledgerSummary");
    let t = std::time::Instant::now();
    loop {
        let found = text(&c.call("tool_search", json!({"query": "quarterly ledger report"})));
        if found.contains("mcp__fx__ledgerSummary") {
            assert!(!found.contains("mcp__fx__ledgerReport"), "the old name is still in the pool: {found}");
            break;
        }
        assert!(t.elapsed() < support::TIMEOUT, "the new name never reached tool_search: {found}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(c.ok("tools/list", json!({})), listed, "the listing itself did not change");
    let sig = text(&c.call("tool_inspect", json!({"name": "mcp__fx__ledgerSummary"})));
    assert!(sig.contains("ledgerSummary"), "{sig}");
    let r = c.call("tool_invoke", json!({"name": "mcp__fx__ledgerSummary", "params": {"q": 3}}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("ledgerSummary called with {\"q\":3}"), "{r}");
}

/// A 2025-11-25 client cannot take input-required results: the gateway answers a 2026-07-28
/// upstream's input requests on `prompts/get` and `resources/read` itself, by asking the client
/// (`elicitation/create`), and the client gets the finished result.
#[test]
fn a_session_client_is_asked_an_upstream_prompts_and_resources_input_requests() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--modern", "--conformance"])], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({"elicitation": {"form": {}}}));
    c.answer = Box::new(|m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        let field = m["params"]["requestedSchema"]["required"][0].as_str().unwrap().to_owned();
        let value = if field == "ok" { json!(true) } else { json!("from the client") };
        json!({"action": "accept", "content": {field: value}})
    });
    let r = c.ok("prompts/get", json!({"name": "test_input_required_result_prompt"}));
    assert_eq!(r["messages"][0]["content"]["text"], "Prompt with context: from the client", "{r}");
    assert_eq!(c.asked.len(), 1, "{:?}", c.asked);
    assert_eq!(c.asked[0]["params"]["message"], "What context should the prompt use?");
    let r = c.ok("resources/read", json!({"uri": "test://input-required"}));
    assert_eq!(r["contents"][0]["text"], "state-ok: confirmed true", "{r}");
    assert_eq!(c.asked.len(), 2, "{:?}", c.asked);
}

/// An upstream that never answers `resources/list` (and has no cached list) delays the lists
/// only by the warm-up: the others' resources are listed, its absence blocks nothing. The
/// catalog would give up on it only after its 30 s list timeout, past the client's timeout.
#[test]
fn a_hung_upstream_does_not_block_resources_list() {
    let dir = tempfile::tempdir().unwrap();
    let servers = json!([fixture("ok", &["--conformance"]), fixture("hung", &["--conformance", "--hang-resources"])]);
    let path = write_config(dir.path(), &json!({"servers": servers, "gateway": {"defer": "never", "warmupMs": 1000}}));
    let mut c = McpClient::ready(&path, json!({}));
    // `ok` may still be listing after the warm-up on a loaded machine: its resources appear on a
    // later list. Every list answers meanwhile (the client's 20 s timeout is below the catalog's
    // 30 s list timeout, which a list waiting on `hung` would need).
    let mut first = 0;
    while first < 100 && !c.ok("resources/list", json!({})).to_string().contains("test://static-text") {
        std::thread::sleep(Duration::from_millis(200));
        first += 1;
    }
    for _ in 0..3 {
        let r = c.ok("resources/list", json!({}));
        let uris: Vec<&str> = r["resources"].as_array().unwrap().iter().filter_map(|i| i["uri"].as_str()).collect();
        // Only `ok` listed them, so they keep their bare names.
        assert!(uris.contains(&"test://static-text"), "{r}");
        let prompts = c.ok("prompts/list", json!({}));
        assert!(prompts["prompts"].as_array().unwrap().iter().any(|p| p["name"] == "test_simple_prompt"), "{prompts}");
    }
}
