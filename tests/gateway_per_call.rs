//! `toolreg mcp` under a client that opens a new process for every call, as
//! langchain-mcp-adapters' `get_tools()` over stdio and llama-index's `BasicMCPClient` do:
//! search in one process, inspect in another, invoke in a third. Nothing a call needs may live
//! in a process's memory: the deferred tool runs, and bad arguments get the signature and what
//! was wrong.

mod support;

use serde_json::{json, Value};
use support::gateway::{fixture, text, write_config, McpClient};

/// One call in a process of its own, as those clients make it; the process ends cleanly.
fn call_in_new_process(config: &str, name: &str, arguments: Value) -> Value {
    let mut c = McpClient::ready(config, json!({}));
    c.ok("tools/list", json!({}));
    let r = c.call(name, arguments);
    assert!(c.finish().success(), "{name}: the process did not end cleanly");
    r
}

fn config(dir: &std::path::Path) -> String {
    let calls = dir.join("calls.txt");
    let server = fixture("fx", &["--tools", "30", "--calls-file", calls.to_str().unwrap()]);
    write_config(dir, &json!({"servers": [server], "gateway": {"defer": "always", "cacheDir": dir.join("state")}}))
}

fn calls(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("calls.txt")).unwrap_or_default()
}

#[test]
fn search_inspect_and_invoke_each_in_a_new_process_run_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path());
    let found = call_in_new_process(&path, "tool_search", json!({"query": "generated tool number 7"}));
    assert!(text(&found).contains("mcp__fx__tool7"), "{found}");
    let sig = call_in_new_process(&path, "tool_inspect", json!({"name": "mcp__fx__tool7"}));
    assert!(text(&sig).contains("declare function mcp__fx__tool7("), "{sig}");
    let r = call_in_new_process(&path, "tool_invoke", json!({"name": "mcp__fx__tool7", "params": {"x": 5}}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("tool_7 called with {\"x\":5}"), "{r}");
    assert_eq!(calls(dir.path()), "tool_7\n", "the upstream ran it once");
}

#[test]
fn a_tool_never_inspected_runs_in_a_fresh_process_and_bad_arguments_get_the_signature() {
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path());
    // No search, no inspect: valid params run at once.
    let r = call_in_new_process(&path, "tool_invoke", json!({"name": "mcp__fx__tool3", "params": {"x": 1}}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("tool_3 called with {\"x\":1}"), "{r}");
    // Params that no repair can make valid: not run, answered with what was wrong and the
    // signature, the same in every process, inspected or not.
    for inspect_first in [false, true] {
        let mut c = McpClient::ready(&path, json!({}));
        if inspect_first {
            c.call("tool_inspect", json!({"name": "mcp__fx__tool3"}));
        }
        let r = c.call("tool_invoke", json!({"name": "mcp__fx__tool3", "params": {"x": "three"}}));
        assert!(c.finish().success());
        assert_eq!(r["isError"], true, "{r}");
        let said = text(&r);
        assert!(said.contains("Invalid params for mcp__fx__tool3") && said.contains("not run"), "{said}");
        assert!(said.contains("integer"), "says what was wrong: {said}");
        assert!(said.contains("declare function mcp__fx__tool3("), "{said}");
    }
    assert_eq!(calls(dir.path()), "tool_3\n", "only the valid call reached the upstream");
}
