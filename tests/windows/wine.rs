//! What the Windows tests share: Windows paths for what cargo names in Unix form (the test
//! binaries are built on Linux and run under Wine, where `/x` is `Z:\x`), a process probe, the
//! inputs scripts/windows/wine-env.sh fetches, and a tool call through the sidecar.

use crate::support::{self, Sidecar};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `p` as Windows spells it: a Unix path from the build machine becomes Wine's `Z:` drive.
pub fn win(p: &str) -> String {
    match p.strip_prefix('/') {
        Some(rest) => format!("Z:\\{}", rest.replace('/', "\\")),
        None => p.to_owned(),
    }
}

pub fn fixture() -> String {
    win(support::fixture_mcp())
}

/// A folder or file an environment variable names, set by scripts/windows/wine-env.sh; a test
/// without it fails saying what to run.
pub fn input(var: &str) -> PathBuf {
    let v = std::env::var(var).unwrap_or_else(|_| panic!("${var} is not set: run the Windows tests with `scripts/windows.sh test`, whose wine-env.sh fetches it"));
    let p = PathBuf::from(win(&v));
    assert!(p.exists(), "${var} names {}, which is missing: run `scripts/windows.sh wine`", p.display());
    p
}

/// Writes a batch file `name` in `dir` (CRLF lines, as cmd.exe expects).
pub fn batch(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.iter().map(|l| format!("{l}\r\n")).collect::<String>()).unwrap();
    p
}

#[link(name = "kernel32")]
extern "system" {
    fn OpenProcess(access: u32, inherit: i32, pid: u32) -> *mut std::ffi::c_void;
    fn GetExitCodeProcess(process: *mut std::ffi::c_void, code: *mut u32) -> i32;
    fn CloseHandle(handle: *mut std::ffi::c_void) -> i32;
    fn TerminateProcess(process: *mut std::ffi::c_void, code: u32) -> i32;
}

/// Ends process `pid` (a survivor a failed test leaves behind).
fn end(pid: u32) {
    const TERMINATE: u32 = 0x0001;
    // SAFETY: a handle we close.
    unsafe {
        let h = OpenProcess(TERMINATE, 0, pid);
        if !h.is_null() {
            TerminateProcess(h, 1);
            CloseHandle(h);
        }
    }
}

/// Whether process `pid` is still running.
pub fn alive(pid: u32) -> bool {
    const QUERY_LIMITED: u32 = 0x1000;
    const STILL_ACTIVE: u32 = 259;
    // SAFETY: a handle we close; GetExitCodeProcess writes one u32.
    unsafe {
        let h = OpenProcess(QUERY_LIMITED, 0, pid);
        if h.is_null() {
            return false;
        }
        let mut code = 0;
        let ok = GetExitCodeProcess(h, &mut code);
        CloseHandle(h);
        ok != 0 && code == STILL_ACTIVE
    }
}

/// The pid a fixture wrote to `path` (`--pid-file`), once it is there.
pub fn pid_in(path: &Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(start.elapsed() < support::TIMEOUT, "no pid in {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fails unless every process in `pids` ends within the harness's timeout.
pub fn all_gone(pids: &[(&str, u32)], after: &str) {
    let start = Instant::now();
    while pids.iter().any(|(_, p)| alive(*p)) {
        if start.elapsed() > support::TIMEOUT {
            let left: Vec<_> = pids.iter().filter(|(_, p)| alive(*p)).collect();
            left.iter().for_each(|(_, p)| end(*p));
            panic!("{left:?} outlived the sidecar after {after}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A stdio server entry.
pub fn server(id: &str, command: &str, args: &[&str], extra: Value) -> Value {
    let mut v = json!({"id": id, "name": id, "transport": {"type": "stdio", "command": command, "args": args}});
    for (k, x) in extra.as_object().into_iter().flatten() {
        if k == "env" || k == "cwd" {
            v["transport"][k] = x.clone();
        } else {
            v[k] = x.clone();
        }
    }
    v
}

/// An initialized sidecar serving `servers`, each ready or in error (as `want` says), tools synced.
pub fn sidecar(init: Value, servers: Vec<Value>, want: &[(&str, &str)]) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", init);
    s.ok_past_notes("catalog/setServers", json!({ "servers": servers }));
    for (id, state) in want {
        let st = s.server_in(id, &["ready", "error"]);
        assert_eq!(st["state"], *state, "{id}: {st}");
    }
    s.ok_past_notes("registry/syncMcp", json!({}));
    s
}

/// Calls `server`'s `tool`: the result's text and whether it is an error.
pub fn invoke(s: &mut Sidecar, server: &str, tool: &str, args: Value) -> (String, bool) {
    let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{server}__{}", support::camel(tool)), "arguments": args}));
    let text = r["output"]["value"].as_str().map(str::to_owned).unwrap_or_else(|| r["output"]["value"].to_string());
    (text, r["isError"] == true)
}

/// The fixture's `whereami` answer (`--whereami`): argv, cwd, and its parent's command line.
pub fn whereami(s: &mut Sidecar, server: &str) -> Value {
    let (text, is_error) = invoke(s, server, "whereami", json!({}));
    assert!(!is_error, "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("whereami is not JSON ({e}): {text}"))
}
