//! Plans that already hold the tool the user asked for (issue 41 §2): `exposition/plan {query,
//! queryTools}` over the real binary, with two real servers' catalogs (GitHub's 117 tools and
//! Notion's 24, from the fixtures) served by the fixture MCP server: the best matches of the
//! deferred pool go inline with `reason: "query"`, the rest stay deferred, the hash is the same
//! for the same query, and a bad `queryTools` is refused.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

/// A sidecar serving the github and notion fixture catalogs, synced.
fn sidecar(dir: &std::path::Path) -> Sidecar {
    let mut servers = Vec::new();
    for id in ["github", "notion"] {
        let cat: Value = serde_json::from_str(&std::fs::read_to_string(fixtures().join(format!("mcp-catalogs/{id}.json"))).unwrap()).unwrap();
        let defs = dir.join(format!("{id}.json"));
        std::fs::write(&defs, serde_json::to_vec(&cat["tools"]).unwrap()).unwrap();
        servers.push(json!({"id": id, "name": id, "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(),
            "args": ["--tools", "0", "--defs-file", defs.to_str().unwrap()]}}));
    }
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({}));
    s.ok_past_notes("catalog/setServers", json!({"servers": servers}));
    let start = Instant::now();
    while !s.ok_past_notes("catalog/status", json!({}))["servers"].as_array().unwrap().iter().all(|x| x["state"] == "ready") {
        assert!(start.elapsed() < Duration::from_secs(30), "the fixture servers never got ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    assert!(synced["registered"].as_array().unwrap().len() >= 141, "{synced}");
    s
}

fn plan(s: &mut Sidecar, extra: Value) -> Value {
    let mut p = json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o", "include": ["deferred"]});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    s.ok_past_notes("exposition/plan", p)
}

/// The tools the query placed inline, by name.
fn by_query(plan: &Value) -> Vec<String> {
    let mut names: Vec<String> = plan["placements"].as_object().unwrap().iter().filter(|(_, p)| p["reason"] == "query").map(|(n, _)| n.clone()).collect();
    names.sort();
    names
}

fn inline(plan: &Value) -> Vec<&str> {
    plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

fn deferred(plan: &Value) -> Vec<&str> {
    plan["deferred"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[test]
fn the_tools_that_match_the_users_message_go_inline_and_the_rest_stay_deferred() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sidecar(dir.path());
    let plain = plan(&mut s, json!({}));
    assert_eq!(plain["decision"]["deferred"], true, "141 tools at 128k are deferred: {}", plain["decision"]);
    assert!(by_query(&plain).is_empty());
    let branch = "mcp__github__createBranch";
    assert!(deferred(&plain).contains(&branch));

    let asked = plan(&mut s, json!({"query": "Please open a new branch called release-2 off main in my repository"}));
    let picked = by_query(&asked);
    assert!(picked.contains(&branch.to_string()), "{picked:?}");
    assert!(!picked.is_empty() && picked.len() <= 5, "at most queryTools (5) by default: {picked:?}");
    for name in &picked {
        let p = &asked["placements"][name];
        assert_eq!(p["deferred"], false, "{p}");
        assert!(p["note"].as_str().unwrap().starts_with("match "), "{p}");
        assert!(inline(&asked).contains(&name.as_str()) && !deferred(&asked).contains(&name.as_str()), "{name}");
    }
    // The rest stays behind the meta-tools, and the plan still counts every deferred tool.
    assert!(inline(&asked).contains(&"tool_search"));
    assert_eq!(deferred(&asked).len() + picked.len(), deferred(&plain).len());
    assert!(asked["tokens"]["inline"].as_u64() > plain["tokens"]["inline"].as_u64());

    // The same query gives the same plan (and `ifNoneMatch` says so); another query another.
    let again = plan(&mut s, json!({"query": "Please open a new branch called release-2 off main in my repository"}));
    assert_eq!(again["planHash"], asked["planHash"]);
    assert_eq!(by_query(&again), picked);
    let same = plan(&mut s, json!({"query": "Please open a new branch called release-2 off main in my repository", "ifNoneMatch": asked["planHash"]}));
    assert_eq!(same["unchanged"], true, "{same}");
    let notion = plan(&mut s, json!({"query": "add a comment to the Notion page about the launch"}));
    assert!(by_query(&notion).contains(&"mcp__notion__apiCreateAComment".to_string()), "{:?}", by_query(&notion));
    assert_ne!(notion["planHash"], asked["planHash"]);

    // queryTools bounds how many: 1 is one, 0 is none, over 50 is refused by name.
    let one = plan(&mut s, json!({"query": "create a branch", "queryTools": 1}));
    assert_eq!(by_query(&one), [branch], "{:?}", by_query(&one));
    let none = plan(&mut s, json!({"query": "create a branch", "queryTools": 0}));
    assert!(by_query(&none).is_empty());
    assert_eq!(none["planHash"], plain["planHash"], "queryTools 0 is the plan without a query");
    let e = s.err("exposition/plan", json!({"query": "create a branch", "queryTools": 51}));
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["field"], "queryTools", "{e}");
    // A blank query is no query.
    let blank = plan(&mut s, json!({"query": "   "}));
    assert_eq!(blank["planHash"], plain["planHash"]);
    s.shutdown();
}

#[test]
fn a_query_in_chinese_finds_its_tool_too_and_an_undeferred_plan_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sidecar(dir.path());
    let zh = plan(&mut s, json!({"query": "帮我在 GitHub 仓库里新建一个分支"}));
    assert!(by_query(&zh).contains(&"mcp__github__createBranch".to_string()), "{:?}", by_query(&zh));
    // Nothing deferred (a window so large the pool is under the threshold): nothing to move.
    let big = plan(&mut s, json!({"query": "create a branch", "contextWindow": 100_000_000}));
    assert_eq!(big["decision"]["deferred"], false, "{}", big["decision"]);
    assert!(by_query(&big).is_empty());
    s.shutdown();
}
