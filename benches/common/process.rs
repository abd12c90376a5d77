//! The processes a bench drives: which binaries, spawned over pipes with their logs quiet.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Child, Command, Stdio};

/// The sidecar under test: `$TOOLREG_BIN`, else this build's.
pub fn toolreg_bin() -> String {
    std::env::var("TOOLREG_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_toolreg").to_string())
}

/// The fixture MCP server, a bin of the workspace member `fixtures/mcp-server`: beside `toolreg`
/// in the same target dir (`cargo build --release -p toolreg-fixture-mcp` first).
pub fn fixture_bin() -> String {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_toolreg")).with_file_name("toolreg-fixture-mcp");
    assert!(path.is_file(), "no fixture MCP server at {}: run `cargo build --release -p toolreg-fixture-mcp` first", path.display());
    path.to_string_lossy().into_owned()
}

/// Where a bench's gateways keep pins and tokens: one directory per bench run under the temp dir,
/// so that a bench never writes the user's `~/.local/state/toolreg`.
pub fn bench_state_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("toolreg-bench-state-{}", std::process::id()))
}

/// `cmd args` with stdin and stdout piped, stderr dropped, `TOOLREG_LOG=error` and the state
/// directory of `bench_state_dir`.
pub fn spawn_piped(cmd: &str, args: &[impl AsRef<OsStr>]) -> Child {
    Command::new(cmd)
        .args(args)
        .env("TOOLREG_LOG", "error")
        .env("TOOLREG_STATE_DIR", bench_state_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A `/proc/PID/status` field in KiB (`VmRSS:`, `VmHWM:`); `pid` "self" for this process; 0
/// where there is none (not Linux).
pub fn status_kib(pid: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).and_then(|n| n.parse().ok()).unwrap_or(0)
}
