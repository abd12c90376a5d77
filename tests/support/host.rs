//! Playing the host: requests sent without waiting, and the messages that arrive before their
//! responses (reverse requests, notifications) handed to a closure that answers them.

use super::Sidecar;
use serde_json::{json, Value};

/// A message's method, "" for a response.
pub fn method(m: &Value) -> &str {
    m.get("method").and_then(Value::as_str).unwrap_or("")
}

/// Sends a request without waiting; returns its id.
pub fn send_req(s: &mut Sidecar, method: &str, params: Value) -> Value {
    let id = s.next_id();
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    json!(id)
}

/// Collects messages until every id in `ids` has its response; everything else (reverse
/// requests, notifications, responses to other requests) goes to `on`.
pub fn pump(s: &mut Sidecar, ids: &[Value], on: &mut dyn FnMut(&mut Sidecar, &Value)) -> Vec<Value> {
    let mut got: Vec<Option<Value>> = vec![None; ids.len()];
    while got.iter().any(Option::is_none) {
        let m = s.recv();
        if m.get("method").is_none() {
            if let Some(i) = ids.iter().position(|id| m.get("id") == Some(id)) {
                assert!(got[i].is_none(), "two responses to {}: {m}", ids[i]);
                got[i] = Some(m);
                continue;
            }
        }
        on(s, &m);
    }
    got.into_iter().map(Option::unwrap).collect()
}

/// One request, answered while `on` handles whatever arrives meanwhile; the whole response.
pub fn call(s: &mut Sidecar, method: &str, params: Value, on: &mut dyn FnMut(&mut Sidecar, &Value)) -> Value {
    let id = send_req(s, method, params);
    pump(s, &[id], on).remove(0)
}

/// `tool/invoke` of `name`, cancelled (`$/cancelRequest`) as soon as the sidecar sends the
/// host a `question`: the invoke's response and the questions seen.
pub fn invoke_cancelled_at(s: &mut Sidecar, name: &str, call_id: &str, question: &str) -> (Value, Vec<Value>) {
    let id = send_req(s, "tool/invoke", json!({"name": name, "arguments": {}, "callId": call_id}));
    let mut asked = Vec::new();
    let mut r = pump(s, std::slice::from_ref(&id), &mut |s, m| {
        if method(m) == question {
            asked.push(m.clone());
            s.notify("$/cancelRequest", json!({"id": id}));
        }
    });
    (r.remove(0), asked)
}

/// Answers the sidecar's request `m` with this result.
pub fn answer(s: &mut Sidecar, m: &Value, result: Value) {
    s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": result}));
}

/// A tool result of one text block.
pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// A host that runs every tool ("ran <name>"), records the executeTool params, and fails the
/// test on any repair or approval request. Notifications and stray responses are ignored,
/// but an error response to one of the test's own side requests fails the test.
pub fn runner(executed: &mut Vec<Value>) -> impl FnMut(&mut Sidecar, &Value) + '_ {
    move |s, m| match method(m) {
        "host/executeTool" => {
            executed.push(m["params"].clone());
            let name = m["params"]["name"].as_str().unwrap().to_string();
            answer(s, m, text_result(&format!("ran {name}")));
        }
        "host/repairToolCall" => panic!("unexpected repair request: {m}"),
        "approval/request" => panic!("unexpected approval request: {m}"),
        "" if m.get("error").is_some() => panic!("a side request failed: {m}"),
        _ => {}
    }
}

/// `tool/invoke` with `params`, answering an `approval/request` with `answer` (`approval/respond`'s
/// decision and remember): the result, and whether the user was asked.
pub fn invoke_answering(s: &mut Sidecar, params: Value, answer: &Value) -> (Value, bool) {
    let id = json!(s.next_id());
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tool/invoke", "params": params}));
    let (mut asked, mut responding, mut result) = (false, None, None);
    while result.is_none() || responding.is_some() {
        let m = s.recv();
        if m["method"] == "approval/request" {
            asked = true;
            let mut p = answer.clone();
            p["approvalId"] = m["params"]["approvalId"].clone();
            let respond = json!(s.next_id());
            s.send(&json!({"jsonrpc": "2.0", "id": respond, "method": "approval/respond", "params": p}));
            responding = Some(respond);
        } else if m.get("id") == Some(&id) && m.get("method").is_none() {
            result = Some(m.get("result").cloned().unwrap_or_else(|| panic!("tool/invoke failed: {m}")));
        } else if responding.is_some() && m.get("id") == responding.as_ref() {
            assert!(m.get("error").is_none(), "approval/respond failed: {m}");
            responding = None;
        }
    }
    (result.unwrap(), asked)
}
