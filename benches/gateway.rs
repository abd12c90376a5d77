//! `toolreg mcp` against the same upstream servers connected directly, as an MCP client (Claude
//! Desktop, Cursor, ...) would connect them: five fixture servers serving real catalogs
//! (github, atlassian, notion, stripe, playwright from ../shared/fixtures/mcp-catalogs, 286
//! tools). Measures spawn to `tools/list` (cold, and with toolreg's cache warm), the tokens of
//! the `tools/list` answer (direct: every tool; through toolreg: the plan; o200k_base, the real
//! tokenizer), a tool call's overhead, and `tools/list` with one upstream server hung; and a
//! tool call through `toolreg mcp --http` from a 2025-11-25 client (a session, `initialize`)
//! and from a 2026-07-28 one (stateless: no `initialize`, its version, capabilities and client
//! in `_meta`, the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers), alternated
//! call by call over one kept-alive connection each, with their ratio (issue 23). And
//! `resources/list` with one of three upstreams hung in `resources/list` (the fixture's
//! `--conformance --hang-resources`), its last-known-good list in the cache (issue 24).
//!
//! `cargo build --release -p toolreg-fixture-mcp && cargo bench --bench gateway`. Prints medians;
//! asserts nothing. `RUNS=n` spawns n times (default 10), `CALLS=n` makes n calls (default 500);
//! `SECTION=telemetry` runs only OpenTelemetry's cost per call (off, a live collector, a dead
//! one; issue 43 §4). `SECTION=resources` runs only the hung `resources/list` section; `SECTION=audit` only the
//! audit log's cost per call (off, on, on with arguments and results; issue 43), which is run
//! by no other section; `SECTION=profiles`
//! spawn to `tools/list` with and without four profiles, and of one profile (issue 43 §1).
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[path = "common/http.rs"]
mod http;
#[path = "common/process.rs"]
mod process;
#[path = "common/stats.rs"]
mod stats;
use process::{bench_state_dir, fixture_bin, spawn_piped};
use stats::median;

const CATALOGS: [&str; 5] = ["github", "atlassian", "notion", "stripe", "playwright"];
/// How long the direct client waits for a hung server's list before giving up.
const DIRECT_LIST_TIMEOUT: Duration = Duration::from_secs(10);

fn env_n(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// An MCP client over a child's stdio (newline-delimited JSON-RPC).
struct Client {
    child: Child,
    w: ChildStdin,
    rx: mpsc::Receiver<Value>,
    id: u64,
}

impl Client {
    fn spawn(cmd: &str, args: &[String]) -> Client {
        let mut child = spawn_piped(cmd, args);
        let w = child.stdin.take().unwrap();
        let r: ChildStdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(r).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        });
        Client { child, w, rx, id: 0 }
    }

    /// The result of a request, or `None` when no answer arrives within `timeout`.
    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Option<Value> {
        self.id += 1;
        let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})).unwrap();
        line.push(b'\n');
        self.w.write_all(&line).unwrap();
        self.w.flush().unwrap();
        let deadline = Instant::now() + timeout;
        loop {
            let m = self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()?;
            if m.get("id") == Some(&json!(self.id)) && m.get("method").is_none() {
                return Some(m["result"].clone());
            }
        }
    }

    fn initialize(&mut self) {
        self.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}), Duration::from_secs(60))
            .expect("initialize");
        let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        line.push(b'\n');
        self.w.write_all(&line).unwrap();
    }

    fn list(&mut self, timeout: Duration) -> Option<Vec<Value>> {
        Some(self.request("tools/list", json!({}), timeout)?["tools"].as_array()?.clone())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Each catalog's tools written where the fixture's `--defs-file` reads them.
fn write_defs(dir: &std::path::Path) -> Vec<String> {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/mcp-catalogs");
    CATALOGS
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(shared.join(format!("{name}.json"))).expect("../shared/fixtures/mcp-catalogs");
            let catalog: Value = serde_json::from_str(&text).unwrap();
            let path = dir.join(format!("{name}.json"));
            std::fs::write(&path, serde_json::to_vec(&catalog["tools"]).unwrap()).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect()
}

fn fixture_args(defs: &str, hang: bool) -> Vec<String> {
    let mut a = vec!["--defs-file".to_string(), defs.to_string()];
    if hang {
        a.push("--hang-list".into());
    }
    a
}

/// Tokens of a `tools/list` answer: each tool as the model gets it ({name, description,
/// inputSchema}), counted with o200k_base as the plan counts.
fn tokens(tools: &[Value]) -> usize {
    let enc = toolreg::tokenize::for_model(Some("gpt-4o"));
    tools
        .iter()
        .map(|t| {
            let d = toolreg::exposition::ToolDefinition {
                name: t["name"].as_str().unwrap_or_default().into(),
                description: t["description"].as_str().unwrap_or_default().into(),
                input_schema: t["inputSchema"].clone(),
            };
            enc.name.count(&d.counted_text())
        })
        .sum()
}

/// Direct: one client session per server, all spawned at once; the time until every list is in
/// (a hung server's list is given up after `DIRECT_LIST_TIMEOUT`). Returns (time, tools, answered).
fn direct_lists(defs: &[String], hang_first: bool) -> (Duration, Vec<Value>, usize) {
    let fixture = fixture_bin();
    let start = Instant::now();
    let handles: Vec<_> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (fixture, args) = (fixture.clone(), fixture_args(d, hang_first && i == 0));
            std::thread::spawn(move || {
                let mut c = Client::spawn(&fixture, &args);
                c.initialize();
                c.list(DIRECT_LIST_TIMEOUT)
            })
        })
        .collect();
    let lists: Vec<Option<Vec<Value>>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let elapsed = start.elapsed();
    let answered = lists.iter().filter(|l| l.is_some()).count();
    (elapsed, lists.into_iter().flatten().flatten().collect(), answered)
}

fn gateway_config(dir: &std::path::Path, defs: &[String], hang_first: bool, cache: &std::path::Path) -> String {
    // Extra flags travel in the environment, which the cache identity ignores (a hung run
    // reads the cache the healthy run wrote).
    let servers: Vec<Value> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let extra = if hang_first && i == 0 { "--hang-list" } else { "" };
            json!({"id": CATALOGS[i], "name": CATALOGS[i], "trust": "auto", "transport": {"type": "stdio", "command": "/bin/sh",
                "args": ["-c", format!("exec \"$FIXTURE\" --defs-file {d} $EXTRA")],
                "env": {"FIXTURE": fixture_bin(), "EXTRA": extra}}})
        })
        .collect();
    let cfg = json!({"model": "gpt-4o", "contextWindow": 200000, "servers": servers,
        "gateway": {"cacheDir": cache, "warmupMs": 10000}});
    let path = dir.join(if hang_first { "gw-hung.json" } else { "gw.json" });
    std::fs::write(&path, serde_json::to_vec(&cfg).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// Through toolreg: spawn, initialize, tools/list. Returns (time, tools).
fn gateway_list(config: &str) -> (Duration, Vec<Value>) {
    gateway_list_as(config, &[])
}

/// `gateway_list` with more arguments (`--profile NAME`).
fn gateway_list_as(config: &str, extra: &[&str]) -> (Duration, Vec<Value>) {
    let start = Instant::now();
    let mut args: Vec<String> = vec!["mcp".into(), "--config".into(), config.into()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut c = Client::spawn(env!("CARGO_BIN_EXE_toolreg"), &args);
    c.initialize();
    let tools = c.list(Duration::from_secs(60)).expect("toolreg mcp lists");
    (start.elapsed(), tools)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs = env_n("RUNS", 10);
    let calls = env_n("CALLS", 500);
    let dir = tempfile::tempdir().unwrap();
    if std::env::var("SECTION").as_deref() == Ok("resources") {
        return resources_hung(dir.path(), runs, calls);
    }
    if std::env::var("SECTION").as_deref() == Ok("audit") {
        return audit_cost(dir.path(), runs, calls);
    }
    if std::env::var("SECTION").as_deref() == Ok("telemetry") {
        return telemetry_cost(dir.path(), runs, calls);
    }
    if std::env::var("SECTION").as_deref() == Ok("profiles") {
        return profiles_cost(dir.path(), runs);
    }
    let defs = write_defs(dir.path());
    let (_, direct_tools, _) = direct_lists(&defs, false);
    println!("upstream: {} fixture servers serving {} tools ({})", defs.len(), direct_tools.len(), CATALOGS.join(", "));

    // Spawn to tools/list.
    let direct: Vec<Duration> = (0..runs).map(|_| direct_lists(&defs, false).0).collect();
    let cold: Vec<Duration> = (0..runs)
        .map(|i| {
            let cache = dir.path().join(format!("cold-{i}"));
            gateway_list(&gateway_config(dir.path(), &defs, false, &cache)).0
        })
        .collect();
    let cache = dir.path().join("warm");
    let config = gateway_config(dir.path(), &defs, false, &cache);
    let (_, planned) = gateway_list(&config);
    let warm: Vec<Duration> = (0..runs).map(|_| gateway_list(&config).0).collect();
    println!("\nspawn to tools/list, median of {runs}:");
    println!("  direct (5 sessions in parallel)     {}", ms(median(direct)));
    println!("  toolreg mcp, cold cache              {}", ms(median(cold)));
    println!("  toolreg mcp, warm cache              {}", ms(median(warm)));

    // Tokens.
    let (t_direct, t_plan) = (tokens(&direct_tools), tokens(&planned));
    println!("\ntools/list tokens (o200k_base):");
    println!("  direct: {} tools, {t_direct} tokens", direct_tools.len());
    println!("  toolreg mcp: {} tools, {t_plan} tokens ({:.1}% of direct)", planned.len(), 100.0 * t_plan as f64 / t_direct as f64);

    // One upstream hung in tools/list.
    let hung_direct: Vec<(Duration, usize)> = (0..runs.min(3)).map(|_| {
        let (d, _, answered) = direct_lists(&defs, true);
        (d, answered)
    }).collect();
    let hung_config = gateway_config(dir.path(), &defs, true, &cache);
    let hung_gw: Vec<(Duration, usize)> = (0..runs).map(|_| {
        let (d, tools) = gateway_list(&hung_config);
        (d, tools.len())
    }).collect();
    println!("\ntools/list with the github server hung in tools/list:");
    println!(
        "  direct: {} until the client gives up on it ({} s timeout), {} of 5 lists",
        ms(median(hung_direct.iter().map(|h| h.0).collect())),
        DIRECT_LIST_TIMEOUT.as_secs(),
        hung_direct[0].1
    );
    println!(
        "  toolreg mcp (warm cache): {} spawn to tools/list, {} tools listed (its cached list included)",
        ms(median(hung_gw.iter().map(|h| h.0).collect())),
        hung_gw[0].1
    );

    // Call overhead: echo on the notion server, direct vs through toolreg.
    let mut direct_c = Client::spawn(&fixture_bin(), &fixture_args(&defs[2], false));
    direct_c.initialize();
    let mut gw = Client::spawn(env!("CARGO_BIN_EXE_toolreg"), &["mcp".into(), "--config".into(), config.clone()]);
    gw.initialize();
    gw.list(Duration::from_secs(60)).unwrap();
    let time_calls = |c: &mut Client, name: &str| -> Duration {
        for _ in 0..50 {
            c.request("tools/call", json!({"name": name, "arguments": {"n": 1}}), Duration::from_secs(10)).unwrap();
        }
        median((0..calls).map(|i| {
            let t = Instant::now();
            let r = c.request("tools/call", json!({"name": name, "arguments": {"n": i}}), Duration::from_secs(10)).unwrap();
            assert_eq!(r["isError"], false, "{r}");
            t.elapsed()
        }).collect())
    };
    let d = time_calls(&mut direct_c, "echo");
    let g = time_calls(&mut gw, "mcp__notion__echo");
    println!("\ntools/call echo, median of {calls}:");
    println!("  direct {}   through toolreg mcp {}   overhead {}", ms(d), ms(g), ms(g.saturating_sub(d)));
    drop(gw);

    http_calls(&config, calls);
    resources_hung(dir.path(), runs, calls);
}

/// The audit log's cost per call (issue 43): `tools/call` echo through `toolreg mcp` with
/// `gateway.audit` off, on, and on with arguments and results, in interleaved rounds (so a
/// neighbour's load falls on each alike); the median of each round's median.
fn audit_cost(dir: &std::path::Path, runs: usize, calls: usize) {
    let variants = [
        ("off", Value::Null),
        ("on", json!({"file": dir.join("audit/on.jsonl")})),
        ("on, arguments and results", json!({"file": dir.join("audit/all.jsonl"), "arguments": true, "results": true})),
    ];
    per_call_cost(dir, runs, calls, "audit", &variants);
    for f in ["on", "all"] {
        let lines = std::fs::read_to_string(dir.join(format!("audit/{f}.jsonl"))).unwrap_or_default().lines().count();
        println!("  audit/{f}.jsonl: {lines} records");
    }
}

/// OpenTelemetry's cost per call (issue 43 §4): `gateway.telemetry` off, on with a collector
/// that answers every export at once (a loopback sink), and on with a dead one (a closed port).
fn telemetry_cost(dir: &std::path::Path, runs: usize, calls: usize) {
    let sink = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let alive = format!("http://{}", sink.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in sink.incoming().flatten() {
            std::thread::spawn(move || collector_sink(stream));
        }
    });
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let variants = [("off", Value::Null), ("on, collector alive", json!({"endpoint": alive})), ("on, collector dead", json!({"endpoint": dead}))];
    per_call_cost(dir, runs, calls, "telemetry", &variants);
}

/// Answers every HTTP/1.1 request on `stream` 200 with an empty body, reading the body it
/// was sent (Content-Length).
fn collector_sink(stream: std::net::TcpStream) {
    use std::io::{BufRead, Read, Write};
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.to_ascii_lowercase();
            if let Some(v) = l.strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() || out.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_err() {
            return;
        }
    }
}

/// `tools/call` echo through `toolreg mcp` with `gateway.<key>` set to each variant (`null`:
/// absent), in interleaved rounds; prints the median of each variant's rounds' medians.
fn per_call_cost(dir: &std::path::Path, runs: usize, calls: usize, key: &str, variants: &[(&str, Value)]) {
    let server = json!({"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": fixture_bin(), "args": []}});
    let mut medians: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
    for _ in 0..runs.clamp(1, 5) {
        for (i, (name, audit)) in variants.iter().enumerate() {
            let mut gateway = json!({"defer": "never", "cacheDir": dir.join("cache")});
            if !audit.is_null() {
                gateway[key] = audit.clone();
            }
            let path = dir.join(format!("{key}-{i}.json"));
            std::fs::write(&path, serde_json::to_vec(&json!({"servers": [server], "gateway": gateway})).unwrap()).unwrap();
            let mut gw = Client::spawn(env!("CARGO_BIN_EXE_toolreg"), &["mcp".into(), "--config".into(), path.display().to_string()]);
            gw.initialize();
            let t = Instant::now();
            while !gw.list(Duration::from_secs(60)).unwrap().iter().any(|t| t["name"] == "mcp__fx__echo") {
                assert!(t.elapsed() < Duration::from_secs(60), "{name}: echo never listed");
                std::thread::sleep(Duration::from_millis(20));
            }
            for n in 0..50 {
                gw.request("tools/call", json!({"name": "mcp__fx__echo", "arguments": {"n": n}}), Duration::from_secs(10)).unwrap();
            }
            medians[i].push(median((0..calls).map(|n| {
                let t = Instant::now();
                let r = gw.request("tools/call", json!({"name": "mcp__fx__echo", "arguments": {"n": n, "text": "a short argument"}}), Duration::from_secs(10)).unwrap();
                assert_eq!(r["isError"], false, "{r}");
                t.elapsed()
            }).collect()));
        }
    }
    println!("tools/call echo through toolreg mcp, median of {} rounds' medians of {calls} calls:", medians[0].len());
    let off = median(medians[0].clone());
    for (i, (name, _)) in variants.iter().enumerate() {
        let m = median(medians[i].clone());
        println!("  {key} {name:<28} {}   ({:+.1} µs a call)", ms_us(m), (m.as_secs_f64() - off.as_secs_f64()) * 1e6);
    }
}

/// Spawn to the first full `tools/list` (warm cache) of the five catalogs with no profile, with
/// four profiles (every resync plans each), and of one profile over stdio (issue 43 §1).
fn profiles_cost(dir: &std::path::Path, runs: usize) {
    let defs = write_defs(dir);
    let cache = dir.join("warm");
    let plain = gateway_config(dir, &defs, false, &cache);
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(&plain).unwrap()).unwrap();
    cfg["gateway"]["profiles"] = json!({"code": {"servers": ["github"]}, "work": {"servers": ["atlassian", "notion"]},
        "pay": {"servers": ["stripe"], "defer": "never"}, "web": {"servers": ["playwright"]}});
    let with = dir.join("gw-profiles.json");
    std::fs::write(&with, serde_json::to_vec(&cfg).unwrap()).unwrap();
    let with = with.to_string_lossy().into_owned();
    let (_, whole) = gateway_list(&plain);
    let (_, work) = gateway_list_as(&with, &["--profile", "work"]);
    let mut rounds: [Vec<Duration>; 3] = Default::default();
    for _ in 0..runs {
        rounds[0].push(gateway_list(&plain).0);
        rounds[1].push(gateway_list(&with).0);
        rounds[2].push(gateway_list_as(&with, &["--profile", "work"]).0);
    }
    println!("spawn to tools/list, warm cache, median of {runs} (alternated):");
    println!("  no profile                      {}  ({} tools listed)", ms(median(rounds[0].clone())), whole.len());
    println!("  four profiles, /mcp             {}", ms(median(rounds[1].clone())));
    println!("  four profiles, --profile work   {}  ({} tools listed)", ms(median(rounds[2].clone())), work.len());
}

const RESOURCE_SERVERS: [&str; 3] = ["docs", "wiki", "files"];

/// Three `--conformance` fixtures (3 resources each); with `hang`, the first never answers
/// `resources/list` (the flag travels in the environment, which the cache identity ignores).
fn resources_config(dir: &std::path::Path, cache: &std::path::Path, hang: bool) -> String {
    let servers: Vec<Value> = RESOURCE_SERVERS
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let extra = if hang && i == 0 { "--hang-resources" } else { "" };
            json!({"id": id, "name": id, "trust": "auto", "transport": {"type": "stdio", "command": "/bin/sh",
                "args": ["-c", "exec \"$FIXTURE\" --conformance $EXTRA"], "env": {"FIXTURE": fixture_bin(), "EXTRA": extra}}})
        })
        .collect();
    let cfg = json!({"servers": servers, "gateway": {"cacheDir": cache, "warmupMs": 10000, "defer": "never"}});
    let path = dir.join(if hang { "res-hung.json" } else { "res.json" });
    std::fs::write(&path, serde_json::to_vec(&cfg).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

fn resources(c: &mut Client) -> usize {
    let r = c.request("resources/list", json!({}), Duration::from_secs(60)).expect("resources/list answers");
    r["resources"].as_array().map_or(0, Vec::len)
}

/// `resources/list` through toolreg while one upstream hangs in it: spawn to the first answer
/// (warm cache), and the median of `calls` lists on one session.
fn resources_hung(dir: &std::path::Path, runs: usize, calls: usize) {
    let cache = dir.join("res-cache");
    let spawn = |config: &str| {
        let mut c = Client::spawn(env!("CARGO_BIN_EXE_toolreg"), &["mcp".into(), "--config".into(), config.into()]);
        c.initialize();
        c
    };
    // A healthy run writes every server's list to the cache.
    let mut healthy = spawn(&resources_config(dir, &cache, false));
    let start = Instant::now();
    while resources(&mut healthy) < 9 {
        assert!(start.elapsed() < Duration::from_secs(60), "the healthy servers never listed");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(healthy);
    let hung = resources_config(dir, &cache, true);
    let first: Vec<(Duration, usize)> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let mut c = spawn(&hung);
            let n = resources(&mut c);
            (t.elapsed(), n)
        })
        .collect();
    let mut c = spawn(&hung);
    for _ in 0..50 {
        resources(&mut c);
    }
    let listed = resources(&mut c);
    let each = median((0..calls).map(|_| {
        let t = Instant::now();
        resources(&mut c);
        t.elapsed()
    }).collect());
    println!("\nresources/list with the docs server hung in resources/list (3 servers, warm cache):");
    println!("  spawn to resources/list: {} (median of {runs}), {} resources listed", ms(median(first.iter().map(|f| f.0).collect())), first[0].1);
    println!("  resources/list on a live session: {} (median of {calls}), {listed} resources listed", ms_us(each));
}

const BENCH_TOKEN: &str = "bench-token";

/// `toolreg mcp --http 127.0.0.1:0` on `config`; returns it and its `host:port`.
fn spawn_http(config: &str) -> (Child, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolreg"))
        .args(["mcp", "--config", config, "--http", "127.0.0.1:0"])
        .env("TOOLREG_LOG", "error")
        .env("TOOLREG_STATE_DIR", bench_state_dir())
        .env(toolreg::gateway::TOKEN_ENV, BENCH_TOKEN)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("toolreg mcp --http says where it listens").unwrap();
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.trim_end_matches("/mcp").to_string();
        }
    };
    // Keep reading stderr, so that the gateway never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr)
}

/// A tool call over HTTP from a 2025-11-25 client (session) and from a 2026-07-28 client
/// (stateless), alternated call by call.
fn http_calls(config: &str, calls: usize) {
    let (mut child, addr) = spawn_http(config);
    let bearer = format!("Bearer {BENCH_TOKEN}");
    let tool = "mcp__notion__echo";
    // The session client: initialize, then every request names the session.
    let mut old = http::Http::connect(&addr);
    let init = old.post(&[("Authorization", &bearer)], &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}));
    assert_eq!(init.message["result"]["protocolVersion"], "2025-11-25", "{}", init.message);
    let session = init.header("mcp-session-id").expect("a session id").to_string();
    let old_headers = [("Authorization", bearer.as_str()), ("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    old.post(&old_headers, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // The first list may wait for the upstream servers (warm-up): not measured.
    let listed = old.post(&old_headers, &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}));
    assert!(listed.message["result"]["tools"].is_array(), "{}", listed.message);
    // The stateless client: each request carries who it is.
    let mut new = http::Http::connect(&addr);
    let new_headers = [("Authorization", bearer.as_str()), ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", tool)];
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}});
    let call = |c: &mut http::Http, headers: &[(&str, &str)], stateless: bool, i: usize| -> Duration {
        let mut params = json!({"name": tool, "arguments": {"n": i}});
        if stateless {
            params["_meta"] = meta.clone();
        }
        let t = Instant::now();
        let a = c.post(headers, &json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": params}));
        let elapsed = t.elapsed();
        assert_eq!((a.status, &a.message["result"]["isError"]), (200, &json!(false)), "{}", a.message);
        elapsed
    };
    for i in 0..50 {
        call(&mut old, &old_headers, false, i);
        call(&mut new, &new_headers, true, i);
    }
    let (mut t_old, mut t_new) = (Vec::new(), Vec::new());
    for i in 0..calls {
        // Alternate which goes first, so neither always follows the other's wake-ups.
        if i % 2 == 0 {
            t_old.push(call(&mut old, &old_headers, false, i));
            t_new.push(call(&mut new, &new_headers, true, i));
        } else {
            t_new.push(call(&mut new, &new_headers, true, i));
            t_old.push(call(&mut old, &old_headers, false, i));
        }
    }
    let (o, n) = (median(t_old), median(t_new));
    println!("\ntools/call echo through toolreg mcp --http, median of {calls} each, alternated:");
    println!(
        "  2025-11-25 session {}   2026-07-28 stateless {}   ratio stateless / session {:.2}",
        ms_us(o),
        ms_us(n),
        n.as_secs_f64() / o.as_secs_f64()
    );
    let _ = child.kill();
    let _ = child.wait();
}

fn ms_us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}
