//! `cargo bench --bench catalog -- grant`: a gated call under an `always` grant (issue 63: the
//! grant is read from the shared store at each call) against the same call of an ungated tool,
//! in one sidecar with a cacheDir, alternating the two so that load lands on both.
//! `TOOLREG_BIN=path` measures another build (before/after); `CALLS=n` (default 2,000).

use super::{fixture, median, Peer};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

pub fn gated_call() {
    let calls: usize = std::env::var("CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    let dir = std::env::temp_dir().join(format!("toolreg-bench-grant-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut p = Peer::spawn_with(json!({"cacheDir": dir, "capabilities": {"approval": true}, "timeouts": {"connectMs": 120000, "listMs": 120000}}));
    // The fixture's `echo`, twice: `gated` asks for approval, `plain` does not.
    let mut gated = fixture("gated", &[]);
    gated["approvalTools"] = json!(["echo"]);
    p.call("catalog/setServers", json!({"servers": [gated, fixture("plain", &[])]}));
    p.wait_ready(2);
    p.call("registry/syncMcp", json!({}));
    approve_always(&mut p, "mcp__gated__echo");
    let (mut under_grant, mut ungated) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 0..calls + 200 {
        for (name, out) in [("mcp__gated__echo", &mut under_grant), ("mcp__plain__echo", &mut ungated)] {
            let t = Instant::now();
            let r = p.call("tool/invoke", json!({"name": name, "arguments": {"i": i}}));
            let took = t.elapsed();
            assert_eq!(r["isError"], false, "{r}");
            if i >= 200 {
                out.push(took);
            }
        }
    }
    p.close();
    let _ = std::fs::remove_dir_all(&dir);
    let (g99, u99) = (p99(&under_grant), p99(&ungated));
    let (g, u) = (median(under_grant), median(ungated));
    println!("tool/invoke of echo under an `always` grant: median {g:?} (p99 {g99:?}); ungated: median {u:?} (p99 {u99:?}); the grant costs {:?} at p50 ({calls} calls each)", g.saturating_sub(u));
}

fn p99(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() * 99 / 100]
}

/// The first call asks; the answer `always` grants the rest.
fn approve_always(p: &mut Peer, name: &str) {
    p.id += 1;
    let id = p.id;
    p.send(json!({"jsonrpc": "2.0", "id": id, "method": "tool/invoke", "params": {"name": name, "arguments": {}}}));
    loop {
        let m = p.read();
        if m["method"] == "approval/request" {
            p.id += 1;
            let respond = p.id;
            p.send(json!({"jsonrpc": "2.0", "id": respond, "method": "approval/respond",
                "params": {"approvalId": m["params"]["approvalId"], "decision": "approve", "remember": "always"}}));
        } else if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
            assert_eq!(m["result"]["isError"], Value::Bool(false), "{m}");
            return;
        }
    }
}
