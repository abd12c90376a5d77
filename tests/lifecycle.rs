//! The LSP-style lifecycle over the real binary.
mod support;
use serde_json::{json, Value};
use support::*;

#[test]
fn initialize_answers_server_info_and_capabilities() {
    let mut s = Sidecar::spawn();
    let r = s.ok("initialize", json!({"clientInfo": {"name": "t", "version": "1"}, "protocolVersion": "0.3", "capabilities": {"approval": true}}));
    assert_eq!(r["serverInfo"]["name"], "toolreg");
    assert_eq!(r["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(r["protocolVersion"], "0.3");
    let methods: Vec<&str> = r["capabilities"]["methods"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    for m in ["initialize", "shutdown", "registry/register", "registry/deregister", "registry/list", "registry/selectActive", "exposition/plan"] {
        assert!(methods.contains(&m), "{m} missing from {methods:?}");
    }
    assert_eq!(r["capabilities"]["maxFrameBytes"], 64 * 1024 * 1024);
    s.shutdown();
}

#[test]
fn requests_before_initialize_get_32002() {
    let mut s = Sidecar::spawn();
    let e = s.err("registry/list", json!({}));
    assert_eq!(e["code"], -32002);
    assert_eq!(e["data"]["method"], "registry/list");
    // Notifications other than exit are ignored before initialize; the server still answers.
    s.notify("initialized", json!({}));
    s.ok("initialize", json!({}));
    s.ok("registry/list", json!({}));
    s.shutdown();
}

#[test]
fn initialize_twice_is_refused() {
    let mut s = Sidecar::ready();
    assert_eq!(s.err("initialize", json!({}))["code"], -32600);
    s.shutdown();
}

#[test]
fn after_shutdown_only_exit() {
    let mut s = Sidecar::ready();
    assert_eq!(s.ok("shutdown", Value::Null), Value::Null);
    let e = s.err("registry/list", json!({}));
    assert_eq!(e["code"], -32600);
    assert!(e["message"].as_str().unwrap().contains("shutting down"));
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_code_1() {
    let mut s = Sidecar::ready();
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(1));
}

#[test]
fn eof_ends_the_process() {
    let mut s = Sidecar::ready();
    s.close_stdin();
    assert_eq!(s.wait().code(), Some(1), "EOF without shutdown is not a clean exit");

    let mut s = Sidecar::ready();
    s.ok("shutdown", Value::Null);
    s.close_stdin();
    assert_eq!(s.wait().code(), Some(0), "EOF after shutdown is");
}

#[test]
fn sigterm_ends_the_process() {
    let mut s = Sidecar::ready();
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    assert_eq!(s.wait().code(), Some(143));
}

#[test]
fn log_file_from_initialize_gets_the_logs_and_stdout_stays_clean() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("toolreg.log");
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"log": {"file": log.to_str().unwrap(), "level": "debug"}, "clientInfo": {"name": "logtest"}}));
    s.notify("bogus/notification", json!({}));
    s.ok("registry/list", json!({}));
    s.shutdown();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("ignoring unknown notification bogus/notification"), "{text}");
}
