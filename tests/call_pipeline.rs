//! The call pipeline (issue 51 §2, `src/service/pipeline.rs`): a call's cross-cutting steps are
//! written in one file, in one order (`tests/layers.rs` checks that no other file calls them).
//! Here the order shows where it can be seen, through the real binary and the fixture MCP
//! server: a call the user denies is audited (its approval and its run) but counts no usage;
//! a result cut to the budget counts once, and reading the rest of it from the shelf runs
//! nothing (no audit record, no count).

mod support;

use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use support::{fixture_mcp, invoke_answering as invoke, Sidecar, TIMEOUT};

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// The audit records once `pred` holds of them (the writer is a thread of its own).
fn records_when(path: &Path, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let t = Instant::now();
    loop {
        let all = records(path);
        if pred(&all) {
            return all;
        }
        assert!(t.elapsed() < TIMEOUT, "no {what} in {}:\n{}", path.display(), std::fs::read_to_string(path).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The calls counted for `tool` under the default usage key.
fn counted(s: &mut Sidecar, tool: &str) -> u64 {
    let l = s.ok_past_notes("usage/list", json!({"usageKey": "default"}));
    let tools = l["keys"][0]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().find(|t| t["name"] == tool).map_or(0, |t| t["callsInWindow"].as_u64().unwrap())
}

#[test]
fn a_denied_call_is_audited_uncounted_and_a_cut_result_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": dir.path().join("cache"), "capabilities": {"approval": true},
        "audit": {"file": log}, "timeouts": {"connectMs": 10000, "listMs": 10000}}));
    let server = json!({"id": "fx", "name": "fx", "approvalTools": ["echo"], "transport": {"type": "stdio", "command": fixture_mcp(),
        "args": ["--big-result-bytes", "400000"]}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [server]}));
    s.until_first_ready();
    s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(s.ok_past_notes("usage/list", json!({"usageKey": "default"}))["keys"][0]["usageKey"], "default");

    // Denied: the approval and the run are audited (observe is outside execution), nothing is
    // counted (count sees only a tool that ran).
    let (r, asked) = invoke(&mut s, json!({"name": "mcp__fx__echo", "arguments": {"x": 1}, "callId": "denied-1"}), &json!({"decision": "deny"}));
    assert!(asked && r["isError"] == true, "{r}");
    let all = records_when(&log, "denied call", |all| all.iter().any(|r| r["event"] == "call" && r["callId"] == "denied-1"));
    let call = all.iter().find(|r| r["event"] == "call" && r["callId"] == "denied-1").unwrap();
    assert_eq!(call["outcome"], "denied", "{call}");
    assert!(all.iter().any(|r| r["event"] == "approvalDecided" && r["callId"] == "denied-1" && r["decision"] == "denied"), "{all:?}");
    assert_eq!(counted(&mut s, "mcp__fx__echo"), 0, "a denied call counts no usage");

    // Approved: audited ok, counted once.
    let (r, asked) = invoke(&mut s, json!({"name": "mcp__fx__echo", "arguments": {"x": 2}, "callId": "approved-1"}), &json!({"decision": "approve"}));
    assert!(asked && r["isError"] == false && r["approvedBy"] == "host", "{r}");
    assert_eq!(counted(&mut s, "mcp__fx__echo"), 1);

    // Cut: the answer is over the budget, counted once; its rest is read from the shelf.
    let (r, asked) = invoke(&mut s, json!({"name": "mcp__fx__big", "arguments": {}, "callId": "big-1"}), &Value::Null);
    assert!(!asked && r["isError"] == false, "{r}");
    let reference = r["cut"]["ref"].as_str().unwrap_or_else(|| panic!("not cut: {}", r["cut"])).to_string();
    let page = s.ok_past_notes("tool/invoke", json!({"name": "tool_result_read", "arguments": {"ref": reference, "offset": r["cut"]["shownTokens"]}, "callId": "read-1"}));
    assert_eq!(page["isError"], false, "{page}");
    assert_eq!(counted(&mut s, "mcp__fx__big"), 1, "a cut result counts once; reading it runs nothing");
    assert_eq!(counted(&mut s, "tool_result_read"), 0);
    s.shutdown();
    let all = records(&log);
    let calls: Vec<&Value> = all.iter().filter(|r| r["event"] == "call").collect();
    let ids: Vec<&str> = calls.iter().map(|r| r["callId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["denied-1", "approved-1", "big-1"], "one record per run, none for a read of the shelf: {calls:?}");
    assert_eq!(calls[2]["outcome"], "ok");
}
