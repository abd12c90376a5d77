//! The official MCP Python SDK as a client of `toolreg mcp`. tests/gateway/python_sdk.py:
//! search, inspect and invoke a deferred tool; a gated tool approved once and denied once
//! through elicitation; a tool changed upstream approved through the review form, then called.
//! tests/gateway/python_grants.py (issue 54): the approval form offers `approveSession` and
//! `approveAlways`; a session's approval spares that session's next question and not another
//! session's; `toolreg approvals` shows and revokes the lasting one; every listed tool carries
//! `anthropic/alwaysLoad`, none with `gateway.alwaysLoad: false`. tests/gateway/python_pages.py
//! (issue 64): 2,000 tools listed in pages over HTTP and stdio, no event past the SDK's 1 MiB,
//! cursors stable across sessions and processes, forged ones -32602. `mcp` is pinned in
//! tests/reference-servers/requirements.txt, which scripts/test-all.sh installs.

mod support;

use std::process::Command;

/// Runs one script against the real binary and fixture; asserts its last line and how many
/// checks passed.
fn run(script: &str, passed: &str, checks: usize) {
    let script = format!("{}/tests/gateway/{script}", env!("CARGO_MANIFEST_DIR"));
    // Pins persist by default: into a temporary directory here, not the user's.
    let state = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .args([script.as_str(), support::bin(), support::fixture_mcp()])
        .env("TOOLREG_STATE_DIR", state.path())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the Python SDK session failed:\n{stdout}");
    assert!(stdout.contains(passed), "{stdout}");
    assert_eq!(stdout.matches("ok   ").count(), checks, "every check ran:\n{stdout}");
}

#[test]
fn the_python_sdk_searches_invokes_and_answers_an_elicitation() {
    run("python_sdk.py", "python-sdk: all checks passed", 20);
}

#[test]
fn the_python_sdk_approves_for_a_session_and_for_good_and_sees_always_load() {
    run("python_grants.py", "python-grants: all checks passed", 14);
}

#[test]
fn the_python_sdk_closes_its_http_sessions_without_a_warning() {
    run("python_delete.py", "python-delete: all checks passed", 12);
}

#[test]
fn the_python_sdk_follows_pages_of_a_2000_tool_listing() {
    run("python_pages.py", "python-pages: all checks passed", 15);
}
