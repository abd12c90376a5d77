//! The audit log with three writers (issue 63): a sidecar (`initialize.audit`) and two stdio
//! gateways (`gateway.audit`) appending to one file at once, with a rotation size small enough
//! that it rotates about a hundred times. Every record is kept once, no line is torn, no file
//! passes `maxBytes` nor the count `maxFiles`, and `toolreg audit` shows them all; a quiet
//! sidecar beside busy gateways keeps its newest records.

use crate::support::gateway::{fixture, spawn, write_config, McpClient};
use crate::support::{Sidecar, TIMEOUT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Barrier;
use std::time::{Duration, Instant};

const MAX_BYTES: u64 = 4096;
const ROUNDS: usize = 20;

struct Setup {
    _dir: tempfile::TempDir,
    state: PathBuf,
    log: PathBuf,
    config: String,
    audit: Value,
}

fn setup(max_files: u32) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let (state, log) = (dir.path().join("state"), dir.path().join("logs/audit.jsonl"));
    std::fs::create_dir_all(&state).unwrap();
    let audit = json!({"file": log, "maxBytes": MAX_BYTES, "maxFiles": max_files, "arguments": true});
    let config = write_config(dir.path(), &json!({"servers": [fixture("fx", &[])], "gateway": {"defer": "never", "audit": audit}}));
    Setup { _dir: dir, state, log, config, audit }
}

fn gateway(s: &Setup) -> McpClient {
    let mut c = spawn(&s.config, &[], &[("TOOLREG_STATE_DIR", s.state.to_str().unwrap()), ("TOOLREG_LOG", "warn")]);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    c.notify("notifications/initialized", json!({}));
    let t = Instant::now();
    while !c.tool_names().iter().any(|n| n == "mcp__fx__echo") {
        assert!(t.elapsed() < TIMEOUT, "fx's echo was never listed");
        std::thread::sleep(Duration::from_millis(20));
    }
    c
}

fn sidecar(s: &Setup) -> Sidecar {
    let mut sc = Sidecar::spawn();
    let r = sc.request("initialize", json!({"clientInfo": {"name": "desk"}, "cacheDir": s.state, "audit": s.audit}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    sc.notify("initialized", json!({}));
    sc.ok("catalog/setServers", json!({"servers": [fixture("fx", &[])]}));
    sc.server_in("fx", &["ready"]);
    sc.ok("registry/syncMcp", json!({}));
    sc
}

/// One audited call, tagged so its record can be found: `tag` is in its arguments.
enum Caller {
    Gateway(McpClient),
    Sidecar(Sidecar),
}

impl Caller {
    fn call(&mut self, tag: &str) {
        let args = json!({"tag": tag});
        let r = match self {
            Caller::Gateway(c) => c.call("mcp__fx__echo", args),
            Caller::Sidecar(s) => s.ok("tool/invoke", json!({"name": "mcp__fx__echo", "arguments": args, "callId": tag})),
        };
        assert_eq!(r["isError"], false, "{tag}: {r}");
    }

    /// Exits cleanly, the audit queue written first.
    fn finish(self) {
        match self {
            Caller::Gateway(c) => assert!(c.finish().success()),
            Caller::Sidecar(s) => s.shutdown(),
        }
    }
}

/// Each caller in a thread of its own, the three starting each round together; `calls(who)`
/// is how many calls `who` makes a round. The callers, still running, in the order given.
fn run(callers: Vec<(&'static str, Caller)>, calls: impl Fn(&str) -> usize + Sync) -> Vec<(&'static str, Caller)> {
    let start = Barrier::new(callers.len());
    std::thread::scope(|scope| {
        let running: Vec<_> = callers
            .into_iter()
            .map(|(who, mut caller)| {
                let (start, calls) = (&start, &calls);
                scope.spawn(move || {
                    for round in 0..ROUNDS {
                        start.wait();
                        for n in 0..calls(who) {
                            caller.call(&format!("{who}-{round}-{n}"));
                        }
                    }
                    (who, caller)
                })
            })
            .collect();
        running.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Every kept file, oldest first: the rotated ones by number, then the file itself.
fn kept(log: &Path) -> Vec<PathBuf> {
    let name = log.file_name().unwrap().to_str().unwrap().to_owned();
    let mut numbered: Vec<(u32, PathBuf)> = std::fs::read_dir(log.parent().unwrap()).unwrap().filter_map(|e| {
        let e = e.unwrap();
        let n = e.file_name().to_str()?.strip_prefix(&format!("{name}."))?.parse().ok()?;
        Some((n, e.path()))
    }).collect();
    numbered.sort_by(|a, b| b.0.cmp(&a.0));
    numbered.into_iter().map(|(_, p)| p).chain([log.to_path_buf()]).collect()
}

/// The tags of the call records in the kept files, after checking each file: whole JSON lines,
/// at most `MAX_BYTES` (one record alone excepted).
fn tags_in_files(log: &Path) -> Vec<String> {
    let mut tags = Vec::new();
    for file in kept(log) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(text.len() as u64 <= MAX_BYTES || lines.len() == 1, "{} holds {} bytes, over maxBytes {MAX_BYTES}", file.display(), text.len());
        assert!(text.is_empty() || text.ends_with('\n'), "{} ends in a cut line", file.display());
        for line in lines {
            let r: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("a torn line in {} ({e}): {line}", file.display()));
            tags.extend(r["arguments"]["tag"].as_str().map(str::to_owned));
        }
    }
    tags
}

fn shown_by_toolreg_audit(config: &str) -> Vec<String> {
    let out = Command::new(crate::support::bin()).args(["audit", "--config", config, "--json"]).output().unwrap();
    assert!(out.status.success(), "toolreg audit: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()?["arguments"]["tag"].as_str().map(str::to_owned)).collect()
}

/// Each tag that is not exactly once in `got`, with its count.
fn not_once(expected: &[String], got: &[String]) -> Vec<(String, usize)> {
    let mut counts = std::collections::HashMap::<&str, usize>::new();
    for t in got {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    expected.iter().map(|t| (t.clone(), counts.get(t.as_str()).copied().unwrap_or(0))).filter(|(_, n)| *n != 1).collect()
}

#[test]
fn three_processes_keep_every_audit_record_once_within_the_rotation_limits() {
    let s = setup(1000);
    let callers = vec![("sidecar", Caller::Sidecar(sidecar(&s))), ("gw1", Caller::Gateway(gateway(&s))), ("gw2", Caller::Gateway(gateway(&s)))];
    for (_, caller) in run(callers, |_| 20) {
        caller.finish();
    }
    let expected: Vec<String> = ["sidecar", "gw1", "gw2"].iter().flat_map(|w| (0..ROUNDS).flat_map(move |r| (0..20).map(move |n| format!("{w}-{r}-{n}")))).collect();
    let files = kept(&s.log);
    assert!(files.len() > 50, "rotated fewer times than meant: {} files", files.len());
    let in_files = tags_in_files(&s.log);
    let wrong = not_once(&expected, &in_files);
    assert!(wrong.is_empty(), "{} of {} records not exactly once in the files (tag, count): {:?}", wrong.len(), expected.len(), &wrong[..wrong.len().min(20)]);
    let shown = shown_by_toolreg_audit(&s.config);
    assert_eq!(shown.len(), expected.len(), "toolreg audit shows {} of {} calls", shown.len(), expected.len());
    assert!(not_once(&expected, &shown).is_empty());
}

#[test]
fn a_quiet_sidecar_beside_busy_gateways_keeps_its_newest_records() {
    let s = setup(4);
    let callers = vec![("sidecar", Caller::Sidecar(sidecar(&s))), ("gw1", Caller::Gateway(gateway(&s))), ("gw2", Caller::Gateway(gateway(&s)))];
    // The sidecar calls once a round, the gateways ten times: the file it opened first is
    // rotated away long before it writes its last record, made once the gateways are done (so
    // that no backlog of theirs written later may rotate it out: it is the newest record).
    let mut callers = run(callers, |who| if who == "sidecar" { 1 } else { 10 });
    let (_, mut quiet) = callers.remove(0);
    for (_, busy) in callers {
        busy.finish();
    }
    quiet.call("sidecar-last");
    quiet.finish();
    let files = kept(&s.log);
    assert!(files.len() <= 4, "maxFiles 4, kept {}: {files:?}", files.len());
    let in_files = tags_in_files(&s.log);
    assert!(in_files.iter().any(|t| t == "sidecar-last"), "the sidecar's last record is in no kept file; kept: {in_files:?}");
}
