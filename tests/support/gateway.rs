//! Drives `toolreg mcp` over real pipes as an MCP client would: newline-delimited JSON-RPC,
//! `initialize` with chosen capabilities, server requests (elicitation) answered by a closure.

use super::{bin, TIMEOUT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// A server that is the fixture MCP server started through `sh`, so that extra flags travel in
/// the environment (`$EXTRA`), which the catalog's cache identity ignores: two runs with
/// different faults share one cache.
pub fn fixture_via_env(id: &str, extra: &str) -> Value {
    json!({"id": id, "name": id, "transport": {"type": "stdio", "command": "/bin/sh",
        "args": ["-c", "exec \"$FIXTURE\" $EXTRA"],
        "env": {"FIXTURE": super::fixture_mcp(), "EXTRA": extra}}})
}

/// The fixture MCP server with these flags.
pub fn fixture(id: &str, args: &[&str]) -> Value {
    json!({"id": id, "name": id, "transport": {"type": "stdio", "command": super::fixture_mcp(), "args": args}})
}

pub struct McpClient {
    pub child: Child,
    /// The gateway's `$TOOLREG_STATE_DIR` unless the test set one; removed when dropped.
    _state: tempfile::TempDir,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Value>>,
    pub stderr: Receiver<String>,
    next_id: i64,
    /// Notifications received while waiting for responses, in order.
    pub notes: Vec<Value>,
    /// Server requests received, in order.
    pub asked: Vec<Value>,
    /// Answers a server request (its whole message) with a result.
    pub answer: Box<dyn FnMut(&Value) -> Value + Send>,
}

/// Writes `config` to a file in `dir` and returns its path.
pub fn write_config(dir: &std::path::Path, config: &Value) -> String {
    let path = dir.join("gateway.json");
    std::fs::write(&path, serde_json::to_vec_pretty(config).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// `toolreg mcp --config FILE EXTRA...`, not yet initialized.
pub fn spawn(config_path: &str, extra: &[&str], env: &[(&str, &str)]) -> McpClient {
    let mut cmd = Command::new(bin());
    cmd.args(["mcp", "--config", config_path]).args(extra).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env("TOOLREG_LOG", std::env::var("TOOLREG_TEST_LOG").unwrap_or_else(|_| "info".into()));
    // Pins and lists persist by default (in a per-user directory): each gateway gets its own,
    // unless the test chooses one (`env`), so tests share no state and never write in $HOME.
    let state = tempfile::tempdir().expect("a state directory");
    cmd.env("TOOLREG_STATE_DIR", state.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn toolreg mcp");
    let (tx, rx) = channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if tx.send(Some(v)).is_err() {
                return;
            }
        }
        let _ = tx.send(None);
    });
    let (etx, erx) = channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("[toolreg mcp] {line}");
            let _ = etx.send(line);
        }
    });
    McpClient {
        _state: state,
        stdin: child.stdin.take(),
        child,
        rx,
        stderr: erx,
        next_id: 0,
        notes: Vec::new(),
        asked: Vec::new(),
        answer: Box::new(|m| panic!("unexpected server request {m}")),
    }
}

impl McpClient {
    /// Spawned and initialized with these client capabilities.
    pub fn ready(config_path: &str, capabilities: Value) -> McpClient {
        let mut c = spawn(config_path, &[], &[]);
        let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "toolreg-test", "version": "0"}}));
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        c.notify("notifications/initialized", json!({}));
        c
    }

    pub fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn recv(&mut self, d: Duration) -> Option<Value> {
        match self.rx.recv_timeout(d) {
            Ok(Some(v)) => Some(v),
            Ok(None) => panic!("toolreg mcp closed stdout"),
            Err(_) => None,
        }
    }

    /// Forgets the notifications received so far, those already sent but not yet read too (they
    /// wait in the channel): what a test then waits for was sent after this call.
    pub fn clear_notes(&mut self) {
        while let Ok(Some(m)) = self.rx.try_recv() {
            self.handle(&m);
        }
        self.notes.clear();
    }

    /// Sends a request and returns its response; notifications are kept in `notes`, server
    /// requests answered by `answer`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self.recv(left).unwrap_or_else(|| panic!("no answer to {method} within {TIMEOUT:?}"));
            if self.handle(&m) && m["id"] == id {
                return m;
            }
        }
    }

    /// True for a response; notifications and server requests are dealt with here.
    fn handle(&mut self, m: &Value) -> bool {
        match (m.get("method"), m.get("id")) {
            (Some(_), Some(id)) => {
                self.asked.push(m.clone());
                let result = (self.answer)(m);
                let id = id.clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
                false
            }
            (Some(_), None) => {
                self.notes.push(m.clone());
                false
            }
            _ => true,
        }
    }

    /// The result of a successful request.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("result").is_some(), "{method} failed: {r}");
        r["result"].clone()
    }

    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.ok("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Tool names of `tools/list`.
    pub fn tool_names(&mut self) -> Vec<String> {
        let r = self.ok("tools/list", json!({}));
        r["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    }

    /// Waits for a notification with this method (one already received counts).
    pub fn wait_note(&mut self, method: &str, d: Duration) -> Option<Value> {
        let deadline = Instant::now() + d;
        loop {
            if let Some(i) = self.notes.iter().position(|n| n["method"] == method) {
                return Some(self.notes.remove(i));
            }
            let m = self.recv(deadline.saturating_duration_since(Instant::now()))?;
            self.handle(&m);
        }
    }

    /// Closes stdin and waits for the exit.
    pub fn finish(mut self) -> ExitStatus {
        self.stdin.take();
        super::exit_of(&mut self.child, "toolreg mcp did not exit after stdin closed")
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a `CallToolResult`'s content.
pub fn text(result: &Value) -> String {
    result["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

/// One stateless 2026-07-28 request to `path` with `token`: the status and the JSON-RPC answer
/// (`Null` when the status is not 200).
pub fn rpc_2026(addr: &str, path: &str, token: &str, method: &str, params: Value) -> (u16, Value) {
    rpc_2026_declaring(addr, path, token, method, params, json!({}))
}

/// `rpc_2026` from a client that declares `capabilities`. `Mcp-Name` is the params' `name`,
/// `uri` or `taskId`.
pub fn rpc_2026_declaring(addr: &str, path: &str, token: &str, method: &str, params: Value, capabilities: Value) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "toolreg-test", "version": "0"}});
    let name = ["name", "uri", "taskId"].iter().find_map(|k| params.get(*k).and_then(Value::as_str)).map(str::to_string);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\nAuthorization: Bearer {token}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n",
        body.len()
    );
    if let Some(name) = name {
        req.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    let raw = String::from_utf8_lossy(&got).into_owned();
    let status: u16 = raw.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status line: {raw:?}"));
    let body = raw.split("\r\n\r\n").nth(1).unwrap_or_default();
    if status != 200 {
        // A refusal's JSON-RPC error when it has one (-32021 goes out with 400).
        return (status, serde_json::from_str(body.trim()).unwrap_or(Value::Null));
    }
    let json = body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(body);
    (status, serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {raw}")))
}

/// `toolreg mcp --config FILE --http 127.0.0.1:0` with `env`; its `host:port` once it listens.
pub fn spawn_http(config_path: &str, env: &[(&str, &str)]) -> (McpClient, String) {
    let c = spawn(config_path, &["--http", "127.0.0.1:0"], env);
    let deadline = Instant::now() + super::TIMEOUT;
    loop {
        let line = c.stderr.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("toolreg mcp --http said where it listens");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            return (c, rest.trim_end_matches("/mcp").to_string());
        }
    }
}
