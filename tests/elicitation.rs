//! MCP elicitation and sampling through the host, over the real binary: the fixture MCP server
//! (`--elicit`) asks mid-call, the sidecar forwards `host/elicit` / `host/sample`, the test plays
//! the host, and the fixture reports what reached it (in the tool's result, and in
//! `--answers-file` for calls that were cancelled).
mod support;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use support::*;

/// A host that must not be asked anything.
fn silent(_: &mut Sidecar, m: &Value) {
    assert!(!method(m).starts_with("host/"), "the host should not be asked: {m}");
}

struct Session {
    s: Sidecar,
    names: Vec<String>,
    answers: PathBuf,
    _dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(tag: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("toolreg-elicit-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A sidecar initialized with `caps` and `timeouts`, the fixture (`--elicit`) configured over
/// stdio, refreshed and synced.
fn session(tag: &str, caps: Value, timeouts: Value) -> Session {
    let dir = temp_dir(tag);
    let answers = dir.0.join("answers.jsonl");
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"clientInfo": {"name": "elicit-test"}, "capabilities": caps, "timeouts": timeouts}));
    s.notify("initialized", json!({}));
    let flags = json!(["--elicit", "--answers-file", answers.to_str().unwrap()]);
    let servers = json!({"servers": [{"id": "fx", "name": "fixture", "enabled": true,
        "transport": {"type": "stdio", "command": fixture_mcp(), "args": flags}}]});
    call(&mut s, "catalog/setServers", servers, &mut silent);
    let st = call(&mut s, "catalog/refresh", json!({"serverId": "fx"}), &mut silent);
    assert_eq!(st["result"]["state"], "ready", "{st}");
    let sync = call(&mut s, "registry/syncMcp", json!({}), &mut silent);
    let names = sync["result"]["registered"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect();
    Session { s, names, answers, _dir: dir }
}

impl Session {
    fn wire(&self, tool: &str) -> String {
        self.names.iter().find(|n| n.ends_with(&format!("__{tool}"))).unwrap_or_else(|| panic!("no {tool} in {:?}", self.names)).clone()
    }

    /// Invokes a fixture tool; the answer the fixture received, parsed from its text result.
    fn run(&mut self, tool: &str, call_id: &str, arguments: Value, on: &mut dyn FnMut(&mut Sidecar, &Value)) -> Value {
        let name = self.wire(tool);
        let r = call(&mut self.s, "tool/invoke", json!({"name": name, "arguments": arguments, "callId": call_id}), on);
        let text = r["result"]["output"]["value"].as_str().unwrap_or_else(|| panic!("no text output: {r}"));
        serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    }

    /// The answers the fixture recorded, once `n` have arrived.
    fn recorded(&self, n: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let lines: Vec<Value> = std::fs::read_to_string(&self.answers)
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            if lines.len() >= n {
                return lines;
            }
            assert!(start.elapsed() < TIMEOUT, "the fixture recorded {lines:?}, expected {n} answers");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn done(mut self) {
        let r = call(&mut self.s, "shutdown", Value::Null, &mut silent);
        assert_eq!(r["result"], Value::Null, "{r}");
        self.s.notify("exit", Value::Null);
        assert_eq!(self.s.wait().code(), Some(0));
    }
}

/// Answers every `host/elicit` with `result`, recording the params.
fn elicit_host<'a>(asked: &'a mut Vec<Value>, result: Value) -> impl FnMut(&mut Sidecar, &Value) + 'a {
    move |s, m| {
        if method(m) == "host/elicit" {
            asked.push(m["params"].clone());
            answer(s, m, result.clone());
        } else {
            silent(s, m);
        }
    }
}

#[test]
fn a_form_elicitation_reaches_the_host_with_its_call_and_the_schema_defaults_fill_the_answer() {
    let mut x = session("form", json!({"elicitation": true}), json!({}));
    let mut asked = Vec::new();
    let got = x.run("ask", "call-7", json!({}), &mut elicit_host(&mut asked, json!({"action": "accept", "content": {"nick": "ada99", "age": 41}})));
    assert_eq!(asked.len(), 1, "{asked:?}");
    let p = &asked[0];
    assert_eq!((&p["serverId"], &p["callId"], &p["tool"], &p["mode"]), (&json!("fx"), &json!("call-7"), &json!("ask"), &json!("form")), "{p}");
    assert_eq!(p["message"], "Who are you?");
    assert_eq!(p["requestedSchema"]["properties"]["age"], json!({"type": "integer", "default": 36}), "{p}");
    assert!(p.get("url").is_none() && p.get("elicitationId").is_none(), "{p}");
    // What the user gave stays; every field they left out that has a default gets it (SEP-1034).
    assert_eq!(
        got,
        json!({"action": "accept", "content": {"nick": "ada99", "age": 41, "name": "Ada", "score": 9.5, "color": "blue", "subscribe": true}})
    );
    // Declared to the server because the host declared it; sampling was not.
    let caps = x.run("clientCaps", "c", json!({}), &mut silent);
    assert_eq!(caps["elicitation"], json!({"form": {}, "url": {}}), "{caps}");
    assert!(caps.get("sampling").is_none(), "{caps}");
    x.done();
}

#[test]
fn decline_and_cancel_reach_the_server_without_content_and_a_failed_host_request_is_an_error() {
    let mut x = session("decline", json!({"elicitation": true}), json!({}));
    let mut asked = Vec::new();
    // Content sent along with a decline is the host's mistake; it never reaches the server.
    let got = x.run("ask", "d1", json!({}), &mut elicit_host(&mut asked, json!({"action": "decline", "content": {"nick": "x"}})));
    assert_eq!(got, json!({"action": "decline"}));
    let got = x.run("ask", "d2", json!({}), &mut elicit_host(&mut asked, json!({"action": "cancel"})));
    assert_eq!(got, json!({"action": "cancel"}));
    let got = x.run("ask", "d3", json!({}), &mut |s, m| {
        assert_eq!(method(m), "host/elicit", "{m}");
        s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": "no window"}}));
    });
    assert!(got["error"].as_str().unwrap().contains("no window"), "{got}");
    let got = x.run("ask", "d4", json!({}), &mut elicit_host(&mut asked, json!({"action": "maybe"})));
    assert!(got["error"].as_str().unwrap().contains("ElicitResult"), "{got}");
    x.done();
}

#[test]
fn a_url_elicitation_carries_its_url_and_id_and_gets_no_defaults() {
    let mut x = session("url", json!({"elicitation": true}), json!({}));
    let mut asked = Vec::new();
    // Content with a URL-mode accept is the host's mistake: the exchange happens at the URL.
    let got = x.run("askUrl", "u1", json!({}), &mut elicit_host(&mut asked, json!({"action": "accept", "content": {"pin": "1234"}})));
    let p = &asked[0];
    assert_eq!(p["mode"], "url", "{p}");
    assert_eq!(p["url"], "https://example.test/consent");
    assert_eq!(p["elicitationId"], "el-1");
    assert_eq!(p["callId"], "u1");
    assert!(p.get("requestedSchema").is_none(), "{p}");
    assert_eq!(got, json!({"action": "accept"}));
    x.done();
}

#[test]
fn without_the_host_capabilities_nothing_is_declared_elicitation_is_declined_and_sampling_refused() {
    let mut x = session("nocap", json!({}), json!({}));
    let caps = x.run("clientCaps", "c", json!({}), &mut silent);
    assert!(caps.get("elicitation").is_none() && caps.get("sampling").is_none(), "{caps}");
    // A server that asks anyway: declined without asking the host (`silent` fails on any).
    assert_eq!(x.run("ask", "n1", json!({}), &mut silent), json!({"action": "decline"}));
    let got = x.run("sample", "n2", json!({"prompt": "hi"}), &mut silent);
    assert!(got["error"].as_str().unwrap().contains("-32601") || got["error"].as_str().unwrap().contains("not found"), "{got}");
    x.done();
}

#[test]
fn an_unanswered_elicitation_times_out_as_cancel_and_is_withdrawn_from_the_host() {
    let mut x = session("timeout", json!({"elicitation": true}), json!({"elicitationMs": 300}));
    let mut asked = Vec::new();
    let mut withdrawn = Vec::new();
    let got = x.run("ask", "t1", json!({}), &mut |_, m| match method(m) {
        "host/elicit" => asked.push(m.clone()),
        "$/cancelRequest" => withdrawn.push(m["params"]["id"].clone()),
        other => assert!(!other.starts_with("host/"), "{m}"),
    });
    assert_eq!(got, json!({"action": "cancel"}));
    assert_eq!(asked.len(), 1);
    // The withdrawal goes out before the answer to the server, so before the tool's result.
    assert_eq!(withdrawn, vec![asked[0]["id"].clone()]);
    // A late answer is dropped, and the session goes on.
    answer(&mut x.s, &asked[0], json!({"action": "accept", "content": {"nick": "late"}}));
    let mut again = Vec::new();
    let got = x.run("ask", "t2", json!({}), &mut elicit_host(&mut again, json!({"action": "decline"})));
    assert_eq!(got, json!({"action": "decline"}));
    x.done();
}

#[test]
fn cancelling_the_tool_call_withdraws_its_elicitation_from_the_host_and_cancels_it_upstream() {
    let mut x = session("cancelled", json!({"elicitation": true}), json!({}));
    let name = x.wire("ask");
    let (r, asked) = invoke_cancelled_at(&mut x.s, &name, "k1", "host/elicit");
    assert_eq!(r["error"]["code"], -32800, "{r}");
    assert_eq!(asked.len(), 1);
    // The question is withdrawn from the host ...
    let start = Instant::now();
    loop {
        let m = x.s.recv();
        if method(&m) == "$/cancelRequest" {
            assert_eq!(m["params"]["id"], asked[0]["id"], "{m}");
            break;
        }
        assert!(start.elapsed() < TIMEOUT && !method(&m).starts_with("host/"), "{m}");
    }
    // ... and the server, still waiting for its answer, is told `cancel`.
    let recorded = x.recorded(1);
    assert_eq!(recorded[0], json!({"tool": "ask", "answer": {"action": "cancel"}}));
    x.done();
}

#[test]
fn sampling_is_forwarded_with_the_request_as_received_and_the_hosts_result_goes_back() {
    let mut x = session("sample", json!({"sampling": true}), json!({}));
    let caps = x.run("clientCaps", "c", json!({}), &mut silent);
    assert_eq!(caps["sampling"], json!({}), "{caps}");
    assert!(caps.get("elicitation").is_none(), "{caps}");
    let mut asked = Vec::new();
    let got = x.run("sample", "s1", json!({"prompt": "2+2?"}), &mut |s, m| {
        assert_eq!(method(m), "host/sample", "{m}");
        asked.push(m["params"].clone());
        answer(s, m, json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m1", "stopReason": "endTurn"}));
    });
    let p = &asked[0];
    assert_eq!((&p["serverId"], &p["callId"], &p["tool"]), (&json!("fx"), &json!("s1"), &json!("sample")), "{p}");
    assert_eq!(p["request"]["messages"][0]["content"]["text"], "2+2?", "{p}");
    assert_eq!(p["request"]["maxTokens"], 50, "{p}");
    assert_eq!(got["model"], "m1", "{got}");
    assert_eq!(got["content"], json!({"type": "text", "text": "4"}), "{got}");
    assert_eq!(got["stopReason"], "endTurn", "{got}");
    // Elicitation was not declared by this host: declined without asking.
    assert_eq!(x.run("ask", "s2", json!({}), &mut silent), json!({"action": "decline"}));
    x.done();
}

/// Over Streamable HTTP, a question arrives on the response stream of the call it belongs to,
/// so two calls at once each get theirs (over stdio only a sole call can be named).
#[test]
fn two_concurrent_calls_over_http_each_name_their_own_question() {
    let dir = temp_dir("http");
    let fixture = HttpFixture::start(&dir.0, &["--elicit"]);
    let url = fixture.url.clone();
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"clientInfo": {"name": "elicit-test"}, "capabilities": {"elicitation": true}}));
    s.notify("initialized", json!({}));
    let servers = json!({"servers": [{"id": "web", "name": "web", "transport": {"type": "http", "url": url}}]});
    call(&mut s, "catalog/setServers", servers, &mut silent);
    let st = call(&mut s, "catalog/refresh", json!({"serverId": "web"}), &mut silent);
    assert_eq!(st["result"]["state"], "ready", "{st}");
    let sync = call(&mut s, "registry/syncMcp", json!({}), &mut silent);
    let ask = sync["result"]["registered"].as_array().unwrap().iter().find(|n| n.as_str().unwrap().ends_with("__ask")).unwrap().clone();
    let a = send_req(&mut s, "tool/invoke", json!({"name": ask, "arguments": {}, "callId": "A"}));
    let b = send_req(&mut s, "tool/invoke", json!({"name": ask, "arguments": {}, "callId": "B"}));
    let mut asked = Vec::new();
    let r = pump(&mut s, &[a, b], &mut |s, m| {
        if method(m) == "host/elicit" {
            let call_id = m["params"]["callId"].as_str().unwrap_or("none").to_string();
            asked.push(call_id.clone());
            // Each answer names the call it was asked for, so a mix-up shows in the results.
            answer(s, m, json!({"action": "accept", "content": {"nick": call_id}}));
        }
    });
    asked.sort();
    assert_eq!(asked, ["A", "B"]);
    for (resp, call_id) in r.iter().zip(["A", "B"]) {
        let got: Value = serde_json::from_str(resp["result"]["output"]["value"].as_str().unwrap()).unwrap();
        assert_eq!(got["content"]["nick"], call_id, "{resp}");
    }
    drop(fixture);
}
