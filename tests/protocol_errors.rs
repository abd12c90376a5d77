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
