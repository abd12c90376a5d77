//! `toolreg mcp` while its config file is edited: a valid change is taken without a restart and
//! announced, an invalid one keeps the last good config and says why (no value of the file);
//! `toolreg mcp --check` prints a row per server and exits 1 when one is not usable.

mod support;

use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};
use support::gateway::{fixture, text, write_config, McpClient};

/// Saves `config` over `path` as editors do: a new file renamed over the old one.
fn save(path: &str, config: &[u8]) {
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, config).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The first stderr line of `c` that contains `what`, waiting up to 20 s.
fn log_line(c: &McpClient, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match c.stderr.recv_timeout(left) {
            Ok(line) if line.contains(what) => return line,
            Ok(_) => {}
            Err(_) => panic!("no log line with {what:?}"),
        }
    }
}

fn config(servers: &[Value]) -> Value {
    json!({"servers": servers, "gateway": {"defer": "never"}})
}

/// A gateway on the fixture server `fx` alone, and its first listing.
fn serving(dir: &std::path::Path) -> (String, McpClient, Vec<String>) {
    let path = write_config(dir, &config(&[fixture("fx", &["--tools", "2"])]));
    let mut c = McpClient::ready(&path, json!({}));
    let before = c.tool_names();
    assert!(before.contains(&"mcp__fx__tool0".to_string()), "{before:?}");
    (path, c, before)
}

#[test]
fn a_server_added_to_the_file_is_announced_and_listed_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut c, before) = serving(dir.path());
    // The first lists may have been announced while the client initialized.
    c.clear_notes();
    save(&path, &serde_json::to_vec(&config(&[fixture("fx", &["--tools", "2"]), fixture("gx", &["--tools", "1"])])).unwrap());
    let mut after = before.clone();
    for _ in 0..3 {
        assert!(c.wait_note("notifications/tools/list_changed", Duration::from_secs(20)).is_some(), "no list_changed: {:?}", c.notes);
        after = c.tool_names();
        if after.contains(&"mcp__gx__tool0".to_string()) {
            break;
        }
    }
    assert!(after.contains(&"mcp__gx__tool0".to_string()) && after.contains(&"mcp__fx__tool1".to_string()), "{after:?}");
    let r = c.call("mcp__gx__echo", json!({"b": 2}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("\"b\":2"), "{r}");
}

#[test]
fn an_invalid_file_keeps_the_last_good_config_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut c, before) = serving(dir.path());

    save(&path, b"{\"servers\": [");
    let line = log_line(&c, "not applied");
    assert!(line.contains("WARN") && line.contains(&path) && line.contains("EOF while parsing"), "{line}");
    assert_eq!(c.tool_names(), before);

    // A value in the wrong place is not repeated in the log: it may be a credential.
    let mut leaky = fixture("fx", &["--tools", "2"]);
    leaky["transport"]["env"] = json!("sk-live-do-not-log");
    save(&path, &serde_json::to_vec(&config(&[leaky])).unwrap());
    let line = log_line(&c, "not applied");
    assert!(line.contains("invalid type") && !line.contains("sk-live"), "{line}");

    save(&path, &serde_json::to_vec(&config(&[fixture("fx", &["--tools", "2"]), fixture("fx", &["--tools", "1"])])).unwrap());
    let line = log_line(&c, "not applied");
    assert!(line.contains("unique"), "{line}");
    assert_eq!(c.tool_names(), before);
    let r = c.call("mcp__fx__echo", json!({"a": 1}));
    assert_eq!(r["isError"], false, "{r}");
}

/// `toolreg mcp --config FILE --check`: exit code and stdout.
fn check(servers: &[Value]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": servers}));
    // Its own state directory: `--check` writes pins and lists where a run would.
    let out = Command::new(support::bin()).args(["mcp", "--config", &path, "--check"]).env("TOOLREG_STATE_DIR", dir.path().join("state")).output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn row<'a>(table: &'a str, id: &str) -> &'a str {
    table.lines().find(|l| l.split_whitespace().next() == Some(id)).unwrap_or_else(|| panic!("no row for {id}:\n{table}"))
}

#[test]
fn check_prints_a_row_per_server_and_fails_when_one_is_unusable() {
    let mut off = fixture("off", &[]);
    off["enabled"] = json!(false);
    let dead = json!({"id": "dead", "name": "dead", "transport": {"type": "stdio", "command": "/nonexistent/toolreg-no-such-server"}});

    let (code, table) = check(&[fixture("fx", &["--tools", "2"]), off.clone()]);
    assert_eq!(code, Some(0), "{table}");
    assert!(table.starts_with("SERVER  "), "{table}");
    let fx: Vec<&str> = row(&table, "fx").split_whitespace().collect();
    // id, state, protocol, tools (two and echo, ...), held, needs auth, sandbox, error
    assert_eq!((fx[1], fx[5], fx[6], fx[7]), ("ready", "no", "enforced", "-"), "{table}");
    assert!(table.contains("\nfx: sandbox enforced (Landlock ABI "), "{table}");
    assert!(fx[2].starts_with("20"), "{table}");
    assert!(fx[3].parse::<usize>().unwrap() >= 2, "{table}");
    assert!(row(&table, "off").contains("disabled"), "{table}");

    let (code, table) = check(&[fixture("fx", &["--tools", "2"]), dead, off]);
    assert_eq!(code, Some(1), "{table}");
    assert!(row(&table, "fx").contains("ready"), "{table}");
    let dead = row(&table, "dead");
    assert!(dead.contains("error") && dead.contains("toolreg-no-such-server"), "{table}");
    assert!(table.contains("1 of 2 enabled server(s) not usable"), "{table}");
}

#[test]
fn check_refuses_an_unusable_config() {
    let (code, table) = check(&[fixture("fx", &[]), fixture("fx", &[])]);
    assert_eq!(code, Some(2));
    assert!(table.is_empty(), "{table}");
}
