//! A state directory written by toolreg 0.5 (`state-0.5/`, see its README) opens in this
//! version with everything in it: the `always` grant, the approved (changed) definition, the
//! usage counts; the old files are left in place for a downgrade, and a second start imports
//! nothing twice. A gateway's OAuth token file of 0.5's layout signs a gateway in.
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

/// 0.5 kept a gateway's OAuth record in `secrets/oauth-<32 hex of sha256(key)>.json`, the
/// record's JSON whole. A record of a real sign-in (this version's, read from its store: the
/// same JSON, now a store record) written there signs a gateway of this version in: it lists
/// and calls the server without asking anyone, and `toolreg mcp --check` reports it ready.
#[test]
fn a_token_file_of_0_5_signs_a_gateway_in() {
    use crate::support::gateway::{text, write_config};
    use crate::support::oauth::{gateway, OAuthFixture};
    use sha2::{Digest, Sha256};
    use toolreg::store::{SqliteStore, Store};

    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let config = write_config(
        dir.path(),
        &json!({"model": "gpt-4o", "contextWindow": 128000,
            "servers": [{"id": "web", "name": "Web", "trust": "auto", "transport": {"type": "http", "url": fx.http.url}}],
            "gateway": {"defer": "never"}}),
    );
    let key = "toolreg/oauth/web";
    let scratch = dir.path().join("scratch");
    let mut a = gateway(&config, &[("TOOLREG_STATE_DIR", scratch.to_str().unwrap())], json!({"elicitation": {"url": {}}}));
    wait_listed(&mut a, "mcp__web__echo");
    assert!(a.finish().success());
    let record = SqliteStore::open(&scratch).unwrap().get("secret", key).unwrap().expect("the sign-in was kept");

    let old = dir.path().join("old");
    std::fs::create_dir_all(old.join("secrets")).unwrap();
    let digest = data_encoding::HEXLOWER.encode(&Sha256::digest(key.as_bytes()));
    std::fs::write(old.join("secrets").join(format!("oauth-{}.json", &digest[..32])), &record).unwrap();
    let signed_in = fx.events().len();

    // No client that could show a sign-in page.
    let mut b = gateway(&config, &[("TOOLREG_STATE_DIR", old.to_str().unwrap())], json!({}));
    wait_listed(&mut b, "mcp__web__echo");
    let r = b.request("tools/call", json!({"name": "mcp__web__echo", "arguments": {"text": "migrated"}}));
    assert!(r["result"]["isError"] == false && text(&r["result"]).contains("migrated"), "{r}");
    assert!(b.asked.is_empty(), "nobody was asked to sign in: {:?}", b.asked);
    assert!(b.finish().success());
    let since: Vec<String> = fx.events()[signed_in..].to_vec();
    assert!(!since.iter().any(|e| e.starts_with("token authorization_code")), "no new sign-in: {since:?}");

    let out = std::process::Command::new(bin()).args(["mcp", "--config", &config, "--check"]).env("TOOLREG_STATE_DIR", &old).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let row = report.lines().find(|l| l.starts_with("web ")).unwrap_or_else(|| panic!("no row for web: {report}"));
    assert_eq!(row.split_whitespace().nth(1), Some("ready"), "--check reads the migrated tokens: {report}");
}

fn wait_listed(c: &mut crate::support::gateway::McpClient, name: &str) {
    let start = std::time::Instant::now();
    while !c.tool_names().iter().any(|n| n == name) {
        assert!(start.elapsed() < TIMEOUT, "{name} never listed");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
