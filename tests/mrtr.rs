//! Multi round-trip tool calls (MCP 2026-07-28, SEP-2322) over the real binary and the fixture
//! (`--modern`, its `test_input_required_result_*` tools), over stdio (the direct call path)
//! and Streamable HTTP (rmcp's): the server's input requests reach the host as `host/elicit`,
//! `host/sample`, `host/roots` naming the call, and the retry carries the answers and the
//! sealed `requestState` unchanged (the fixture refuses a changed one); bounded in rounds, by
//! the call's timeout and by its cancellation. The fixture logs each round it receives
//! (`--answers-file`).
mod support;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::*;
use support::modern::{silent, Session, Via};

fn session(via: Via, caps: Value, timeouts: Value) -> Session {
    let flags = |dir: &Path| vec!["--answers-file".to_owned(), rounds_file(dir).to_str().unwrap().to_owned()];
    let initialize = json!({"clientInfo": {"name": "mrtr-test"}, "capabilities": caps, "timeouts": timeouts});
    Session::start(via, flags, initialize, json!({}))
}

/// Where the fixture logs the rounds it receives.
fn rounds_file(dir: &Path) -> PathBuf {
    dir.join("rounds.jsonl")
}

impl Session {
    /// `tool/invoke` of a fixture tool: the response.
    fn invoke(&mut self, tool: &str, call_id: &str, on: &mut dyn FnMut(&mut Sidecar, &Value)) -> Value {
        let name = self.wire(tool);
        call(&mut self.s, "tool/invoke", json!({"name": name, "arguments": {}, "callId": call_id}), on)
    }

    /// The text the tool returned.
    fn text(&mut self, tool: &str, call_id: &str, on: &mut dyn FnMut(&mut Sidecar, &Value)) -> String {
        let r = self.invoke(tool, call_id, on);
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["output"]["value"].as_str().unwrap_or_else(|| panic!("no text: {r}")).to_owned()
    }

    /// The rounds the fixture received: `{tool, inputResponses, requestState}`.
    fn rounds(&self) -> Vec<Value> {
        std::fs::read_to_string(rounds_file(self.dir.path())).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn done(self) {
        self.s.shutdown();
    }
}

/// Answers every host question with `answer(method)`, recording the params of each.
fn host<'a>(asked: &'a mut Vec<(String, Value)>, answer_for: impl Fn(&str) -> Value + 'a) -> impl FnMut(&mut Sidecar, &Value) + 'a {
    move |s, m| {
        let name = method(m);
        if name.starts_with("host/") {
            asked.push((name.to_owned(), m["params"].clone()));
            answer(s, m, answer_for(name));
        }
    }
}

fn answers(method: &str) -> Value {
    match method {
        "host/elicit" => json!({"action": "accept", "content": {"ok": true, "name": "Ada"}}),
        "host/sample" => json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}),
        "host/roots" => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
        other => panic!("unexpected {other}"),
    }
}

fn the_state_round_trips(via: Via) {
    let mut x = session(via, json!({"elicitation": true}), json!({}));
    let mut asked = Vec::new();
    let text = x.text("test_input_required_result_request_state", "call-7", &mut host(&mut asked, answers));
    // The fixture checks the state's MAC: any change to the string (a re-serialised JSON
    // inside it, an escaped `é`) fails the call instead.
    assert_eq!(text, "state-ok: confirmed true");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (m, p) = &asked[0];
    assert_eq!((m.as_str(), &p["serverId"], &p["callId"], &p["tool"]), ("host/elicit", &json!("fx"), &json!("call-7"), &json!("test_input_required_result_request_state")), "{p}");
    assert_eq!(p["message"], "Please confirm");
    let rounds = x.rounds();
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    assert_eq!((&rounds[0]["inputResponses"], &rounds[0]["requestState"]), (&Value::Null, &Value::Null));
    assert_eq!(rounds[1]["inputResponses"], json!({"confirm": {"action": "accept", "content": {"ok": true, "name": "Ada"}}}));
    assert!(rounds[1]["requestState"].as_str().is_some_and(|s| s.contains(", \"") && s.contains('é')), "{}", rounds[1]);
    x.done();
}

#[test]
fn an_elicitation_round_reaches_the_host_naming_its_call_and_the_state_goes_back_unchanged_over_stdio() {
    the_state_round_trips(Via::Stdio);
}

#[test]
fn an_elicitation_round_reaches_the_host_naming_its_call_and_the_state_goes_back_unchanged_over_http() {
    the_state_round_trips(Via::Http);
}

#[test]
fn a_round_without_state_retries_without_one_and_a_new_call_starts_clean() {
    for via in [Via::Stdio, Via::Http] {
        let mut x = session(via, json!({"elicitation": true}), json!({}));
        let mut asked = Vec::new();
        assert_eq!(x.text("test_input_required_result_elicitation", "a", &mut host(&mut asked, answers)), "Hello, Ada!");
        assert_eq!(x.text("test_input_required_result_elicitation", "b", &mut host(&mut asked, answers)), "Hello, Ada!");
        let rounds = x.rounds();
        assert_eq!(rounds.len(), 4, "{rounds:?}");
        assert!(rounds[1]["inputResponses"]["user_name"].is_object() && rounds[1]["requestState"].is_null(), "{}", rounds[1]);
        // The second call's first round carries nothing of the first call's.
        assert_eq!((&rounds[2]["inputResponses"], &rounds[2]["requestState"]), (&Value::Null, &Value::Null), "{}", rounds[2]);
        x.done();
    }
}

#[test]
fn every_kind_of_input_is_asked_and_roots_only_of_a_host_that_declared_them() {
    let mut x = session(Via::Stdio, json!({"elicitation": true, "sampling": true, "roots": true}), json!({}));
    let mut asked = Vec::new();
    let text = x.text("test_input_required_result_multiple_inputs", "m", &mut host(&mut asked, answers));
    assert_eq!(text, "state-ok: name \"Ada\", greeting \"Paris\", 1 roots");
    let mut methods: Vec<_> = asked.iter().map(|(m, p)| (m.clone(), p["callId"].clone())).collect();
    methods.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(methods, [("host/elicit".into(), json!("m")), ("host/roots".into(), json!("m")), ("host/sample".into(), json!("m"))]);
    assert_eq!(asked.iter().find(|(m, _)| m == "host/roots").unwrap().1, json!({"serverId": "fx", "callId": "m", "tool": "test_input_required_result_multiple_inputs"}));
    x.done();

    // Without the capability: never asked, and the call fails saying why.
    let mut x = session(Via::Stdio, json!({"elicitation": true}), json!({}));
    let r = x.invoke("test_input_required_result_list_roots", "r", &mut silent);
    let shown = r.to_string();
    assert!(shown.contains("roots/list") && shown.contains("capabilities.roots"), "{r}");
    x.done();
}

#[test]
fn rounds_are_bounded() {
    let mut x = session(Via::Stdio, json!({"roots": true}), json!({}));
    let mut asked = Vec::new();
    let r = x.invoke("mrtr_endless", "e", &mut host(&mut asked, answers));
    assert!(r.to_string().contains("still asked for input after 10 rounds"), "{r}");
    assert_eq!(x.rounds().len(), 10);
    assert_eq!(asked.len(), 9, "no question is asked after the last round");
    x.done();
}

#[test]
fn a_call_waiting_on_the_host_mid_round_ends_at_its_timeout_or_its_cancel_and_withdraws_the_question() {
    let mut x = session(Via::Stdio, json!({"elicitation": true}), json!({"callMs": 700}));
    let mut asked = Vec::new();
    let mut withdrawn = Vec::new();
    let start = Instant::now();
    let r = x.invoke("test_input_required_result_request_state", "t", &mut |_, m| match method(m) {
        "host/elicit" => asked.push(m.clone()),
        "$/cancelRequest" => withdrawn.push(m["params"]["id"].clone()),
        other => assert!(!other.starts_with("host/"), "{m}"),
    });
    assert!(r.to_string().contains("timed out after 700 ms"), "{r}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(asked.len(), 1);
    wait_withdrawn(&mut x.s, &asked[0], &mut withdrawn);
    assert_eq!(x.rounds().len(), 1, "no retry after the timeout");

    let name = x.wire("test_input_required_result_request_state");
    let (r, asked) = invoke_cancelled_at(&mut x.s, &name, "k", "host/elicit");
    assert_eq!(r["error"]["code"], -32800, "{r}");
    let mut withdrawn = Vec::new();
    wait_withdrawn(&mut x.s, &asked[0], &mut withdrawn);
    assert_eq!(x.rounds().len(), 2, "no retry after the cancel");
    x.done();
}

/// Waits until the host question `asked` is withdrawn (`$/cancelRequest`).
fn wait_withdrawn(s: &mut Sidecar, asked: &Value, seen: &mut Vec<Value>) {
    let start = Instant::now();
    while !seen.contains(&asked["id"]) {
        assert!(start.elapsed() < TIMEOUT, "{asked} never withdrawn");
        if let Some(m) = s.try_recv(Duration::from_millis(100)) {
            if method(&m) == "$/cancelRequest" {
                seen.push(m["params"]["id"].clone());
            }
        }
    }
}
