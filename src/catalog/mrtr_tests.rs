use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::catalog::call::Deadline;
use crate::catalog::elicit::{AskHost, ElicitAction, ElicitResult, HostAsks, Root, RootsResult};

/// A host that records what it is asked and answers at once (or never, `hang`).
#[derive(Default)]
struct Recorder {
    asked: Mutex<Vec<(String, Option<String>)>>,
    hang: bool,
}

impl Recorder {
    fn ask<T: Send + 'static>(&self, what: &str, call: Option<String>, v: T) -> BoxFuture<'static, Result<T, String>> {
        self.asked.lock().unwrap().push((what.into(), call));
        if self.hang {
            return Box::pin(std::future::pending());
        }
        Box::pin(async move { Ok(v) })
    }
}

impl AskHost for Arc<Recorder> {
    fn elicit(&self, p: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, String>> {
        let content = json!({"name": "Ada"}).as_object().cloned();
        self.ask("elicit", p.call_id, ElicitResult { action: ElicitAction::Accept, content })
    }
    fn sample(&self, p: SampleParams) -> BoxFuture<'static, Result<Value, String>> {
        self.ask("sample", p.call_id, json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}))
    }
    fn roots(&self, p: RootsParams) -> BoxFuture<'static, Result<RootsResult, String>> {
        self.ask("roots", p.call_id, RootsResult { roots: vec![Root { uri: "file:///w".into(), name: None }] })
    }
}

fn asker(host: &Arc<Recorder>, asks: HostAsks) -> Asker {
    Asker { host: Arc::new(host.clone()), asks, timeout: Duration::from_secs(5) }
}

const ALL: HostAsks = HostAsks { elicitation: true, sampling: true, roots: true, views: false };

fn origin() -> CallOrigin {
    CallOrigin { call_id: Some("call-1".into()), tool: "t".into(), cancel: CancellationToken::new(), logs: None }
}

fn input_required(requests: Value, state: Option<&str>) -> Value {
    let mut v = json!({"resultType": "input_required", "inputRequests": requests});
    if let Some(s) = state {
        v["requestState"] = json!(s);
    }
    v
}

fn done() -> Value {
    json!({"content": [{"type": "text", "text": "done"}]})
}

/// Drives `answers` (one per round, then `done`), returning the result and the retries sent.
async fn run(asker: &Asker, origin: &CallOrigin, timeout: Duration, answers: Vec<Value>) -> (Result<Value, CatalogError>, Vec<Option<Retry>>) {
    let deadline = Deadline::start(timeout);
    let rounds = Rounds { asker, server_id: "fx", origin, deadline: &deadline, max_rounds: 10, method: METHOD };
    let sent = Mutex::new(Vec::new());
    let r = rounds
        .drive(|retry| {
            let mut sent = sent.lock().unwrap();
            sent.push(retry);
            let answer = answers.get(sent.len() - 1).cloned().unwrap_or_else(done);
            async move { Ok(answer) }
        })
        .await;
    (r, sent.into_inner().unwrap())
}

#[test]
fn a_result_without_result_type_or_complete_is_the_result() {
    assert_eq!(read(done()).unwrap(), Answer::Complete(done()));
    let tagged = json!({"resultType": "complete", "content": []});
    assert_eq!(read(tagged.clone()).unwrap(), Answer::Complete(tagged));
    let asks = read(input_required(json!({"k": {"method": "roots/list"}}), Some("s"))).unwrap();
    assert_eq!(asks, Answer::InputRequired { requests: vec![("k".into(), json!({"method": "roots/list"}))], state: Some("s".into()) });
    assert!(read(json!({"resultType": "input_required"})).is_err(), "asking for nothing is not a round");
    assert!(read(json!({"resultType": "input_required", "requestState": 7})).is_err());
}

#[tokio::test]
async fn every_request_kind_is_asked_of_the_host_naming_the_call_and_the_state_goes_back_as_it_came() {
    let host = Arc::new(Recorder::default());
    let state = r#"{"step":1, "x":"\u00e9"}"#;
    let requests = json!({
        "user": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}},
        "model": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
        "where": {"method": "roots/list", "params": {}}
    });
    let (r, sent) = run(&asker(&host, ALL), &origin(), Duration::from_secs(5), vec![input_required(requests, Some(state))]).await;
    assert_eq!(r.unwrap(), done());
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0], None, "the first round carries no input");
    let retry = sent[1].clone().unwrap();
    assert_eq!(retry.state.as_deref(), Some(state));
    assert_eq!(retry.responses["user"], json!({"action": "accept", "content": {"name": "Ada"}}));
    assert_eq!(retry.responses["model"]["content"]["text"], "Paris");
    assert_eq!(retry.responses["where"], json!({"roots": [{"uri": "file:///w"}]}));
    let mut asked = host.asked.lock().unwrap().clone();
    asked.sort();
    let call = Some("call-1".to_owned());
    assert_eq!(asked, vec![("elicit".into(), call.clone()), ("roots".into(), call.clone()), ("sample".into(), call)]);
}

#[tokio::test]
async fn a_round_without_state_retries_without_state() {
    let host = Arc::new(Recorder::default());
    let first = input_required(json!({"k": {"method": "elicitation/create", "params": {"message": "?"}}}), None);
    let (r, sent) = run(&asker(&host, ALL), &origin(), Duration::from_secs(5), vec![first]).await;
    assert!(r.is_ok());
    assert_eq!(sent[1].as_ref().unwrap().state, None);
}

#[tokio::test]
async fn rounds_are_bounded() {
    let host = Arc::new(Recorder::default());
    let again = input_required(json!({"k": {"method": "roots/list"}}), Some("s"));
    let (r, sent) = run(&asker(&host, ALL), &origin(), Duration::from_secs(5), vec![again; 20]).await;
    assert_eq!(sent.len(), 10);
    assert_eq!(host.asked.lock().unwrap().len(), 9, "no question for a retry that is not sent");
    assert_eq!(r.unwrap_err().to_string(), "MCP error: tools/call: the server still asked for input after 10 rounds");
}

#[tokio::test]
async fn what_the_host_cannot_answer_fails_the_call_readably() {
    let host = Arc::new(Recorder::default());
    let roots = input_required(json!({"k": {"method": "roots/list"}}), None);
    let no_roots = HostAsks { roots: false, ..ALL };
    let (r, _) = run(&asker(&host, no_roots), &origin(), Duration::from_secs(5), vec![roots]).await;
    let e = r.unwrap_err().to_string();
    assert!(e.contains("roots/list") && e.contains("capabilities.roots"), "{e}");
    assert!(host.asked.lock().unwrap().is_empty(), "a host without the capability is not asked");
    let odd = input_required(json!({"k": {"method": "ping"}}), None);
    let (r, _) = run(&asker(&host, ALL), &origin(), Duration::from_secs(5), vec![odd]).await;
    let e = r.unwrap_err().to_string();
    assert!(e.contains("by ping"), "{e}");
}

#[tokio::test]
async fn a_host_that_does_not_answer_is_bounded_by_the_call_timeout_and_its_cancel() {
    let host = Arc::new(Recorder { hang: true, ..Default::default() });
    let ask = input_required(json!({"k": {"method": "sampling/createMessage", "params": {}}}), None);
    let (r, sent) = run(&asker(&host, ALL), &origin(), Duration::from_millis(50), vec![ask.clone()]).await;
    assert!(matches!(r, Err(CatalogError::Timeout { .. })), "{r:?}");
    assert_eq!(sent.len(), 1, "no retry after the deadline");
    let o = origin();
    let cancel = o.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        cancel.cancel();
    });
    let (r, sent) = run(&asker(&host, ALL), &o, Duration::from_secs(30), vec![ask]).await;
    assert!(matches!(r, Err(CatalogError::Cancelled)), "{r:?}");
    assert_eq!(sent.len(), 1);
}
