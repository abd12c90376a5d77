//! Per-request MCP scope (issue 52), over the real binary and the fixture MCP server: a synced
//! MCP entry is active only when `scope.mcpToolIds` names it, syncs of different selections do
//! not evict each other, a call under a plan reaches only what its scope made active, and
//! `registry/resolveMcpToolIds` without `mcpMode` resolves the linked servers only. The seed's
//! own cases (Cherry Studio's `mcp/__tests__/sync.test.ts` and
//! `resolveAssistantMcpTools.test.ts`) are named where they are translated.
mod support;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Instant;
use support::*;

fn server(id: &str, args: &[&str]) -> Value {
    json!({"id": id, "name": id, "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(), "args": args}})
}

fn start() -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 5000, "listMs": 5000}, "codeMode": {}}));
    s
}

/// Sets the servers and waits until each has its list.
fn servers(s: &mut Sidecar, list: &[Value]) {
    s.ok_past_notes("catalog/setServers", json!({"servers": list}));
    let start = Instant::now();
    loop {
        let st = s.ok_past_notes("catalog/status", json!({}));
        if st["servers"].as_array().unwrap().iter().all(|x| x["state"] == "ready") {
            return;
        }
        assert!(start.elapsed() < TIMEOUT, "servers never ready: {st}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The wire name of the fixture's tool `tool` on server `id`.
fn wire(id: &str, tool: &str) -> String {
    format!("mcp__{id}__{}", camel(tool))
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

/// The MCP entries of the registry, by name.
fn mcp_entries(s: &mut Sidecar) -> Vec<String> {
    let listed = s.ok_past_notes("registry/list", json!({}));
    listed["entries"].as_array().unwrap().iter().filter(|e| e["source"]["kind"] == "mcp").map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

/// The MCP entries a scope makes active.
fn active(s: &mut Sidecar, scope: Value) -> Vec<String> {
    let r = s.ok_past_notes("registry/selectActive", json!({"scope": scope}));
    r["entries"].as_array().unwrap().iter().filter(|e| e["source"]["kind"] == "mcp").map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

/// The host answers nothing here: every tool is an MCP tool.
fn no_host(_: &mut Sidecar, m: &Value) {
    assert!(m.get("id").is_none() || m.get("method").is_none(), "the host should be asked nothing: {m}");
}

fn text(res: &Value) -> String {
    res["output"]["value"].as_str().map_or_else(|| res["output"]["value"].to_string(), str::to_string)
}

fn sync(s: &mut Sidecar, selected: &[String]) -> Value {
    s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": selected}))
}

#[test]
fn a_synced_entry_applies_only_when_its_id_is_in_scope() {
    // sync.test.ts: "synced entry only applies when its id is in scope.mcpToolIds".
    let mut s = start();
    servers(&mut s, &[server("gh", &["--tools", "2"])]);
    s.ok_past_notes("registry/syncMcp", json!({}));
    // The host's own entry in the server's namespace follows its own `applies` only.
    s.ok_past_notes("registry/register", json!({"entries": [{"name": "gh_note", "namespace": "mcp:gh", "description": "d", "inputSchema": {"type": "object"}}]}));
    let (search, fork) = (wire("gh", "tool_0"), wire("gh", "tool_1"));
    assert_eq!(active(&mut s, json!({"mcpToolIds": [search]})), [search.clone()]);
    assert_eq!(active(&mut s, json!({"mcpToolIds": [fork]})), [fork.clone()]);
    assert!(active(&mut s, json!({"mcpToolIds": []})).is_empty());
    // Absent: every synced entry, as before.
    assert_eq!(active(&mut s, json!({})).len(), 4, "echo, stats and the two tools");
    let all = s.ok_past_notes("registry/selectActive", json!({"scope": {"mcpToolIds": []}}));
    assert!(all["entries"].as_array().unwrap().iter().any(|e| e["name"] == "gh_note"), "{all}");
    s.shutdown();
}

#[test]
fn selections_add_and_evict_only_what_is_gone() {
    let mut s = start();
    servers(&mut s, &[server("gh", &["--tools", "2"]), server("jira", &["--tools", "1"]), server("slack", &["--tools", "1"])]);
    // "empty selection → no servers synced": nothing registered.
    assert_eq!(sync(&mut s, &[]), json!({"registered": [], "evicted": []}));
    // "scans every active server cache and registers only the selected id".
    let t = wire("gh", "tool_0");
    assert_eq!(sync(&mut s, std::slice::from_ref(&t)), json!({"registered": [t], "evicted": []}));
    assert_eq!(mcp_entries(&mut s), [t.clone()]);
    // "keeps tools selected by overlapping requests for the same server": sent together.
    let (search, fork) = (wire("gh", "tool_0"), wire("gh", "tool_1"));
    let a = send_req(&mut s, "registry/syncMcp", json!({"selectedToolIds": [search]}));
    let b = send_req(&mut s, "registry/syncMcp", json!({"selectedToolIds": [fork]}));
    let r = pump(&mut s, &[a, b], &mut no_host);
    assert_eq!(r[0]["result"]["evicted"], json!([]), "{r:?}");
    assert_eq!(r[1]["result"], json!({"registered": [fork], "evicted": []}), "{r:?}");
    assert_eq!(mcp_entries(&mut s), [search.clone(), fork.clone()]);
    // "keeps entries from active-but-unselected servers untouched".
    let jira = wire("jira", "tool_0");
    sync(&mut s, std::slice::from_ref(&jira));
    sync(&mut s, std::slice::from_ref(&search));
    assert!(mcp_entries(&mut s).contains(&jira));
    // "still evicts entries from servers that are no longer active", whatever the selection.
    servers(&mut s, &[server("gh", &["--tools", "2"]), server("slack", &["--tools", "1"])]);
    assert_eq!(sync(&mut s, std::slice::from_ref(&search)), json!({"registered": [], "evicted": [jira]}));
    // A tool the host disabled is gone too: evicted by a sync of another selection.
    let mut gh = server("gh", &["--tools", "2"]);
    gh["disabledTools"] = json!(["tool_1"]);
    servers(&mut s, &[gh, server("slack", &["--tools", "1"])]);
    assert_eq!(sync(&mut s, &[wire("slack", "tool_0")]), json!({"registered": [wire("slack", "tool_0")], "evicted": [fork]}));
    s.shutdown();
}

#[test]
fn a_confirmed_list_without_the_tool_evicts_it_under_any_selection() {
    let mut s = start();
    // The fixture drops tool_0 (and adds tool_added) after 300 ms, and says so (list_changed).
    servers(&mut s, &[server("gh", &["--tools", "2", "--change-after-ms", "300"])]);
    let (t0, t1) = (wire("gh", "tool_0"), wire("gh", "tool_1"));
    sync(&mut s, &[t0.clone(), t1.clone()]);
    let start = Instant::now();
    loop {
        let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "gh"}));
        if !list["tools"].as_array().unwrap().iter().any(|t| t["name"] == "tool_0") {
            break;
        }
        assert!(start.elapsed() < TIMEOUT, "the list never changed: {list}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(sync(&mut s, std::slice::from_ref(&t1)), json!({"registered": [], "evicted": [t0]}));
    assert_eq!(mcp_entries(&mut s), [t1]);
    s.shutdown();
}

#[test]
fn resolve_without_a_mode_takes_the_linked_servers_only() {
    // resolveAssistantMcpTools.test.ts: a mode-less assistant is manual; explicit auto resolves
    // every active server; explicit disabled resolves nothing.
    let mut s = start();
    servers(&mut s, &[server("fs", &["--tools", "1"]), server("other", &["--tools", "1"])]);
    let resolve = |s: &mut Sidecar, assistant: Value| strs(&s.ok_past_notes("registry/resolveMcpToolIds", json!({"assistant": assistant}))["toolIds"]);
    let fs: BTreeSet<String> = ["echo", "stats", "tool_0"].iter().map(|t| wire("fs", t)).collect();
    assert!(resolve(&mut s, json!({"mcpServerIds": []})).is_empty(), "defaults a mode-less assistant to manual");
    assert!(resolve(&mut s, json!({})).is_empty());
    assert!(strs(&s.ok_past_notes("registry/resolveMcpToolIds", json!({}))["toolIds"]).is_empty(), "no assistant at all");
    assert_eq!(resolve(&mut s, json!({"mcpServerIds": ["fs"]})).into_iter().collect::<BTreeSet<_>>(), fs, "the linked server only");
    assert_eq!(resolve(&mut s, json!({"mcpMode": "auto", "mcpServerIds": []})).len(), 6, "explicit auto: every enabled server");
    assert!(resolve(&mut s, json!({"mcpMode": "disabled", "mcpServerIds": ["fs"]})).is_empty());
    s.shutdown();
}

#[test]
fn a_call_under_a_plan_reaches_only_what_its_scope_made_active() {
    let mut s = start();
    servers(&mut s, &[server("gh", &["--tools", "2"])]);
    s.ok_past_notes("registry/syncMcp", json!({}));
    let (mine, theirs) = (wire("gh", "tool_0"), wire("gh", "tool_1"));
    let plan = s.ok_past_notes("exposition/plan", json!({"scope": {"mcpToolIds": [mine]}, "codeMode": "sandbox"}));
    let names: Vec<&str> = plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&mine.as_str()) && !names.contains(&theirs.as_str()), "{names:?}");
    let plan_id = plan["planId"].clone();
    let invoke = |s: &mut Sidecar, name: &str, plan_id: Option<&Value>| {
        let mut p = json!({"name": name, "arguments": {}, "callId": format!("c-{name}")});
        if let Some(id) = plan_id {
            p["planId"] = id.clone();
        }
        let r = call(s, "tool/invoke", p, &mut no_host);
        r["result"].clone()
    };
    let own = invoke(&mut s, &mine, Some(&plan_id));
    assert_eq!((own["isError"].clone(), text(&own)), (json!(false), "tool_0 called with {}".to_string()));
    let other = invoke(&mut s, &theirs, Some(&plan_id));
    assert_eq!(other["isError"], true, "{other}");
    assert!(text(&other).contains("not available in this request"), "{other}");
    // With no plan, as before: every registered tool.
    let free = invoke(&mut s, &theirs, None);
    assert_eq!(free["isError"], false, "{free}");
    // Code mode under the plan: the other tool is not the script's either.
    let code = format!("return await tools.call({theirs:?}, {{}});");
    let r = call(&mut s, "tool/invoke", json!({"name": "tool_exec", "arguments": {"code": code}, "planId": plan_id, "callId": "x"}), &mut no_host);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text(&r["result"]).contains("not available in this request"), "{r}");
    s.shutdown();
}

/// Six tools per conversation, padded so their plans defer them behind the meta-tools.
const PADDED: [&str; 4] = ["--tools", "12", "--pad-bytes", "1500"];

fn halves() -> (Vec<String>, Vec<String>) {
    let names: Vec<String> = (0..12).map(|i| wire("gh", &format!("tool_{i}"))).collect();
    (names[..6].to_vec(), names[6..].to_vec())
}

fn plan_params(ids: &[String], extra: Value) -> Value {
    let mut p = json!({"scope": {"mcpToolIds": ids}, "contextWindow": 8000, "include": ["deferred"]});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    p
}

/// The MCP tools a plan placed (inline or deferred), and those it carries inline.
fn placed(plan: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let all = plan["placements"].as_object().unwrap().keys().filter(|k| k.starts_with("mcp__")).cloned().collect();
    let inline = plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).filter(|n| n.starts_with("mcp__")).collect();
    (all, inline)
}

#[test]
fn usage_and_query_picks_come_from_the_scope() {
    let mut s = start();
    servers(&mut s, &[server("gh", &PADDED)]);
    let (a, b) = halves();
    sync(&mut s, &a);
    sync(&mut s, &b);
    // B's conversation calls one of its tools often, counted under a key both share.
    let pb = s.ok_past_notes("exposition/plan", plan_params(&b, json!({"usageKey": "shared"})));
    assert_eq!(pb["decision"]["deferred"], true, "{}", pb["decision"]);
    for i in 0..5 {
        let r = call(&mut s, "tool/invoke", json!({"name": b[1], "arguments": {}, "planId": pb["planId"], "callId": format!("u{i}")}), &mut no_host);
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    // In B's next plan it is back inline for its use, and a query brings another of B's.
    let pb = s.ok_past_notes("exposition/plan", plan_params(&b, json!({"usageKey": "shared", "usage": {"budgetTokens": 4000}, "query": "Generated tool number 9"})));
    assert_eq!(pb["placements"][&b[1]]["reason"], "usage", "{}", pb["placements"]);
    assert_eq!(pb["placements"][&b[3]]["reason"], "query", "{}", pb["placements"]);
    // A's plan with the same key and the same query: none of B's tools, by usage or query.
    let pa = s.ok_past_notes("exposition/plan", plan_params(&a, json!({"usageKey": "shared", "usage": {"budgetTokens": 4000}, "query": "Generated tool number 9"})));
    let (all, _) = placed(&pa);
    assert_eq!(all, a.iter().cloned().collect::<BTreeSet<_>>(), "{}", pa["placements"]);
    s.shutdown();
}

#[test]
fn two_conversations_each_plan_search_and_invoke_their_own_tools_while_syncs_interleave() {
    let mut s = start();
    servers(&mut s, &[server("gh", &PADDED)]);
    let (a, b) = halves();
    let own = |ids: &[String]| ids.iter().cloned().collect::<BTreeSet<String>>();
    for round in 0..100 {
        // Both conversations sync their selection (in either order) and plan at once.
        let (first, second) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let ids = [
            send_req(&mut s, "registry/syncMcp", json!({"selectedToolIds": first})),
            send_req(&mut s, "exposition/plan", plan_params(&a, json!({}))),
            send_req(&mut s, "registry/syncMcp", json!({"selectedToolIds": second})),
            send_req(&mut s, "exposition/plan", plan_params(&b, json!({}))),
        ];
        let r = pump(&mut s, &ids, &mut no_host);
        for sync in [&r[0], &r[2]] {
            assert_eq!(sync["result"]["evicted"], json!([]), "round {round}: a sync evicted another's tools: {sync}");
        }
        let (pa, pb) = (&r[1]["result"], &r[3]["result"]);
        // Each plan holds its own six tools, all deferred, and none of the other's.
        for (plan, ids, who) in [(pa, &a, "A"), (pb, &b, "B")] {
            assert_eq!(plan["decision"]["deferred"], true, "round {round}, {who}: {}", plan["decision"]);
            let (all, inline) = placed(plan);
            assert_eq!(all, own(ids), "round {round}: plan {who} placed {all:?}");
            assert!(inline.is_empty(), "round {round}: {inline:?}");
        }
        // Each searches and invokes, while the syncs go on.
        let (i, j) = (round % 6, (round + 1) % 6);
        let search = |plan: &Value| json!({"name": "tool_search", "arguments": {"query": "Generated tool number", "limit": 50}, "planId": plan["planId"], "callId": format!("s{round}")});
        let invoke = |plan: &Value, name: &str, tag: &str| json!({"name": name, "arguments": {"x": round}, "planId": plan["planId"], "callId": format!("{tag}{round}")});
        let via_meta = |plan: &Value, name: &str| json!({"name": "tool_invoke", "arguments": {"name": name, "params": {}}, "planId": plan["planId"], "callId": format!("m{round}")});
        let ids = [
            send_req(&mut s, "tool/invoke", search(pa)),
            send_req(&mut s, "registry/syncMcp", json!({"selectedToolIds": second})),
            send_req(&mut s, "tool/invoke", search(pb)),
            send_req(&mut s, "tool/invoke", invoke(pa, &a[i], "ao")),
            send_req(&mut s, "tool/invoke", invoke(pa, &b[j], "ax")),
            send_req(&mut s, "registry/syncMcp", json!({"selectedToolIds": first})),
            send_req(&mut s, "tool/invoke", invoke(pb, &b[i], "bo")),
            send_req(&mut s, "tool/invoke", invoke(pb, &a[j], "bx")),
            send_req(&mut s, "tool/invoke", via_meta(pa, &b[j])),
            send_req(&mut s, "tool/invoke", via_meta(pb, &a[j])),
        ];
        let r = pump(&mut s, &ids, &mut no_host);
        let res = |k: usize| r[k].get("result").unwrap_or_else(|| panic!("round {round}: {}", r[k])).clone();
        for (k, ids, who) in [(0, &a, "A"), (2, &b, "B")] {
            let hits: BTreeSet<String> = res(k)["raw"]["hits"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap().to_string()).collect();
            assert_eq!(hits, own(ids), "round {round}: {who}'s search found {hits:?}");
        }
        for (k, tool) in [(3, &a[i]), (6, &b[i])] {
            let tool_name = format!("tool_{}", if k == 3 { i } else { i + 6 });
            assert_eq!((res(k)["isError"].clone(), text(&res(k))), (json!(false), format!("{tool_name} called with {{\"x\":{round}}}")), "round {round}: {tool}");
        }
        for k in [4, 7, 8, 9] {
            assert_eq!(res(k)["isError"], true, "round {round}: another's tool ran: {}", res(k));
            assert!(text(&res(k)).contains("not available in this request"), "round {round}: {}", res(k));
        }
        for k in [1, 5] {
            assert_eq!(res(k)["evicted"], json!([]), "round {round}");
        }
    }
    s.shutdown();
}
