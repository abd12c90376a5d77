//! The official MCP Python SDK as a client of `toolreg mcp` (tests/gateway/python_sdk.py):
//! search, inspect and invoke a deferred tool; a gated tool approved once and denied once
//! through elicitation; a tool changed upstream approved through the review form, then called. `mcp` is pinned in tests/reference-servers/requirements.txt, which
//! scripts/test-all.sh installs.

mod support;

use std::process::Command;

#[test]
fn the_python_sdk_searches_invokes_and_answers_an_elicitation() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gateway/python_sdk.py");
    // Pins persist by default: into a temporary directory here, not the user's.
    let state = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .args([script, support::bin(), support::fixture_mcp()])
        .env("TOOLREG_STATE_DIR", state.path())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the Python SDK session failed:\n{stdout}");
    assert!(stdout.contains("python-sdk: all checks passed"), "{stdout}");
    assert_eq!(stdout.matches("ok   ").count(), 20, "every check ran:\n{stdout}");
}
