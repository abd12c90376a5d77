//! A user profile whose path has a space and Chinese characters (`…\张 三\`): in the sidecar's
//! cacheDir, a server's `cwd`, its arguments and its output; and the gateway's state, which
//! without `gateway.cacheDir` or `$TOOLREG_STATE_DIR` goes under `%LOCALAPPDATA%\toolreg`.

use super::wine::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// `…\张 三` with `AppData\Local` and a work folder in it.
fn profile(tmp: &Path) -> std::path::PathBuf {
    let home = tmp.join("张 三");
    std::fs::create_dir_all(home.join("AppData").join("Local")).unwrap();
    std::fs::create_dir_all(home.join("工作 目录")).unwrap();
    home
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn a_chinese_profile_path_in_cache_cwd_arguments_and_output() {
    let tmp = tempfile::tempdir().unwrap();
    let home = profile(tmp.path());
    let (cache, work) = (home.join("cache"), home.join("工作 目录"));
    let arg = format!("{}\\笔记 1.txt", work.display());
    let servers = vec![server("zh", &fixture(), &["--whereami", "--", &arg], json!({"cwd": work}))];
    let mut s = sidecar(json!({"cacheDir": cache}), servers, &[("zh", "ready")]);
    let me = whereami(&mut s, "zh");
    assert_eq!(me["cwd"], json!(work.display().to_string()), "{me}");
    assert_eq!(me["argv"], json!(["--whereami", "--", arg]), "{me}");
    s.shutdown();
    assert!(!files_under(&cache).is_empty(), "nothing kept in the cacheDir {}", cache.display());
}

#[test]
fn the_gateways_state_goes_under_localappdata() {
    let tmp = tempfile::tempdir().unwrap();
    let home = profile(tmp.path());
    let local = home.join("AppData").join("Local");
    let config = tmp.path().join("gateway.json");
    let servers = vec![server("zh", &fixture(), &["--whereami"], json!({"cwd": home.join("工作 目录")}))];
    std::fs::write(&config, json!({ "servers": servers }).to_string()).unwrap();
    let mut child = Command::new(win(crate::support::bin()))
        .args(["mcp", "--config", config.to_str().unwrap()])
        .env("LOCALAPPDATA", &local)
        .env("USERPROFILE", &home)
        .env_remove("TOOLREG_STATE_DIR")
        .env_remove("XDG_STATE_HOME")
        .env("TOOLREG_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}});
    assert!(ask(&mut stdin, &mut out, 1, "initialize", init).get("result").is_some());
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let listed = ask(&mut stdin, &mut out, 2, "tools/list", json!({}));
    assert!(listed.get("result").is_some(), "{listed}");
    drop(stdin);
    child.wait().unwrap();
    let kept = files_under(&local.join("toolreg"));
    assert!(!kept.is_empty(), "nothing under {}\\toolreg (the state went elsewhere)", local.display());
}

/// One newline-delimited request to `toolreg mcp` and its response.
fn ask(stdin: &mut impl Write, out: &mut impl BufRead, id: i64, method: &str, params: Value) -> Value {
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "toolreg mcp closed stdout");
        let m: Value = serde_json::from_str(&line).unwrap();
        if m["id"] == id {
            return m;
        }
    }
}
