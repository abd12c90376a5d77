//! Code mode: the per-run cost of a fresh sandbox (target < 5 ms), a run with host calls, and
//! (printed once before the timings) the tokens that reach the model for one multi-step task
//! done by N direct calls vs one `tool_exec` (o200k counts).
//!
//! `cargo bench --bench code_mode`.

use divan::Bencher;
use serde_json::{json, Value};
use toolreg::sandbox::{self, Ended, Limits, Request};

fn main() {
    tokens_direct_vs_script();
    divan::main();
}

/// Runs `code` to its end, answering each host call with `answer`.
fn run(rt: &tokio::runtime::Runtime, code: &str, answer: &dyn Fn(&Request) -> Value) -> sandbox::Finished {
    rt.block_on(async {
        let mut run = sandbox::start(code.to_string(), Limits::default()).unwrap();
        loop {
            tokio::select! {
                done = &mut run.done => return done.unwrap(),
                Some(c) = run.calls.recv() => run.reply(c.id, Ok(answer(&c.request))),
            }
        }
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// A fresh runtime, context and thread, a trivial script, its result.
#[divan::bench]
fn fresh_run(bencher: Bencher) {
    let rt = runtime();
    bencher.bench_local(|| {
        let f = run(&rt, "return 1;", &|_| Value::Null);
        assert!(matches!(f.ended, Ended::Returned { .. }));
    });
}

/// Five sequential tool calls whose 10 KB results the script filters.
#[divan::bench]
fn five_calls(bencher: Bencher) {
    let rt = runtime();
    let page = issues(50);
    bencher.bench_local(|| {
        let f = run(&rt, "let n = 0; for (let i = 0; i < 5; i++) { const r = await tools.call('list', {page: i}); n += r.filter(x => x.comments === 0).length; } return n;", &|_| page.clone());
        assert!(matches!(f.ended, Ended::Returned { .. }));
    });
}

/// A page of issues as a GitHub-like server returns them.
fn issues(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                json!({"number": 1000 + i, "title": format!("Crash when syncing folder {i} after upgrade"), "state": "open",
                    "user": {"login": format!("user{i}")}, "labels": [{"name": "bug"}, {"name": if i % 3 == 0 { "sync" } else { "ui" }}],
                    "comments": i % 4, "created_at": "2026-11-02T10:00:00Z",
                    "body": "Steps to reproduce: open the app, pick a folder, press sync. Expected: it syncs. Actual: it crashes with an error dialog."})
            })
            .collect(),
    )
}

/// The task: among 3 pages of open issues, the numbers of the uncommented `sync` bugs. Direct:
/// 3 calls, each result read whole by the model, then its answer. Code mode: one script and
/// its small result.
fn tokens_direct_vs_script() {
    let enc = toolreg::tokenize::for_model(Some("gpt-4o")).name;
    let pages: Vec<Value> = (0..3).map(|_| issues(50)).collect();
    let direct: usize = pages
        .iter()
        .enumerate()
        .map(|(i, p)| enc.count(&json!({"name": "list_issues", "arguments": {"state": "open", "page": i}}).to_string()) + enc.count(&p.to_string()))
        .sum();
    let code = "const out = []; for (let page = 0; page < 3; page++) { const r = await tools.call('list_issues', {state: 'open', page}); for (const i of r) if (i.comments === 0 && i.labels.some(l => l.name === 'sync')) out.push(i.number); } return out;";
    let rt = runtime();
    let f = run(&rt, code, &|_| pages[0].clone());
    let Ended::Returned { json: Some(result), .. } = &f.ended else { panic!("{:?}", f.ended) };
    let script = enc.count(&json!({"name": "tool_exec", "arguments": {"code": code}}).to_string()) + enc.count(result);
    eprintln!("tokens to the model (o200k), 3 pages of 50 issues: direct calls {direct}, one tool_exec {script} ({:.1}% of direct)", 100.0 * script as f64 / direct as f64);
}
