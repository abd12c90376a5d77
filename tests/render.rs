//! Issue 10 over the real binary: lean plans, `planHash` / `ifNoneMatch`, the budgeted
//! `<DEFERRED_TOOLS>` section, and the Anthropic / OpenAI renderings with their providers'
//! rules and the search tool's `providerOutput`; issue 27's `programmatic` (tools marked for the
//! provider's own code execution, never an approval-gated one). (The clients check the same
//! shapes against the official SDK types.)
mod support;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use support::*;

const SCOPE: &str = r#"{"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}"#;

fn scope() -> Value {
    serde_json::from_str(SCOPE).unwrap()
}

/// `n` deferred tools over `namespaces` namespaces, one approval-gated tool and one `never` tool.
fn catalog(n: usize, namespaces: usize) -> Vec<Value> {
    let mut v: Vec<Value> = (0..n)
        .map(|i| {
            let ns = format!("mcp:server{:04}", i % namespaces);
            json!({
                "name": format!("srv{:04}_tool{i:05}", i % namespaces), "namespace": ns, "defer": "always",
                "description": format!("Look up record {i} in the archive of server {} and return its fields.", i % namespaces),
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "Record id"}}, "required": ["id"]}
            })
        })
        .collect();
    v.push(json!({"name": "notes_delete", "namespace": "notes", "description": "Delete a note by id.", "approval": true, "defer": "always",
                  "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}));
    v.push(json!({"name": "notes_create", "namespace": "notes", "description": "Create a note.", "defer": "never",
                  "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}));
    v
}

fn sidecar(entries: Vec<Value>) -> Sidecar {
    let mut s = Sidecar::ready();
    for chunk in entries.chunks(2_000) {
        s.ok("registry/register", json!({"entries": chunk}));
    }
    s
}

fn plan(s: &mut Sidecar, extra: Value) -> Value {
    let mut p = json!({"scope": scope(), "contextWindow": 128000, "model": "gpt-4o"});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    s.ok("exposition/plan", p)
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn the_default_plan_is_lean_and_include_asks_for_the_rest() {
    let mut s = sidecar(catalog(300, 30));
    let lean = plan(&mut s, json!({}));
    assert!(lean.get("deferred").is_none(), "no deferred list by default");
    assert!(lean["tokens"].get("perTool").is_none(), "no per-tool counts by default");
    assert_eq!(keys(&lean["placements"]), ["notes_create", "notes_delete", "tool_inspect", "tool_invoke", "tool_result_read", "tool_search"].map(String::from).into());
    assert_eq!(lean["tokens"]["perNamespace"].as_object().unwrap().len(), 31, "namespaces stay");
    assert_eq!(lean["tokens"]["deferred"].as_u64().unwrap() > 0, true);

    let full = plan(&mut s, json!({"include": ["perTool", "deferred"]}));
    assert_eq!(full["deferred"].as_array().unwrap().len(), 300);
    assert_eq!(full["tokens"]["perTool"].as_object().unwrap().len(), 302);
    assert_eq!(full["placements"].as_object().unwrap().len(), 306, "300 deferred, 2 inline, 4 meta-tools");
    // Same figures either way; only the lists differ.
    assert_eq!(full["tokens"]["inline"], lean["tokens"]["inline"]);
    assert_eq!(full["tools"], lean["tools"]);
    let only_per_tool = plan(&mut s, json!({"include": ["perTool"]}));
    assert!(only_per_tool.get("deferred").is_none() && only_per_tool["tokens"]["perTool"].is_object());

    // O(inline + namespaces): ten times the pool, not ten times the answer.
    let lean_bytes = serde_json::to_vec(&lean).unwrap().len();
    let full_bytes = serde_json::to_vec(&full).unwrap().len();
    assert!(lean_bytes * 4 < full_bytes, "lean {lean_bytes} B, full {full_bytes} B");
    s.shutdown();

    let mut big = sidecar(catalog(3_000, 30));
    let big_lean = serde_json::to_vec(&plan(&mut big, json!({}))).unwrap().len();
    // Only the figures grow (more digits), not the lists.
    assert!(big_lean < lean_bytes + 1_000, "300 tools: {lean_bytes} B; 3,000 tools: {big_lean} B");
    big.shutdown();
}

#[test]
fn plan_hash_answers_unchanged_until_something_changes() {
    let mut s = sidecar(catalog(40, 4));
    let a = plan(&mut s, json!({}));
    let b = plan(&mut s, json!({}));
    let hash = a["planHash"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 32);
    assert_eq!(b["planHash"], a["planHash"], "same input, same hash");
    assert_ne!(b["planId"], a["planId"]);

    let same = plan(&mut s, json!({"ifNoneMatch": hash}));
    assert_eq!(keys(&same), ["planHash", "planId", "unchanged"].map(String::from).into(), "{same}");
    assert_eq!(same["unchanged"], true);
    assert_eq!(same["planHash"], a["planHash"]);
    // The new id is a usable plan over the same tools.
    let id = same["planId"].as_str().unwrap();
    assert_ne!(id, a["planId"].as_str().unwrap());
    let found = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "record 7 archive"}, "planId": id}));
    assert_eq!(found["isError"], false, "{found}");

    // Anything that changes the result changes the hash: the request's options, the catalog.
    for extra in [json!({"render": "anthropic"}), json!({"include": ["deferred"]}), json!({"contextWindow": 64000})] {
        let mut p = extra.clone();
        p["ifNoneMatch"] = json!(hash);
        let r = plan(&mut s, p);
        assert!(r.get("unchanged").is_none(), "{extra}");
        assert_ne!(r["planHash"], a["planHash"], "{extra}");
    }
    s.ok("registry/register", json!({"entries": [{"name": "late_tool", "namespace": "mcp:server0000", "defer": "always", "description": "Late.", "inputSchema": {"type": "object"}}]}));
    let after = plan(&mut s, json!({"ifNoneMatch": hash}));
    assert!(after.get("unchanged").is_none() && after["tools"].is_array());
    assert_ne!(after["planHash"], a["planHash"]);
    s.shutdown();
}

/// Native renderings share each pool's serialised definitions between plans (issue 25): the
/// shared text must follow a changed definition, and `planHash` with it.
#[test]
fn a_native_plan_follows_a_changed_deferred_definition() {
    let mut s = sidecar(catalog(40, 4));
    for (render, openai) in [("anthropic", false), ("openai", true)] {
        let a = plan(&mut s, json!({"render": render}));
        let hash = a["planHash"].as_str().unwrap().to_string();
        let same = plan(&mut s, json!({"render": render, "ifNoneMatch": hash}));
        assert_eq!(same["unchanged"], true, "{render}");
        let again = plan(&mut s, json!({"render": render}));
        assert_eq!(again["request"], a["request"], "{render}: same pool, same request");

        // Same name, namespace and description; only the schema differs.
        let mut changed = catalog(40, 4)[1].clone();
        changed["inputSchema"]["properties"]["id"]["description"] = json!(format!("Record id ({render} edit)"));
        s.ok("registry/register", json!({"entries": [changed]}));
        let b = plan(&mut s, json!({"render": render, "ifNoneMatch": hash}));
        assert!(b.get("unchanged").is_none(), "{render}: a changed definition is a changed plan");
        assert_ne!(b["planHash"], a["planHash"]);
        assert_eq!(deferred_names_of(&b["request"], openai), deferred_names_of(&a["request"], openai));
        let text = b["request"].to_string();
        assert!(text.contains(&format!("Record id ({render} edit)")), "{render}: the request carries the new schema");
    }
    s.shutdown();
}

/// Every rendering: the search tool and approval-gated tools are never deferred, no tool
/// carries `cache_control`, and the deferred set is the policy's.
fn deferred_names_of(request: &Value, openai: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for t in request["tools"].as_array().unwrap() {
        assert!(t.get("cache_control").is_none(), "{t}");
        if openai && t["type"] == "namespace" {
            assert_eq!(t.get("defer_loading"), None, "defer_loading goes on the members: {t}");
            let members = t["tools"].as_array().unwrap();
            assert!(!members.is_empty() && members.len() < 10, "fewer than 10 per namespace: {}", members.len());
            for m in members {
                assert_eq!(m["type"], "function");
                assert_eq!(m["defer_loading"], true);
                out.insert(m["name"].as_str().unwrap().to_string());
            }
        } else if t.get("defer_loading") == Some(&json!(true)) {
            out.insert(t["name"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn anthropic_rendering_follows_the_messages_api_rules() {
    let mut s = sidecar(catalog(60, 6));
    let portable = plan(&mut s, json!({"include": ["deferred"]}));
    let policy: BTreeSet<String> = portable["deferred"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(policy.len(), 60);

    let p = plan(&mut s, json!({"render": "anthropic"}));
    let req = &p["request"];
    assert_eq!(keys(req), ["system", "tools"].map(String::from).into());
    assert!(p.get("headers").is_none(), "tool search is GA: no beta header");
    assert_eq!(deferred_names_of(req, false), policy, "the same policy decides");
    let tools = req["tools"].as_array().unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let up_front: Vec<&Value> = tools.iter().filter(|t| t.get("defer_loading").is_none()).collect();
    assert!(!up_front.is_empty(), "at least one tool is not deferred");
    assert_eq!(up_front.iter().map(|t| t["name"].as_str().unwrap()).collect::<Vec<_>>(), ["notes_create", "notes_delete", "tool_result_read", "tool_search"]);
    for t in tools {
        assert_eq!(keys(t).iter().filter(|k| !["name", "description", "input_schema", "defer_loading"].contains(&k.as_str())).count(), 0, "{t}");
    }
    assert!(!names.contains("tool_inspect") && !names.contains("tool_invoke"), "no meta-tools but the search");
    assert!(req["system"].as_str().unwrap().contains("find it with tool_search"));
    assert_eq!(p["systemPrompt"], req["system"]);
    assert_eq!(p["tools"].as_array().unwrap().len(), 3, "tools: what the request carries up front besides the search (tool_result_read too)");
    // The model sees less up front than the portable meta-tools cost.
    assert!(p["tokens"]["inline"].as_u64().unwrap() < portable["tokens"]["inline"].as_u64().unwrap());
    assert_eq!(p["tokens"]["deferred"], portable["tokens"]["deferred"]);

    // Our ranker as the client search tool: tool_reference blocks naming request tools.
    let id = p["planId"].as_str().unwrap();
    let r = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "record 17 archive server 5"}, "callId": "toolu_01", "planId": id}));
    assert_eq!(r["isError"], false);
    let blocks = r["providerOutput"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert!(!blocks.is_empty());
    for b in blocks {
        assert_eq!(keys(b), ["tool_name", "type"].map(String::from).into());
        assert_eq!(b["type"], "tool_reference");
        assert!(policy.contains(b["tool_name"].as_str().unwrap()), "every referenced name is a deferred request tool: {b}");
    }
    // The blocks are the search's hits, best first.
    let hits: Vec<&Value> = r["raw"]["hits"].as_array().unwrap().iter().map(|h| &h["name"]).collect();
    assert_eq!(blocks.iter().map(|b| &b["tool_name"]).collect::<Vec<_>>(), hits);
    assert!(r["output"]["value"].as_str().unwrap().contains("call them directly"));
    // Nothing found: a text block, never an empty reference list.
    let none = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "zebra xylophone"}, "planId": id}));
    assert_eq!(none["providerOutput"][0]["type"], "text", "{none}");

    // The hosted BM25 search instead of ours.
    let hosted = plan(&mut s, json!({"render": "anthropic", "search": "provider"}));
    let search: Vec<&Value> = hosted["request"]["tools"].as_array().unwrap().iter().filter(|t| t.get("type").is_some()).collect();
    assert_eq!(search, [&json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})]);
    assert!(hosted["request"]["system"].as_str().unwrap().contains("find it with tool_search_tool_bm25"));
    assert_eq!(deferred_names_of(&hosted["request"], false), policy);
    // A portable plan's search answers no providerOutput.
    let r = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "record"}, "planId": portable["planId"]}));
    assert!(r.get("providerOutput").is_none());
    s.shutdown();
}

#[test]
fn openai_rendering_groups_deferred_functions_into_namespaces() {
    let mut s = sidecar(catalog(60, 3)); // 20 tools a namespace: split into parts of 9
    let portable = plan(&mut s, json!({"include": ["deferred"]}));
    let policy: BTreeSet<String> = portable["deferred"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_string()).collect();
    let p = plan(&mut s, json!({"render": "openai"}));
    let req = &p["request"];
    assert_eq!(keys(req), ["instructions", "tools"].map(String::from).into());
    assert_eq!(deferred_names_of(req, true), policy);
    let tools = req["tools"].as_array().unwrap();
    let namespaces: Vec<&str> = tools.iter().filter(|t| t["type"] == "namespace").map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(namespaces.len(), 9, "{namespaces:?}");
    assert!(namespaces.iter().all(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')), "{namespaces:?}");
    assert_eq!(namespaces.iter().collect::<BTreeSet<_>>().len(), 9, "unique names");
    let functions: Vec<&Value> = tools.iter().filter(|t| t["type"] == "function").collect();
    assert_eq!(functions.iter().map(|f| f["name"].as_str().unwrap()).collect::<Vec<_>>(), ["notes_create", "notes_delete", "tool_result_read"], "approval-gated stays inline");
    assert!(functions.iter().all(|f| f["strict"] == false && f.get("defer_loading").is_none() && f["parameters"].is_object()));
    let search: Vec<&Value> = tools.iter().filter(|t| t["type"] == "tool_search").collect();
    assert_eq!(search.len(), 1);
    assert_eq!(search[0]["execution"], "client");
    assert!(search[0]["parameters"]["properties"]["query"].is_object());

    let id = p["planId"].as_str().unwrap();
    let r = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "record 4 archive server 1"}, "callId": "call_abc", "planId": id}));
    let out = &r["providerOutput"];
    assert_eq!(out["type"], "tool_search_output");
    assert_eq!(out["call_id"], "call_abc");
    assert_eq!(out["execution"], "client");
    assert_eq!(out["status"], "completed");
    let hits: Vec<String> = r["raw"]["hits"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap().to_string()).collect();
    let mut returned = Vec::new();
    for ns in out["tools"].as_array().unwrap() {
        assert_eq!(ns["type"], "namespace");
        assert!(namespaces.contains(&ns["name"].as_str().unwrap()), "a namespace of the request: {ns}");
        for f in ns["tools"].as_array().unwrap() {
            assert!(f["parameters"]["properties"]["id"].is_object(), "whole definitions: {f}");
            returned.push(f["name"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(returned.iter().collect::<BTreeSet<_>>(), hits.iter().collect::<BTreeSet<_>>());

    let hosted = plan(&mut s, json!({"render": "openai", "search": "provider"}));
    let search: Vec<&Value> = hosted["request"]["tools"].as_array().unwrap().iter().filter(|t| t["type"] == "tool_search").collect();
    assert_eq!(search, [&json!({"type": "tool_search"})]);
    s.shutdown();
}

#[test]
fn nothing_deferred_renders_plain_tools_without_a_search() {
    let mut s = sidecar(vec![json!({"name": "only", "namespace": "n", "description": "d", "inputSchema": {"type": "object"}})]);
    for (render, key) in [("anthropic", "input_schema"), ("openai", "parameters")] {
        let p = plan(&mut s, json!({"render": render}));
        let tools = p["request"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 2, "the tool and tool_result_read: {p}");
        assert!(tools[0][key].is_object());
        assert!(p["request"].get("system").is_none() && p["request"].get("instructions").is_none());
    }
    s.shutdown();
}

#[test]
fn anthropic_refuses_more_than_ten_thousand_deferred_tools() {
    let mut s = sidecar(catalog(10_001, 50));
    let e = s.err("exposition/plan", json!({"scope": scope(), "render": "anthropic"}));
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["deferred"], 10_001);
    assert_eq!(e["data"]["max"], 10_000);
    // The portable and OpenAI renderings have no such limit.
    assert!(plan(&mut s, json!({"render": "openai"}))["request"].is_object());
    s.shutdown();
}

#[test]
fn five_thousand_namespaces_keep_the_section_within_its_budget() {
    let mut s = sidecar(catalog(10_000, 5_000));
    for render in ["portable", "anthropic", "openai"] {
        let p = plan(&mut s, json!({"render": render}));
        let section = p["systemPrompt"].as_str().unwrap();
        let tokens = toolreg::tokenize::Encoding::O200kBase.count(section);
        assert!(tokens <= toolreg::exposition::meta_defs::SECTION_BUDGET as usize, "{render}: {tokens} tokens");
        let summary = section.lines().find(|l| l.starts_with("- and ")).unwrap_or_else(|| panic!("{section}"));
        let listed = section.lines().filter(|l| l.starts_with("- mcp:")).count();
        assert!(listed > 50, "the budget is used: {listed} listed");
        assert!(summary.contains(&format!("{} more namespaces", thousands(5_000 - listed))), "{summary}");
        assert!(summary.ends_with("find them with tool_search") || summary.ends_with("find them with tool_search_tool_bm25"), "{summary}");
    }
    s.shutdown();
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    if s.len() > 3 { format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..]) } else { s }
}

/// The `tools` items of a request by name (`type` for a nameless provider tool), and the deferred
/// ones (top-level or inside OpenAI namespaces).
fn by_name(request: &Value) -> std::collections::BTreeMap<String, Value> {
    let mut m = std::collections::BTreeMap::new();
    for t in request["tools"].as_array().unwrap() {
        if t["type"] == "namespace" {
            for f in t["tools"].as_array().unwrap() {
                m.insert(f["name"].as_str().unwrap().to_string(), f.clone());
            }
        } else {
            m.insert(t.get("name").unwrap_or(&t["type"]).as_str().unwrap().to_string(), t.clone());
        }
    }
    m
}

#[test]
fn programmatic_marks_the_registered_tools_no_approval_gates() {
    let mut s = sidecar(catalog(20, 2));
    let host_tool = json!({"name": "host_clock", "description": "The time.", "inputSchema": {"type": "object"}});
    let plain = plan(&mut s, json!({"render": "anthropic", "clientTools": [host_tool]}));
    let p = plan(&mut s, json!({"render": "anthropic", "clientTools": [host_tool], "programmatic": {}}));
    let tools = by_name(&p["request"]);
    let both = json!(["direct", "code_execution_20250825"]);
    assert_eq!(tools["notes_create"]["allowed_callers"], both, "{tools:?}");
    let deferred: Vec<&Value> = tools.values().filter(|t| t.get("defer_loading").is_some()).collect();
    assert_eq!(deferred.len(), 20);
    assert!(deferred.iter().all(|t| t["allowed_callers"] == both), "every deferred tool is marked");
    for never in ["notes_delete", "host_clock", "tool_search"] {
        assert!(tools[never].get("allowed_callers").is_none(), "{never} is not marked: {}", tools[never]);
    }
    // The code execution tool follows the inline tools, before the search tool.
    let order: Vec<&str> = p["request"]["tools"].as_array().unwrap().iter().filter(|t| t.get("defer_loading").is_none()).map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(order, ["host_clock", "notes_create", "notes_delete", "tool_result_read", "code_execution", "tool_search"]);
    assert_eq!(tools["code_execution"], json!({"type": "code_execution_20250825", "name": "code_execution"}));
    // It costs what the model sees more, and it is another plan.
    assert!(p["tokens"]["inline"].as_u64().unwrap() > plain["tokens"]["inline"].as_u64().unwrap());
    assert_eq!(p["tokens"]["deferred"], plain["tokens"]["deferred"]);
    assert_ne!(p["planHash"], plain["planHash"]);
    assert!(plain["request"].to_string().find("allowed_callers").is_none(), "nothing marked without the parameter");

    // Another version, code alone.
    let only = plan(&mut s, json!({"render": "anthropic", "search": "provider", "programmatic": {"codeExecution": "code_execution_20260120", "direct": false}}));
    let tools = by_name(&only["request"]);
    assert_eq!(tools["notes_create"]["allowed_callers"], json!(["code_execution_20260120"]));
    assert_eq!(tools["code_execution"]["type"], "code_execution_20260120");
    assert!(tools["tool_search_tool_bm25"].get("allowed_callers").is_none());

    // OpenAI: the `programmatic` caller, its tool, and a search that loads marked definitions.
    let o = plan(&mut s, json!({"render": "openai", "programmatic": {"direct": false}}));
    let tools = by_name(&o["request"]);
    assert_eq!(tools["notes_create"]["allowed_callers"], json!(["programmatic"]));
    assert!(tools["notes_delete"].get("allowed_callers").is_none());
    assert_eq!(tools["programmatic_tool_calling"], json!({"type": "programmatic_tool_calling"}));
    assert_eq!(tools.values().filter(|t| t["allowed_callers"] == json!(["programmatic"])).count(), 21);
    let r = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "record 4 archive"}, "callId": "call_1", "planId": o["planId"]}));
    let loaded = by_name(&json!({"tools": r["providerOutput"]["tools"]}));
    assert!(!loaded.is_empty() && loaded.values().all(|f| f["allowed_callers"] == json!(["programmatic"])), "{r}");
    // The same pool unmarked is rendered apart (the shared text is keyed by the callers too).
    let o_plain = plan(&mut s, json!({"render": "openai"}));
    assert!(o_plain["request"].to_string().find("allowed_callers").is_none());

    // Refused: a portable plan, and Anthropic's tool name already taken.
    let e = s.err("exposition/plan", json!({"scope": scope(), "programmatic": {}}));
    assert_eq!((e["code"].as_i64(), e["data"]["field"].as_str()), (Some(-32602), Some("programmatic")), "{e}");
    assert!(e["message"].as_str().unwrap().contains("render"), "{e}");
    let e = s.err("exposition/plan", json!({"scope": scope(), "render": "anthropic", "programmatic": {}, "clientTools": [{"name": "code_execution", "description": "mine", "inputSchema": {"type": "object"}}]}));
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("code_execution"), "{e}");
    let e = s.err("exposition/plan", json!({"scope": scope(), "render": "anthropic", "programmatic": {"codeExecution": "code_execution_20250522"}}));
    assert_eq!(e["code"], -32602, "a code execution tool that cannot call tools: {e}");
    s.shutdown();
}

#[test]
fn programmatic_leaves_a_tool_its_mcp_server_now_gates_unmarked() {
    let mut s = Sidecar::ready();
    let server = |approval_tools: Value| json!({"id": "fx", "name": "fx", "approvalTools": approval_tools, "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--tools", "3"]}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [server(json!([]))]}));
    let t = std::time::Instant::now();
    while s.ok_past_notes("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(t.elapsed() < TIMEOUT, "fx never became ready");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    let echo = synced["registered"].as_array().unwrap().iter().filter_map(Value::as_str).find(|n| n.ends_with("echo")).expect("echo synced").to_string();
    let marked = |s: &mut Sidecar| {
        let p = s.ok_past_notes("exposition/plan", json!({"scope": {}, "render": "anthropic", "programmatic": {}}));
        by_name(&p["request"]).into_iter().filter(|(_, t)| t.get("allowed_callers").is_some()).map(|(n, _)| n).collect::<BTreeSet<String>>()
    };
    assert!(marked(&mut s).contains(&echo), "ungated: marked");
    // The server's rules now gate echo; the registry has not been synced since, so its entry
    // still says nothing of approval: the plan asks the server's current rules.
    s.ok_past_notes("catalog/setServers", json!({"servers": [server(json!(["echo"]))]}));
    let now = marked(&mut s);
    assert!(!now.contains(&echo) && !now.is_empty(), "gated now: not marked, the others still are: {now:?}");
    s.shutdown();
}
