//! The main loop's guarantees over the real binary: a request sees the state as of its arrival,
//! a host that stops reading stdout cannot grow the sidecar without limit, and CPU-heavy calls
//! leave cheap requests answered; and the executable is linked at a fixed address (no
//! relocations to apply at start).
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
    assert_eq!(tools, ["early", "tool_result_read"], "the plan saw a registration sent after it");
    // A plan sent afterwards sees them.
    let after = s.ok("exposition/plan", json!({"scope": {}, "model": "gpt-4o"}));
    assert_eq!(after["tools"].as_array().unwrap().len(), 52, "51 and tool_result_read");
    s.shutdown();
}

fn write_frame(w: &mut impl Write, body: &Value) {
    w.write_all(&frame(&body.to_string())).unwrap();
}

fn read_message(r: &mut impl BufRead) -> Value {
    serde_json::from_slice(&frames::read_frame(r)).unwrap()
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
    read_message(&mut r);
    let big = json!({"name": "big", "namespace": "t", "description": "x".repeat(1 << 20), "inputSchema": {"type": "object"}});
    write_frame(&mut w, &json!({"jsonrpc": "2.0", "id": 1, "method": "registry/register", "params": {"entries": [big]}}));
    read_message(&mut r);

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
        let m = read_message(&mut r);
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
    assert_eq!(read_message(&mut r)["id"], "bye");
    write_frame(&mut w, &json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// A schema whose compilation takes a while (seconds of CPU): thousands of properties, each
/// with its own regular expression; `seed` makes each one new.
fn heavy_schema(seed: usize) -> Value {
    let properties: serde_json::Map<String, Value> = (0..8_000)
        .map(|i| (format!("p{seed}_{i}"), json!({"type": "string", "pattern": format!("^(?:[a-z]{{1,{}}}|q{seed}x{i})+$", 1 + i % 9)})))
        .collect();
    json!({"type": "object", "properties": properties})
}

/// CPU time the process has used, in clock ticks (user + system, from /proc).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// As many first calls as the runtime has threads (two), each compiling a big schema: a
/// `catalog/status` sent once they are computing is answered before any of them gets to run
/// its tool, because compiling runs on the blocking pool, not on the threads that read stdin.
/// "Once they are computing" is the sidecar's own CPU time, so the order holds however slow
/// the machine is; before, the status waited for a compilation to end.
#[test]
fn first_calls_compiling_big_schemas_leave_cheap_requests_answered() {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"capabilities": {"hostTools": true}}));
    let tools: Vec<Value> = (0..2).map(|i| json!({"name": format!("heavy_{i}"), "namespace": "t", "description": "big", "inputSchema": heavy_schema(i)})).collect();
    s.ok("registry/register", json!({"entries": tools}));
    // The tokenizer loads in the background after initialize: let its CPU time settle first.
    let pid = s.child.id();
    let mut before = cpu_ticks(pid);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let now = cpu_ticks(pid);
        if now == before {
            break;
        }
        before = now;
    }
    let mut bytes = Vec::new();
    for i in 0..2 {
        bytes.extend(frame(&json!({"jsonrpc": "2.0", "id": format!("call-{i}"), "method": "tool/invoke", "params": {"name": format!("heavy_{i}"), "arguments": {}}}).to_string()));
    }
    s.send_raw(&bytes);
    // A quarter of a second of CPU (at Linux's 100 ticks a second): both compilations are
    // under way.
    while cpu_ticks(pid) < before + 25 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    s.send(&json!({"jsonrpc": "2.0", "id": "status", "method": "catalog/status", "params": {}}));
    let first = s.recv();
    assert_eq!(first["id"], "status", "a cheap request waited for a schema compilation: {first}");
    // The calls still run: the host executes each tool once its schema is compiled.
    let mut done = 0;
    while done < 2 {
        let m = s.recv();
        if m["method"] == "host/executeTool" {
            s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ran"}]}}));
        } else if m["id"].as_str().is_some_and(|id| id.starts_with("call-")) {
            assert_eq!(m["result"]["isError"], false, "{m}");
            done += 1;
        }
    }
    s.shutdown();
}

/// The x86_64 glibc executable is linked as a non-PIE (build.rs): no relocations for the loader
/// to apply at start, ~2 MiB less idle memory (docs/benchmarks-history.md "Memory (issue 25 §4)",
/// "Idle, a non-PIE executable"). ELF `e_type`, the two
/// bytes at offset 16: 2 is a fixed-address executable, 3 a position-independent one.
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#[test]
fn the_executable_is_linked_at_a_fixed_address() {
    use std::io::Read;
    let mut header = [0u8; 18];
    std::fs::File::open(bin()).and_then(|mut f| f.read_exact(&mut header)).expect("the binary is readable");
    assert_eq!(&header[..4], b"\x7fELF");
    // `TOOLREG_PIE=1` (build.rs) asks for a PIE: then that is what must have been built.
    let (expected, why) = match option_env!("TOOLREG_PIE") {
        Some("1") => (3, "ET_DYN expected: TOOLREG_PIE=1 keeps a PIE"),
        _ => (2, "ET_EXEC expected: build.rs links the binary with -no-pie"),
    };
    assert_eq!(u16::from_le_bytes([header[16], header[17]]), expected, "{why}");
}
