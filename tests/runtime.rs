//! The main loop's guarantees over the real binary: a request sees the state as of its arrival,
//! and a host that stops reading stdout cannot grow the sidecar without limit.
mod support;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use support::*;

fn tool(name: &str) -> Value {
    json!({"name": name, "namespace": "t", "description": format!("The {name} tool."), "inputSchema": {"type": "object"}, "defer": "never"})
}

/// `exposition/plan` then `registry/register` in one pipe write: the plan is computed on the
/// registry as it was when its frame was read, whenever its work starts.
#[test]
fn a_pipelined_plan_does_not_see_a_later_registration() {
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": [tool("early")]}));
    let plan = json!({"jsonrpc": "2.0", "id": "plan", "method": "exposition/plan", "params": {"scope": {}, "model": "gpt-4o"}});
    let late: Vec<Value> = (0..50).map(|i| tool(&format!("late_{i}"))).collect();
    let register = json!({"jsonrpc": "2.0", "id": "reg", "method": "registry/register", "params": {"entries": late}});
    let mut bytes = frame(&plan.to_string());
    bytes.extend(frame(&register.to_string()));
    s.send_raw(&bytes);
    let (mut plan, mut reg) = (None, None);
    while plan.is_none() || reg.is_none() {
        let m = s.recv();
        match m["id"].as_str() {
            Some("plan") => plan = Some(m),
            Some("reg") => reg = Some(m),
            _ => panic!("unexpected {m}"),
        }
    }
    let (plan, reg) = (plan.unwrap(), reg.unwrap());
    assert_eq!(reg["result"]["registered"].as_array().unwrap().len(), 50, "{reg}");
    let tools: Vec<&str> = plan["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["early"], "the plan saw a registration sent after it");
    // A plan sent afterwards sees them.
    let after = s.ok("exposition/plan", json!({"scope": {}, "model": "gpt-4o"}));
    assert_eq!(after["tools"].as_array().unwrap().len(), 51);
    s.shutdown();
}

fn write_frame(w: &mut impl Write, body: &Value) {
    let body = body.to_string();
    w.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap();
}

fn read_frame(r: &mut impl BufRead) -> Value {
    let mut len = 0;
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "stdout closed");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

/// A host that stops reading stdout while it keeps sending requests with 1 MiB answers: the
/// sidecar stops reading stdin once 16 MiB wait, instead of queueing all 96 MiB; when the host
/// reads again, every request is answered.
#[test]
fn a_host_that_stops_reading_stdout_bounds_the_queue() {
    let mut child = Command::new(bin())
        .arg("serve")
        .env("TOOLREG_DEBUG_METHODS", "1")
        .env("TOOLREG_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    write_frame(&mut w, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}));
    read_frame(&mut r);
    let big = json!({"name": "big", "namespace": "t", "description": "x".repeat(1 << 20), "inputSchema": {"type": "object"}});
    write_frame(&mut w, &json!({"jsonrpc": "2.0", "id": 1, "method": "registry/register", "params": {"entries": [big]}}));
    read_frame(&mut r);

    // Nobody reads stdout now. The writer blocks once the sidecar stops reading stdin.
    const N: i64 = 96;
    let writer = std::thread::spawn(move || {
        for id in 0..N {
            write_frame(&mut w, &json!({"jsonrpc": "2.0", "id": 100 + id, "method": "registry/list", "params": {"namespace": "t"}}));
        }
        write_frame(&mut w, &json!({"jsonrpc": "2.0", "id": "stats", "method": "debug/outgoing", "params": {}}));
        w
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut answered = 0;
    let stats = loop {
        let m = read_frame(&mut r);
        if m["id"] == "stats" {
            break m["result"].clone();
        }
        assert_eq!(m["id"], 100 + answered, "{}", m["id"]);
        assert_eq!(m["result"]["entries"][0]["name"], "big");
        answered += 1;
    };
    assert_eq!(answered, N, "every request answered");
    let max = stats["maxQueuedBytes"].as_u64().unwrap();
    let peak = stats["peakQueuedBytes"].as_u64().unwrap();
    // At most the limit plus the answer to the one request read while under it.
    assert!(peak <= max + (2 << 20), "peak {peak} bytes queued, limit {max}: {stats}");
    assert!(peak >= max / 2, "the test did fill the queue: {stats}");
    let mut w = writer.join().unwrap();
    write_frame(&mut w, &json!({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}));
    assert_eq!(read_frame(&mut r)["id"], "bye");
    write_frame(&mut w, &json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
