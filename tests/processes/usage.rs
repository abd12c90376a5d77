//! Usage counts over one state directory (issue 63, row "usage counts"): the sidecar and both
//! gateways each call the same tool 40 times (20 rounds of 2 calls, the three at once), counted
//! under one usage key. The sidecar's `usage/list` sees all 120 while the others still run, and
//! a fresh process after all three ended counts 120.

use super::three::{server, start};
use crate::support::Sidecar;
use serde_json::{json, Value};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const ROUNDS: usize = 20;
const ECHO: &str = "mcp__fx__echo";

/// `echo`'s calls in the window under the default usage key, as `s` lists them.
fn counted(s: &mut Sidecar) -> u64 {
    let l = s.ok_past_notes("usage/list", json!({"usageKey": "default"}));
    let tools = l["keys"][0]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().find(|t| t["name"] == ECHO).map_or(0, |t| t["callsInWindow"].as_u64().unwrap())
}

#[test]
fn calls_made_at_once_in_three_processes_add_up() {
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("state");
    // The gateways count under the sidecar's key for calls under no plan.
    let mut three = start(work.path(), &state, server(&["--tools", "3"], json!({"trust": "auto"})), json!({"usageKey": "default"}));
    for round in 0..ROUNDS {
        let barrier = Barrier::new(3);
        let (sidecar, [g1, g2]) = (&mut three.sidecar, &mut three.gateways);
        std::thread::scope(|scope| {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                for x in 0..2 {
                    let r = sidecar.ok_past_notes("tool/invoke", json!({"name": ECHO, "arguments": {"x": x}}));
                    assert_eq!(r["isError"], false, "round {round}: {r}");
                }
            });
            for g in [g1, g2] {
                scope.spawn(move || {
                    barrier.wait();
                    for x in 0..2 {
                        let r: Value = g.call(ECHO, json!({"x": x}));
                        assert_eq!(r["isError"], false, "round {round}: {r}");
                    }
                });
            }
        });
    }
    let total = 3 * 2 * ROUNDS as u64;
    // The gateways flush their counts right after each call: the sidecar reads them again.
    let t = Instant::now();
    let mut seen = counted(&mut three.sidecar);
    while seen != total && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
        seen = counted(&mut three.sidecar);
    }
    three.finish();
    let mut fresh = Sidecar::spawn();
    fresh.ok("initialize", json!({"cacheDir": state}));
    fresh.notify("initialized", json!({}));
    let after = counted(&mut fresh);
    fresh.shutdown();
    assert_eq!((seen, after), (total, total), "calls counted (by the running sidecar, by a fresh one after all ended) of {total}");
}
