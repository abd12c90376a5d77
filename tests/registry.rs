//! Registry and predicates over the real binary (BEHAVIOURS: Registry).
mod support;
use serde_json::{json, Value};
use support::*;

fn entry(name: &str, ns: &str) -> Value {
    json!({"name": name, "namespace": ns, "description": format!("{name}: does a thing.\nSecond line."), "inputSchema": {"type": "object"}})
}

fn names(v: &Value) -> Vec<String> {
    v["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn builtins_ship_with_the_sidecar() {
    let mut s = Sidecar::ready();
    let all = s.ok("registry/list", json!({}));
    assert_eq!(names(&all), ["kb_list", "kb_search", "web_fetch", "web_search"]);
    assert_eq!(all["entries"][3]["source"], json!({"kind": "builtin"}));
    assert_eq!(all["entries"][3]["namespace"], "web");
    s.shutdown();
}

#[test]
fn register_replaces_same_name_and_count_stays() {
    let mut s = Sidecar::ready();
    assert_eq!(s.ok("registry/register", json!({"entries": [entry("notes_add", "notes")]}))["registered"], json!(["notes_add"]));
    let before = names(&s.ok("registry/list", json!({}))).len();
    s.ok("registry/register", json!({"entries": [entry("notes_add", "notes2")]}));
    let after = s.ok("registry/list", json!({}));
    assert_eq!(names(&after).len(), before);
    let e = after["entries"].as_array().unwrap().iter().find(|e| e["name"] == "notes_add").unwrap().clone();
    assert_eq!(e["namespace"], "notes2");
    assert_eq!(e["summary"], "notes_add: does a thing.");
    assert_eq!(e["source"], json!({"kind": "host"}), "the host cannot claim another source");
    s.shutdown();
}

#[test]
fn register_refuses_bad_names_atomically() {
    let mut s = Sidecar::ready();
    let e = s.err("registry/register", json!({"entries": [entry("fine", "x"), entry("has space", "x")]}));
    assert_eq!(e["code"], -32013);
    assert_eq!(e["data"]["name"], "has space");
    assert!(!names(&s.ok("registry/list", json!({}))).contains(&"fine".to_string()));
    let e = s.err("registry/register", json!({"entries": [entry("tool_search", "x")]}));
    assert!(e["message"].as_str().unwrap().contains("reserved"));
    let e = s.err("registry/register", json!({"entries": [entry(&"a".repeat(65), "x")]}));
    assert_eq!(e["code"], -32013);
    s.shutdown();
}

#[test]
fn deregister_reports_whether_the_name_existed() {
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": [entry("a1", "x")]}));
    assert_eq!(s.ok("registry/deregister", json!({"names": ["a1", "nope"]}))["removed"], json!(["a1"]));
    assert_eq!(s.ok("registry/deregister", json!({"names": ["a1"]}))["removed"], json!([]));
    s.shutdown();
}

#[test]
fn list_filters_by_namespace_and_query_together() {
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": [entry("alpha", "x"), entry("beta", "x"), entry("gamma", "y")]}));
    assert_eq!(names(&s.ok("registry/list", json!({"namespace": "x"}))), ["alpha", "beta"]);
    assert_eq!(names(&s.ok("registry/list", json!({"query": "GAMMA"}))), ["gamma"]);
    assert_eq!(names(&s.ok("registry/list", json!({"namespace": "x", "query": "gamma"}))), Vec::<String>::new());
    assert_eq!(names(&s.ok("registry/list", json!({"namespace": "web", "query": "fetch"}))), ["web_fetch"]);
    s.shutdown();
}

#[test]
fn order_is_byte_order_and_stable_after_reregister() {
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": [entry("b_tool", "h"), entry("B_tool", "h"), entry("a_tool", "h"), entry("_x", "h")]}));
    s.ok("registry/deregister", json!({"names": ["a_tool"]}));
    s.ok("registry/register", json!({"entries": [entry("a_tool", "h")]}));
    // Byte order: '_' (0x5f) sorts after uppercase and before lowercase.
    assert_eq!(names(&s.ok("registry/list", json!({"namespace": "h"}))), ["B_tool", "_x", "a_tool", "b_tool"]);
    s.shutdown();
}

#[test]
fn select_active_evaluates_predicates_and_warns() {
    let mut s = Sidecar::ready();
    let mut gated = entry("only_with_flag", "h");
    gated["applies"] = json!({"all": [{"flag": "beta"}, {"not": {"member": "disabledTools"}}]});
    let mut member = entry("picked", "h");
    member["applies"] = json!({"member": "mcpToolIds"});
    let plain = entry("always_on", "h");
    s.ok("registry/register", json!({"entries": [gated, member, plain]}));

    let r = s.ok("registry/selectActive", json!({"scope": {"settings": {"enableWebSearch": true, "beta": true}, "knowledgeBaseIds": [], "mcpToolIds": ["picked"], "disabledTools": []}}));
    assert_eq!(names(&r), ["always_on", "only_with_flag", "picked", "web_fetch", "web_search"]);
    assert_eq!(r["warnings"], json!([]));

    let r = s.ok("registry/selectActive", json!({"scope": {"settings": {"enableWebSearch": false, "beta": "yes"}, "knowledgeBaseIds": ["kb1"], "mcpToolIds": []}}));
    assert_eq!(names(&r), ["always_on", "kb_list", "kb_search"]);
    assert_eq!(r["warnings"], json!([{"name": "only_with_flag", "message": "flag \"beta\" is a string, not a boolean"}]));
    s.shutdown();
}

#[test]
fn scope_passes_through_unknown_fields() {
    let mut s = Sidecar::ready();
    let mut e = entry("custom", "h");
    e["applies"] = json!({"nonEmpty": "assistant.tags"});
    s.ok("registry/register", json!({"entries": [e]}));
    let r = s.ok("registry/selectActive", json!({"scope": {"assistant": {"tags": ["x"]}, "settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}}));
    assert_eq!(names(&r), ["custom"]);
    s.shutdown();
}

#[test]
fn large_responses_arrive_whole() {
    // Far more than a pipe's 64 KiB buffer: the partial-write path of the writer is taken.
    let mut s = Sidecar::ready();
    let entries: Vec<Value> = (0..3000).map(|i| {
        let mut e = entry(&format!("bulk_{i:04}"), "bulk");
        e["description"] = json!(format!("{} {}", "lorem ipsum dolor sit amet ".repeat(8), i));
        e
    }).collect();
    s.ok("registry/register", json!({"entries": entries}));
    for round in 0..3 {
        let a = s.next_id();
        let b = s.next_id();
        s.send(&json!({"jsonrpc": "2.0", "id": a, "method": "registry/list", "params": {"namespace": "bulk"}}));
        s.send(&json!({"jsonrpc": "2.0", "id": b, "method": "registry/list", "params": {"namespace": "none"}}));
        // Both whole; in either order (a list of 3,000 entries runs off the main loop).
        let (m1, m2) = (s.recv(), s.recv());
        let (first, second) = if m1["id"] == a { (m1, m2) } else { (m2, m1) };
        assert_eq!(first["id"], a, "round {round}");
        assert_eq!(first["result"]["entries"].as_array().unwrap().len(), 3000);
        assert_eq!(first["result"]["entries"][2999]["name"], "bulk_2999");
        assert_eq!((second["id"].clone(), second["result"].clone()), (json!(b), json!({"entries": []})));
    }
    s.shutdown();
}

#[test]
fn any_is_true_when_a_later_branch_is_true_even_if_an_earlier_one_cannot_be_evaluated() {
    let mut s = Sidecar::ready();
    let mut e = entry("either", "h");
    e["applies"] = json!({"any": [{"flag": "notInScope"}, {"member": "mcpToolIds"}]});
    let mut both = entry("both", "h");
    both["applies"] = json!({"all": [{"flag": "notInScope"}, {"member": "mcpToolIds"}]});
    s.ok("registry/register", json!({"entries": [e, both]}));
    let scope = |ids: Value| json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": [], "mcpToolIds": ids}});
    let r = s.ok("registry/selectActive", scope(json!(["either"])));
    assert_eq!(names(&r), ["either"]);
    assert_eq!(r["warnings"], json!([]), "no branch was undecided in a way that matters");
    // No true branch: the unknown one is reported. `all` with a false branch is just false.
    let r = s.ok("registry/selectActive", scope(json!([])));
    assert_eq!(names(&r), Vec::<String>::new());
    assert_eq!(r["warnings"], json!([{"name": "either", "message": "scope has no setting \"notInScope\""}]));
    s.shutdown();
}
