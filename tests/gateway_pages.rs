//! `toolreg mcp` pages its lists (issue 64): a big `tools/list` (`defer: never`: 1,200 real tools
//! of shared/fixtures/mcp-catalogs, 600 small ones and one over 512 KiB) comes in pages of at
//! most 500 tools and 512 KiB, every tool exactly once, the huge one alone; a cursor answers the
//! same page again and on another process; a forged cursor, or one whose listing changed, is
//! -32602. A lean listing is one page with no `nextCursor`.

mod support;

use serde_json::{json, Value};
use std::time::Duration;
use support::gateway::{fixture, write_config, McpClient};

const MAX_ENTRIES: usize = 500;
const MAX_BYTES: usize = 512 * 1024;

/// 1,200 real tools named `real{i}`, and one whose description alone is past a page's bytes.
fn big_defs() -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(support::fixtures().join("mcp-catalogs")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut defs = Vec::new();
    for f in files {
        let catalog: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        for t in catalog["tools"].as_array().unwrap() {
            if defs.len() < 1200 && t["inputSchema"]["type"] == "object" {
                defs.push(json!({"name": format!("real{}", defs.len()), "description": t["description"], "inputSchema": t["inputSchema"]}));
            }
        }
    }
    defs.push(json!({"name": "huge", "description": "h".repeat(MAX_BYTES + 1000), "inputSchema": {"type": "object"}}));
    defs
}

/// Every page of `tools/list`, following `nextCursor`, with the cursor that asked for it.
fn pages(c: &mut McpClient) -> Vec<(Option<String>, Value)> {
    let mut pages: Vec<(Option<String>, Value)> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = c.ok("tools/list", params);
        let next = page["nextCursor"].as_str().map(str::to_owned);
        pages.push((cursor, page));
        match next {
            Some(next) if pages.len() < 100 => cursor = Some(next),
            _ => return pages,
        }
    }
}

fn refusal(c: &mut McpClient, cursor: &str) -> Value {
    let r = c.request("tools/list", json!({"cursor": cursor}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    r["error"].clone()
}

#[test]
fn a_big_listing_comes_in_pages_each_tool_once() {
    let dir = tempfile::tempdir().unwrap();
    let defs = dir.path().join("defs.json");
    let big = big_defs();
    std::fs::write(&defs, serde_json::to_vec(&big).unwrap()).unwrap();
    let server = fixture("fx", &["--tools", "600", "--defs-file", defs.to_str().unwrap(), "--watch-defs"]);
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({}));
    let listed = pages(&mut c);

    let mut names = Vec::new();
    for (_, page) in &listed {
        let tools = page["tools"].as_array().unwrap();
        let bytes = serde_json::to_vec(tools).unwrap().len();
        let huge = tools.iter().any(|t| t["name"] == "mcp__fx__huge");
        assert!(tools.len() <= MAX_ENTRIES && (bytes <= MAX_BYTES || (huge && tools.len() == 1)), "{} tools, {bytes} bytes", tools.len());
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
    }
    let wanted = big.iter().map(|d| format!("mcp__fx__{}", d["name"].as_str().unwrap())).chain((0..600).map(|i| format!("mcp__fx__{}", support::camel(&format!("tool_{i}")))));
    for name in wanted {
        assert_eq!(names.iter().filter(|n| **n == name).count(), 1, "{name} once in {} pages", listed.len());
    }
    let unique: std::collections::HashSet<_> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "no tool twice");
    assert!(listed.len() >= 5, "{} pages", listed.len());
    assert!(listed.last().unwrap().1.get("nextCursor").is_none());

    // The same cursor, the same page: again, and on another process of the same config.
    let (cursor, page) = listed[2].clone();
    let cursor = cursor.unwrap();
    assert_eq!(c.ok("tools/list", json!({"cursor": cursor})), page);
    let mut other = McpClient::ready(&path, json!({}));
    assert_eq!(other.ok("tools/list", json!({"cursor": cursor})), page);
    assert!(other.finish().success());

    // Forged: garbage, or a real cursor moved off a page's start.
    let garbage = refusal(&mut c, "bm90IGEgY3Vyc29y");
    assert_eq!(garbage["data"]["reason"], "unreadable cursor", "{garbage}");
    let mut claims: Value = serde_json::from_slice(&data_encoding::BASE64URL_NOPAD.decode(cursor.as_bytes()).unwrap()).unwrap();
    claims["at"] = json!(claims["at"].as_u64().unwrap() + 1);
    let edited = data_encoding::BASE64URL_NOPAD.encode(&serde_json::to_vec(&claims).unwrap());
    assert_eq!(refusal(&mut c, &edited)["data"]["reason"], "no such page");

    // The listing changes: its old cursors are refused, readably.
    let mut changed = big.clone();
    changed[0]["description"] = json!("Changed upstream.");
    std::fs::write(&defs, serde_json::to_vec(&changed).unwrap()).unwrap();
    c.clear_notes();
    assert!(c.wait_note("notifications/tools/list_changed", Duration::from_secs(30)).is_some(), "the change is announced");
    let refused = refusal(&mut c, &cursor);
    assert_eq!(refused["data"]["reason"], "listing changed", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("list again"), "{refused}");
    assert!(c.finish().success());
}

#[test]
fn a_lean_listing_is_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--tools", "3", "--conformance"])], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({}));
    let listed = pages(&mut c);
    assert_eq!(listed.len(), 1);
    assert!(listed[0].1["tools"].as_array().unwrap().len() > 3, "{}", listed[0].1);
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let r = c.ok(method, json!({}));
        assert!(r.get("nextCursor").is_none(), "{method}: {r}");
    }
    // A cursor the gateway never gave is refused on every list.
    let r = c.request("prompts/list", json!({"cursor": "e30"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(c.finish().success());
}
