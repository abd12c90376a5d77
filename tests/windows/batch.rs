//! `.cmd` servers found through `PATHEXT` and started by the standard library through `cmd.exe`:
//! arguments with spaces, quotes and `&` arrive unchanged, `%` is handed over in std's escaping,
//! and an argument std refuses for a batch file is an error that says why.

use super::wine::*;
use serde_json::json;

/// A shim as npm's would be (npm's own do not run in Wine's cmd.exe): the fixture, all arguments.
fn shim(dir: &std::path::Path) {
    batch(dir, "srv.cmd", &["@echo off", &format!("\"{}\" %*", fixture())]);
}

#[test]
fn cmd_servers_found_through_pathext_get_their_arguments_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    shim(dir.path());
    let path = json!({"PATH": dir.path()});
    let odd = ["two words", "say \"hi\" twice", "fish&chips", "张 三", r"C:\dir with space\"];
    let mut args = vec!["--whereami", "--"];
    args.extend(odd);
    let mut s = sidecar(json!({}), vec![server("srv", "srv", &args, json!({"env": path}))], &[("srv", "ready")]);
    let me = whereami(&mut s, "srv");
    assert_eq!(me["argv"], json!(args), "{me}");
    // cmd.exe ran srv.cmd (found as `srv` through PATHEXT), as std runs a batch file.
    let line = me["parentCommandLine"].as_str().unwrap_or_else(|| panic!("{me}"));
    assert!(line.starts_with("cmd.exe /e:ON /v:OFF /d /c") && line.to_lowercase().contains("srv.cmd\""), "{line}");
    s.shutdown();
}

/// Std escapes `%` for cmd.exe as `%%cd:~,%` (a substring of nothing), so `%PATH%` is never
/// expanded; Wine's cmd.exe does not honour that trick (it drops text), so what is asserted is
/// what cmd.exe was handed, read from its own command line by the fixture.
#[test]
fn a_percent_reaches_cmd_exe_in_the_standard_librarys_escaping() {
    let dir = tempfile::tempdir().unwrap();
    shim(dir.path());
    let args = ["--whereami", "--", "100%", "%PATH%"];
    let mut s = sidecar(json!({}), vec![server("pct", "srv", &args, json!({"env": {"PATH": dir.path()}}))], &[("pct", "ready")]);
    let me = whereami(&mut s, "pct");
    let line = me["parentCommandLine"].as_str().unwrap_or_else(|| panic!("{me}"));
    assert!(line.contains(r#" "100%%cd:~,%" "%%cd:~,%PATH%%cd:~,%""#), "{line}");
    eprintln!("Wine's cmd.exe made of them: {}", me["argv"]);
    s.shutdown();
}

#[test]
fn an_argument_cmd_exe_cannot_take_is_an_error_naming_why() {
    let dir = tempfile::tempdir().unwrap();
    shim(dir.path());
    let pid = dir.path().join("pid");
    let args = ["--pid-file", pid.to_str().unwrap(), "two\nlines"];
    let mut s = sidecar(json!({}), vec![server("nl", "srv", &args, json!({"env": {"PATH": dir.path()}}))], &[("nl", "error")]);
    let st = s.server_status("nl");
    let error = st["error"].as_str().unwrap_or_else(|| panic!("{st}"));
    assert!(error.contains("batch file arguments are invalid") && error.contains("line break"), "{st}");
    assert!(!pid.exists(), "the server was started");
    s.shutdown();
}
