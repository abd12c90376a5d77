//! The main loop under load, through the real binary over a pipe.
//!
//! `plans`: with 50,000 tools registered, the latency of a trivial request (`catalog/status`)
//! idle and while four `exposition/plan` over all of them run at all times, and how soon a
//! `$/cancelRequest` is answered meanwhile.
//!
//! `first-calls`: the same trivial request idle and while four first calls of host tools
//! compile their 1 MB schemas and a `registry/syncMcp` of a 10,000-tool MCP server (the
//! fixture server) runs, in `ROUNDS` rounds of fresh schemas; medians and their ratio.
//!
//! `cargo bench --bench load` runs both; `SCENARIO=plans` or `SCENARIO=first-calls` one
//! (`TOOLS=n` for another registry size in `plans`, `TOOLREG_BIN=path` for another build of
//! the binary, `TOOLREG_FIXTURE_MCP=path` for the fixture server). Prints p50/p99; asserts
//! nothing.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../tests/support/catalogs.rs"]
mod catalogs;
#[path = "../tests/support/frames.rs"]
mod frames;
#[path = "common/process.rs"]
mod process;
use catalogs::catalog_tools;
use frames::{frame, read_frame};
use process::{spawn_piped, toolreg_bin};

const PLANS_IN_FLIGHT: usize = 4;
const PROBES: usize = 1000;
const CANCELS: usize = 50;

/// `n` host tools from the fixture catalogs, repeated under new names (so every definition is
/// counted afresh).
fn tools(n: usize) -> Vec<Value> {
    let base = catalog_tools();
    (0..n)
        .map(|i| {
            let (server, t) = &base[i % base.len()];
            let clean: String = t["name"].as_str().unwrap().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            let mut name = format!("t{i}_{clean}");
            name.truncate(64);
            let schema = t.get("inputSchema").filter(|s| s["type"] == "object").cloned().unwrap_or(json!({"type": "object"}));
            json!({"name": name, "namespace": server, "description": t["description"].as_str().unwrap_or(""), "inputSchema": schema})
        })
        .collect()
}

fn send(w: &Mutex<ChildStdin>, body: &Value) {
    let mut w = w.lock().unwrap();
    w.write_all(&frame(&body.to_string())).unwrap();
    w.flush().unwrap();
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn report(what: &str, v: &[Duration]) {
    println!("{what:<58} p50 {:>10.3?}  p99 {:>10.3?}  max {:>10.3?}  (n={})", pct(v.to_vec(), 0.5), pct(v.to_vec(), 0.99), pct(v.to_vec(), 1.0), v.len());
}

/// `toolreg serve`, its stdin shared by the threads that write, and its stdout.
fn spawn(bin: &str) -> (Child, Arc<Mutex<ChildStdin>>, BufReader<ChildStdout>) {
    let mut child = spawn_piped(bin, &["serve"]);
    let w = Arc::new(Mutex::new(child.stdin.take().unwrap()));
    let r = BufReader::new(child.stdout.take().unwrap());
    (child, w, r)
}

fn main() {
    let bin = toolreg_bin();
    let scenario = std::env::var("SCENARIO").unwrap_or_default();
    if scenario.is_empty() || scenario == "plans" {
        plans(&bin);
    }
    if scenario.is_empty() || scenario == "first-calls" {
        first_calls(&bin);
    }
}

fn plans(bin: &str) {
    let n: usize = std::env::var("TOOLS").ok().and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let (mut child, w, mut r) = spawn(bin);

    // Every answer goes to the main thread with its arrival time; a finished plan is replaced
    // by a new one at once, while `loaded` is set.
    let (tx, rx) = channel::<(String, Value, Instant)>();
    let loaded = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let plan = |id: String| json!({"jsonrpc": "2.0", "id": id, "method": "exposition/plan", "params": {"scope": {}, "model": "gpt-4o", "contextWindow": 200000}});
    {
        let (w, loaded) = (w.clone(), loaded.clone());
        std::thread::spawn(move || {
            let mut next_plan = 0;
            loop {
                let body = read_frame(&mut r);
                let at = Instant::now();
                let Ok(m) = serde_json::from_slice::<Value>(&body) else { return };
                let id = match &m["id"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                if id.starts_with("p-") && loaded.load(std::sync::atomic::Ordering::Relaxed) {
                    next_plan += 1;
                    send(&w, &plan(format!("p-r{next_plan}")));
                }
                let m = if id.starts_with("p-") { json!({"planned": true}) } else { m };
                if tx.send((id, m, at)).is_err() {
                    return;
                }
            }
        });
    }
    let wait_for = |rx: &Receiver<(String, Value, Instant)>, want: &str| -> (Value, Instant) {
        loop {
            let (id, m, at) = rx.recv().unwrap();
            if id == want {
                return (m, at);
            }
        }
    };

    send(&w, &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {}}));
    wait_for(&rx, "init");
    let t = Instant::now();
    for (i, chunk) in tools(n).chunks(5000).enumerate() {
        let id = format!("reg-{i}");
        send(&w, &json!({"jsonrpc": "2.0", "id": id, "method": "registry/register", "params": {"entries": chunk}}));
        wait_for(&rx, &id);
    }
    println!("{n} tools registered in {:?}", t.elapsed());
    let t = Instant::now();
    send(&w, &plan("p-first".into()));
    wait_for(&rx, "p-first");
    println!("first plan over {n} tools (counts every definition): {:?}", t.elapsed());

    let probe = |rx: &Receiver<(String, Value, Instant)>, i: usize| -> Duration {
        let id = format!("s-{i}");
        let t = Instant::now();
        send(&w, &json!({"jsonrpc": "2.0", "id": id, "method": "catalog/status"}));
        wait_for(rx, &id).1 - t
    };
    let idle: Vec<Duration> = (0..PROBES).map(|i| probe(&rx, i)).collect();

    loaded.store(true, std::sync::atomic::Ordering::Relaxed);
    for i in 0..PLANS_IN_FLIGHT {
        send(&w, &plan(format!("p-{i}")));
    }
    std::thread::sleep(Duration::from_millis(200));
    // At most a minute: a build that stalls under load still reports.
    let (mut busy, start) = (Vec::new(), Instant::now());
    for i in 0..PROBES {
        if start.elapsed() > Duration::from_secs(60) {
            break;
        }
        busy.push(probe(&rx, PROBES + i));
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut cancels = Vec::new();
    let start = Instant::now();
    for i in 0..CANCELS {
        if start.elapsed() > Duration::from_secs(60) {
            break;
        }
        let id = format!("c-{i}");
        send(&w, &plan(id.clone()));
        let t = Instant::now();
        send(&w, &json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}));
        let (m, at) = wait_for(&rx, &id);
        assert_eq!(m["error"]["code"], -32800, "{m}");
        cancels.push(at - t);
        std::thread::sleep(Duration::from_millis(20));
    }
    loaded.store(false, std::sync::atomic::Ordering::Relaxed);

    report("catalog/status, idle", &idle);
    report(&format!("catalog/status, {PLANS_IN_FLIGHT} plans over {n} tools running"), &busy);
    report("$/cancelRequest of a plan answered, same load", &cancels);
    drop(w);
    let _ = child.kill();
    let _ = child.wait();
}

const ROUNDS: usize = 3;
const FIRST_CALLS: usize = 4;
const MCP_TOOLS: usize = 10_000;
const IDLE_PROBES: usize = 200;

/// About 1 MB of schema whose compilation takes a while: thousands of properties, each with
/// its own regular expression. `seed` makes every schema (and so every compilation) new.
fn heavy_schema(seed: usize) -> Value {
    let properties: serde_json::Map<String, Value> = (0..8_000)
        .map(|i| {
            let p = json!({"type": "string", "pattern": format!("^(?:[a-z]{{1,{}}}|q{seed}x{i})+$", 1 + i % 9), "description": "A property of a generated schema."});
            (format!("p{seed}_{i}"), p)
        })
        .collect();
    json!({"type": "object", "properties": properties})
}

fn fixture_mcp() -> String {
    std::env::var("TOOLREG_FIXTURE_MCP").unwrap_or_else(|_| {
        std::path::Path::new(env!("CARGO_BIN_EXE_toolreg")).with_file_name("toolreg-fixture-mcp").to_string_lossy().into_owned()
    })
}

/// `catalog/status` while first calls compile big schemas and a 10,000-tool sync runs.
fn first_calls(bin: &str) {
    let (mut child, w, mut r) = spawn(bin);
    // Answers go to the main thread with their arrival time; the host runs every tool at once.
    let (tx, rx) = channel::<(String, Value, Instant)>();
    {
        let w = w.clone();
        std::thread::spawn(move || loop {
            let body = read_frame(&mut r);
            let at = Instant::now();
            let Ok(m) = serde_json::from_slice::<Value>(&body) else { return };
            if m["method"] == "host/executeTool" {
                send(&w, &json!({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ran"}]}}));
                continue;
            }
            let id = match &m["id"] {
                Value::String(s) => s.clone(),
                _ => continue, // notifications
            };
            if tx.send((id, m, at)).is_err() {
                return;
            }
        });
    }
    let wait_for = |want: &str| -> (Value, Instant) {
        loop {
            let (id, m, at) = rx.recv().unwrap();
            if id == want {
                return (m, at);
            }
        }
    };
    let request = |id: &str, method: &str, params: Value| send(&w, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));

    request("init", "initialize", json!({"capabilities": {"hostTools": true}}));
    wait_for("init");
    let server = json!({"id": "big", "name": "big", "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--tools", MCP_TOOLS.to_string()]}});
    request("servers", "catalog/setServers", json!({"servers": [server]}));
    wait_for("servers");
    let start = Instant::now();
    for i in 0.. {
        request(&format!("warm-{i}"), "catalog/listTools", json!({"serverId": "big"}));
        let (m, _) = wait_for(&format!("warm-{i}"));
        if m["result"]["state"] == "ready" {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the fixture server never listed its tools: {m}");
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("{MCP_TOOLS} MCP tools listed in {:?}", start.elapsed());

    let mut seq = 0;
    let mut probe = || -> Duration {
        seq += 1;
        let id = format!("s-{seq}");
        let t = Instant::now();
        request(&id, "catalog/status", json!({}));
        wait_for(&id).1 - t
    };
    let idle: Vec<Duration> = (0..IDLE_PROBES).map(|_| probe()).collect();

    let (mut busy, mut syncs, mut calls) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let names: Vec<String> = (0..FIRST_CALLS).map(|i| format!("heavy_{round}_{i}")).collect();
        let entries: Vec<Value> = names
            .iter()
            .enumerate()
            .map(|(i, name)| json!({"name": name, "namespace": "heavy", "description": "A tool with a big schema.", "inputSchema": heavy_schema(round * FIRST_CALLS + i)}))
            .collect();
        request(&format!("reg-{round}"), "registry/register", json!({"entries": entries}));
        wait_for(&format!("reg-{round}"));
        // The first calls and the sync in one write, then probes until every one has answered.
        let mut bytes = Vec::new();
        for (i, name) in names.iter().enumerate() {
            bytes.extend(frame(&json!({"jsonrpc": "2.0", "id": format!("call-{round}-{i}"), "method": "tool/invoke", "params": {"name": name, "arguments": {}}}).to_string()));
        }
        bytes.extend(frame(&json!({"jsonrpc": "2.0", "id": format!("sync-{round}"), "method": "registry/syncMcp", "params": {}}).to_string()));
        let t = Instant::now();
        {
            let mut w = w.lock().unwrap();
            w.write_all(&bytes).unwrap();
            w.flush().unwrap();
        }
        let mut pending: std::collections::BTreeSet<String> = (0..FIRST_CALLS).map(|i| format!("call-{round}-{i}")).chain([format!("sync-{round}")]).collect();
        let mut n = 0;
        while !pending.is_empty() && t.elapsed() < Duration::from_secs(60) {
            n += 1;
            let id = format!("b-{round}-{n}");
            let sent = Instant::now();
            request(&id, "catalog/status", json!({}));
            // The answers of the calls and the sync arrive among the probes'.
            loop {
                let (got, m, at) = rx.recv().unwrap();
                if got == id {
                    busy.push(at - sent);
                    break;
                }
                if pending.remove(&got) {
                    assert!(m.get("result").is_some(), "{got} failed: {m}");
                    if got.starts_with("sync") {
                        syncs.push(at - t);
                    } else {
                        calls.push(at - t);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        while !pending.is_empty() {
            let (got, _, at) = rx.recv().unwrap();
            if pending.remove(&got) {
                if got.starts_with("sync") { syncs.push(at - t) } else { calls.push(at - t) }
            }
        }
    }
    report("catalog/status, idle", &idle);
    report(&format!("catalog/status, {FIRST_CALLS} first calls + a {MCP_TOOLS}-tool sync running"), &busy);
    report("first call answered (compiles a 1 MB schema), from the write", &calls);
    report(&format!("registry/syncMcp of {MCP_TOOLS} tools answered, from the write"), &syncs);
    let (p50_idle, p50_busy) = (pct(idle.clone(), 0.5), pct(busy.clone(), 0.5));
    println!("median catalog/status under load / idle: {:.1}x", p50_busy.as_secs_f64() / p50_idle.as_secs_f64());
    drop(w);
    let _ = child.kill();
    let _ = child.wait();
}
