//! An upstream server's tasks (the MCP tasks extension, SEP-2663) followed to their end by the
//! sidecar, over the real binary and the fixture (`--modern --tasks`, whose task-supporting
//! tools run as tasks when the request declares the extension), over stdio and Streamable
//! HTTP: a `tool/invoke` resolves with the task's result, `$/progress` tells its status on the
//! way, the task's input requests reach the host and go back by `tasks/update`, and
//! `$/cancelRequest` or the server's `timeouts.callMs` cancels the task upstream. The fixture's
//! `task_stats` counts the tasks it made and those cancelled, so each check sees that a task
//! really ran and really was cancelled.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;
use support::modern::{silent, Session, Via};

fn session(via: Via, timeouts: Value) -> Session {
    let flags = |_: &std::path::Path| ["--tasks", "--tasks-poll-ms", "100"].map(str::to_owned).to_vec();
    let initialize = json!({"clientInfo": {"name": "tasks-test"}, "capabilities": {"elicitation": true}});
    Session::start(via, flags, initialize, json!({"timeouts": timeouts}))
}

impl Session {
    fn params(&self, tool: &str, arguments: Value, call_id: &str) -> Value {
        json!({"name": self.wire(tool), "arguments": arguments, "callId": call_id})
    }

    /// The fixture's `{made, cancelled}`.
    fn stats(&mut self) -> Value {
        let p = self.params("task_stats", json!({}), "stats");
        let r = call(&mut self.s, "tool/invoke", p, &mut silent);
        serde_json::from_str(r["result"]["output"]["value"].as_str().unwrap_or_else(|| panic!("{r}"))).unwrap()
    }

    /// Waits (bounded) until the fixture has settled `n` tasks as cancelled.
    fn cancelled_reaches(&mut self, n: u64) {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.stats()["cancelled"].as_u64().unwrap();
            if got >= n {
                return;
            }
            assert!(Instant::now() < until, "the fixture's task was never cancelled ({got} of {n})");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn a_task_resolves_the_invoke_with_progress_on_the_way(via: Via) {
    let mut x = session(via, json!({}));
    assert_eq!(x.stats()["made"], 0);
    let mut progress = Vec::new();
    let p = x.params("slow_compute", json!({"seconds": 0.5, "label": "ci"}), "task-1");
    let r = call(&mut x.s, "tool/invoke", p, &mut |_, m| {
        if method(m) == "$/progress" && m["params"]["token"] == "task-1" {
            progress.push(m["params"]["value"].clone());
        }
    });
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(r["result"]["output"]["value"], "computed ci in 0.5 s", "{r}");
    assert_eq!(x.stats()["made"], 1, "the call did not run as a task");
    let messages: Vec<&str> = progress.iter().filter_map(|v| v["message"].as_str()).collect();
    assert!(messages.contains(&"task working") && messages.contains(&"task completed"), "{progress:?}");
    x.s.shutdown();
}

#[test]
fn a_task_resolves_the_invoke_with_progress_on_the_way_over_stdio_and_http() {
    for via in [Via::Stdio, Via::Http] {
        a_task_resolves_the_invoke_with_progress_on_the_way(via);
    }
}

#[test]
fn a_task_tool_error_stays_a_tool_error_and_a_failed_task_fails_the_invoke() {
    let mut x = session(Via::Stdio, json!({}));
    let p = x.params("failing_job", json!({}), "f-1");
    let r = call(&mut x.s, "tool/invoke", p, &mut silent);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["output"]["value"].as_str().unwrap().contains("failing_job failed"), "{r}");
    let p = x.params("protocol_error_job", json!({}), "f-2");
    let r = call(&mut x.s, "tool/invoke", p, &mut silent);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["output"]["value"].as_str().unwrap().contains("protocol_error_job broke down"), "{r}");
    assert_eq!(x.stats()["made"], 2);
    x.s.shutdown();
}

#[test]
fn a_task_waiting_on_input_asks_the_host_and_goes_on_with_the_answer() {
    let mut x = session(Via::Stdio, json!({}));
    let mut asked = Vec::new();
    let p = x.params("confirm_delete", json!({"filename": "notes.txt"}), "ask-1");
    let r = call(&mut x.s, "tool/invoke", p, &mut |s, m| {
        if method(m) == "host/elicit" {
            asked.push(m["params"].clone());
            answer(s, m, json!({"action": "accept", "content": {"confirm": true}}));
        }
    });
    assert_eq!(r["result"]["output"]["value"], "deleted notes.txt", "{r}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!((&asked[0]["serverId"], &asked[0]["callId"], &asked[0]["message"]), (&json!("fx"), &json!("ask-1"), &json!("Delete notes.txt?")), "{asked:?}");
    x.s.shutdown();
}

fn cancelling_the_invoke_cancels_the_task(via: Via) {
    let mut x = session(via, json!({}));
    let p = x.params("slow_compute", json!({"seconds": 60, "label": "long"}), "c-1");
    let id = send_req(&mut x.s, "tool/invoke", p);
    // Cancelled once the task surely exists: at its first status report.
    let mut told = false;
    let r = pump(&mut x.s, std::slice::from_ref(&id), &mut |s, m| {
        if method(m) == "$/progress" && m["params"]["token"] == "c-1" && !told {
            told = true;
            s.notify("$/cancelRequest", json!({"id": id}));
        }
    });
    assert!(told, "no progress before the answer: {:?}", r[0]);
    assert_eq!(r[0]["error"]["code"], -32800, "{:?}", r[0]);
    x.cancelled_reaches(1);
    x.s.shutdown();
}

#[test]
fn cancelling_the_invoke_cancels_the_task_over_stdio_and_http() {
    for via in [Via::Stdio, Via::Http] {
        cancelling_the_invoke_cancels_the_task(via);
    }
}

#[test]
fn the_servers_call_timeout_bounds_the_task_and_cancels_it() {
    let mut x = session(Via::Stdio, json!({"callMs": 1500}));
    let p = x.params("slow_compute", json!({"seconds": 60, "label": "late"}), "t-1");
    let r = call(&mut x.s, "tool/invoke", p, &mut |_, _| {});
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["output"]["value"].as_str().unwrap();
    assert!(text.contains("1500") || text.contains("1.5"), "the timeout is named: {text}");
    x.cancelled_reaches(1);
    x.s.shutdown();
}
