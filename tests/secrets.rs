//! No secret anywhere (issue 15, item 4): credentials the host configures for MCP servers (env
//! values, header values, URL userinfo and query values) never reach the log, even at trace
//! level, nor the `--record` transcript, nor any answer, nor the tool cache on disk. And the
//! cache identity ignores credentials: a rotated token keeps the cache warm.
mod support;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;

const SECRETS: [&str; 4] = ["sk-live-SECRET1", "SECRET2", "SECRET3", "SECRET4"];

fn fixture() -> &'static str {
    fixture_mcp()
}

/// A session that records every message the host receives.
struct Host {
    s: Sidecar,
    received: Vec<Value>,
}

impl Host {
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = support::send_req(&mut self.s, method, params);
        loop {
            let m = self.s.recv();
            self.received.push(m.clone());
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return m;
            }
            assert!(m.get("id").is_none(), "unexpected request from the sidecar: {m}");
        }
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params);
        r.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {r}"))
    }

    fn wait_settled(&mut self, ids: &[&str]) -> Value {
        let start = Instant::now();
        loop {
            let st = self.ok("catalog/status", json!({}));
            let settled = ids.iter().all(|id| {
                st["servers"].as_array().unwrap().iter().any(|x| x["id"] == *id && x["state"] != "connecting")
            });
            if settled {
                return st;
            }
            assert!(start.elapsed() < TIMEOUT, "servers never settled: {st}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn quit(mut self) -> Vec<Value> {
        let r = self.call("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null);
        self.s.notify("exit", Value::Null);
        assert_eq!(self.s.wait().code(), Some(0));
        self.received
    }
}

fn spawn(dir: &Path, cache: &Path) -> Host {
    let log = dir.join("toolreg.log");
    let rec = dir.join("transcript.jsonl");
    let mut s = Sidecar::spawn_with(
        &["--log-file", log.to_str().unwrap(), "--record", rec.to_str().unwrap()],
        &[("TOOLREG_LOG", "trace")],
    );
    s.ok("initialize", json!({"cacheDir": cache.to_str().unwrap(), "timeouts": {"connectMs": 5000, "listMs": 5000}}));
    s.notify("initialized", json!({}));
    Host { s, received: Vec::new() }
}

fn servers(http_url: &str, token: &str, dead_port: u16) -> Value {
    let with_creds = http_url.replacen("http://", "http://user:SECRET3@", 1) + "?token=SECRET4";
    json!({"servers": [
        {"id": "local", "name": "Local", "transport": {"type": "stdio", "command": fixture(),
            "args": ["--tools", "1"], "env": {"API_KEY": "sk-live-SECRET1"}}},
        {"id": "web", "name": "Web", "transport": {"type": "http", "url": with_creds,
            "headers": {"Authorization": token}}},
        // Nothing listens there: its error is the HTTP client's, which quotes the URL.
        {"id": "down", "name": "Down", "transport": {"type": "http",
            "url": format!("http://user:SECRET3@127.0.0.1:{dead_port}/mcp?token=SECRET4"),
            "headers": {"Authorization": "Bearer SECRET2"}}},
    ]})
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Every file under `dir`, as text.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push((p.display().to_string(), String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned()));
        }
    }
    out
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} leaked into {what}:\n{text}");
    }
}

#[test]
fn no_secret_in_log_transcript_answers_or_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let web = HttpFixture::start(dir.path(), &["--tools", "2"]);
    let dead = free_port();
    let mut h = spawn(dir.path(), &cache);
    h.ok("catalog/setServers", servers(&web.url, "Bearer SECRET2", dead));
    let st = h.wait_settled(&["local", "web", "down"]);
    let state = |id: &str| st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).unwrap().clone();
    assert_eq!(state("local")["state"], "ready", "{st}");
    assert_eq!(state("web")["state"], "ready", "{st}");
    let down = state("down");
    assert_eq!(down["state"], "error", "{st}");
    // The error still says where: the URL with its credentials redacted.
    let error = down["error"].as_str().unwrap();
    assert!(error.contains(&format!("127.0.0.1:{dead}")) && error.contains("[redacted]"), "{error}");
    h.ok("catalog/refresh", json!({"serverId": "web"}));
    h.ok("catalog/refresh", json!({"serverId": "down"}));
    h.ok("catalog/listTools", json!({"serverId": "down"}));
    h.ok("catalog/listTools", json!({"serverId": "web"}));
    h.ok("registry/syncMcp", json!({}));
    for name in ["mcp__local__echo", "mcp__web__echo"] {
        let r = h.ok("tool/invoke", json!({"name": name, "arguments": {"text": "hello"}}));
        assert_eq!(r["isError"], false, "{r}");
    }
    let failed = h.call("tool/invoke", json!({"name": "mcp__down__echo", "arguments": {}}));
    assert!(failed.get("error").is_some() || failed["result"]["isError"] == true, "{failed}");
    h.ok("catalog/restart", json!({"serverId": "down"}));
    h.ok("catalog/status", json!({}));
    let received = h.quit();

    let log = std::fs::read_to_string(dir.path().join("toolreg.log")).unwrap();
    // At trace level the log is busy, so the absence of secrets means something.
    assert!(log.contains("TRACE") || log.contains("DEBUG"), "the log is not at trace level:\n{log}");
    assert_no_secret("the log", &log);
    let transcript = std::fs::read_to_string(dir.path().join("transcript.jsonl")).unwrap();
    assert!(transcript.lines().next().unwrap().contains("redacted"), "the transcript does not say what it redacts");
    assert!(transcript.contains("catalog/setServers") && transcript.contains("API_KEY"), "{transcript}");
    assert_no_secret("the transcript", &transcript);
    for m in &received {
        assert_no_secret("an answer", &m.to_string());
    }
    let cached = files_under(&cache);
    assert!(!cached.is_empty(), "nothing was cached");
    for (path, text) in cached {
        assert_no_secret(&path, &text);
    }
}

#[test]
fn a_rotated_token_keeps_the_persisted_cache_and_leaves_no_digest_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let mut web = HttpFixture::start(dir.path(), &["--tools", "2"]);
    let url = web.url.clone();
    let config = |token: &str| {
        json!({"servers": [{"id": "web", "name": "Web", "transport": {"type": "http",
            "url": format!("{url}?token={token}"), "headers": {"Authorization": format!("Bearer {token}")}}}]})
    };
    let mut h = spawn(dir.path(), &cache);
    h.ok("catalog/setServers", config("old-SECRET2"));
    let st = h.wait_settled(&["web"]);
    assert_eq!(st["servers"][0]["state"], "ready", "{st}");
    h.quit();
    // The server is gone; a new sidecar with a rotated token must still answer from disk: the
    // identity on disk does not depend on the credentials, so it carries no digest of them.
    let _ = web.child.kill();
    let _ = web.child.wait();
    let mut h = spawn(dir.path(), &cache);
    h.ok("catalog/setServers", config("new-SECRET2"));
    // The cache file is read in the background: poll until it is in (or the deadline says not).
    let deadline = std::time::Instant::now() + TIMEOUT;
    let list = loop {
        let list = h.ok("catalog/listTools", json!({"serverId": "web"}));
        if list["state"] == "ready" || std::time::Instant::now() > deadline {
            break list;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(list["state"], "ready", "the rotated token emptied the cache: {list}");
    assert!(list["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"), "{list}");
    h.quit();
    for (path, text) in files_under(&cache) {
        assert!(!text.contains("SECRET2"), "a token in {path}: {text}");
    }
}

/// Issue 21, item 3: a stdio server that prints its configuration on stderr (at start, the value
/// split across two reads; at a tool call; across toolreg's 4096-byte line cap) gets no
/// credential into the log, whether it is a `--log-file` at trace level or the sidecar's stderr.
#[test]
fn what_a_server_prints_of_its_credentials_is_redacted_from_the_log() {
    const PLAIN: &str = "sk-STDERR-plain-4c1d9e";
    const CAPPED: &str = "sk-STDERR-capped-8b2f7a";
    // `fixture env: API_KEY=` is 21 bytes: the capped value starts 10 bytes before the cap.
    let pad = (4096 - 21 - 10).to_string();
    let servers = json!({"servers": [
        {"id": "plain", "name": "Plain", "transport": {"type": "stdio", "command": fixture(),
            "args": ["--tools", "1", "--print-env", "API_KEY"], "env": {"API_KEY": PLAIN}}},
        {"id": "capped", "name": "Capped", "transport": {"type": "stdio", "command": fixture(),
            "args": ["--tools", "1", "--print-env", "API_KEY", "--print-env-pad", pad], "env": {"API_KEY": CAPPED}}},
    ]});
    for to_file in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join(if to_file { "toolreg.log" } else { "stderr.txt" });
        let log_arg = log_path.to_str().unwrap();
        let (args, stderr): (Vec<&str>, _) = if to_file { (vec!["--log-file", log_arg], None) } else { (vec![], Some(log_path.as_path())) };
        let s = Sidecar::spawn_stderr_to(&args, &[("TOOLREG_LOG", if to_file { "trace" } else { "info" })], stderr);
        let mut h = Host { s, received: Vec::new() };
        h.ok("initialize", json!({"timeouts": {"connectMs": 5000, "listMs": 5000}}));
        h.s.notify("initialized", json!({}));
        h.ok("catalog/setServers", servers.clone());
        let st = h.wait_settled(&["plain", "capped"]);
        assert!(st["servers"].as_array().unwrap().iter().all(|x| x["state"] == "ready"), "{st}");
        h.ok("registry/syncMcp", json!({}));
        for name in ["mcp__plain__echo", "mcp__capped__echo"] {
            let r = h.ok("tool/invoke", json!({"name": name, "arguments": {"text": "hello"}}));
            assert_eq!(r["isError"], false, "{r}");
        }
        let received = h.quit();
        let log = std::fs::read_to_string(&log_path).unwrap();
        // The lines themselves were logged, each with the value redacted.
        for marker in ["fixture env: API_KEY=[redacted]", "fixture env in echo: API_KEY=[redacted]", "fixture env: API_KEY= [... "] {
            assert!(log.contains(marker), "{marker:?} is not in the log ({}):\n{log}", log_path.display());
        }
        // Not the values, nor any piece of them past their common `sk-` prefix.
        assert!(!log.contains("STDERR"), "a credential (or its start) leaked into {}:\n{log}", log_path.display());
        for m in &received {
            assert!(!m.to_string().contains("STDERR"), "a credential reached the host: {m}");
        }
    }
}
