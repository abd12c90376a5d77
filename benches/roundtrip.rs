//! Round trips through the real binary over a pipe, against a bare pipe echo (`cat`) measured
//! in the same run; time to an `initialize` answer from process start; idle memory.
//!
//! `cargo bench --bench roundtrip`. Prints medians and the ratio; asserts nothing.
//! `TOOLREG_BIN=path` runs another build of toolreg.

#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::io::{BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/frames.rs"]
mod frames;
#[path = "common/process.rs"]
mod process;
#[path = "common/stats.rs"]
mod stats;
use frames::{frame, read_frame};
use process::spawn_piped;
use stats::median;

const ROUNDS: usize = 5000;

/// `TOOLREG_BIN=path` measures another build (e.g. main's, for a before/after in one run).
fn spawn_toolreg() -> Child {
    let bin = std::env::var("TOOLREG_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_toolreg").to_string());
    spawn_piped(&bin, &["serve"])
}

fn rss_kib(pid: u32) -> u64 {
    process::status_kib(&pid.to_string(), "VmRSS:")
}

fn main() {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;

    // Time from spawn to the initialize answer.
    let mut starts = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let mut c = spawn_toolreg();
        let mut w = c.stdin.take().unwrap();
        let mut r = BufReader::new(c.stdout.take().unwrap());
        w.write_all(&frame(init)).unwrap();
        read_frame(&mut r);
        starts.push(t.elapsed());
        drop(w);
        c.wait().unwrap();
    }

    // Idle memory before the tokenizer loads (no initialize yet), and after it has.
    let mut c = spawn_toolreg();
    std::thread::sleep(Duration::from_millis(300));
    let idle = rss_kib(c.id());
    let mut w = c.stdin.take().unwrap();
    let mut r = BufReader::new(c.stdout.take().unwrap());
    w.write_all(&frame(init)).unwrap();
    read_frame(&mut r);
    std::thread::sleep(Duration::from_millis(1500));
    let loaded = rss_kib(c.id());

    // Round trips of a trivial request.
    let mut toolreg = Vec::with_capacity(ROUNDS);
    for i in 0..ROUNDS + 200 {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"registry/list","params":{{"namespace":"none"}}}}"#, i + 1);
        let f = frame(&body);
        let t = Instant::now();
        w.write_all(&f).unwrap();
        read_frame(&mut r);
        if i >= 200 {
            toolreg.push(t.elapsed());
        }
    }
    drop(w);
    c.wait().unwrap();

    // The floor: the same bytes through `cat`.
    let mut cat = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut w = cat.stdin.take().unwrap();
    let mut r = BufReader::new(cat.stdout.take().unwrap());
    let reply = frame(r#"{"jsonrpc":"2.0","id":1,"result":{"entries":[]}}"#);
    let mut echo = Vec::with_capacity(ROUNDS);
    for i in 0..ROUNDS + 200 {
        let t = Instant::now();
        w.write_all(&reply).unwrap();
        read_frame(&mut r);
        if i >= 200 {
            echo.push(t.elapsed());
        }
    }
    drop(w);
    cat.wait().unwrap();

    let (m_tool, m_echo) = (median(toolreg), median(echo));
    println!("initialize answered from process start: median {:?} (20 runs)", median(starts));
    println!("idle RSS before the tokenizer loads: {:.1} MiB; after initialize (o200k loaded): {:.1} MiB", idle as f64 / 1024.0, loaded as f64 / 1024.0);
    println!("round trip, trivial request through toolreg: median {m_tool:?} ({ROUNDS} rounds)");
    println!("round trip, bare pipe echo (cat):            median {m_echo:?} ({ROUNDS} rounds)");
    println!("ratio: {:.2}x", m_tool.as_secs_f64() / m_echo.as_secs_f64());
}
