//! A state directory written by toolreg 0.5 (`state-0.5/`, see its README) opens in this
//! version with everything in it: the `always` grant, the approved (changed) definition, the
//! usage counts; the old files are left in place for a downgrade, and a second start imports
//! nothing twice.
use crate::support::*;
use serde_json::{json, Value};
use std::path::Path;

const READ: &str = "mcp__fs__readFile";
const LIST: &str = "mcp__fs__listDir";
/// When 0.5 counted the calls: its usage file's unix seconds 1796675125.
const COUNTED_AT: &str = "2026-12-07T20:25:25Z";

/// The fixture's tools with `list_dir` as 0.5 first saw it (before the approved change).
fn write_defs(defs: &Path) {
    let d = json!([
        {"name": "read_file", "description": "Read a file and return its text.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "list_dir", "description": "List a directory.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
    ]);
    std::fs::write(defs, serde_json::to_vec(&d).unwrap()).unwrap();
}

fn start(f: &Files) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": f.cache.to_str().unwrap(), "capabilities": {"approval": true},
        "timeouts": {"connectMs": 5000, "listMs": 5000}}));
    let server = json!({"id": "fs", "name": "fs", "approvalTools": ["read_file"], "transport": {"type": "stdio", "command": fixture_mcp(),
        "args": ["--defs-file", f.defs.to_str().unwrap(), "--calls-file", f.calls.to_str().unwrap()]}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [server]}));
    s.until_first_ready();
    s.ok_past_notes("registry/syncMcp", json!({}));
    s
}

fn quit(mut s: Sidecar) {
    assert_eq!(s.call_noting("shutdown", Value::Null, &mut Vec::new())["result"], Value::Null);
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

/// `list_dir`'s usage under the default key: (decayed count, lastUsed).
fn list_usage(s: &mut Sidecar) -> (f64, String) {
    let all = s.ok_past_notes("usage/list", json!({"usageKey": "default"}));
    let tools = all["keys"][0]["tools"].as_array().cloned().unwrap_or_default();
    let t = tools.iter().find(|t| t["name"] == LIST).unwrap_or_else(|| panic!("{LIST} has no usage: {all}"));
    (t["count"].as_f64().unwrap(), t["lastUsed"].as_str().unwrap().to_owned())
}

#[test]
fn a_state_directory_of_0_5_opens_with_everything_in_it() {
    let f = files();
    std::fs::create_dir_all(&f.cache).unwrap();
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/processes/state-0.5");
    let names = ["approvals.json", "pins-fs-dce7cce0.json", "usage.json"];
    for name in names {
        std::fs::copy(old.join(name), f.cache.join(name)).unwrap();
    }
    write_defs(&f.defs);

    let mut s = start(&f);
    // The grant: listed, and the call runs without a question.
    let grants = s.ok_past_notes("approval/grants", json!({}))["grants"].clone();
    assert_eq!(grants.as_array().map(Vec::len), Some(1), "{grants}");
    assert_eq!((grants[0]["tool"].clone(), grants[0]["lasts"].clone()), (json!(READ), json!("always")), "{grants}");
    let (r, asked) = invoke_answering(&mut s, json!({"name": READ, "arguments": {"path": "/etc/hostname"}}), &json!({"decision": "deny"}));
    assert!(!asked, "the migrated grant spares the question: {r}");
    assert_eq!(r["approvedBy"], "grant", "{r}");
    // The pins: 0.5 approved list_dir's changed description, so the original one the server
    // serves now is a change, held (pins lost would have taken this list as a new baseline).
    let pins = s.ok_past_notes("catalog/pins", json!({"serverId": "fs"}));
    let pin = |name: &str| pins["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap_or_default();
    assert_eq!(pin("list_dir")["state"], "changed", "{pins}");
    assert_eq!(pin("read_file")["state"], "approved", "{pins}");
    // The usage: 3 calls at COUNTED_AT, decayed since.
    let (count, last_used) = list_usage(&mut s);
    assert_eq!(last_used, COUNTED_AT);
    assert!(count > 0.0 && count <= 3.0, "{count}");
    quit(s);

    // The old files are still there, unchanged, for a downgrade.
    for name in names {
        assert_eq!(std::fs::read(f.cache.join(name)).unwrap(), std::fs::read(old.join(name)).unwrap(), "{name} changed");
    }
    // A second start imports nothing twice.
    let mut s = start(&f);
    let (again, _) = list_usage(&mut s);
    assert!((again - count).abs() < 0.01, "the usage was imported once: {count} then {again}");
    assert_eq!(s.ok_past_notes("approval/grants", json!({}))["grants"].as_array().map(Vec::len), Some(1));
    quit(s);
}
