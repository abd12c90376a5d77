//! Pins (approved MCP tool definitions) across processes: a sidecar (`cacheDir` = the state
//! directory) and two `toolreg mcp` gateways (`TOOLREG_STATE_DIR` = it) share one fixture
//! server config, whose definitions the test rewrites (`--defs-file`, `--watch-defs`). Each
//! process approves a changed tool at the same time; none may undo another's approval, and an
//! approval made in one process is announced to the others' clients within 5 s.

use super::support::gateway::{fixture, spawn, write_config, McpClient};
use super::support::{bin, Sidecar, TIMEOUT};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const TOOLS: [&str; 3] = ["alpha", "beta", "gamma"];
/// What the issue promises for an approval made elsewhere.
const ANNOUNCED: Duration = Duration::from_secs(5);

struct World {
    _dir: tempfile::TempDir,
    state: PathBuf,
    defs: PathBuf,
    config: String,
    server: Value,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let (state, defs) = (dir.path().join("state"), dir.path().join("defs.json"));
        let server = fixture("fx", &["--defs-file", defs.to_str().unwrap(), "--watch-defs"]);
        let config = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
        let w = World { state, defs, config, server, _dir: dir };
        w.write_defs(0);
        w
    }

    /// Every tool's description names `version`: each new version changes all three.
    fn write_defs(&self, version: usize) {
        let tools: Vec<Value> = TOOLS
            .iter()
            .map(|t| json!({"name": t, "description": format!("The {t} tool, version {version}."), "inputSchema": {"type": "object"}}))
            .collect();
        // Renamed into place: the fixture polls the file and must never read half of it.
        let tmp = self.defs.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec(&tools).unwrap()).unwrap();
        std::fs::rename(&tmp, &self.defs).unwrap();
    }

    fn sidecar(&self) -> Sidecar {
        let mut s = Sidecar::spawn();
        s.ok_past_notes("initialize", json!({"cacheDir": self.state.to_str().unwrap(), "timeouts": {"connectMs": 10000, "listMs": 10000}}));
        s.ok_past_notes("catalog/setServers", json!({"servers": [self.server]}));
        s.server_in("fx", &["ready"]);
        s
    }

    /// A gateway whose client accepts every review form (it approves the tool it calls).
    fn gateway(&self) -> McpClient {
        let mut c = spawn(&self.config, &[], &[("TOOLREG_STATE_DIR", self.state.to_str().unwrap())]);
        let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "toolreg-test", "version": "0"}}));
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        c.notify("notifications/initialized", json!({}));
        c.answer = Box::new(|_| json!({"action": "accept", "content": {"approve": true}}));
        c
    }

    /// `toolreg pins --config ... ARGS`, a fresh process over the state directory: its stdout.
    fn pins(&self, args: &[&str]) -> String {
        let out = Command::new(bin())
            .args(["pins", "--config", &self.config])
            .args(args)
            .env("TOOLREG_STATE_DIR", &self.state)
            .env("TOOLREG_LOG", "warn")
            .output()
            .expect("toolreg pins runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "toolreg pins {args:?} failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        stdout
    }

    /// The tools a fresh `toolreg pins` holds, of the three.
    fn held_afresh(&self) -> Vec<&'static str> {
        let report = self.pins(&[]);
        TOOLS.into_iter().filter(|t| report.contains(&format!("--approve fx/{t}"))).collect()
    }
}

fn wire(tool: &str) -> String {
    format!("mcp__fx__{tool}")
}

/// The sidecar's pin states of the three tools.
fn sidecar_states(s: &mut Sidecar) -> Vec<String> {
    let pins = s.ok_past_notes("catalog/pins", json!({"serverId": "fx"}));
    TOOLS
        .iter()
        .map(|t| pins["tools"].as_array().unwrap().iter().find(|p| p["name"] == *t).map_or("absent".into(), |p| p["state"].as_str().unwrap().to_owned()))
        .collect()
}

/// Waits until the sidecar holds `tools` (their new definitions seen) and approves the rest.
fn sidecar_holds(s: &mut Sidecar, tools: &[&str]) {
    let want: Vec<String> = TOOLS.iter().map(|t| if tools.contains(t) { "changed" } else { "approved" }.to_owned()).collect();
    let t = Instant::now();
    loop {
        let now = sidecar_states(s);
        if now == want {
            return;
        }
        assert!(t.elapsed() < TIMEOUT, "the sidecar's pins are {now:?}, not {want:?}");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// Waits until the gateway lists none of `held` and every other of the three.
fn gateway_holds(c: &mut McpClient, held: &[&str]) {
    let t = Instant::now();
    loop {
        let names = c.tool_names();
        if TOOLS.iter().all(|tool| names.contains(&wire(tool)) != held.contains(tool)) {
            return;
        }
        assert!(t.elapsed() < TIMEOUT, "the gateway lists {names:?}; {held:?} should be held");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// The gateway's client calls the held `tool`, is shown the review form and approves it: the
/// tool runs.
fn gateway_approves(c: &mut McpClient, tool: &str) {
    let asked = c.asked.len();
    let r = c.call(&wire(tool), json!({}));
    assert_eq!(r["isError"], false, "{tool} approved through the review runs: {r}");
    assert_eq!(c.asked.len(), asked + 1, "the client was asked to review {tool}");
}

fn sidecar_approves(s: &mut Sidecar, tool: &str) {
    let r = s.ok_past_notes("catalog/approveTools", json!({"serverId": "fx", "tools": [tool]}));
    assert!(r["tools"].as_array().unwrap().iter().any(|p| p["name"] == tool && p["state"] == "approved"), "{r}");
}

#[test]
fn three_processes_approving_at_once_lose_no_approval() {
    let w = World::new();
    let mut s = w.sidecar();
    let (mut g1, mut g2) = (w.gateway(), w.gateway());
    gateway_holds(&mut g1, &[]);
    gateway_holds(&mut g2, &[]);
    for round in 1..=20 {
        w.write_defs(round);
        sidecar_holds(&mut s, &TOOLS);
        gateway_holds(&mut g1, &TOOLS);
        gateway_holds(&mut g2, &TOOLS);
        let start = std::sync::Barrier::new(3);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                start.wait();
                sidecar_approves(&mut s, "alpha");
            });
            scope.spawn(|| {
                start.wait();
                gateway_approves(&mut g1, "beta");
            });
            scope.spawn(|| {
                start.wait();
                gateway_approves(&mut g2, "gamma");
            });
        });
        let held = w.held_afresh();
        assert!(held.is_empty(), "round {round}: a fresh `toolreg pins` holds approved tools again: {held:?}");
        // Every process ends the round with all three approved (adopted from the others).
        sidecar_holds(&mut s, &[]);
        gateway_holds(&mut g1, &[]);
        gateway_holds(&mut g2, &[]);
    }
    s.shutdown();
    assert!(g1.finish().success() && g2.finish().success());
}

/// A sidecar started first, then a gateway; all three tools then changed, held in both.
fn changed_in_a_sidecar_and_a_gateway() -> (World, Sidecar, McpClient) {
    let w = World::new();
    let mut s = w.sidecar();
    let mut g = w.gateway();
    gateway_holds(&mut g, &[]);
    w.write_defs(1);
    sidecar_holds(&mut s, &TOOLS);
    gateway_holds(&mut g, &TOOLS);
    (w, s, g)
}

#[test]
fn a_sidecar_started_first_keeps_what_a_gateway_approved_since() {
    let (w, mut s, mut g) = changed_in_a_sidecar_and_a_gateway();
    gateway_approves(&mut g, "alpha");
    sidecar_approves(&mut s, "beta");
    assert_eq!(w.held_afresh(), ["gamma"], "both approvals kept, one after the other");
    // And both processes see both.
    sidecar_holds(&mut s, &["gamma"]);
    gateway_holds(&mut g, &["gamma"]);
    s.shutdown();
    assert!(g.finish().success());
}

#[test]
fn an_approval_made_elsewhere_is_announced_within_5_s() {
    let (w, mut s, mut g) = changed_in_a_sidecar_and_a_gateway();

    // Another process (`toolreg pins`) approves alpha: both are told, neither is asked.
    g.clear_notes();
    while s.try_recv(Duration::from_millis(0)).is_some() {}
    assert!(w.pins(&["--approve", "fx/alpha"]).contains("approved fx/alpha"));
    let approved = Instant::now();
    assert!(g.wait_note("notifications/tools/list_changed", ANNOUNCED).is_some(), "the gateway's client was not told within 5 s");
    assert!(g.tool_names().contains(&wire("alpha")), "alpha listed again");
    let mut seen = Vec::new();
    let told = loop {
        let left = ANNOUNCED.saturating_sub(approved.elapsed());
        let Some(m) = s.try_recv(left) else { break None };
        let held = m["params"]["changedTools"].as_array().cloned();
        seen.push(m.clone());
        if m["method"] == "catalog/didChange" && held.is_some_and(|h| h == [json!("beta"), json!("gamma")]) {
            break Some(m);
        }
    };
    assert!(told.is_some(), "no catalog/didChange releasing alpha within 5 s: {seen:?}");

    // The sidecar's approval of beta reaches the gateway's client the same way.
    g.clear_notes();
    sidecar_approves(&mut s, "beta");
    assert!(g.wait_note("notifications/tools/list_changed", ANNOUNCED).is_some(), "the gateway's client was not told within 5 s");
    assert!(g.tool_names().contains(&wire("beta")), "beta listed again");
    s.shutdown();
    assert!(g.finish().success());
}
