//! The main loop under load, through the real binary over a pipe: with 50,000 tools
//! registered, the latency of a trivial request (`catalog/status`) idle and while four
//! `exposition/plan` over all of them run at all times, and how soon a `$/cancelRequest` is
//! answered meanwhile.
//!
//! `cargo bench --bench load` (`TOOLS=n` for another registry size, `TOOLREG_BIN=path` for
//! another build of the binary). Prints p50/p99; asserts nothing.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "common/frames.rs"]
mod frames;
use frames::{frame, read_frame};

const PLANS_IN_FLIGHT: usize = 4;
const PROBES: usize = 1000;
const CANCELS: usize = 50;

/// `n` host tools from the fixture catalogs, repeated under new names (so every definition is
/// counted afresh).
fn tools(n: usize) -> Vec<Value> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/mcp-catalogs");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut base = Vec::new();
    for f in files {
        let cat: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let server = cat["server"].as_str().unwrap().to_string();
        for t in cat["tools"].as_array().unwrap() {
            base.push((server.clone(), t.clone()));
        }
    }
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

fn main() {
    let n: usize = std::env::var("TOOLS").ok().and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let bin = std::env::var("TOOLREG_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_toolreg").to_string());
    let mut child = Command::new(bin)
        .arg("serve")
        .env("TOOLREG_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let w = Arc::new(Mutex::new(child.stdin.take().unwrap()));
    let mut r = BufReader::new(child.stdout.take().unwrap());

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
