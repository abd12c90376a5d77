//! Servers that start on a real desktop (issue 53): toolreg launched as a dock or a start menu
//! launches it (`PATH=/usr/bin:/bin`, no terminal) still finds a command that only the login
//! shell's `PATH` holds, and starts it under the default sandbox, on both faces; a command in
//! `spawn.paths` starts; a missing one and one that exits at once say why
//! (`ServerStatus.diagnosis`, `toolreg mcp --check`); a server's own `timeouts.callMs` ends its
//! slow call while another server keeps the global bound, and its own `connectMs` a slow start.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

/// A user's HOME (outside /tmp, which the default sandbox opens, so only the home rule
/// decides) whose `~/.bash_profile` puts `~/tools/bin` on the login shell's PATH, with the
/// fixture server there as `fixture-desktop`; nothing else knows that folder.
struct Desktop {
    home: tempfile::TempDir,
}

impl Desktop {
    fn new() -> Desktop {
        let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let bin = home.path().join("tools/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(fixture_mcp(), bin.join("fixture-desktop")).unwrap();
        std::fs::write(home.path().join(".bash_profile"), "export PATH=\"$HOME/tools/bin:$PATH\"\necho 'welcome back'\n").unwrap();
        Desktop { home }
    }

    fn str(&self) -> &str {
        self.home.path().to_str().unwrap()
    }

    fn login_bin(&self) -> String {
        self.home.path().join("tools/bin").display().to_string()
    }

    /// The environment of an app started from a dock: a bare PATH, the user's shell and HOME.
    fn env(&self) -> Vec<(&str, &str)> {
        vec![("PATH", "/usr/bin:/bin"), ("SHELL", "/bin/bash"), ("HOME", self.str())]
    }
}

fn wait_state(s: &mut Sidecar, id: &str, state: &str) -> Value {
    s.server_in(id, &[state])
}

fn call(s: &mut Sidecar, server: &str, tool: &str, args: Value) -> (String, bool) {
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{server}__{}", camel(tool)), "arguments": args}));
    let text = r["output"]["value"].as_str().map(str::to_owned).unwrap_or_else(|| r["output"]["value"].to_string());
    (text, r["isError"] == true)
}

fn stdio(id: &str, command: &str, args: &[&str]) -> Value {
    json!({"id": id, "name": id, "transport": {"type": "stdio", "command": command, "args": args}})
}

#[test]
fn a_command_only_the_login_shell_knows_starts_in_the_default_sandbox() {
    let desk = Desktop::new();
    let mut s = Sidecar::spawn_with(&[], &desk.env());
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [stdio("desk", "fixture-desktop", &[])]}));
    let desk_status = wait_state(&mut s, "desk", "ready");
    // Confined as every server is by default (where this kernel can confine it at all).
    let sandbox = &desk_status["sandbox"];
    assert!(sandbox["state"] == "enforced" || sandbox["notes"].to_string().contains("Landlock"), "{desk_status}");
    assert!(desk_status.get("diagnosis").is_none(), "{desk_status}");
    let (text, is_error) = call(&mut s, "desk", "echo", json!({"from": "the dock"}));
    assert!(!is_error && text.contains("the dock"), "{text}");
    s.shutdown();
}

#[test]
fn the_gateway_finds_it_too() {
    let desk = Desktop::new();
    let config = json!({"servers": [stdio("desk", "fixture-desktop", &[])], "gateway": {"defer": "never"}});
    let path = support::gateway::write_config(desk.home.path(), &config);
    let mut c = support::gateway::spawn(&path, &[], &desk.env());
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "{r}");
    c.notify("notifications/initialized", json!({}));
    let start = Instant::now();
    while !c.tool_names().iter().any(|n| n == "mcp__desk__echo") {
        assert!(start.elapsed() < Duration::from_secs(60), "the gateway never listed desk's tools");
        std::thread::sleep(Duration::from_millis(100));
    }
    let r = c.call("mcp__desk__echo", json!({"from": "the start menu"}));
    assert!(r["isError"] == false && support::gateway::text(&r).contains("the start menu"), "{r}");
    assert!(c.finish().success());
}

#[test]
fn a_command_in_spawn_paths_starts_with_no_shell_asked() {
    let desk = Desktop::new();
    // The host's own runtimes folder: not on any PATH.
    let bundled = desk.home.path().join("host-app/runtimes");
    std::fs::create_dir_all(&bundled).unwrap();
    std::os::unix::fs::symlink(fixture_mcp(), bundled.join("fixture-bundled")).unwrap();
    let mut s = Sidecar::spawn_with(&[], &desk.env());
    s.ok("initialize", json!({"spawn": {"shellEnv": "never", "paths": [bundled]}}));
    s.ok("catalog/setServers", json!({"servers": [stdio("bundled", "fixture-bundled", &[]), stdio("shelly", "fixture-desktop", &[])]}));
    wait_state(&mut s, "bundled", "ready");
    let (text, is_error) = call(&mut s, "bundled", "echo", json!({"x": 1}));
    assert!(!is_error, "{text}");
    // `shellEnv: never`: the login shell's folder is not looked in.
    let shelly = wait_state(&mut s, "shelly", "error");
    assert_eq!(shelly["diagnosis"]["kind"], "notFound", "{shelly}");
    assert!(!shelly["diagnosis"]["lookedIn"].to_string().contains(&desk.login_bin()), "{shelly}");
    // A relative folder is refused, naming the field.
    let mut t = Sidecar::spawn_with(&[], &desk.env());
    let e = t.err("initialize", json!({"spawn": {"paths": ["relative/bin"]}}));
    assert_eq!(e["data"]["field"], "spawn.paths", "{e}");
    s.shutdown();
}

#[test]
fn a_missing_command_says_where_it_looked() {
    let desk = Desktop::new();
    let mut s = Sidecar::spawn_with(&[], &desk.env());
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [stdio("gone", "npx-but-not-installed", &["-y", "x"])]}));
    let gone = wait_state(&mut s, "gone", "error");
    let d = &gone["diagnosis"];
    assert_eq!(d["kind"], "notFound", "{gone}");
    assert_eq!(d["command"], "npx-but-not-installed", "{gone}");
    let looked: Vec<&str> = d["lookedIn"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    // Both PATHs: the inherited one and the login shell's.
    assert!(looked.contains(&"/usr/bin") && looked.contains(&"/bin"), "{gone}");
    assert!(looked.contains(&desk.login_bin().as_str()), "{gone}");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("not found") && message.contains("spawn.paths"), "{message}");
    s.shutdown();

    // `toolreg mcp --check` prints it.
    let config = json!({"servers": [stdio("gone", "deno", &["run", "server.ts"])]});
    let path = support::gateway::write_config(desk.home.path(), &config);
    let out = std::process::Command::new(bin())
        .args(["mcp", "--config", &path, "--check"])
        .envs(desk.env())
        .env("TOOLREG_STATE_DIR", desk.home.path().join("state"))
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{table}");
    assert!(table.contains("gone: notFound: `deno` was not found") && table.contains("Deno"), "{table}");
    assert!(table.contains(&format!("    {}\n", desk.login_bin())) && table.contains("    /usr/bin\n"), "{table}");
}

#[test]
fn a_server_that_exits_at_once_says_how_and_what_it_printed_without_its_secret() {
    let secret = "ghp_s3cr3tT0kenValue42";
    let script = "echo \"starting with $GITHUB_TOKEN\" >&2; echo 'Error: GITHUB_TOKEN is not valid' >&2; exit 3";
    let server = json!({"id": "gh", "name": "gh", "transport": {"type": "stdio", "command": "/bin/sh", "args": ["-c", script],
        "env": {"GITHUB_TOKEN": secret}}});
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [server.clone()]}));
    let gh = wait_state(&mut s, "gh", "error");
    let d = &gh["diagnosis"];
    assert_eq!(d["kind"], "exited", "{gh}");
    assert_eq!(d["exitCode"], 3, "{gh}");
    let tail = d["stderrTail"].as_array().unwrap();
    assert_eq!(tail.last().unwrap(), "Error: GITHUB_TOKEN is not valid", "{gh}");
    assert!(tail.iter().any(|l| l.as_str().unwrap().starts_with("starting with ")), "{gh}");
    assert!(d["message"].as_str().unwrap().contains("exited with code 3"), "{gh}");
    assert!(!gh.to_string().contains(secret) && !gh.to_string().contains("s3cr3tT0ken"), "{gh}");
    s.shutdown();

    // The gateway's --check prints it, still without the secret.
    let dir = tempfile::tempdir().unwrap();
    let path = support::gateway::write_config(dir.path(), &json!({"servers": [server]}));
    let out = std::process::Command::new(bin()).args(["mcp", "--config", &path, "--check"]).env("TOOLREG_STATE_DIR", dir.path().join("state")).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("gh: exited:") && table.contains("exit code 3") && table.contains("    Error: GITHUB_TOKEN is not valid\n"), "{table}");
    assert!(!table.contains("s3cr3tT0ken"), "{table}");
}

#[test]
fn a_servers_own_call_timeout_ends_its_slow_call_while_another_keeps_the_global_one() {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"callMs": 60000}}));
    let mut quick = stdio("quick", fixture_mcp(), &["--slow-call-ms", "30000"]);
    quick["timeouts"] = json!({"callMs": 300});
    let patient = stdio("patient", fixture_mcp(), &["--slow-call-ms", "1500"]);
    s.ok("catalog/setServers", json!({"servers": [quick, patient]}));
    wait_state(&mut s, "quick", "ready");
    wait_state(&mut s, "patient", "ready");
    let (text, is_error) = call(&mut s, "quick", "slow", json!({}));
    assert!(is_error && text.contains("300 ms"), "{text}");
    let (text, is_error) = call(&mut s, "patient", "slow", json!({}));
    assert!(!is_error, "{text}");
    s.shutdown();
}

#[test]
fn a_server_slower_than_its_own_connect_timeout_is_diagnosed_as_a_timeout() {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 60000}}));
    let mut sleepy = stdio("sleepy", fixture_mcp(), &["--slow-start-ms", "60000"]);
    sleepy["timeouts"] = json!({"connectMs": 400});
    s.ok("catalog/setServers", json!({"servers": [sleepy]}));
    let me = wait_state(&mut s, "sleepy", "error");
    assert_eq!(me["diagnosis"]["kind"], "timeout", "{me}");
    let message = me["diagnosis"]["message"].as_str().unwrap();
    assert!(message.contains("within 400 ms") && message.contains("timeouts.connectMs"), "{me}");
    s.shutdown();
}
