//! Drives the real `toolreg` binary over real pipes, as a host would.
#![allow(dead_code)]

pub mod catalogs;
pub mod frames;
pub mod gateway;
pub mod modern;
pub mod oauth;
mod host;

#[allow(unused_imports)] // not every test frames by hand
pub use frames::frame;
#[allow(unused_imports)] // not every test plays the host
pub use host::{answer, call, invoke_answering, invoke_cancelled_at, method, pump, runner, send_req, text_result};

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// The child's exit status, polled; fails the test with `why` after `TIMEOUT`.
pub fn exit_of(child: &mut Child, why: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(start.elapsed() < TIMEOUT, "{why}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The binary under test: this build's, or `$TOOLREG_TEST_BIN` (another build, e.g. an older
/// release, to show that a test fails there).
pub fn bin() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| std::env::var("TOOLREG_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_toolreg").to_owned()))
}

/// The project's fixture MCP server. It is a bin of another workspace member
/// (`fixtures/mcp-server`), which gets no `CARGO_BIN_EXE_` here, so it is found beside the
/// `toolreg` binary in the same target dir, with the platform's suffix (`.exe` on Windows), or
/// at `$TOOLREG_FIXTURE_MCP`.
pub fn fixture_mcp() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::var("TOOLREG_FIXTURE_MCP").unwrap_or_else(|_| {
            std::path::Path::new(bin()).with_file_name(format!("toolreg-fixture-mcp{}", std::env::consts::EXE_SUFFIX)).to_string_lossy().into_owned()
        });
        assert!(
            std::path::Path::new(&path).is_file(),
            "no fixture MCP server at {path}: build it beside toolreg with `cargo test --release --workspace` \
             (as scripts/test-all.sh does) or `cargo build --release -p toolreg-fixture-mcp`, or set TOOLREG_FIXTURE_MCP"
        );
        path
    })
}

/// A fixture server's files in a fresh temporary directory: its `--defs-file`, its
/// `--calls-file` and a cacheDir.
pub struct Files {
    _dir: tempfile::TempDir,
    pub defs: std::path::PathBuf,
    pub calls: std::path::PathBuf,
    pub cache: std::path::PathBuf,
}

pub fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    let (defs, calls, cache) = (dir.path().join("defs.json"), dir.path().join("calls.txt"), dir.path().join("cache"));
    Files { defs, calls, cache, _dir: dir }
}

/// The fixture's `--defs-file` as one tool, `delete`, with these annotations; renamed into
/// place, so the fixture (which may watch it, `--watch-defs`) never reads half of it.
pub fn write_delete_def(defs: &std::path::Path, annotations: Value) {
    let tools = json!([{"name": "delete", "description": "Delete a file.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}, "annotations": annotations}]);
    let tmp = defs.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec(&tools).unwrap()).unwrap();
    std::fs::rename(&tmp, defs).unwrap();
}

/// The entry point of an npm reference server (`server-everything`, `server-memory`).
pub fn reference_server(pkg: &str) -> String {
    let p: std::path::PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "tests/reference-servers/node_modules/@modelcontextprotocol", pkg, "dist/index.js"].iter().collect();
    assert!(p.exists(), "{} is missing: run `npm ci --prefix tests/reference-servers` (.ci/run does)", p.display());
    p.to_string_lossy().into_owned()
}

/// A server's tool name as the wire name spells it (camelCase: `read_file` is `readFile`).
pub fn camel(tool: &str) -> String {
    let mut out = String::new();
    for (i, part) in tool.split('_').enumerate() {
        let mut chars = part.chars();
        match chars.next() {
            Some(c) if i > 0 => out.extend(c.to_uppercase().chain(chars)),
            _ => out.push_str(part),
        }
    }
    out
}

pub fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures")
}

pub struct Sidecar {
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Value>>,
    /// Notifications read past while waiting for a response; `recv` hands them out first, in order.
    skipped: std::collections::VecDeque<Value>,
    next_id: i64,
}

/// Reads Content-Length frames; `None` marks EOF.
fn read_frames(out: impl Read + Send + 'static, tx: std::sync::mpsc::Sender<Option<Value>>) {
    std::thread::spawn(move || {
        let mut r = BufReader::new(out);
        loop {
            let mut len = None;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    let _ = tx.send(None);
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').expect("header line");
                if k.eq_ignore_ascii_case("content-length") {
                    len = Some(v.trim().parse::<usize>().expect("length"));
                }
            }
            let mut body = vec![0; len.expect("Content-Length header")];
            r.read_exact(&mut body).expect("body");
            let v: Value = serde_json::from_slice(&body).expect("sidecar sent valid JSON");
            if tx.send(Some(v)).is_err() {
                return;
            }
        }
    });
}

impl Sidecar {
    pub fn spawn() -> Sidecar {
        Self::spawn_with(&[], &[])
    }

    pub fn spawn_with(args: &[&str], env: &[(&str, &str)]) -> Sidecar {
        Self::spawn_stderr_to(args, env, None)
    }

    /// `spawn_with`, the sidecar's stderr going to the file `stderr` when given.
    pub fn spawn_stderr_to(args: &[&str], env: &[(&str, &str)], stderr: Option<&std::path::Path>) -> Sidecar {
        let mut cmd = Command::new(bin());
        let err = match stderr {
            Some(path) => Stdio::from(std::fs::File::create(path).expect("stderr file")),
            None => Stdio::piped(),
        };
        cmd.arg("serve").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(err);
        cmd.env("TOOLREG_DEBUG_METHODS", "1").env("TOOLREG_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn toolreg");
        let (tx, rx) = channel();
        read_frames(child.stdout.take().unwrap(), tx);
        // Drain stderr so the child never blocks on a full pipe; keep it for failures.
        if let Some(err) = child.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    eprintln!("[toolreg] {line}");
                }
            });
        }
        Sidecar { stdin: child.stdin.take(), child, rx, skipped: Default::default(), next_id: 0 }
    }

    /// `catalog/status`'s entry for server `id`.
    pub fn server_status(&mut self, id: &str) -> Value {
        let st = self.ok_past_notes("catalog/status", json!({}));
        st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).unwrap().clone()
    }

    /// Server `id`'s status once its state is one of `states` (60 s at most).
    pub fn server_in(&mut self, id: &str, states: &[&str]) -> Value {
        let start = Instant::now();
        loop {
            let me = self.server_status(id);
            if states.iter().any(|s| me["state"] == *s) {
                return me;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "{id} not {states:?}: {me}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Spawned and initialized.
    pub fn ready() -> Sidecar {
        let mut s = Sidecar::spawn();
        let r = s.request("initialize", json!({"clientInfo": {"name": "test"}}));
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        s.notify("initialized", json!({}));
        s
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).expect("write");
        w.flush().expect("flush");
    }

    pub fn send(&mut self, v: &Value) {
        let body = serde_json::to_vec(v).unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        self.send_raw(&frame);
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request and returns its response (the whole message).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    /// A request and its response while notifications (catalog/didChange, $/progress) may
    /// arrive: they are collected in `notes`; a request from the sidecar fails the test.
    pub fn call_noting(&mut self, method: &str, params: Value, notes: &mut Vec<Value>) -> Value {
        let id = self.next_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            assert!(m.get("id").is_none(), "unexpected request from the sidecar: {m}");
            notes.push(m);
        }
    }

    /// The result of a request that must succeed.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        match r.get("result") {
            Some(v) => v.clone(),
            None => panic!("{method} failed: {r}"),
        }
    }

    /// The result of a request that must succeed, while notifications (catalog/didChange, ...)
    /// may arrive first: they are skipped; a request from the sidecar fails the test.
    pub fn ok_past_notes(&mut self, method: &str, params: Value) -> Value {
        let r = self.call_noting(method, params, &mut Vec::new());
        r.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {r}"))
    }

    /// The error of a request that must fail.
    pub fn err(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        match r.get("error") {
            Some(v) => v.clone(),
            None => panic!("{method} should have failed: {r}"),
        }
    }

    /// The next message: a notification skipped by `response` first, else the next one read.
    pub fn recv(&mut self) -> Value {
        if let Some(m) = self.skipped.pop_front() {
            return m;
        }
        self.recv_new()
    }

    fn recv_new(&mut self) -> Value {
        match self.rx.recv_timeout(TIMEOUT) {
            Ok(Some(v)) => v,
            Ok(None) => panic!("sidecar closed stdout"),
            Err(RecvTimeoutError::Timeout) => panic!("no message within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("reader gone"),
        }
    }

    /// Waits until the first configured server is ready.
    pub fn until_first_ready(&mut self) {
        let t = std::time::Instant::now();
        while self.ok_past_notes("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
            assert!(t.elapsed() < TIMEOUT, "the server never became ready");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Refreshes `server` until its pins hold `tool` as changed (its definition was rewritten).
    pub fn refresh_until_changed(&mut self, server: &str, tool: &str) {
        let t = std::time::Instant::now();
        loop {
            self.ok_past_notes("catalog/refresh", json!({"serverId": server}));
            let pins = self.ok_past_notes("catalog/pins", json!({"serverId": server}));
            if pins["tools"].as_array().unwrap().iter().any(|p| p["name"] == tool && p["state"] == "changed") {
                return;
            }
            assert!(t.elapsed() < TIMEOUT, "{server}/{tool} was never held as changed: {pins}");
        }
    }

    /// Next message, or None if none arrives within `d`.
    pub fn try_recv(&mut self, d: Duration) -> Option<Value> {
        self.skipped.pop_front().or_else(|| self.rx.recv_timeout(d).unwrap_or_default())
    }

    /// Waits for the response with this id. Notifications the sidecar may send at any time
    /// (catalog/didChange, $/progress) are set aside for `recv`; any other message before the
    /// response (a request, another response) is an error.
    pub fn response(&mut self, id: &Value) -> Value {
        loop {
            let m = self.recv_new();
            if is_notification(&m) {
                self.skipped.push_back(m);
                continue;
            }
            assert_eq!(m.get("id"), Some(id), "expected the response to {id}, got {m}");
            return m;
        }
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub fn wait(&mut self) -> ExitStatus {
        exit_of(&mut self.child, "sidecar did not exit")
    }

    /// shutdown + exit, asserting the clean exit code 0 and that nothing else was pending.
    pub fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "{r}");
        self.notify("exit", Value::Null);
        let status = self.wait();
        assert_eq!(status.code(), Some(0));
        // Notifications may still be on their way; nothing else may be.
        self.skipped.clear();
        while let Some(m) = self.try_recv(Duration::from_millis(50)) {
            assert!(is_notification(&m), "unexpected message after exit: {m}");
        }
    }
}

/// A message with a method and no id.
pub fn is_notification(m: &Value) -> bool {
    m.get("method").is_some() && m.get("id").is_none()
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a file another process writes (a port file, say); its text.
pub fn wait_for_file(path: &std::path::Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text;
        }
        assert!(start.elapsed() < TIMEOUT, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The fixture MCP server over Streamable HTTP on a free port (its port file in `dir`), with
/// these flags besides; killed on drop.
pub struct HttpFixture {
    pub child: Child,
    pub url: String,
}

impl HttpFixture {
    pub fn start(dir: &std::path::Path, args: &[&str]) -> HttpFixture {
        let port_file = dir.join("port");
        let child = Command::new(fixture_mcp())
            .args(["--http", "127.0.0.1:0", "--port-file", port_file.to_str().unwrap()])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        HttpFixture { child, url: wait_for_file(&port_file) }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
