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

/// Answers the sidecar's request `m` with this result.
pub fn answer(s: &mut Sidecar, m: &Value, result: Value) {
    s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": result}));
}
