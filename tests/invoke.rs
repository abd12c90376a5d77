//! `tool/invoke` over the real binary: the test plays the host, answering the sidecar's reverse
//! requests (`host/executeTool`, `host/repairToolCall`) and the `approval/request` notification.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

// ---------------------------------------------------------------------------------------------
// Playing the host
// ---------------------------------------------------------------------------------------------

/// Spawned and initialized with these capabilities and timeouts.
fn start(caps: Value, timeouts: Value) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"clientInfo": {"name": "invoke-test"}, "capabilities": caps, "timeouts": timeouts}));
    s.notify("initialized", json!({}));
    s
}

/// shutdown + exit with a clean exit code; notifications still in flight (catalog status,
/// withdrawn approvals) are skipped, but no reverse request may arrive.
fn done(mut s: Sidecar) {
    let r = call(&mut s, "shutdown", Value::Null, &mut silent);
    assert_eq!(r["result"], Value::Null, "{r}");
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

fn result_of(r: &Value) -> Value {
    r.get("result").cloned().unwrap_or_else(|| panic!("expected a result: {r}"))
}

fn error_of(r: &Value) -> Value {
    r.get("error").cloned().unwrap_or_else(|| panic!("expected an error: {r}"))
}

/// A host that must receive no reverse request at all.
fn silent(s: &mut Sidecar, m: &Value) {
    let _ = s;
    match method(m) {
        "host/executeTool" | "host/repairToolCall" | "approval/request" => panic!("the host should receive nothing here: {m}"),
        _ => {}
    }
}

fn invoke(s: &mut Sidecar, params: Value, on: &mut dyn FnMut(&mut Sidecar, &Value)) -> Value {
    call(s, "tool/invoke", params, on)
}

fn notes_create() -> Value {
    json!({
        "name": "notes_create", "namespace": "notes", "description": "Create a note with a title and a markdown body.",
        "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}, "required": ["title"]}
    })
}

fn notes_delete() -> Value {
    json!({
        "name": "notes_delete", "namespace": "notes", "description": "Delete a note by id.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        "approval": true
    })
}

fn register(s: &mut Sidecar, entries: Vec<Value>) {
    s.ok("registry/register", json!({"entries": entries}));
}

fn text_value(result: &Value) -> &str {
    result["output"]["value"].as_str().unwrap_or_else(|| panic!("no text output: {result}"))
}

/// Nothing at all arrives within `d` (used after a call is over, to check that nothing more
/// happens, e.g. a late `host/executeTool`).
fn quiet_for(s: &mut Sidecar, d: Duration) {
    let end = Instant::now() + d;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if let Some(m) = s.try_recv(left) {
            assert!(!m["method"].as_str().is_some_and(|m| m.starts_with("host/") || m == "approval/request"), "unexpected: {m}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Host tools
// ---------------------------------------------------------------------------------------------

#[test]
fn host_tool_round_trip_and_host_reported_error() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    let mut seen = Vec::new();
    let reply = json!({"content": [{"type": "text", "text": "created note 7"}], "_meta": {"x": 1}});
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"}), &mut |s, m| {
        assert_eq!(method(m), "host/executeTool", "{m}");
        seen.push(m["params"].clone());
        answer(s, m, reply.clone());
    });
    assert_eq!(seen, [json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"})]);
    assert_eq!(
        result_of(&r),
        json!({"output": {"type": "text", "value": "created note 7"}, "isError": false, "raw": reply}),
        "no `repaired` when the arguments were valid"
    );

    // The tool failing is a result the model reads, not a protocol error.
    let failed = json!({"content": [{"type": "text", "text": "disk full"}], "isError": true});
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "b"}, "callId": "c2"}), &mut |s, m| {
        assert_eq!(m["params"]["callId"], "c2");
        answer(s, m, failed.clone());
    });
    let res = result_of(&r);
    assert_eq!(res["output"], json!({"type": "error-text", "value": "disk full"}));
    assert_eq!(res["isError"], true);
    assert_eq!(res["raw"], failed);
    done(s);
}

#[test]
fn a_call_without_call_id_gets_one_and_the_host_sees_it() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    let mut executed = Vec::new();
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "a"}}), &mut runner(&mut executed));
    assert_eq!(result_of(&r)["isError"], false);
    let id = executed[0]["callId"].as_str().unwrap();
    assert!(!id.is_empty());
    done(s);
}

#[test]
fn host_without_host_tools_capability_runs_nothing() {
    let mut s = start(json!({}), json!({}));
    register(&mut s, vec![notes_create()]);
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"}), &mut silent);
    let res = result_of(&r);
    assert_eq!(res["isError"], true);
    assert_eq!(res["output"]["type"], "error-text");
    assert!(text_value(&res).contains("did not offer to execute tools"), "{res}");
    quiet_for(&mut s, Duration::from_millis(100));
    done(s);
}

#[test]
fn host_answering_with_a_protocol_error_is_a_readable_tool_error() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"}), &mut |s, m| {
        assert_eq!(method(m), "host/executeTool");
        s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": "no such window"}}));
    });
    let res = result_of(&r);
    assert_eq!(res["isError"], true);
    assert!(text_value(&res).contains("no such window"), "{res}");
    done(s);
}

#[test]
fn host_tool_call_timeout_is_a_readable_error_and_a_late_answer_is_ignored() {
    let mut s = start(json!({"hostTools": true}), json!({"callMs": 300}));
    register(&mut s, vec![notes_create()]);
    let mut asked = Vec::new();
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"}), &mut |_, m| {
        if method(m) == "host/executeTool" {
            asked.push(m.clone());
        }
    });
    let res = result_of(&r);
    assert_eq!(res["isError"], true, "{res}");
    assert!(text_value(&res).contains("300 ms"), "{res}");
    assert_eq!(asked.len(), 1);
    // The host answers too late: nothing comes of it, and the sidecar keeps working.
    answer(&mut s, &asked[0], text_result("created"));
    let mut executed = Vec::new();
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "b"}, "callId": "c2"}), &mut runner(&mut executed));
    assert_eq!(result_of(&r)["output"], json!({"type": "text", "value": "ran notes_create"}));
    done(s);
}

#[test]
fn cancel_while_the_host_runs_a_tool_answers_once_and_ignores_the_late_result() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    let id = send_req(&mut s, "tool/invoke", json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"}));
    let mut asked = Vec::new();
    let r = pump(&mut s, std::slice::from_ref(&id), &mut |s, m| {
        if method(m) == "host/executeTool" {
            asked.push(m.clone());
            s.notify("$/cancelRequest", json!({"id": id}));
        }
    });
    assert_eq!(error_of(&r[0])["code"], -32800, "{:?}", r[0]);
    // The sidecar withdraws its own request to the host, as LSP does.
    let withdrawn = s.recv();
    assert_eq!(withdrawn, json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": asked[0]["id"]}}));
    answer(&mut s, &asked[0], text_result("created"));
    // No second response to the cancelled request; the next request is answered normally.
    let st = call(&mut s, "registry/list", json!({"namespace": "notes"}), &mut |_, m| panic!("unexpected: {m}"));
    assert_eq!(result_of(&st)["entries"][0]["name"], "notes_create");
    done(s);
}

#[test]
fn a_host_answer_that_is_not_a_call_tool_result_is_a_readable_error() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    for bad in [json!("done"), Value::Null, json!([1, 2])] {
        let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"title": "a"}, "callId": "c1"}), &mut |s, m| {
            assert_eq!(method(m), "host/executeTool");
            answer(s, m, bad.clone());
        });
        let res = result_of(&r);
        assert_eq!(res["isError"], true, "{bad}: {res}");
        assert!(text_value(&res).contains("CallToolResult"), "{bad}: {res}");
    }
    done(s);
}

#[test]
fn concurrent_host_calls_get_their_own_results_whatever_the_answer_order() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    let ids: Vec<Value> = (0..3)
        .map(|i| send_req(&mut s, "tool/invoke", json!({"name": "notes_create", "arguments": {"title": format!("t{i}")}, "callId": format!("c{i}")})))
        .collect();
    let mut held = Vec::new();
    let rs = pump(&mut s, &ids, &mut |s, m| {
        if method(m) == "host/executeTool" {
            held.push(m.clone());
            if held.len() == 3 {
                // Answer the last request first.
                for m in held.iter().rev() {
                    let title = m["params"]["arguments"]["title"].as_str().unwrap();
                    answer(s, m, text_result(&format!("{} -> {title}", m["params"]["callId"].as_str().unwrap())));
                }
            }
        }
    });
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(result_of(r)["output"]["value"], format!("c{i} -> t{i}"), "{r}");
    }
    done(s);
}

// ---------------------------------------------------------------------------------------------
// Approval
// ---------------------------------------------------------------------------------------------

fn gated() -> Sidecar {
    let mut s = start(json!({"approval": true, "hostTools": true}), json!({"approvalMs": 10000}));
    register(&mut s, vec![notes_delete()]);
    s
}

#[test]
fn approved_call_runs_after_the_approval() {
    let mut s = gated();
    let mut order = Vec::new();
    let r = invoke(&mut s, json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}), &mut |s, m| match method(m) {
        "approval/request" => {
            assert!(m.get("id").is_none(), "approval/request is a notification: {m}");
            let p = &m["params"];
            assert_eq!((&p["callId"], &p["name"], &p["arguments"]), (&json!("del-1"), &json!("notes_delete"), &json!({"id": "n1"})));
            assert!(p["reason"].as_str().is_some_and(|r| !r.is_empty()), "{m}");
            order.push("approval");
            send_req(s, "approval/respond", json!({"approvalId": p["approvalId"], "decision": "approve"}));
        }
        "host/executeTool" => {
            order.push("execute");
            assert_eq!(m["params"], json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}));
            answer(s, m, text_result("deleted"));
        }
        "" => assert!(m.get("error").is_none(), "approval/respond failed: {m}"),
        _ => {}
    });
    assert_eq!(order, ["approval", "execute"]);
    assert_eq!(result_of(&r)["output"], json!({"type": "text", "value": "deleted"}));
    done(s);
}

#[test]
fn denied_call_never_runs_and_says_why() {
    let mut s = gated();
    let r = invoke(&mut s, json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}), &mut |s, m| match method(m) {
        "approval/request" => {
            send_req(s, "approval/respond", json!({"approvalId": m["params"]["approvalId"], "decision": "deny", "reason": "too risky"}));
        }
        "host/executeTool" => panic!("a denied call ran: {m}"),
        _ => {}
    });
    let res = result_of(&r);
    assert_eq!(res["isError"], true);
    assert!(text_value(&res).contains("too risky"), "{res}");
    assert!(res.get("raw").is_none(), "{res}");
    quiet_for(&mut s, Duration::from_millis(100));
    done(s);
}

#[test]
fn approval_timeout_is_a_denial_and_a_late_answer_is_refused() {
    let mut s = start(json!({"approval": true, "hostTools": true}), json!({"approvalMs": 300}));
    register(&mut s, vec![notes_delete()]);
    let mut approval_id = Value::Null;
    let r = invoke(&mut s, json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}), &mut |_, m| match method(m) {
        "approval/request" => approval_id = m["params"]["approvalId"].clone(),
        "host/executeTool" => panic!("a call without approval ran: {m}"),
        _ => {}
    });
    let res = result_of(&r);
    assert_eq!(res["isError"], true);
    assert!(text_value(&res).contains("No approval"), "{res}");
    assert!(approval_id.is_string());
    let e = error_of(&call(&mut s, "approval/respond", json!({"approvalId": approval_id, "decision": "approve"}), &mut silent));
    assert_eq!(e["code"], -32014, "{e}");
    assert_eq!(e["data"]["approvalId"], approval_id);
    quiet_for(&mut s, Duration::from_millis(200));
    done(s);
}

/// The model reads this text: a 300 ms wait must not be reported as "0 s".
#[test]
fn approval_timeout_message_states_the_real_wait() {
    let mut s = start(json!({"approval": true, "hostTools": true}), json!({"approvalMs": 300}));
    register(&mut s, vec![notes_delete()]);
    let r = invoke(&mut s, json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}), &mut |_, m| {
        assert_ne!(method(m), "host/executeTool", "{m}");
    });
    let res = result_of(&r);
    assert!(!text_value(&res).contains(" 0 s"), "{res}");
    done(s);
}

#[test]
fn cancel_during_approval_runs_nothing_and_withdraws_the_approval() {
    let mut s = gated();
    let id = send_req(&mut s, "tool/invoke", json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}));
    let mut approval_id = Value::Null;
    let r = pump(&mut s, std::slice::from_ref(&id), &mut |s, m| match method(m) {
        "approval/request" => {
            approval_id = m["params"]["approvalId"].clone();
            s.notify("$/cancelRequest", json!({"id": id}));
        }
        "host/executeTool" => panic!("a cancelled call ran: {m}"),
        _ => {}
    })
    .remove(0);
    assert_eq!(error_of(&r)["code"], -32800, "{r}");
    let e = error_of(&call(&mut s, "approval/respond", json!({"approvalId": approval_id, "decision": "approve"}), &mut silent));
    assert_eq!(e["code"], -32014, "{e}");
    quiet_for(&mut s, Duration::from_millis(200));
    done(s);
}

#[test]
fn without_the_approval_capability_a_gated_tool_never_runs() {
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![notes_delete()]);
    let r = invoke(&mut s, json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": "del-1"}), &mut silent);
    let res = result_of(&r);
    assert_eq!(res["isError"], true);
    assert!(text_value(&res).contains("approval"), "{res}");
    quiet_for(&mut s, Duration::from_millis(100));
    done(s);
}

#[test]
fn concurrent_gated_calls_each_wait_for_their_own_approval() {
    let mut s = gated();
    let a = send_req(&mut s, "tool/invoke", json!({"name": "notes_delete", "arguments": {"id": "1"}, "callId": "a"}));
    let b = send_req(&mut s, "tool/invoke", json!({"name": "notes_delete", "arguments": {"id": "2"}, "callId": "b"}));
    let mut pending: Vec<(String, Value)> = Vec::new();
    let mut executed = Vec::new();
    let rs = pump(&mut s, &[a, b], &mut |s, m| match method(m) {
        "approval/request" => {
            let p = &m["params"];
            let expected_arg = if p["callId"] == "a" { "1" } else { "2" };
            assert_eq!(p["arguments"]["id"], expected_arg, "{m}");
            pending.push((p["callId"].as_str().unwrap().to_string(), p["approvalId"].clone()));
            if pending.len() == 2 {
                assert_ne!(pending[0].1, pending[1].1, "each call has its own approval id");
                // Answer in reverse order of arrival: b is approved, a is denied.
                pending.sort_by(|x, y| x.0.cmp(&y.0));
                send_req(s, "approval/respond", json!({"approvalId": pending[1].1, "decision": "approve"}));
                send_req(s, "approval/respond", json!({"approvalId": pending[0].1, "decision": "deny", "reason": "not a"}));
            }
        }
        "host/executeTool" => {
            executed.push(m["params"].clone());
            let id = m["params"]["arguments"]["id"].as_str().unwrap().to_string();
            answer(s, m, text_result(&format!("deleted {id}")));
        }
        "" => assert!(m.get("error").is_none(), "approval/respond failed: {m}"),
        _ => {}
    });
    assert_eq!(executed, [json!({"name": "notes_delete", "arguments": {"id": "2"}, "callId": "b"})]);
    let (ra, rb) = (result_of(&rs[0]), result_of(&rs[1]));
    assert_eq!(rb["output"], json!({"type": "text", "value": "deleted 2"}));
    assert_eq!(ra["isError"], true);
    assert!(text_value(&ra).contains("not a"), "{ra}");
    done(s);
}

// ---------------------------------------------------------------------------------------------
// Unknown tools and repair
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_tool_is_an_error_and_is_never_repaired() {
    let mut s = start(json!({"hostTools": true, "repair": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    for args in [json!({"title": "a"}), json!("{broken"), json!({"arguments": {"x": 1}})] {
        let r = invoke(&mut s, json!({"name": "notes_craete", "arguments": args, "callId": "c1"}), &mut silent);
        let e = error_of(&r);
        assert_eq!(e["code"], -32010, "{e}");
        assert_eq!(e["data"]["name"], "notes_craete");
    }
    quiet_for(&mut s, Duration::from_millis(100));
    done(s);
}

#[test]
fn a_tool_whose_schema_does_not_compile_says_so_and_is_never_repaired() {
    // Issue 9 defect 13: no arguments can ever pass this schema, so repair would be pointless.
    let mut s = start(json!({"hostTools": true, "repair": true}), json!({}));
    let broken = json!({
        "name": "broken_tool", "namespace": "misc", "description": "A tool with a broken schema.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "nonsense"}}}
    });
    register(&mut s, vec![broken]);
    for args in [json!({"a": 1}), json!({}), json!("{\"a\": 1,}")] {
        let r = invoke(&mut s, json!({"name": "broken_tool", "arguments": args, "callId": "c1"}), &mut silent);
        let res = result_of(&r);
        assert_eq!(res["isError"], true, "{res}");
        assert!(res.get("repaired").is_none(), "{res}");
        let text = text_value(&res);
        assert!(text.contains("broken_tool") && text.contains("schema is invalid"), "{text}");
        assert!(text.contains("nonsense"), "names the compile error: {text}");
        assert!(!text.contains("Invalid arguments"), "not an argument error: {text}");
    }
    quiet_for(&mut s, Duration::from_millis(100));
    done(s);
}

fn search_docs() -> Value {
    json!({
        "name": "search_docs", "namespace": "docs", "description": "Search the documentation.",
        "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string"}, "count": {"type": "integer"}, "exact": {"type": "boolean"}
        }, "required": ["query"]}
    })
}

#[test]
fn every_deterministic_repair_runs_the_tool_with_the_fixed_arguments() {
    let cases: Vec<(&str, Value, Vec<&str>, Value)> = vec![
        (
            "double-encoded JSON",
            json!("{\"query\":\"rust\",\"count\":3}"),
            vec!["decoded double-encoded JSON"],
            json!({"query": "rust", "count": 3}),
        ),
        (
            "twice double-encoded JSON",
            json!(json!("{\"query\":\"rust\"}").to_string()),
            vec!["decoded double-encoded JSON (2 levels)"],
            json!({"query": "rust"}),
        ),
        ("lone arguments wrapper", json!({"arguments": {"query": "rust"}}), vec!["unwrapped lone `arguments` wrapper"], json!({"query": "rust"})),
        (
            "markdown fence",
            json!("```json\n{\"query\": \"rust\"}\n```"),
            vec!["decoded double-encoded JSON", "stripped markdown code fence"],
            json!({"query": "rust"}),
        ),
        (
            "trailing commas",
            json!("{\"query\": \"rust\", \"count\": 2,}"),
            vec!["decoded double-encoded JSON", "removed trailing commas"],
            json!({"query": "rust", "count": 2}),
        ),
        ("unquoted keys", json!("{query: \"rust\"}"), vec!["decoded double-encoded JSON", "quoted unquoted keys"], json!({"query": "rust"})),
        ("number as string", json!({"query": "rust", "count": "5"}), vec!["converted \"5\" to number at /count"], json!({"query": "rust", "count": 5})),
        (
            "boolean as string",
            json!({"query": "rust", "exact": "true"}),
            vec!["converted \"true\" to boolean at /exact"],
            json!({"query": "rust", "exact": true}),
        ),
    ];
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![search_docs()]);
    let mut failures = Vec::new();
    for (what, args, fixes, fixed) in cases {
        let mut executed = Vec::new();
        let r = invoke(&mut s, json!({"name": "search_docs", "arguments": args, "callId": what}), &mut runner(&mut executed));
        let res = result_of(&r);
        let expected_repair = json!({"by": "deterministic", "fixes": fixes, "arguments": fixed});
        let expected_exec = vec![json!({"name": "search_docs", "arguments": fixed, "callId": what})];
        if res["isError"] != false || res["repaired"] != expected_repair || executed != expected_exec {
            failures.push(format!("{what}:\n  result {res}\n  host got {executed:?}\n  expected repaired {expected_repair}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    done(s);
}

#[test]
fn deterministic_repair_comes_first_and_the_host_is_not_asked() {
    let mut s = start(json!({"hostTools": true, "repair": true}), json!({}));
    register(&mut s, vec![search_docs()]);
    let mut executed = Vec::new();
    let r = invoke(&mut s, json!({"name": "search_docs", "arguments": "{\"query\": \"rust\",}", "callId": "c"}), &mut runner(&mut executed));
    assert_eq!(result_of(&r)["repaired"]["by"], "deterministic", "{r}");
    assert_eq!(executed.len(), 1);
    done(s);
}

#[test]
fn unparseable_arguments_are_not_turned_into_an_empty_object() {
    // No property is required, so `{}` would validate: the call must still not run.
    let lookup = json!({
        "name": "lookup", "namespace": "docs", "description": "Look something up.",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}
    });
    let mut s = start(json!({"hostTools": true}), json!({}));
    register(&mut s, vec![lookup]);
    for args in [json!("{query: "), json!("not json at all"), json!(""), json!("[1, 2"), json!(42)] {
        let r = invoke(&mut s, json!({"name": "lookup", "arguments": args, "callId": "c"}), &mut silent);
        let res = result_of(&r);
        assert_eq!(res["isError"], true, "{args}: {res}");
        assert!(res.get("repaired").is_none(), "{args}: {res}");
        assert!(text_value(&res).contains("it was not run"), "{args}: {res}");
    }
    quiet_for(&mut s, Duration::from_millis(100));
    done(s);
}

fn host_repair(reply: Value) -> (Value, Vec<Value>, Vec<Value>) {
    let mut s = start(json!({"hostTools": true, "repair": true}), json!({}));
    register(&mut s, vec![notes_create()]);
    let (mut repairs, mut executed) = (Vec::new(), Vec::new());
    let r = invoke(&mut s, json!({"name": "notes_create", "arguments": {"body": "x"}, "callId": "c1"}), &mut |s, m| match method(m) {
        "host/repairToolCall" => {
            repairs.push(m["params"].clone());
            answer(s, m, reply.clone());
        }
        "host/executeTool" => {
            executed.push(m["params"].clone());
            answer(s, m, text_result("created"));
        }
        "approval/request" => panic!("{m}"),
        _ => {}
    });
    done(s);
    (result_of(&r), repairs, executed)
}

fn assert_one_repair_request(repairs: &[Value]) {
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    let p = &repairs[0];
    assert_eq!(p["name"], "notes_create");
    assert_eq!(p["inputSchema"], notes_create()["inputSchema"]);
    assert_eq!(p["arguments"], json!({"body": "x"}));
    assert!(p["error"].as_str().is_some_and(|e| e.contains("title")), "the validator's error names the field: {p}");
}

#[test]
fn host_repair_fixes_what_deterministic_repair_cannot() {
    let fixed = json!({"title": "T", "body": "x"});
    let (res, repairs, executed) = host_repair(json!({"arguments": fixed}));
    assert_one_repair_request(&repairs);
    assert_eq!(executed, [json!({"name": "notes_create", "arguments": fixed, "callId": "c1"})]);
    assert_eq!(res["isError"], false, "{res}");
    assert_eq!(res["repaired"]["by"], "host");
    assert_eq!(res["repaired"]["arguments"], fixed);
    assert!(res["repaired"]["fixes"].as_array().is_some_and(|f| !f.is_empty()), "{res}");
}

#[test]
fn host_repair_gets_the_deterministic_fixes_too() {
    // Issue 52: the host's LLM wraps and encodes as a model does; its answer is mended alike.
    let fixed = json!({"title": "T", "body": "x"});
    for (reply, fix) in [
        (json!({"arguments": {"arguments": fixed}}), "unwrapped lone `arguments` wrapper"),
        (json!({"arguments": fixed.to_string()}), "decoded double-encoded JSON"),
    ] {
        let (res, repairs, executed) = host_repair(reply.clone());
        assert_one_repair_request(&repairs);
        assert_eq!(executed, [json!({"name": "notes_create", "arguments": fixed, "callId": "c1"})], "{reply}");
        assert_eq!(res["isError"], false, "{reply}: {res}");
        assert_eq!(res["repaired"]["by"], "host");
        assert_eq!(res["repaired"]["arguments"], fixed);
        assert_eq!(res["repaired"]["fixes"], json!(["repaired by the host", fix]), "{reply}: {res}");
    }
}

#[test]
fn host_repair_that_is_still_invalid_runs_nothing() {
    let (res, repairs, executed) = host_repair(json!({"arguments": {"body": 5}}));
    assert_one_repair_request(&repairs);
    assert!(executed.is_empty(), "{executed:?}");
    assert_eq!(res["isError"], true);
    assert!(text_value(&res).contains("the host's repair was still invalid"), "{res}");
}

#[test]
fn host_giving_up_on_repair_runs_nothing() {
    let (res, repairs, executed) = host_repair(Value::Null);
    assert_one_repair_request(&repairs);
    assert!(executed.is_empty(), "{executed:?}");
    assert_eq!(res["isError"], true);
    assert!(res.get("repaired").is_none(), "{res}");
    assert!(text_value(&res).contains("title"), "the model is told what is wrong: {res}");
}

// ---------------------------------------------------------------------------------------------
// MCP tools through the fixture server
// ---------------------------------------------------------------------------------------------

/// A sidecar with the fixture MCP server configured (these extra flags), warmed and synced;
/// returns it with the registered wire names.
fn with_fixture(flags: &[&str]) -> (Sidecar, Vec<String>) {
    with_fixture_timeouts(flags, json!({}))
}

fn with_fixture_timeouts(flags: &[&str], timeouts: Value) -> (Sidecar, Vec<String>) {
    let mut s = start(json!({}), timeouts);
    let servers = json!({"servers": [{"id": "fx", "name": "fixture", "enabled": true,
        "transport": {"type": "stdio", "command": fixture_mcp(), "args": flags}}]});
    result_of(&call(&mut s, "catalog/setServers", servers, &mut silent));
    let st = result_of(&call(&mut s, "catalog/refresh", json!({"serverId": "fx"}), &mut silent));
    assert_eq!(st["state"], "ready", "{st}");
    let sync = result_of(&call(&mut s, "registry/syncMcp", json!({}), &mut silent));
    let names: Vec<String> = sync["registered"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect();
    (s, names)
}

fn wire(names: &[String], tool: &str) -> String {
    names.iter().find(|n| n.ends_with(&format!("__{tool}"))).unwrap_or_else(|| panic!("no {tool} in {names:?}")).clone()
}

#[test]
fn mcp_echo_round_trip() {
    let (mut s, names) = with_fixture(&[]);
    let echo = wire(&names, "echo");
    assert!(echo.starts_with("mcp__"), "{echo}");
    let r = invoke(&mut s, json!({"name": echo, "arguments": {"msg": "hi"}, "callId": "e1"}), &mut silent);
    let res = result_of(&r);
    assert_eq!(res["isError"], false, "{res}");
    assert_eq!(res["output"]["type"], "text");
    assert_eq!(serde_json::from_str::<Value>(text_value(&res)).unwrap(), json!({"msg": "hi"}));
    assert_eq!(res["raw"]["content"][0]["type"], "text");
    done(s);
}

#[test]
fn mcp_progress_is_forwarded_with_the_call_id_as_token() {
    let (mut s, names) = with_fixture(&["--slow-call-ms", "500"]);
    let slow = wire(&names, "slow");
    let mut progress = Vec::new();
    let r = invoke(&mut s, json!({"name": slow, "arguments": {}, "callId": "slow-1"}), &mut |_, m| {
        if method(m) == "$/progress" && m["params"]["token"] == "slow-1" {
            progress.push(m["params"]["value"].clone());
        }
    });
    assert_eq!(result_of(&r)["output"], json!({"type": "text", "value": "slow done"}));
    assert!(!progress.is_empty(), "no $/progress with the call id as token");
    // The value is the MCP progress params.
    assert!(progress.iter().all(|v| v["progress"].is_number()), "{progress:?}");
    done(s);
}

fn cancelled_count(s: &mut Sidecar, stats: &str) -> u64 {
    let r = invoke(s, json!({"name": stats, "arguments": {}}), &mut silent);
    let v: Value = serde_json::from_str(text_value(&result_of(&r))).unwrap();
    v["cancelled"].as_u64().unwrap()
}

#[test]
fn cancelling_an_mcp_call_tells_the_server() {
    let (mut s, names) = with_fixture(&["--slow-call-ms", "10000"]);
    let (slow, stats) = (wire(&names, "slow"), wire(&names, "stats"));
    assert_eq!(cancelled_count(&mut s, &stats), 0);
    let id = send_req(&mut s, "tool/invoke", json!({"name": slow, "arguments": {}, "callId": "slow-1"}));
    // The fixture reports progress every 2 s of its 10; cancel once the call is surely at the
    // server, i.e. at its first progress report.
    let started = Instant::now();
    let r = pump(&mut s, std::slice::from_ref(&id), &mut |s, m| {
        if method(m) == "$/progress" && m["params"]["token"] == "slow-1" {
            s.notify("$/cancelRequest", json!({"id": id}));
        }
    });
    assert_eq!(error_of(&r[0])["code"], -32800, "{:?}", r[0]);
    assert!(started.elapsed() < Duration::from_secs(8), "answered long before the call would end");
    // The server is told (notifications/cancelled); its count goes up shortly after.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = cancelled_count(&mut s, &stats);
        if n >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the fixture never saw the cancellation");
        std::thread::sleep(Duration::from_millis(50));
    }
    done(s);
}

#[test]
fn an_mcp_call_over_call_ms_is_a_readable_error() {
    let (mut s, names) = with_fixture_timeouts(&["--slow-call-ms", "10000"], json!({"callMs": 500}));
    let slow = wire(&names, "slow");
    let started = Instant::now();
    let r = invoke(&mut s, json!({"name": slow, "arguments": {}, "callId": "slow-1"}), &mut silent);
    let res = result_of(&r);
    assert_eq!(res["isError"], true, "{res}");
    assert_eq!(res["output"]["type"], "error-text");
    assert!(started.elapsed() < Duration::from_secs(5), "bounded by callMs");
    done(s);
}

/// The fixture's count of `notifications/cancelled`; 0 while it cannot answer (not reading).
fn told_count(s: &mut Sidecar, stats: &str) -> u64 {
    let r = result_of(&invoke(s, json!({"name": stats, "arguments": {}}), &mut silent));
    let v: Value = serde_json::from_str(text_value(&r)).unwrap_or_default();
    v["told"].as_u64().unwrap_or(0)
}

/// Arguments far over a pipe's buffer (64 KiB): their write blocks while the server reads nothing.
fn big_arguments() -> Value {
    json!({"msg": "x".repeat(1 << 20)})
}

#[test]
fn a_call_to_a_server_that_stopped_reading_times_out_instead_of_stalling() {
    let (mut s, names) = with_fixture_timeouts(&["--stall-stdin-ms", "0"], json!({"callMs": 500}));
    let (stall, echo) = (wire(&names, "stall"), wire(&names, "echo"));
    assert_eq!(text_value(&result_of(&invoke(&mut s, json!({"name": stall, "arguments": {}}), &mut silent))), "stalled");
    // The harness's own bounded wait (`Sidecar::recv`) fails the test if this hangs.
    let r = invoke(&mut s, json!({"name": echo, "arguments": big_arguments(), "callId": "big-1"}), &mut silent);
    let res = result_of(&r);
    let text = text_value(&res);
    assert_eq!(res["isError"], true, "{:.300}", text);
    assert!(text.contains("timed out after 500 ms"), "{text:.300}");
    done(s);
}

#[test]
fn a_request_cut_off_by_its_timeout_is_sent_whole_and_the_server_told() {
    let (mut s, names) = with_fixture_timeouts(&["--stall-stdin-ms", "1500"], json!({"callMs": 300}));
    let (stall, echo, stats) = (wire(&names, "stall"), wire(&names, "echo"), wire(&names, "stats"));
    result_of(&invoke(&mut s, json!({"name": stall, "arguments": {}}), &mut silent));
    let r = invoke(&mut s, json!({"name": echo, "arguments": big_arguments(), "callId": "big-1"}), &mut silent);
    let res = result_of(&r);
    assert_eq!(res["isError"], true, "the call fails at its timeout, not when the server reads again: {:.300}", text_value(&res));
    // Once the server reads again it gets the whole request, then `notifications/cancelled`.
    let deadline = Instant::now() + Duration::from_secs(10);
    while told_count(&mut s, &stats) == 0 {
        assert!(Instant::now() < deadline, "the fixture never saw the cancellation");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The session is intact: the next message was not glued to half a line.
    let r = invoke(&mut s, json!({"name": echo, "arguments": {"msg": "after"}}), &mut silent);
    assert_eq!(serde_json::from_str::<Value>(text_value(&result_of(&r))).unwrap(), json!({"msg": "after"}));
    done(s);
}

#[test]
fn an_mcp_server_crashing_mid_call_is_a_readable_error() {
    let (mut s, names) = with_fixture(&["--crash-on-call", "echo"]);
    let echo = wire(&names, "echo");
    let r = invoke(&mut s, json!({"name": echo, "arguments": {"msg": "hi"}, "callId": "e1"}), &mut silent);
    let res = result_of(&r);
    assert_eq!(res["isError"], true, "{res}");
    assert_eq!(res["output"]["type"], "error-text");
    assert!(text_value(&res).contains(&echo), "names the tool: {res}");
    // The sidecar keeps answering.
    let st = result_of(&call(&mut s, "catalog/status", json!({}), &mut silent));
    assert_eq!(st["servers"][0]["id"], "fx");
    let r = result_of(&call(&mut s, "registry/list", json!({}), &mut silent));
    assert!(r["entries"].as_array().unwrap().iter().any(|e| e["name"] == echo.as_str()), "{r}");
    done(s);
}

/// A cancel and an approval for the same call, sent in one write (cancel first): the call was
/// cancelled (-32800) before the approval was read, so it must never run and the approval must
/// be refused as late (-32014). Repeated because the bug is a race (unbiased `select!`s).
#[test]
fn cancel_then_approve_in_one_write_never_runs_the_call() {
    let mut s = gated();
    let (mut ran, mut accepted) = (Vec::new(), Vec::new());
    for i in 0..40 {
        let call_id = format!("del-{i}");
        let id = send_req(&mut s, "tool/invoke", json!({"name": "notes_delete", "arguments": {"id": "n1"}, "callId": call_id}));
        let approval_id = loop {
            let m = s.recv();
            if method(&m) == "approval/request" {
                break m["params"]["approvalId"].clone();
            }
        };
        let respond_id = s.next_id();
        let mut bytes = frame(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}).to_string());
        bytes.extend(frame(
            &json!({"jsonrpc": "2.0", "id": respond_id, "method": "approval/respond",
                "params": {"approvalId": approval_id, "decision": "approve"}})
            .to_string(),
        ));
        s.send_raw(&bytes);
        let mut on = |s: &mut Sidecar, m: &Value| {
            if method(m) == "host/executeTool" {
                ran.push(m["params"]["callId"].clone());
                answer(s, m, text_result("deleted"));
            }
        };
        let rs = pump(&mut s, &[id, json!(respond_id)], &mut on);
        assert_eq!(error_of(&rs[0])["code"], -32800, "{:?}", rs[0]);
        if rs[1].get("result").is_some() {
            accepted.push(call_id);
        }
        // A late executeTool would come right after; give it a moment.
        while let Some(m) = s.try_recv(Duration::from_millis(20)) {
            on(&mut s, &m);
        }
    }
    assert!(ran.is_empty() && accepted.is_empty(), "cancelled calls that still ran: {ran:?}; approvals accepted after the cancel: {accepted:?}");
    done(s);
}

// ---------------------------------------------------------------------------------------------
// Approval follows the server's configuration at call time (issue 15.1, 15.3)
// ---------------------------------------------------------------------------------------------

/// The fixture server `fx` with these config fields (`approvalTools`, `approval`) and flags.
fn fx_config(flags: &[&str], extra: Value) -> Value {
    let mut server = json!({"id": "fx", "name": "fixture", "enabled": true,
        "transport": {"type": "stdio", "command": fixture_mcp(), "args": flags}});
    for (k, v) in extra.as_object().unwrap() {
        server[k] = v.clone();
    }
    json!({"servers": [server]})
}

fn calls_in(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect()
}

/// Answers every approval request with `decision`, counting them.
fn approver<'a>(decision: &'a str, asked: &'a mut Vec<Value>) -> impl FnMut(&mut Sidecar, &Value) + 'a {
    move |s, m| {
        if method(m) == "approval/request" {
            asked.push(m["params"].clone());
            send_req(s, "approval/respond", json!({"approvalId": m["params"]["approvalId"], "decision": decision}));
        }
    }
}

#[test]
fn approval_follows_the_server_config_at_once_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let flags = ["--tools", "40", "--calls-file", calls.to_str().unwrap()];
    let mut s = start(json!({"approval": true}), json!({"approvalMs": 10000}));
    result_of(&call(&mut s, "catalog/setServers", fx_config(&flags, json!({})), &mut silent));
    assert_eq!(result_of(&call(&mut s, "catalog/refresh", json!({"serverId": "fx"}), &mut silent))["state"], "ready");
    let sync = result_of(&call(&mut s, "registry/syncMcp", json!({}), &mut silent));
    let names: Vec<String> = sync["registered"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect();
    let (echo, tool_3) = (wire(&names, "echo"), wire(&names, "tool3"));
    // A small window defers the server's tools behind the meta-tools.
    let plan = result_of(&call(&mut s, "exposition/plan", json!({"contextWindow": 2000, "scope": {}, "include": ["deferred"]}), &mut silent));
    let plan_id = plan["planId"].as_str().unwrap().to_string();
    assert!(plan["deferred"].as_array().unwrap().iter().any(|d| d["name"] == tool_3), "{plan}");

    // Ungated, the direct call runs without a question.
    let mut asked = Vec::new();
    let r = invoke(&mut s, json!({"name": echo, "arguments": {"a": 1}, "callId": "c0"}), &mut approver("deny", &mut asked));
    assert_eq!(result_of(&r)["isError"], false, "{r}");
    assert!(asked.is_empty(), "{asked:?}");

    // The host now gates both tools; no sync follows. Same transport: the server keeps running.
    let gated = fx_config(&flags, json!({"approvalTools": ["echo", "tool_3", "tool_0"]}));
    result_of(&call(&mut s, "catalog/setServers", gated, &mut silent));
    let before = calls_in(&calls).len();

    // Direct path: asked, denied, not run.
    let r = invoke(&mut s, json!({"name": echo, "arguments": {"a": 2}, "callId": "c1"}), &mut approver("deny", &mut asked));
    assert_eq!(result_of(&r)["isError"], true, "{r}");
    assert_eq!(asked.len(), 1, "the direct call was not put to the user: {asked:?}");
    assert_eq!(asked[0]["callId"], "c1");

    // After a deterministic repair ("5" -> 5): still asked, denied, not run.
    let tool_0 = wire(&names, "tool0");
    let r = invoke(&mut s, json!({"name": tool_0, "arguments": {"x": "5"}, "callId": "c2"}), &mut approver("deny", &mut asked));
    assert_eq!(result_of(&r)["isError"], true, "{r}");
    assert_eq!(asked.len(), 2, "the repaired call was not put to the user: {asked:?}");
    assert_eq!(asked[1]["arguments"], json!({"x": 5}), "{asked:?}");

    // Through tool_invoke with a plan made before the change: refused, not run, every time
    // (valid params, so nothing but the approval rule stops it).
    for _ in 0..2 {
        let r = invoke(
            &mut s,
            json!({"name": "tool_invoke", "arguments": {"name": tool_3, "params": {"x": 1}}, "callId": "c3", "planId": plan_id}),
            &mut approver("approve", &mut asked),
        );
        assert_eq!(result_of(&r)["isError"], true, "{r}");
    }
    let last = invoke(
        &mut s,
        json!({"name": "tool_invoke", "arguments": {"name": tool_3, "params": {"x": 1}}, "callId": "c4", "planId": plan_id}),
        &mut approver("approve", &mut asked),
    );
    assert!(text_value(&result_of(&last)).contains("approval"), "{last}");
    assert_eq!(calls_in(&calls).len(), before, "a gated call ran: {:?}", calls_in(&calls));

    // Approved, the direct call runs.
    let r = invoke(&mut s, json!({"name": echo, "arguments": {"a": 3}, "callId": "c5"}), &mut approver("approve", &mut asked));
    assert_eq!(result_of(&r)["isError"], false, "{r}");
    assert_eq!(calls_in(&calls)[before..], ["echo"]);
    done(s);
}

#[test]
fn the_destructive_policy_asks_for_every_tool_not_declared_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let (defs, calls) = (dir.path().join("defs.json"), dir.path().join("calls"));
    std::fs::write(
        &defs,
        json!([
            {"name": "reader", "description": "Reads", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
            {"name": "writer", "description": "Writes", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false}},
            {"name": "plain", "description": "No annotations", "inputSchema": {"type": "object"}}
        ])
        .to_string(),
    )
    .unwrap();
    let flags = ["--defs-file", defs.to_str().unwrap(), "--calls-file", calls.to_str().unwrap()];
    let mut s = start(json!({"approval": true}), json!({"approvalMs": 10000}));
    result_of(&call(&mut s, "catalog/setServers", fx_config(&flags, json!({"approval": "destructive"})), &mut silent));
    assert_eq!(result_of(&call(&mut s, "catalog/refresh", json!({"serverId": "fx"}), &mut silent))["state"], "ready");
    let sync = result_of(&call(&mut s, "registry/syncMcp", json!({}), &mut silent));
    let names: Vec<String> = sync["registered"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect();
    // Sync marks them too, so a plan never defers them.
    let list = result_of(&call(&mut s, "registry/list", json!({"namespace": "mcp:fx"}), &mut silent));
    let approval_of = |tool: &str| list["entries"].as_array().unwrap().iter().find(|e| e["name"] == wire(&names, tool)).map(|e| e["approval"].clone());
    assert_eq!((approval_of("reader"), approval_of("writer"), approval_of("plain")), (Some(json!(false)), Some(json!(true)), Some(json!(true))), "{list}");

    let mut asked = Vec::new();
    for tool in ["reader", "writer", "plain"] {
        let r = invoke(&mut s, json!({"name": wire(&names, tool), "arguments": {}, "callId": tool}), &mut approver("deny", &mut asked));
        assert_eq!(result_of(&r)["isError"], tool != "reader", "{tool}: {r}");
    }
    let asked_for: Vec<&Value> = asked.iter().map(|a| &a["callId"]).collect();
    assert_eq!(asked_for, [&json!("writer"), &json!("plain")]);
    assert_eq!(calls_in(&calls), ["reader"]);
    done(s);
}
