//! The MCP catalog through the real binary: time to a ready catalog of 20 fixture servers;
//! `registry/syncMcp` of 2,422 tools; `exposition/plan` latency with 10 hanging servers vs
//! none; an MCP tool call through the sidecar vs the same call made directly to the server.
//!
//! `cargo build --release -p toolreg-fixture-mcp && cargo bench --bench catalog`. Prints medians
//! and ratios; asserts nothing. `cargo bench --bench catalog -- call` runs the tool call part only
//! (it also prints the sidecar's CPU time and context switches per call, from `/proc`);
//! `TOOLREG_BIN=path` runs another build of the sidecar, `CALLS=n` makes n calls (default 2,000).
//! Through the sidecar the call is made to a 2025-11-25 server (a session, `initialize`) and to
//! a 2026-07-28 one (`--modern`: stateless, `_meta` on each request), over stdio and over
//! Streamable HTTP, in alternation, and the ratio printed (issue 23); the direct call and the
//! relay speak 2025-11-25 over stdio.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/frames.rs"]
mod frames;
#[path = "common/process.rs"]
mod process;
#[path = "common/stats.rs"]
mod stats;
#[path = "catalog/grant.rs"]
mod grant;
use frames::read_frame;
use process::{fixture_bin, spawn_piped, toolreg_bin};
use stats::median;

struct Peer {
    child: Child,
    w: ChildStdin,
    r: BufReader<ChildStdout>,
    id: u64,
}

impl Peer {
    fn spawn() -> Peer {
        Peer::spawn_with(json!({"timeouts": {"connectMs": 120000, "listMs": 120000}}))
    }

    fn spawn_with(initialize: Value) -> Peer {
        let mut child = spawn_piped(&toolreg_bin(), &["serve"]);
        let w = child.stdin.take().unwrap();
        let r = BufReader::new(child.stdout.take().unwrap());
        let mut p = Peer { child, w, r, id: 0 };
        p.call("initialize", initialize);
        p
    }

    fn send(&mut self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        self.w.write_all(&frame).unwrap();
        self.w.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        serde_json::from_slice(&read_frame(&mut self.r)).unwrap()
    }

    /// Sends a request; returns (result, notifications seen meanwhile).
    fn call_notes(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.id += 1;
        // One write: a header and body in two writes would wake the sidecar twice.
        self.send(json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}));
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
fn direct_calls(n: usize, relay: bool) -> Vec<Duration> {
    // Through a bare relay, this very bench binary in `RELAY_MODE` between the client and the
    // server: the cost of one more process on the path, the floor under any sidecar.
    let mut command = if relay {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.env(RELAY_MODE, fixture_bin());
        c
    } else {
        Command::new(fixture_bin())
    };
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let send = |w: &mut ChildStdin, v: Value| {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        w.write_all(&line).unwrap();
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
    let mut before = (0, 0, 0);
    for i in 0..n + 100 {
        if i == 100 {
            before = proc_counters(child.id());
        }
        let t = Instant::now();
        send(&mut w, json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"i": i}}}));
        let resp = recv(&mut r);
        assert!(resp.get("result").is_some(), "{resp}");
        if i >= 100 {
            times.push(t.elapsed());
        }
    }
    let who = if relay { "through a bare relay, the relay" } else { "direct, the MCP server" };
    println!("  {who}: {}", per_call(before, proc_counters(child.id()), n));
    drop(w);
    let _ = child.kill();
    let _ = child.wait();
    times
}

/// Set to the server's path, the bench binary is a relay: it spawns the server and copies
/// bytes both ways, one thread a direction, no parsing.
const RELAY_MODE: &str = "TOOLREG_BENCH_RELAY";

fn relay(server: &str) {
    let mut child = Command::new(server).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let (mut to_server, mut from_server) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    // Unbuffered files over fds 0 and 1 (std's stdout is line-buffered): each read is written
    // at once, with splice where the kernel offers it.
    use std::os::fd::AsFd;
    let mut stdin = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned().unwrap());
    let mut stdout = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().unwrap());
    let up = std::thread::spawn(move || std::io::copy(&mut stdin, &mut to_server));
    let _ = std::io::copy(&mut from_server, &mut stdout);
    let _ = up.join();
    let _ = child.wait();
}

fn main() {
    if let Ok(server) = std::env::var(RELAY_MODE) {
        return relay(&server);
    }
    if std::env::args().any(|a| a == "grant") {
        return grant::gated_call();
    }
    if !std::env::args().any(|a| a == "call") {
        ready_sync_plan();
    }
    call_overhead();
}

fn ready_sync_plan() {
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

}

/// CPU time (ns) and context switches (voluntary, involuntary) of a process, over all its threads.
fn proc_counters(pid: u32) -> (u64, u64, u64) {
    let (mut cpu, mut vol, mut invol) = (0, 0, 0);
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return (0, 0, 0) };
    for task in tasks.flatten() {
        let dir = task.path();
        if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
            cpu += s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
        for line in std::fs::read_to_string(dir.join("status")).unwrap_or_default().lines() {
            let num = |l: &str| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            if line.starts_with("voluntary_ctxt_switches") {
                vol += num(line);
            } else if line.starts_with("nonvoluntary_ctxt_switches") {
                invol += num(line);
            }
        }
    }
    (cpu, vol, invol)
}

/// The direct children of a process (the sidecar's MCP server).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| s.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// Per-call CPU µs and context switches between two `proc_counters` readings.
fn per_call(before: (u64, u64, u64), after: (u64, u64, u64), n: usize) -> String {
    let n = n as f64;
    format!(
        "{:.0} µs CPU, {:.1} voluntary + {:.1} involuntary context switches per call",
        (after.0 - before.0) as f64 / 1000.0 / n,
        (after.1 - before.1) as f64 / n,
        (after.2 - before.2) as f64 / n
    )
}

/// How the sidecar's catalog reaches the fixture server.
#[derive(Clone, Copy, PartialEq)]
enum Wire {
    Stdio,
    Http,
}

/// An HTTP fixture server on a free port, killed on drop.
struct HttpServer(Child, String);

impl HttpServer {
    fn start(modern: bool) -> HttpServer {
        let port_file = std::env::temp_dir().join(format!("toolreg-bench-catalog-{}-{modern}.port", std::process::id()));
        let _ = std::fs::remove_file(&port_file);
        let mut args = vec!["--http", "127.0.0.1:0", "--port-file", port_file.to_str().unwrap()];
        if modern {
            args.push("--modern");
        }
        let child = Command::new(fixture_bin()).args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let t = Instant::now();
        let url = loop {
            if let Ok(url) = std::fs::read_to_string(&port_file) {
                break url.trim().to_string();
            }
            assert!(t.elapsed() < Duration::from_secs(20), "the HTTP fixture never wrote its port file");
            std::thread::sleep(Duration::from_millis(10));
        };
        let _ = std::fs::remove_file(&port_file);
        HttpServer(child, url)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `calls` MCP tool calls through the sidecar to one fixture server (2026-07-28 when
/// `modern`); returns the per-call times (after 100 warm-up calls) and what the sidecar and a
/// stdio server cost per call.
fn through_sidecar(wire: Wire, modern: bool, calls: usize) -> (Vec<Duration>, String) {
    let mut p = Peer::spawn();
    let http = (wire == Wire::Http).then(|| HttpServer::start(modern));
    let server = match &http {
        Some(h) => json!({"id": "fx", "name": "fx", "enabled": true, "transport": {"type": "http", "url": h.1}}),
        None => fixture("fx", if modern { &["--modern"] } else { &[] }),
    };
    p.call("catalog/setServers", json!({"servers": [server]}));
    p.wait_ready(1);
    let st = p.call("catalog/status", json!({}));
    let want = if modern { "2026-07-28" } else { "2025-11-25" };
    assert_eq!(st["servers"][0]["protocolVersion"], want, "{st}");
    p.call("registry/syncMcp", json!({}));
    // A plan waits for the tokenizer: its background load must not run inside the measurement.
    p.call("exposition/plan", json!({"contextWindow": 8000}));
    let sidecar = p.child.id();
    let server = children(sidecar).into_iter().find(|&c| {
        std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.starts_with("toolreg-fixture"))
    });
    let server = server.or(http.as_ref().map(|h| h.0.id()));
    let mut via = Vec::new();
    let (mut before, mut server_before) = ((0, 0, 0), (0, 0, 0));
    for i in 0..calls + 100 {
        if i == 100 {
            before = proc_counters(sidecar);
            server_before = server.map_or((0, 0, 0), proc_counters);
        }
        let t = Instant::now();
        let r = p.call("tool/invoke", json!({"name": "mcp__fx__echo", "arguments": {"i": i}}));
        assert_eq!(r["isError"], false, "{r}");
        if i >= 100 {
            via.push(t.elapsed());
        }
    }
    let (after, server_after) = (proc_counters(sidecar), server.map_or((0, 0, 0), proc_counters));
    p.close();
    let mut cost = format!("toolreg {}", per_call(before, after, calls));
    if server.is_some() {
        cost.push_str(&format!("; its MCP server {}", per_call(server_before, server_after, calls)));
    }
    (via, cost)
}

fn call_overhead() {
    // 4. An MCP tool call through the sidecar vs the same call made directly; through the
    // sidecar, to a 2025-11-25 server (session) and to a 2026-07-28 one (stateless), over stdio
    // and Streamable HTTP, all in this one run so that their ratio is fair on a shared machine.
    let calls: usize = std::env::var("CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    let mut session = Vec::new();
    for wire in [Wire::Stdio, Wire::Http] {
        let label = if wire == Wire::Stdio { "stdio" } else { "HTTP" };
        // Alternate the two versions twice, so a load change in mid-run lands on both.
        let (mut old, mut new) = (Vec::new(), Vec::new());
        let mut costs = Vec::new();
        for round in 0..2 {
            let (t, c) = through_sidecar(wire, false, calls / 2);
            old.extend(t);
            costs.push(format!("2025-11-25 round {round}: {c}"));
            let (t, c) = through_sidecar(wire, true, calls / 2);
            new.extend(t);
            costs.push(format!("2026-07-28 round {round}: {c}"));
        }
        let (old, new) = (median(old), median(new));
        println!(
            "MCP tools/call echo through toolreg (tool/invoke), {label}: 2025-11-25 session median {old:?}; 2026-07-28 stateless median {new:?}; ratio stateless / session {:.2}",
            new.as_secs_f64() / old.as_secs_f64()
        );
        for c in costs {
            println!("  {c}");
        }
        if wire == Wire::Stdio {
            session.push(old);
        }
    }
    let via = session[0];
    let (direct, relayed) = (median(direct_calls(calls, false)), median(direct_calls(calls, true)));
    println!(
        "MCP tools/call echo (2025-11-25, stdio): direct median {direct:?}; through toolreg (tool/invoke) median {via:?}; overhead {:?}",
        via.saturating_sub(direct)
    );
    println!(
        "  through a bare relay process median {relayed:?}: one more process costs {:?}; toolreg beyond that {:?}",
        relayed.saturating_sub(direct),
        via.saturating_sub(relayed)
    );
}
