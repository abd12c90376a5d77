//! Replays every recorded transcript in tests/transcripts/*.jsonl against the real binary.
//!
//! Host messages are sent as recorded (raw bytes too); each run of consecutive sidecar
//! messages must be received as a whole, in any order within the run (concurrent requests may
//! answer in either order). Values under the volatile keys below, and any expected value
//! `"$any"`, match anything. Any unmatched or unexpected message fails the replay, and a
//! transcript that ends with `exit` after `shutdown` must end the process with code 0.
mod support;
use serde_json::Value;
use std::time::Duration;
use support::*;

/// Ids, timings, versions and search scores: they differ between runs or releases by design
/// (a ranking change moves scores; the order of the hits is still checked).
const VOLATILE: [&str; 6] = ["planId", "version", "refreshedAt", "methods", "approvalId", "score"];

fn matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(s), _) if s == "$any" => true,
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len()
                && e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| VOLATILE.contains(&k.as_str()) || matches(ev, av)))
        }
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(e, a)| matches(e, a)),
        _ => expected == actual,
    }
}

fn replay(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap();
    // A header line (`{"transcript": "toolreg", "redacted": ...}`) has no `dir`: not a message.
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.get("dir").is_some())
        .collect();
    let mut s = Sidecar::spawn();
    let mut i = 0;
    let mut last_in: Option<Value> = None;
    while i < lines.len() {
        let line = &lines[i];
        if line["dir"] == "in" {
            match line.get("raw") {
                Some(raw) => s.send_raw(&frame(raw.as_str().unwrap())),
                None => s.send(&line["msg"]),
            }
            last_in = line.get("msg").cloned();
            i += 1;
            continue;
        }
        let mut expected: Vec<&Value> = Vec::new();
        while i < lines.len() && lines[i]["dir"] == "out" {
            expected.push(&lines[i]["msg"]);
            i += 1;
        }
        while !expected.is_empty() {
            let got = s.recv();
            let Some(pos) = expected.iter().position(|e| matches(e, &got)) else {
                panic!("{}: unexpected message\n  got: {got}\n  expected one of: {expected:#?}", path.display());
            };
            expected.remove(pos);
        }
    }
    if let Some(extra) = s.try_recv(Duration::from_millis(200)) {
        panic!("{}: unexpected message after the transcript: {extra}", path.display());
    }
    if last_in.as_ref().and_then(|m| m.get("method")).is_some_and(|m| m == "exit") {
        assert_eq!(s.wait().code(), Some(0), "{}: exit after shutdown must be clean", path.display());
    }
}

#[test]
fn every_recorded_transcript_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no transcripts in {}", dir.display());
    for f in &files {
        replay(f);
    }
}

#[test]
fn the_matcher_is_strict_outside_wildcards() {
    let e: Value = serde_json::json!({"id": 1, "result": {"planId": "plan-1", "n": 2, "list": ["$any", 3]}});
    assert!(matches(&e, &serde_json::json!({"id": 1, "result": {"planId": "plan-9", "n": 2, "list": [{"x": 1}, 3]}})));
    assert!(!matches(&e, &serde_json::json!({"id": 1, "result": {"planId": "plan-9", "n": 3, "list": [1, 3]}})));
    assert!(!matches(&e, &serde_json::json!({"id": 1, "result": {"planId": "p", "n": 2, "list": [1, 3], "extra": true}})));
    assert!(!matches(&e, &serde_json::json!({"id": 1, "result": {"n": 2, "list": [1, 3], "other": 1}})));
}
