//! Content-Length frames over Windows pipes, byte for byte: nothing translates `\n` to `\r\n`
//! (or drops `\r`) in either direction, a frame of several MB passes both ways, and EOF after
//! `shutdown` ends the sidecar cleanly with nothing half-written.

use super::wine::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
}

impl Raw {
    fn start() -> Raw {
        let mut child = Command::new(win(crate::support::bin()))
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Raw { stdin: child.stdin.take(), stdout: child.stdout.take().unwrap(), child }
    }

    /// A request whose body has `\r\n` between its JSON tokens: a text-mode pipe would drop the
    /// `\r`s and the body would fall short of its Content-Length.
    fn send(&mut self, id: i64, method: &str, params: Value) {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string().replacen(',', ",\r\n", 3);
        let w = self.stdin.as_mut().unwrap();
        w.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// The next frame, whose header must be exactly `Content-Length: N\r\n\r\n`.
    fn frame(&mut self) -> Value {
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut b = [0u8];
            assert_eq!(self.stdout.read(&mut b).unwrap(), 1, "EOF inside a header: {:?}", String::from_utf8_lossy(&head));
            head.push(b[0]);
            assert!(head.len() < 64, "not a Content-Length header: {:?}", String::from_utf8_lossy(&head));
        }
        let text = std::str::from_utf8(&head).unwrap();
        let n: usize = text.strip_prefix("Content-Length: ").and_then(|t| t.strip_suffix("\r\n\r\n")).and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("header {text:?}"));
        let mut body = vec![0; n];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap_or_else(|e| panic!("a body of exactly {n} bytes is one JSON value: {e}"))
    }

    /// The response to `id`, past notifications.
    fn ask(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(id, method, params);
        loop {
            let m = self.frame();
            if m["id"] == id {
                return m.get("result").cloned().unwrap_or_else(|| panic!("{method}: {m}"));
            }
        }
    }
}

#[test]
fn frames_pass_windows_pipes_untranslated_large_ones_too_and_eof_ends_cleanly() {
    let mut r = Raw::start();
    r.ask(1, "initialize", json!({"mcp": {"maxResultBytes": 64 << 20}, "results": {"maxTokens": 0}}));
    r.ask(2, "catalog/setServers", json!({"servers": [server("f", &fixture(), &[], json!({}))]}));
    let start = std::time::Instant::now();
    while r.ask(3, "catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(start.elapsed() < crate::support::TIMEOUT, "the fixture never became ready");
    }
    r.ask(4, "registry/syncMcp", json!({}));
    // 6 MB out and back, with line breaks in it (escaped in JSON, raw in the fixture's text).
    let big = "line\r\n".repeat(1 << 20);
    let got = r.ask(5, "tool/invoke", json!({"name": "mcp__f__echo", "arguments": {"big": big}}));
    let echoed: Value = serde_json::from_str(got["output"]["value"].as_str().unwrap_or_else(|| panic!("{}", got.to_string().chars().take(500).collect::<String>()))).unwrap();
    assert!(echoed["big"] == big, "the 6 MB argument came back changed");
    r.ask(6, "shutdown", Value::Null);
    drop(r.stdin.take());
    assert_eq!(crate::support::exit_of(&mut r.child, "sidecar did not exit").code(), Some(0));
    // Whatever came after the response (late notifications) is whole frames, then EOF.
    let mut rest = Vec::new();
    r.stdout.read_to_end(&mut rest).unwrap();
    let mut at = &rest[..];
    while !at.is_empty() {
        let end = at.windows(4).position(|w| w == b"\r\n\r\n").expect("a whole header before EOF") + 4;
        let n: usize = std::str::from_utf8(&at[16..end - 4]).unwrap().parse().unwrap();
        assert!(at.len() >= end + n, "EOF inside a frame");
        at = &at[end + n..];
    }
}
