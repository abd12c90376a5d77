//! Usage-aware plans over the real binary (issue 28): calls counted per usage key, decay,
//! bounds, reset, persistence across restarts, arguments never stored, the ledger reason, and
//! a session's inline set that does not move while usage changes.
mod support;
use serde_json::{json, Value};
use support::*;

/// Plain English of about `n` characters.
fn prose(n: usize) -> String {
    "Looks up records in the customer database by any field and returns the matching rows with their history. "
        .chars()
        .cycle()
        .take(n)
        .collect()
}

/// `n` host tools `crm_00..`, each ~600 tokens: together over 10% of 32k, so deferred.
fn entries(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({"name": format!("crm_{i:02}"), "namespace": "crm", "description": prose(3_000),
                   "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}})
        })
        .collect()
}

fn start(cache_dir: Option<&std::path::Path>, n: usize) -> Sidecar {
    let mut s = Sidecar::spawn();
    let mut init = json!({"clientInfo": {"name": "usage-test"}, "capabilities": {"hostTools": true}});
    if let Some(dir) = cache_dir {
        init["cacheDir"] = json!(dir);
    }
    s.ok("initialize", init);
    s.notify("initialized", json!({}));
    s.ok("registry/register", json!({"entries": entries(n)}));
    s
}

fn scope() -> Value {
    json!({"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []})
}

fn plan(s: &mut Sidecar, extra: Value) -> Value {
    let mut p = json!({"scope": scope(), "contextWindow": 32000, "model": "gpt-4o"});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    s.ok("exposition/plan", p)
}

fn names(plan: &Value) -> Vec<String> {
    plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

fn usage_names(plan: &Value) -> Vec<String> {
    let p = plan["placements"].as_object().unwrap();
    p.iter().filter(|(_, v)| v["reason"] == "usage").map(|(k, _)| k.clone()).collect()
}

/// `tool/invoke` of `name` directly, under `plan_id`, the host running it.
fn invoke(s: &mut Sidecar, name: &str, plan_id: &str, args: Value) -> Value {
    let mut ran = Vec::new();
    let r = call(s, "tool/invoke", json!({"name": name, "arguments": args, "planId": plan_id}), &mut runner(&mut ran));
    assert!(r.get("result").is_some(), "{r}");
    r["result"].clone()
}

fn meta(s: &mut Sidecar, tool: &str, plan_id: &str, args: Value) -> Value {
    invoke(s, tool, plan_id, args)
}

fn listed(s: &mut Sidecar, key: &str) -> Vec<Value> {
    let l = s.ok("usage/list", json!({"usageKey": key}));
    l["keys"][0]["tools"].as_array().cloned().unwrap_or_default()
}

/// Every file's bytes under `dir`, one after another.
fn on_disk(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = e.path();
        if path.is_dir() {
            out.extend(on_disk(&path));
        } else {
            out.extend(std::fs::read(&path).unwrap_or_default());
        }
    }
    out
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("toolreg-usage-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_most_called_deferred_tools_go_inline_with_their_reason() {
    let mut s = start(None, 8);
    let p0 = plan(&mut s, json!({"usageKey": "u1"}));
    assert_eq!(p0["decision"]["gate"], "passed");
    assert!(!names(&p0).iter().any(|n| n.starts_with("crm_")), "nothing counted yet: {:?}", names(&p0));
    let id = p0["planId"].as_str().unwrap().to_string();
    // crm_03: three direct calls; crm_05: found by search, inspected, invoked twice.
    for _ in 0..3 {
        invoke(&mut s, "crm_03", &id, json!({"query": "x"}));
    }
    let found = meta(&mut s, "tool_search", &id, json!({"query": "crm_05"}));
    assert!(found["output"].to_string().contains("crm_05"), "{found}");
    meta(&mut s, "tool_inspect", &id, json!({"name": "crm_05"}));
    for _ in 0..2 {
        let r = meta(&mut s, "tool_invoke", &id, json!({"name": "crm_05", "params": {"query": "y"}}));
        assert_eq!(r["isError"], false, "{r}");
    }
    // crm_07 once only: under MIN_COUNT, stays deferred.
    invoke(&mut s, "crm_07", &id, json!({}));

    let tools = listed(&mut s, "u1");
    let row = |n: &str| tools.iter().find(|t| t["name"] == n).cloned().unwrap_or_else(|| panic!("{n} in {tools:?}"));
    assert_eq!((row("crm_03")["callsInWindow"].clone(), row("crm_03")["searchedInWindow"].clone()), (json!(3), json!(0)));
    assert_eq!((row("crm_05")["callsInWindow"].clone(), row("crm_05")["searchedInWindow"].clone()), (json!(2), json!(2)));
    assert_eq!(tools[0]["name"], "crm_03", "most used first: {tools:?}");
    assert!(row("crm_03")["lastUsed"].as_str().unwrap().ends_with('Z'));
    assert!(!tools.iter().any(|t| t["name"] == "tool_search" || t["name"] == "tool_invoke"), "meta-tools are not counted: {tools:?}");

    let p1 = plan(&mut s, json!({"usageKey": "u1", "usage": {}}));
    assert_eq!(usage_names(&p1), ["crm_03", "crm_05"]);
    let place = &p1["placements"]["crm_03"];
    assert_eq!((place["reason"].clone(), place["deferred"].clone()), (json!("usage"), json!(false)));
    assert_eq!(place["note"], "called 3 times in 7 days");
    assert_eq!(p1["placements"]["crm_05"]["note"], "called 2 times in 7 days (2 after a search)");
    assert!(names(&p1).contains(&"crm_03".to_string()) && names(&p1).contains(&"tool_search".to_string()));
    assert!(p1["tokens"]["inline"].as_u64() > p0["tokens"]["inline"].as_u64());
    // maxTools and the budget bound it; another key sees none of it; no `usage`, no change.
    assert_eq!(usage_names(&plan(&mut s, json!({"usageKey": "u1", "usage": {"maxTools": 1}}))), ["crm_03"]);
    assert!(usage_names(&plan(&mut s, json!({"usageKey": "u1", "usage": {"budgetTokens": 100}}))).is_empty());
    assert!(usage_names(&plan(&mut s, json!({"usageKey": "other", "usage": {}}))).is_empty());
    assert_eq!(plan(&mut s, json!({"usageKey": "u1"}))["planHash"], p0["planHash"]);
    // The tool is inline now: a later call through it is direct.
    let p1_id = p1["planId"].as_str().unwrap().to_string();
    let r = meta(&mut s, "tool_invoke", &p1_id, json!({"name": "crm_03", "params": {}}));
    assert!(r["output"].to_string().contains("call it directly"), "{r}");
    s.shutdown();
}

#[test]
fn a_session_keeps_its_inline_set_while_usage_changes() {
    let mut s = start(None, 8);
    let id = plan(&mut s, json!({"usageKey": "u"}))["planId"].as_str().unwrap().to_string();
    for _ in 0..3 {
        invoke(&mut s, "crm_01", &id, json!({}));
    }
    let first = plan(&mut s, json!({"usageKey": "u", "usage": {"maxTools": 1}, "session": "conv-1"}));
    assert_eq!(usage_names(&first), ["crm_01"]);
    // Meanwhile crm_06 becomes the most used tool.
    for _ in 0..6 {
        invoke(&mut s, "crm_06", &id, json!({}));
    }
    let later = plan(&mut s, json!({"usageKey": "u", "usage": {"maxTools": 1}, "session": "conv-1"}));
    assert_eq!(later["tools"], first["tools"], "the tool list did not move mid-session");
    assert_eq!(later["placements"], first["placements"]);
    assert_eq!(later["planHash"], first["planHash"]);
    let again = plan(&mut s, json!({"usageKey": "u", "usage": {"maxTools": 1}, "session": "conv-1", "ifNoneMatch": first["planHash"]}));
    assert_eq!(again["unchanged"], true, "{again}");
    // Native renderings too: same request bytes within the session.
    let a1 = plan(&mut s, json!({"usageKey": "u", "usage": {"maxTools": 1}, "session": "conv-1", "render": "anthropic"}));
    let a2 = plan(&mut s, json!({"usageKey": "u", "usage": {"maxTools": 1}, "session": "conv-1", "render": "anthropic"}));
    assert_eq!(a1["request"], a2["request"]);
    // The next session learns.
    let next = plan(&mut s, json!({"usageKey": "u", "usage": {"maxTools": 1}, "session": "conv-2"}));
    assert_eq!(usage_names(&next), ["crm_06"]);
    assert_eq!(next["placements"]["crm_06"]["note"], "called 6 times in 7 days");
    s.shutdown();
}

#[test]
fn native_renderings_place_usage_tools_non_deferred() {
    let mut s = start(None, 8);
    let id = plan(&mut s, json!({"usageKey": "n"}))["planId"].as_str().unwrap().to_string();
    for _ in 0..2 {
        invoke(&mut s, "crm_02", &id, json!({}));
    }
    let p = plan(&mut s, json!({"usageKey": "n", "usage": {}, "render": "anthropic"}));
    let tools = p["request"]["tools"].as_array().unwrap();
    let t = tools.iter().find(|t| t["name"] == "crm_02").expect("crm_02 in the request");
    assert!(t.get("defer_loading").is_none(), "{t}");
    let other = tools.iter().find(|t| t["name"] == "crm_04").expect("crm_04 deferred in the request");
    assert_eq!(other["defer_loading"], true);
    assert_eq!(p["placements"]["crm_02"]["reason"], "usage");
    s.shutdown();
}

#[test]
fn usage_persists_across_restarts_without_arguments_or_results_and_resets() {
    let dir = temp_dir("persist");
    let mut s = start(Some(&dir), 8);
    // No usageKey: counted under the key of the plan's scope.
    let p = plan(&mut s, json!({}));
    let id = p["planId"].as_str().unwrap().to_string();
    for _ in 0..2 {
        let r = invoke(&mut s, "crm_04", &id, json!({"query": "hunter2-secret-argument"}));
        assert!(r["output"].to_string().contains("ran crm_04"));
    }
    invoke(&mut s, "crm_01", "no-such-plan", json!({}));
    let all = s.ok("usage/list", json!({}));
    let keys: Vec<&str> = all["keys"].as_array().unwrap().iter().map(|k| k["usageKey"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 2, "{all}");
    assert!(keys.contains(&"default") && keys.iter().any(|k| k.starts_with("scope-")), "{keys:?}");
    let scope_key = keys.iter().find(|k| k.starts_with("scope-")).unwrap().to_string();
    s.shutdown();

    // Names and counts only: no argument or result anywhere in the cacheDir.
    let disk = on_disk(&dir);
    for never in ["hunter2", "secret", "query", "ran crm"] {
        assert!(!disk.windows(never.len()).any(|w| w == never.as_bytes()), "{never:?} in the cacheDir");
    }

    let mut s = start(Some(&dir), 8);
    assert_eq!(listed(&mut s, &scope_key)[0]["callsInWindow"], 2, "counts survive a restart");
    assert_eq!(usage_names(&plan(&mut s, json!({"usage": {}}))), ["crm_04"]);
    assert_eq!(s.ok("usage/reset", json!({"usageKey": scope_key}))["cleared"], json!([scope_key]));
    assert!(listed(&mut s, &scope_key).is_empty());
    assert!(usage_names(&plan(&mut s, json!({"usage": {}}))).is_empty());
    assert_eq!(s.ok("usage/list", json!({}))["keys"].as_array().unwrap().len(), 1, "the default key stays");
    assert_eq!(s.ok("usage/reset", json!({}))["cleared"], json!(["default"]));
    s.shutdown();

    let mut s = start(Some(&dir), 8);
    assert_eq!(s.ok("usage/list", json!({}))["keys"], json!([]), "the reset was persisted");
    s.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn old_calls_decay_with_a_seven_day_half_life() {
    let dir = temp_dir("decay");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    // 13 days, not 14: 8 calls two weeks old weigh exactly `usage::MIN_COUNT` (2), and a second
    // passing before the plan (a slow start under load) would tip them under it.
    let (thirteen_days, four_weeks) = (now - 13 * 86_400, now - 28 * 86_400);
    let weight = |days: f64| 8.0 * 0.5f64.powf(days / 7.0);
    let tool = |count: f64, at: i64| json!({"count": count, "at": at, "lastUsed": at, "days": []});
    let file = json!({"version": 1, "keys": {"d": {"lastUsed": thirteen_days, "tools": {
        "crm_01": tool(8.0, thirteen_days), "crm_02": tool(8.0, four_weeks)
    }}}});
    // The file of a toolreg before issue 63: imported at the first start.
    std::fs::write(dir.join("usage.json"), file.to_string()).unwrap();
    let mut s = start(Some(&dir), 8);
    let tools = listed(&mut s, "d");
    let count = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap()["count"].as_f64().unwrap();
    assert!((count("crm_01") - weight(13.0)).abs() < 0.01, "8 calls 13 days old weigh 2.2: {tools:?}");
    assert!((count("crm_02") - weight(28.0)).abs() < 0.01, "four weeks old weigh 0.5: {tools:?}");
    assert_eq!(tools[0]["callsInWindow"], 0);
    let p = plan(&mut s, json!({"usageKey": "d", "usage": {}}));
    assert_eq!(usage_names(&p), ["crm_01"], "crm_02 weighs too little now");
    assert!(p["placements"]["crm_01"]["note"].as_str().unwrap().starts_with("called often before"), "{}", p["placements"]);
    s.shutdown();

    let _ = std::fs::remove_dir_all(&dir);

    // A corrupt old file: nothing imported, the sidecar starts afresh and answers.
    let dir = temp_dir("corrupt");
    std::fs::write(dir.join("usage.json"), b"{\"version\": 1, \"keys\": [garbage").unwrap();
    let mut s = start(Some(&dir), 8);
    assert_eq!(s.ok("usage/list", json!({}))["keys"], json!([]));
    s.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_is_bounded_per_key() {
    let mut s = start(None, 70);
    let id = plan(&mut s, json!({"usageKey": "b"}))["planId"].as_str().unwrap().to_string();
    invoke(&mut s, "crm_00", &id, json!({}));
    invoke(&mut s, "crm_00", &id, json!({}));
    for i in 1..70 {
        invoke(&mut s, &format!("crm_{i:02}"), &id, json!({}));
    }
    let tools = listed(&mut s, "b");
    assert_eq!(tools.len(), 64, "MAX_TOOLS per key");
    assert_eq!(tools[0]["name"], "crm_00", "the most used stays");
    s.shutdown();
}

#[test]
fn a_tool_exec_scripts_calls_count_as_the_tools_they_ran() {
    let mut s = start(None, 8);
    let p = plan(&mut s, json!({"usageKey": "x", "codeMode": "sandbox"}));
    let id = p["planId"].as_str().unwrap().to_string();
    // Two calls of a deferred tool and one of another; the unknown name never ran.
    let code = "await tools.call('crm_02', {query: 'a'}); await tools.call('crm_02', {}); \
                try { await tools.call('crm_99', {}); } catch (e) {} return await tools.call('crm_06', {});";
    let r = invoke(&mut s, "tool_exec", &id, json!({"code": code}));
    assert_eq!(r["isError"], false, "{r}");
    let tools = listed(&mut s, "x");
    let calls: Vec<(&str, u64)> = tools.iter().map(|t| (t["name"].as_str().unwrap(), t["callsInWindow"].as_u64().unwrap())).collect();
    assert_eq!(calls, [("crm_02", 2), ("crm_06", 1)], "each tool the script ran, once per call; tool_exec itself is no tool");
    assert_eq!(usage_names(&plan(&mut s, json!({"usageKey": "x", "usage": {}}))), ["crm_02"]);
    s.shutdown();
}
