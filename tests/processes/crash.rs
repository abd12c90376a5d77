//! A process killed (SIGKILL on Unix, TerminateProcess on Windows) in the middle of writes
//! leaves a store the next process opens with every committed change: each `always` grant
//! whose `approval/respond` was answered is there after the kill, and the store opens.
use crate::support::*;
use serde_json::{json, Value};
use std::path::Path;

const TOOLS: usize = 30;
const ROUNDS: usize = 6;

fn write_defs(defs: &Path) {
    let tools: Vec<Value> = (0..TOOLS)
        .map(|i| json!({"name": format!("t{i:02}"), "description": format!("Tool {i}."), "inputSchema": {"type": "object"}}))
        .collect();
    std::fs::write(defs, serde_json::to_vec(&tools).unwrap()).unwrap();
}

fn start(f: &Files) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": f.cache.to_str().unwrap(), "capabilities": {"approval": true},
        "timeouts": {"connectMs": 5000, "listMs": 5000}}));
    let gated: Vec<String> = (0..TOOLS).map(|i| format!("t{i:02}")).collect();
    let server = json!({"id": "fs", "name": "fs", "approvalTools": gated, "transport": {"type": "stdio", "command": fixture_mcp(),
        "args": ["--defs-file", f.defs.to_str().unwrap(), "--calls-file", f.calls.to_str().unwrap()]}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [server]}));
    s.until_first_ready();
    s.ok_past_notes("registry/syncMcp", json!({}));
    s
}

fn wire(i: usize) -> String {
    format!("mcp__fs__t{i:02}")
}

fn listed(s: &mut Sidecar) -> Vec<String> {
    let g = s.ok_past_notes("approval/grants", json!({}));
    g["grants"].as_array().unwrap().iter().map(|g| g["tool"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_writer_killed_mid_write_loses_no_committed_grant() {
    let f = files();
    write_defs(&f.defs);
    let mut committed: Vec<String> = Vec::new();
    let per_round = TOOLS / ROUNDS;
    for round in 0..ROUNDS {
        let mut s = start(&f);
        let before = listed(&mut s);
        for tool in &committed {
            assert!(before.contains(tool), "round {round}: {tool} was granted before a kill and is gone: {before:?}");
        }
        // All but the last of this round's tools: answered, so committed.
        let tools: Vec<usize> = (round * per_round..(round + 1) * per_round).collect();
        for &i in &tools[..tools.len() - 1] {
            let (r, asked) = invoke_answering(&mut s, json!({"name": wire(i), "arguments": {}}), &json!({"decision": "approve", "remember": "always"}));
            assert!(asked && r["isError"] == false, "{r}");
            committed.push(wire(i));
        }
        // The last: answered, and the process killed as it writes the grant (or just before).
        let last = tools[tools.len() - 1];
        let id = json!(s.next_id());
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tool/invoke", "params": {"name": wire(last), "arguments": {}}}));
        loop {
            let m = s.recv();
            if m["method"] == "approval/request" {
                let respond = json!(s.next_id());
                s.send(&json!({"jsonrpc": "2.0", "id": respond, "method": "approval/respond",
                    "params": {"approvalId": m["params"]["approvalId"], "decision": "approve", "remember": "always"}}));
                // A few hundred microseconds later in some rounds, none in others.
                std::thread::sleep(std::time::Duration::from_micros((round as u64 % 3) * 300));
                break;
            }
        }
        s.child.kill().unwrap();
        s.wait();
    }
    let mut s = start(&f);
    let after = listed(&mut s);
    for tool in &committed {
        assert!(after.contains(tool), "{tool} was granted before a kill and is gone: {after:?}");
    }
    // The store still takes writes after the kills.
    let (r, _) = invoke_answering(&mut s, json!({"name": wire(TOOLS - 1), "arguments": {}}), &json!({"decision": "approve", "remember": "always"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(listed(&mut s).contains(&wire(TOOLS - 1)));
}
