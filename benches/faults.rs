//! A trivial request while misbehaving MCP servers are listed, through the real binary.
//!
//! Four fixture servers: one that writes garbage lines between its messages, one that lists
//! 35 MB of tools in one line (over the default 16 MiB `maxMessageBytes`), one that lists
//! 35 MB in ten pages of 3.5 MB, and one whose `nextCursor` never ends (1,000 pages, then the
//! sidecar gives up). A `catalog/refresh` of each is always in flight (the next as soon as the
//! last is answered), and `catalog/setServers` swaps their configuration every `SWAP_EVERY`,
//! which restarts them. `LIST=1` sends `catalog/listTools` every other time instead of a
//! refresh, as a host showing the lists would: a 35 MB list is then 35 MB of answer, which a
//! trivial answer waits behind on the pipe, and which asks for a trim of freed memory. Meanwhile `registry/list {"namespace": "none"}` is sent,
//! one at a time, every ~2 ms; its round trips are printed (p50, p99, worst, how many over
//! 50 ms), with the same request idle before for comparison.
//!
//! `cargo build --release --workspace` (the fixture server), then `cargo bench --bench faults`.
//! `SECS=n` sets how long the load runs (default 20), `TOOLREG_BIN=path` runs another build,
//! `TOOLREG_LOG=level` the sidecar's log level (default `info`, as a host that sets none; the
//! log goes to /dev/null). Prints; asserts nothing.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../tests/support/frames.rs"]
mod frames;
#[path = "common/process.rs"]
mod process;
use frames::{frame, read_frame};
use process::{bench_state_dir, fixture_bin, toolreg_bin};

const IDLE_PROBES: usize = 500;
const PROBE_GAP: Duration = Duration::from_millis(2);
const SWAP_EVERY: Duration = Duration::from_secs(3);
const STALL: Duration = Duration::from_millis(50);

/// The fault servers: id and fixture flags.
const SERVERS: [(&str, &[&str]); 4] = [
    ("garbage", &["--garbage", "--tools", "2000"]),
    ("huge-line", &["--tools", "1000", "--pad-bytes", "35000"]),
    ("huge-paged", &["--tools", "1000", "--pad-bytes", "35000", "--page-size", "100"]),
    ("endless", &["--endless-cursor", "--tools", "100", "--page-size", "50"]),
];

/// What the reader looks at in an answer (string ids only; notifications have none).
#[derive(serde::Deserialize)]
struct Head {
    id: Option<String>,
}

fn send(w: &Mutex<ChildStdin>, body: &Value) {
    let mut w = w.lock().unwrap();
    w.write_all(&frame(&body.to_string())).unwrap();
    w.flush().unwrap();
}

fn pct(v: &[Duration], p: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn report(what: &str, v: &[Duration]) {
    let over = v.iter().filter(|d| **d > STALL).count();
    println!(
        "{what:<44} p50 {:>9.3?}  p99 {:>9.3?}  worst {:>9.3?}  over 50 ms {over} of {}",
        pct(v, 0.5),
        pct(v, 0.99),
        pct(v, 1.0),
        v.len()
    );
}

/// `catalog/setServers` params; `swap` changes every server's arguments (a harmless flag), so
/// each one restarts.
fn servers(fixture: &str, swap: bool) -> Value {
    let list: Vec<Value> = SERVERS
        .iter()
        .map(|(id, flags)| {
            let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
            args.extend(["--slow-start-ms".into(), (swap as u8).to_string()]);
            json!({"id": id, "name": id, "enabled": true, "transport": {"type": "stdio", "command": fixture, "args": args}})
        })
        .collect();
    json!({"servers": list})
}

/// Seconds on CLOCK_MONOTONIC, to find a stall in a profile taken beside the bench.
fn monotonic() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let secs: u64 = std::env::var("SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let fixture = fixture_bin();
    let mut child = Command::new(toolreg_bin())
        .arg("serve")
        .env("TOOLREG_LOG", std::env::var("TOOLREG_LOG").unwrap_or_else(|_| "info".into()))
        .env("TOOLREG_STATE_DIR", bench_state_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let w = Arc::new(Mutex::new(child.stdin.take().unwrap()));
    let mut r = BufReader::new(child.stdout.take().unwrap());

    // The reader answers nothing but keeps one refresh of each server in flight once `load`
    // is set; every answer goes to the main thread with its arrival time.
    let (tx, rx) = channel::<(String, Instant)>();
    let load = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let refreshes = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    {
        let (w, load, refreshes) = (w.clone(), load.clone(), refreshes.clone());
        let list = std::env::var("LIST").is_ok_and(|v| v == "1");
        std::thread::spawn(move || loop {
            let body = read_frame(&mut r);
            let at = Instant::now();
            // Only the id: the answers of `catalog/listTools` are tens of MB.
            let Ok(Head { id: Some(id) }) = serde_json::from_slice::<Head>(&body) else { continue };
            if let Some(server) = id.strip_prefix("r-").and_then(|s| s.rsplit_once('-')).map(|(s, _)| s.to_owned()) {
                let n = {
                    let mut counts = refreshes.lock().unwrap();
                    let n = counts.entry(server.clone()).or_default();
                    *n += 1;
                    *n
                };
                if load.load(std::sync::atomic::Ordering::Relaxed) {
                    let method = if list && n % 2 == 1 { "catalog/listTools" } else { "catalog/refresh" };
                    send(&w, &json!({"jsonrpc": "2.0", "id": format!("r-{server}-{n}"), "method": method, "params": {"serverId": server}}));
                }
                continue;
            }
            if tx.send((id, at)).is_err() {
                return;
            }
        });
    }
    let wait_for = |rx: &Receiver<(String, Instant)>, want: &str| -> Instant {
        loop {
            let (id, at) = rx.recv().unwrap();
            if id == want {
                return at;
            }
        }
    };
    let mut seq = 0;
    let mut probe = |rx: &Receiver<(String, Instant)>| -> Duration {
        seq += 1;
        let id = format!("p-{seq}");
        let t = Instant::now();
        send(&w, &json!({"jsonrpc": "2.0", "id": id, "method": "registry/list", "params": {"namespace": "none"}}));
        wait_for(rx, &id) - t
    };

    send(&w, &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {}}));
    wait_for(&rx, "init");
    let idle: Vec<Duration> = (0..IDLE_PROBES)
        .map(|_| {
            std::thread::sleep(PROBE_GAP);
            probe(&rx)
        })
        .collect();

    load.store(true, std::sync::atomic::Ordering::Relaxed);
    send(&w, &json!({"jsonrpc": "2.0", "id": "set-0", "method": "catalog/setServers", "params": servers(&fixture, false)}));
    wait_for(&rx, "set-0");
    for (id, _) in SERVERS {
        send(&w, &json!({"jsonrpc": "2.0", "id": format!("r-{id}-0"), "method": "catalog/refresh", "params": {"serverId": id}}));
    }
    let (start, mut swapped, mut swaps) = (Instant::now(), Instant::now(), 0);
    let (mut busy, mut stalls) = (Vec::new(), Vec::new());
    while start.elapsed() < Duration::from_secs(secs) {
        if swapped.elapsed() > SWAP_EVERY {
            swaps += 1;
            let id = format!("set-{swaps}");
            send(&w, &json!({"jsonrpc": "2.0", "id": id, "method": "catalog/setServers", "params": servers(&fixture, swaps % 2 == 1)}));
            wait_for(&rx, &id);
            swapped = Instant::now();
        }
        std::thread::sleep(PROBE_GAP);
        let at = monotonic();
        let took = probe(&rx);
        if took > STALL {
            stalls.push(format!("{at:.3}: {took:.1?}"));
        }
        busy.push(took);
    }
    load.store(false, std::sync::atomic::Ordering::Relaxed);

    report("registry/list {namespace: none}, idle", &idle);
    report(&format!("same, the fault servers listed ({secs} s)"), &busy);
    println!("stalls over 50 ms (sent at CLOCK_MONOTONIC s, as `perf record -k CLOCK_MONOTONIC` stamps): {stalls:?}");
    let counts = refreshes.lock().unwrap().clone();
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort();
    println!("catalog/refresh (or listTools) answered: {counts:?}; catalog/setServers swaps: {swaps}");
    drop(w);
    let _ = child.kill();
    let _ = child.wait();
}
