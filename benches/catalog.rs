//! The MCP catalog through the real binary: time to a ready catalog of 20 fixture servers;
//! `registry/syncMcp` of 2,422 tools; `exposition/plan` latency with 10 hanging servers vs
//! none; an MCP tool call through the sidecar vs the same call made directly to the server.
//!
//! `cargo build --release -p toolreg-fixture-mcp && cargo bench --bench catalog`. Prints medians
//! and ratios; asserts nothing.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/frames.rs"]
mod frames;
use frames::{median, read_frame};

/// The fixture MCP server, a bin of the workspace member `fixtures/mcp-server`: beside `toolreg`
/// in the same target dir (`cargo build --release -p toolreg-fixture-mcp` first).
fn fixture_bin() -> String {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_toolreg")).with_file_name("toolreg-fixture-mcp");
    assert!(path.is_file(), "no fixture MCP server at {}: run `cargo build --release -p toolreg-fixture-mcp` first", path.display());
    path.to_string_lossy().into_owned()
}

struct Peer {
    child: Child,
    w: ChildStdin,
    r: BufReader<ChildStdout>,
    id: u64,
}

impl Peer {
    fn spawn() -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolreg"))
            .arg("serve")
            .env("TOOLREG_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let w = child.stdin.take().unwrap();
        let r = BufReader::new(child.stdout.take().unwrap());
        let mut p = Peer { child, w, r, id: 0 };
        p.call("initialize", json!({"timeouts": {"connectMs": 120000, "listMs": 120000}}));
        p
    }

    fn read(&mut self) -> Value {
        serde_json::from_slice(&read_frame(&mut self.r)).unwrap()
    }

    /// Sends a request; returns (result, notifications seen meanwhile).
    fn call_notes(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.id += 1;
        let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})).unwrap();
        self.w.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).unwrap();
        self.w.write_all(&body).unwrap();
        self.w.flush().unwrap();
        let mut notes = Vec::new();
        loop {
            let m = self.read();
            if m.get("id") == Some(&json!(self.id)) {
                return (m.get("result").cloned().unwrap_or_else(|| panic!("{method}: {m}")), notes);
            }
            notes.push(m);
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.call_notes(method, params).0
    }

    fn wait_ready(&mut self, n: usize) {
        loop {
            let st = self.call("catalog/status", json!({}));
            if st["servers"].as_array().unwrap().iter().filter(|s| s["state"] == "ready").count() >= n {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn close(mut self) {
        self.call("shutdown", Value::Null);
        let _ = self.w.write_all(b"Content-Length: 33\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
        let _ = self.w.flush();
        let _ = self.child.wait();
    }
}

fn fixture(id: &str, args: &[&str]) -> Value {
    json!({"id": id, "name": id, "enabled": true, "transport": {"type": "stdio", "command": fixture_bin(), "args": args}})
}


/// A minimal MCP client over newline-delimited JSON: the direct path to compare against.
fn direct_calls(n: usize) -> Vec<Duration> {
    let mut child = Command::new(fixture_bin()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let send = |w: &mut ChildStdin, v: Value| {
        w.write_all(serde_json::to_string(&v).unwrap().as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        w.flush().unwrap();
    };
    let recv = |r: &mut BufReader<ChildStdout>| {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    send(&mut w, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}));
    recv(&mut r);
    send(&mut w, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut times = Vec::with_capacity(n);
    for i in 0..n + 100 {
        let t = Instant::now();
        send(&mut w, json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"i": i}}}));
        let resp = recv(&mut r);
        assert!(resp.get("result").is_some(), "{resp}");
        if i >= 100 {
            times.push(t.elapsed());
        }
    }
    drop(w);
    let _ = child.kill();
    let _ = child.wait();
    times
}

fn main() {
    // 1. Time to a ready catalog of 20 servers (20 tools each), from catalog/setServers.
    let mut ready = Vec::new();
    for _ in 0..5 {
        let mut p = Peer::spawn();
        let servers: Vec<Value> = (0..20).map(|i| fixture(&format!("s{i}"), &["--tools", "20"])).collect();
        let t = Instant::now();
        p.call("catalog/setServers", json!({"servers": servers}));
        p.wait_ready(20);
        ready.push(t.elapsed());
        p.close();
    }
    println!("ready catalog of 20 fixture servers: median {:?} (5 runs)", median(ready));

    // 2. Sync of 2,422 tools into the registry (first sync, then an idempotent one).
    let mut p = Peer::spawn();
    p.call("catalog/setServers", json!({"servers": [fixture("big", &["--tools", "2420"])]}));
    p.wait_ready(1);
    let t = Instant::now();
    let first = p.call("registry/syncMcp", json!({}));
    let first_t = t.elapsed();
    assert_eq!(first["registered"].as_array().unwrap().len(), 2422);
    let mut again = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        p.call("registry/syncMcp", json!({}));
        again.push(t.elapsed());
    }
    println!("registry/syncMcp of 2,422 tools: first {first_t:?}; idempotent re-sync median {:?} (request round trip included)", median(again));
    p.close();

    // 3. Plan latency with 10 hanging servers beside a healthy one, vs the healthy one alone.
    let plan_median = |hanging: usize| {
        let mut p = Peer::spawn();
        let mut servers = vec![fixture("good", &["--tools", "50"])];
        servers.extend((0..hanging).map(|i| fixture(&format!("hang{i}"), &["--hang-list"])));
        p.call("catalog/setServers", json!({"servers": servers}));
        p.wait_ready(1);
        p.call("registry/syncMcp", json!({}));
        let scope = json!({"scope": {"settings": {"enableWebSearch": true}, "knowledgeBaseIds": ["k"]}, "contextWindow": 8000});
        for _ in 0..50 {
            p.call("exposition/plan", scope.clone());
        }
        let mut v = Vec::new();
        for _ in 0..500 {
            let t = Instant::now();
            p.call("exposition/plan", scope.clone());
            v.push(t.elapsed());
        }
        p.close();
        median(v)
    };
    let (none, hung) = (plan_median(0), plan_median(10));
    println!(
        "exposition/plan (54 tools) median: {none:?} with no hanging server, {hung:?} with 10 hanging; ratio {:.2}",
        hung.as_secs_f64() / none.as_secs_f64()
    );

    // 4. An MCP tool call through the sidecar vs the same call made directly.
    let mut p = Peer::spawn();
    p.call("catalog/setServers", json!({"servers": [fixture("fx", &[])]}));
    p.wait_ready(1);
    p.call("registry/syncMcp", json!({}));
    let mut via = Vec::new();
    for i in 0..2100 {
        let t = Instant::now();
        let r = p.call("tool/invoke", json!({"name": "mcp__fx__echo", "arguments": {"i": i}}));
        assert_eq!(r["isError"], false, "{r}");
        if i >= 100 {
            via.push(t.elapsed());
        }
    }
    p.close();
    let (via, direct) = (median(via), median(direct_calls(2000)));
    println!(
        "MCP tools/call echo: direct median {direct:?}; through toolreg (tool/invoke) median {via:?}; overhead {:?}",
        via.saturating_sub(direct)
    );
}
