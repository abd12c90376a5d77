//! A stdio server's whole process tree ends with the sidecar, however it ends (the job object
//! of `src/catalog/child.rs`): killed outright (TerminateProcess, no code of ours runs) or its
//! stdin closed. The servers ignore stdin EOF, and one is a grandchild behind a `.cmd` wrapper,
//! so nothing but the job takes them along.

use super::wine::*;
use crate::support::Sidecar;
use serde_json::json;

/// A sidecar with a direct server and one behind `cmd.exe`; their pids.
fn start(dir: &std::path::Path) -> (Sidecar, Vec<(&'static str, u32)>) {
    let (direct, nested) = (dir.join("direct.pid"), dir.join("nested.pid"));
    batch(dir, "wrap.cmd", &["@echo off", &format!("\"{}\" --ignore-eof --pid-file \"{}\"", fixture(), nested.display())]);
    let servers = vec![
        server("direct", &fixture(), &["--ignore-eof", "--pid-file", direct.to_str().unwrap()], json!({})),
        server("nested", dir.join("wrap.cmd").to_str().unwrap(), &[], json!({})),
    ];
    let s = sidecar(json!({}), servers, &[("direct", "ready"), ("nested", "ready")]);
    let pids = vec![("direct", pid_in(&direct)), ("nested (a grandchild)", pid_in(&nested))];
    assert!(pids.iter().all(|(_, p)| alive(*p)), "{pids:?}");
    (s, pids)
}

#[test]
fn a_killed_sidecar_takes_its_servers_tree_along() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, pids) = start(dir.path());
    s.child.kill().unwrap();
    s.wait();
    all_gone(&pids, "TerminateProcess");
}

#[test]
fn a_sidecar_whose_stdin_closes_takes_its_servers_tree_along() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, pids) = start(dir.path());
    s.close_stdin();
    assert_eq!(s.wait().code(), Some(1), "EOF without shutdown");
    all_gone(&pids, "stdin closed");
}
