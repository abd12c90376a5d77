//! Bad input gets a clear error, never a crash, and the sidecar reads on.
mod support;
use serde_json::{json, Value};
use support::*;

#[test]
fn malformed_json_is_32700_with_null_id_and_reading_goes_on() {
    let mut s = Sidecar::ready();
    s.send_raw(&frame("{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": "));
    let m = s.recv();
    assert_eq!(m["id"], Value::Null);
    assert_eq!(m["error"]["code"], -32700);
    assert!(m["error"]["data"]["error"].as_str().unwrap().contains("EOF"), "{m}");
    s.ok("registry/list", json!({}));
    s.shutdown();
}

#[test]
fn oversize_frame_is_refused_unread_and_reading_goes_on() {
    let mut s = Sidecar::spawn_with(&["--max-frame-bytes", "1000"], &[]);
    s.ok("initialize", json!({}));
    let big = format!("{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"registry/list\",\"params\":{{\"query\":\"{}\"}}}}", "x".repeat(5000));
    s.send_raw(&frame(&big));
    let m = s.recv();
    assert_eq!(m["id"], Value::Null);
    assert_eq!(m["error"]["code"], -32001);
    assert_eq!(m["error"]["data"]["maxFrameBytes"], 1000);
    assert_eq!(m["error"]["data"]["contentLength"], big.len());
    s.ok("registry/list", json!({}));
    s.shutdown();
}

#[test]
fn bad_headers_are_answered_and_reading_goes_on() {
    let mut s = Sidecar::ready();
    s.send_raw(b"Content-Length: twelve\r\n\r\n");
    let m = s.recv();
    assert_eq!(m["error"]["code"], -32700);
    assert!(m["error"]["message"].as_str().unwrap().contains("not a number"), "{m}");
    s.send_raw(b"X-Nothing: 1\r\n\r\n");
    assert!(s.recv()["error"]["message"].as_str().unwrap().contains("missing Content-Length"));
    s.ok("registry/list", json!({}));
    s.shutdown();
}

#[test]
fn chunked_and_coalesced_frames() {
    let mut s = Sidecar::ready();
    let a = frame(r#"{"jsonrpc":"2.0","id":"a","method":"registry/list","params":{}}"#);
    let b = frame(r#"{"jsonrpc":"2.0","id":"b","method":"registry/list","params":{"namespace":"web"}}"#);
    // Both frames in one write, then one frame a byte at a time.
    let mut both = a.clone();
    both.extend_from_slice(&b);
    s.send_raw(&both);
    let mut ids = vec![s.recv()["id"].clone(), s.recv()["id"].clone()];
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(ids, [json!("a"), json!("b")]);
    for byte in &a {
        s.send_raw(std::slice::from_ref(byte));
    }
    assert_eq!(s.recv()["id"], "a");
    s.shutdown();
}

#[test]
fn unknown_method_is_32601() {
    let mut s = Sidecar::ready();
    let e = s.err("registry/frobnicate", json!({}));
    assert_eq!(e["code"], -32601);
    assert_eq!(e["data"]["method"], "registry/frobnicate");
    s.shutdown();
}

#[test]
fn wrong_params_are_32602_with_the_reason() {
    let mut s = Sidecar::ready();
    let e = s.err("registry/register", json!({"entries": [{"name": "x"}]}));
    assert_eq!(e["code"], -32602);
    assert!(e["message"].as_str().unwrap().contains("missing field `namespace`"), "{e}");
    let e = s.err("registry/deregister", json!(["a"]));
    assert_eq!(e["code"], -32602);
    let e = s.err("exposition/plan", json!({"contextWindow": "big"}));
    assert_eq!(e["code"], -32602);
    s.shutdown();
}

#[test]
fn invalid_requests_are_32600() {
    let mut s = Sidecar::ready();
    s.send(&json!([{"jsonrpc": "2.0", "id": 1, "method": "registry/list"}]));
    let m = s.recv();
    assert_eq!(m["error"]["code"], -32600);
    assert!(m["error"]["message"].as_str().unwrap().contains("batch"));
    s.send(&json!({"id": 2, "method": "registry/list"}));
    let m = s.recv();
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (json!(2), json!(-32600)));
    s.send(&json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "registry/list"}));
    assert_eq!(s.recv()["error"]["code"], -32600);
    s.send(&json!("just a string"));
    assert_eq!(s.recv()["error"]["code"], -32600);
    s.shutdown();
}

#[test]
fn a_panicking_handler_is_32603_and_the_server_lives_on() {
    let mut s = Sidecar::ready();
    let e = s.err("debug/panic", json!({}));
    assert_eq!(e["code"], -32603);
    assert!(e["message"].as_str().unwrap().contains("debug/panic was called"));
    s.ok("registry/list", json!({}));
    s.shutdown();
}

#[test]
fn cancel_request_answers_32800_once() {
    let mut s = Sidecar::ready();
    s.send(&json!({"jsonrpc": "2.0", "id": 77, "method": "debug/sleep", "params": {"ms": 10000}}));
    // A concurrent request is answered while the slow one runs.
    s.ok("registry/list", json!({}));
    s.notify("$/cancelRequest", json!({"id": 77}));
    let m = s.recv();
    assert_eq!(m["id"], 77);
    assert_eq!(m["error"]["code"], -32800);
    // Cancelling again (or something finished) is a no-op.
    s.notify("$/cancelRequest", json!({"id": 77}));
    s.shutdown();
}

#[test]
fn unknown_response_ids_are_ignored() {
    let mut s = Sidecar::ready();
    s.send(&json!({"jsonrpc": "2.0", "id": "nobody-asked", "result": {}}));
    s.ok("registry/list", json!({}));
    s.shutdown();
}

// ---------------------------------------------------------------------------------------------
// Ids, responses, echoes, framing, depth (issue 9)
// ---------------------------------------------------------------------------------------------

/// The raw id text of the next message, which must be the response to a request with `id`.
fn raw_request(s: &mut Sidecar, id: &str, method: &str, params: &str) -> Value {
    s.send_raw(&frame(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)));
    s.recv()
}

#[test]
fn every_integer_and_string_id_is_echoed_exactly() {
    let mut s = Sidecar::ready();
    for id in ["-5", "-9223372036854775808", "18446744073709551615", "0", "\"-5\"", "\"\"", "\"\\u00e9t\u{e9}\""] {
        for (method, params) in [("registry/list", "{}"), ("exposition/plan", r#"{"scope":{}}"#), ("registry/frobnicate", "{}")] {
            let m = raw_request(&mut s, id, method, params);
            let want: Value = serde_json::from_str(id).unwrap();
            assert_eq!(m["id"], want, "{method} with id {id}: {m}");
            if method != "registry/frobnicate" {
                assert!(m.get("result").is_some(), "{method} with id {id}: {m}");
            }
        }
    }
    // Integers beyond 64 bits too (compared as the same JSON number).
    let m = raw_request(&mut s, "-123456789012345678901234567890", "registry/list", "{}");
    assert_eq!(m["id"], serde_json::from_str::<Value>("-123456789012345678901234567890").unwrap(), "{m}");
    // Cancelling by a negative id reaches the request.
    s.send_raw(&frame(r#"{"jsonrpc":"2.0","id":-7,"method":"debug/sleep","params":{"ms":10000}}"#));
    s.notify("$/cancelRequest", json!({"id": -7}));
    let m = s.recv();
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (json!(-7), json!(-32800)), "{m}");
    // Not ids: a fraction, null, an object.
    for id in ["1.5", "null", "{}"] {
        let m = raw_request(&mut s, id, "registry/list", "{}");
        assert_eq!(m["error"]["code"], -32600, "id {id}: {m}");
    }
    s.shutdown();
}

#[test]
fn a_response_from_the_host_is_never_answered() {
    let mut s = Sidecar::ready();
    for body in [
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":1}"#,
        r#"{"jsonrpc":"2.0","id":{"x":1},"result":1}"#,
        r#"{"id":"toolreg-99","error":"not even an object"}"#,
    ] {
        s.send_raw(&frame(body));
    }
    // The next message is the answer to this request: nothing answered the responses.
    s.ok("registry/list", json!({"namespace": "none"}));
    s.shutdown();
}

#[test]
fn a_second_request_with_an_id_in_flight_is_refused_at_once_and_the_first_answers() {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"capabilities": {"hostTools": true}}));
    s.ok("registry/register", json!({"entries": [{"name": "slow", "namespace": "t", "description": "A slow tool.", "inputSchema": {"type": "object"}}]}));
    let invoke = json!({"jsonrpc": "2.0", "id": 42, "method": "tool/invoke", "params": {"name": "slow", "arguments": {}, "callId": "c1"}});
    s.send(&invoke);
    let exec = s.recv();
    assert_eq!(exec["method"], "host/executeTool", "{exec}");
    // The same id again while the first waits for the host.
    s.send(&invoke);
    let m = s.recv();
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (json!(42), json!(-32600)), "{m}");
    assert!(m["error"]["message"].as_str().unwrap().contains("42"), "names the id: {m}");
    // The first still runs and is answered, once.
    s.send(&json!({"jsonrpc": "2.0", "id": exec["id"], "result": {"content": [{"type": "text", "text": "done"}]}}));
    let m = s.recv();
    assert_eq!(m["id"], 42, "{m}");
    assert_eq!(m["result"]["isError"], false, "{m}");
    // Once it has answered, the id is free again.
    s.send(&json!({"jsonrpc": "2.0", "id": 42, "method": "registry/list", "params": {}}));
    assert!(s.recv().get("result").is_some());
    s.shutdown();
}

#[test]
fn host_input_echoed_into_errors_is_cut() {
    let mut s = Sidecar::ready();
    let long = "m".repeat(1 << 20);
    let m = raw_request(&mut s, "1", &long, "{}");
    assert_eq!(m["error"]["code"], -32601);
    assert!(m.to_string().len() < 2000, "a 1 MiB method name came back in {} bytes", m.to_string().len());
    assert!(m["error"]["message"].as_str().unwrap().contains("bytes in all"), "{m}");
    // serde's message quotes the offending value.
    let e = s.err("registry/deregister", json!({"names": long}));
    assert_eq!(e["code"], -32602);
    assert!(e.to_string().len() < 2000, "{} bytes", e.to_string().len());
    s.shutdown();
}

#[test]
fn two_content_lengths_or_a_signed_length_are_frame_errors() {
    let mut s = Sidecar::ready();
    // Both equal: refused, and the body (its length known) is skipped.
    s.send_raw(b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}");
    let m = s.recv();
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (Value::Null, json!(-32700)), "{m}");
    assert!(m["error"]["message"].as_str().unwrap().contains("2 Content-Length headers"), "{m}");
    s.send_raw(b"Content-Length: +2\r\n\r\n");
    let m = s.recv();
    assert_eq!(m["error"]["code"], -32700, "{m}");
    assert!(m["error"]["message"].as_str().unwrap().contains("\"+2\" is not a number"), "{m}");
    s.ok("registry/list", json!({}));
    s.shutdown();
}

#[test]
fn a_request_nested_too_deep_keeps_its_id() {
    let mut s = Sidecar::ready();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let m = raw_request(&mut s, "7", "registry/list", &format!(r#"{{"query":{deep}}}"#));
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (json!(7), json!(-32602)), "{m}");
    let m = raw_request(&mut s, "\"d\"", "tool/invoke", &format!(r#"{{"name":"web_search","arguments":{{"q":{deep}}}}}"#));
    assert_eq!((m["id"].clone(), m["error"]["code"].clone()), (json!("d"), json!(-32602)), "{m}");
    assert!(m["error"]["message"].as_str().unwrap().contains("recursion limit"), "{m}");
    s.shutdown();
}

#[test]
fn timeouts_up_to_u64_max_are_accepted() {
    let mut s = Sidecar::spawn();
    let max = u64::MAX;
    s.ok("initialize", json!({"timeouts": {"connectMs": max, "listMs": max, "callMs": max, "approvalMs": max}}));
    let server = json!({"id": "a", "name": "a", "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--tools", "2"]}});
    skipping_notifications(&mut s, "catalog/setServers", json!({"servers": [server]}));
    // Answered with the server's tools (the refresh computes a deadline from listMs).
    let r = skipping_notifications(&mut s, "catalog/refresh", json!({"serverId": "a"}));
    assert_eq!(r["result"]["state"], "ready", "{r}");
    assert_eq!(r["result"]["toolCount"], 4, "{r}");
    assert_eq!(skipping_notifications(&mut s, "shutdown", Value::Null)["result"], Value::Null);
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

/// The response to one request; notifications meanwhile (catalog status) are skipped.
fn skipping_notifications(s: &mut Sidecar, method: &str, params: Value) -> Value {
    let id = s.next_id();
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let m = s.recv();
        if m.get("method").is_none() && m["id"] == id {
            return m;
        }
        assert!(m.get("id").is_none(), "only notifications may come first: {m}");
    }
}

/// Issue 21, item 4: a 1 MiB server id, plan id, approval id or tool name, or a 100,000-tool
/// list, comes back in a small error whose data still names what was wrong.
#[test]
fn host_input_echoed_into_error_data_is_bounded() {
    let mut s = Sidecar::ready();
    let long = "x".repeat(1 << 20);
    let small = |e: &Value| {
        let text = e.to_string();
        assert!(text.len() < 4096, "a 1 MiB input came back in {} bytes: {}…", text.len(), &text[..500.min(text.len())]);
    };
    let clipped = |v: &Value| v.as_str().is_some_and(|t| t.starts_with("xxxx") && t.ends_with("(1048576 bytes in all)"));
    let e = s.err("catalog/pins", json!({"serverId": long}));
    assert_eq!(e["code"], -32012);
    assert!(clipped(&e["data"]["serverId"]), "{e}");
    small(&e);
    let e = s.err("tool/invoke", json!({"name": "tool_search", "planId": long, "arguments": {"query": "q"}}));
    assert_eq!(e["code"], -32011);
    assert!(clipped(&e["data"]["planId"]), "{e}");
    small(&e);
    let e = s.err("approval/respond", json!({"approvalId": long, "decision": "approve"}));
    assert_eq!(e["code"], -32014);
    assert!(clipped(&e["data"]["approvalId"]), "{e}");
    small(&e);
    let e = s.err("tool/invoke", json!({"name": long, "arguments": {}}));
    assert_eq!(e["code"], -32010);
    assert!(clipped(&e["data"]["name"]), "{e}");
    small(&e);

    // The catalog announces the server's progress (`catalog/didChange`), even before
    // `catalog/setServers` answers: skipped.
    let mut notes = Vec::new();
    let r = s.call_noting("catalog/setServers", json!({"servers": [{"id": "fx", "name": "Fx",
        "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--tools", "1"]}}]}), &mut notes);
    assert!(r.get("result").is_some(), "{r}");
    let start = std::time::Instant::now();
    while s.call_noting("catalog/pins", json!({"serverId": "fx"}), &mut notes).get("result").is_none_or(|r| r["tools"].as_array().is_none_or(Vec::is_empty)) {
        assert!(start.elapsed() < TIMEOUT, "the fixture's tools never came");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut tools: Vec<String> = (0..100_000).map(|i| format!("missing_{i}")).collect();
    tools.insert(0, long.clone());
    let e = s.call_noting("catalog/approveTools", json!({"serverId": "fx", "tools": tools}), &mut notes)["error"].clone();
    assert_eq!(e["code"], -32602);
    assert!(clipped(&e["data"]["tools"][0]) && e["data"]["tools"][1] == "missing_0", "{e}");
    assert_eq!(e["data"]["toolsTotal"], 100_001, "{e}");
    small(&e);
    let r = s.call_noting("shutdown", Value::Null, &mut notes);
    assert_eq!(r["result"], Value::Null, "{r}");
}
