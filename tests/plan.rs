//! exposition/plan over the real binary: the seed's golden cases, with real token counts.
mod support;
use serde_json::{json, Value};
use support::*;

/// Plain English of exactly `n` characters (tokenizes like a real description).
fn prose(n: usize) -> String {
    let text = "Creates or updates a record in the customer database, validating every field against the \
schema and returning the stored version together with its revision number and audit trail. ";
    text.chars().cycle().take(n).collect()
}

fn tool(name: &str, desc_len: usize, extra: Value) -> Value {
    let mut t = json!({
        "name": name, "namespace": "crm", "description": prose(desc_len),
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    });
    t.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    t
}

/// A sidecar with only these entries active (built-ins stay off: no settings in the scope
/// means their predicates warn, so the scope sets them false).
fn plan_with(entries: Vec<Value>, params: Value) -> Value {
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": entries}));
    let mut p = params;
    p["scope"] = json!({"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []});
    // The golden cases read every tool's figures, not only the lean default.
    p["include"] = json!(["perTool", "deferred"]);
    let r = s.ok("exposition/plan", p);
    s.shutdown();
    r
}

fn tool_names(plan: &Value) -> Vec<&str> {
    plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

fn five(desc_len: usize, extra: Value) -> Vec<Value> {
    (1..=5).map(|i| tool(&format!("crm_tool_{i}"), desc_len, extra.clone())).collect()
}

#[test]
fn five_large_auto_tools_at_32k_are_deferred_together() {
    let p = plan_with(five(8000, json!({})), json!({"contextWindow": 32000, "model": "gpt-4o"}));
    assert_eq!(p["decision"], json!({"deferred": true, "gate": "passed"}));
    assert_eq!(p["deferred"].as_array().unwrap().len(), 5);
    assert_eq!(tool_names(&p), ["tool_search", "tool_inspect", "tool_invoke", "tool_result_read"]);
    assert!(p["tokens"]["autoPool"].as_u64().unwrap() > 3200);
    assert_eq!(p["tokens"]["threshold"], 3200);
    assert_eq!(p["encoding"], json!({"name": "o200k_base", "exact": true}));
    let prompt = p["systemPrompt"].as_str().unwrap();
    assert!(prompt.starts_with("<DEFERRED_TOOLS>") && prompt.ends_with("</DEFERRED_TOOLS>"));
    assert!(prompt.contains("- crm (5)"), "{prompt}");
    assert!(p["planId"].as_str().unwrap().starts_with("plan-"));
}

#[test]
fn a_pool_over_threshold_but_cheaper_than_the_meta_tools_stays_inline() {
    let p = plan_with(five(320, json!({})), json!({"contextWindow": 4000, "model": "gpt-4o"}));
    let t = &p["tokens"];
    assert_eq!(t["threshold"], 400);
    assert!(t["autoPool"].as_u64().unwrap() > 400, "the pool must exceed 10% of 4k: {t}");
    assert!(t["autoPool"].as_u64() <= t["metaOverhead"].as_u64(), "{t}");
    assert_eq!(p["decision"], json!({"deferred": false, "gate": "metaOverhead"}));
    assert_eq!(p["systemPrompt"], Value::Null);
    assert_eq!(tool_names(&p).len(), 6, "five and tool_result_read");
}

#[test]
fn one_huge_tool_alone_is_not_deferred() {
    let p = plan_with(vec![tool("huge", 40000, json!({}))], json!({"contextWindow": 8000}));
    assert_eq!(p["decision"], json!({"deferred": false, "gate": "minCount"}));
    assert_eq!(tool_names(&p), ["huge", "tool_result_read"]);
}

#[test]
fn always_is_deferred_whatever_it_costs() {
    let p = plan_with(vec![tool("tiny", 10, json!({"defer": "always"}))], json!({"contextWindow": 1000000}));
    assert_eq!(p["deferred"], json!([{"name": "tiny", "namespace": "crm"}]));
    assert_eq!(p["decision"]["deferred"], true);
    assert_eq!(p["placements"]["tiny"], json!({"namespace": "crm", "reason": "always", "deferred": true}));
    assert_eq!(tool_names(&p), ["tool_search", "tool_inspect", "tool_invoke", "tool_result_read"]);
}

#[test]
fn approval_gated_tools_are_never_deferred() {
    let mut entries = five(8000, json!({}));
    entries.push(tool("crm_delete", 8000, json!({"approval": true, "defer": "always"})));
    let p = plan_with(entries, json!({"contextWindow": 32000}));
    assert_eq!(p["deferred"].as_array().unwrap().len(), 5);
    assert_eq!(tool_names(&p)[0], "crm_delete");
    assert_eq!(p["placements"]["crm_delete"]["reason"], "approval");
}

#[test]
fn unknown_context_window_means_32000() {
    for cw in [json!(null), json!(0), json!(-5)] {
        let p = plan_with(five(100, json!({})), json!({"contextWindow": cw}));
        assert_eq!(p["tokens"]["contextWindow"], 32000);
        assert_eq!(p["tokens"]["threshold"], 3200);
    }
}

#[test]
fn mixed_policies_in_one_plan() {
    let mut entries = vec![tool("keep", 50, json!({"defer": "never"})), tool("hide", 50, json!({"defer": "always"}))];
    entries.push(tool("small_auto", 50, json!({})));
    let p = plan_with(entries, json!({"contextWindow": 32000}));
    assert_eq!(tool_names(&p), ["keep", "small_auto", "tool_search", "tool_inspect", "tool_invoke", "tool_result_read"]);
    assert_eq!(p["deferred"], json!([{"name": "hide", "namespace": "crm"}]));
    assert_eq!(p["decision"]["gate"], "minCount");
}

#[test]
fn only_never_entries_defer_nothing_and_client_tools_stay_inline() {
    let entries = (1..=6).map(|i| tool(&format!("n{i}"), 8000, json!({"defer": "never"}))).collect();
    let client = json!([{"name": "client_only", "description": prose(9000), "inputSchema": {"type": "object"}}]);
    let p = plan_with(entries, json!({"contextWindow": 4000, "clientTools": client}));
    assert_eq!(p["decision"], json!({"deferred": false, "gate": "emptyPool"}));
    assert_eq!(tool_names(&p)[0], "client_only");
    assert_eq!(p["placements"]["client_only"], json!({"reason": "client", "deferred": false}));
    assert_eq!(p["systemPrompt"], Value::Null);
    assert!(!tool_names(&p).contains(&"tool_search"));
}

#[test]
fn counts_are_real_tokens_and_say_which_encoding() {
    let p = plan_with(vec![tool("t", 320, json!({}))], json!({"model": "gpt-4"}));
    assert_eq!(p["encoding"], json!({"name": "cl100k_base", "exact": true}));
    let q = plan_with(vec![tool("t", 320, json!({}))], json!({"model": "claude-sonnet-4-5"}));
    assert_eq!(q["encoding"], json!({"name": "o200k_base", "exact": false}));
}

/// `{"name":"t","description":<description>,"inputSchema":{"type":"object"}}` is what is counted.
fn counted(description: &str, model: &str) -> u64 {
    let e = json!({"name": "t", "namespace": "n", "description": description, "inputSchema": {"type": "object"}});
    plan_with(vec![e], json!({"model": model}))["tokens"]["perTool"]["t"].as_u64().unwrap()
}

#[test]
fn counts_are_exact_o200k_counts_not_characters_over_four() {
    // Computed once with tiktoken-rs's o200k_base and checked by hand: the JSON frame is 15
    // tokens (`{"` `name` `":"` `t` `","` `description` `":"` | `","` `input` `Schema` `":{"`
    // `type` `":"` `object` `"}}`), "hello world" is 2 (`hello`, ` world`), and each further
    // " hello world" adds exactly 2, where characters / 4 would add 3.
    const FRAME: u64 = 15;
    let one = counted("hello world", "gpt-4o");
    assert_eq!(one, FRAME + 2);
    let hundred = format!("hello world{}", " hello world".repeat(99));
    let n = counted(&hundred, "gpt-4o");
    assert_eq!(n, FRAME + 200);
    let chars = r#"{"name":"t","description":"","inputSchema":{"type":"object"}}"#.len() + hundred.len();
    assert_ne!(n, chars as u64 / 4, "{chars} characters");
    // Digits go in threes in o200k_base: 300 digits are 100 tokens (chars / 4 says 75).
    let digits = "123".repeat(100);
    assert_eq!(counted(&digits, "claude-sonnet-4-5"), FRAME + 100);
}

#[test]
fn the_largest_context_window_gives_a_plan_and_a_larger_one_a_clear_error() {
    let p = plan_with(five(100, json!({})), json!({"contextWindow": i64::MAX}));
    assert_eq!(p["tokens"]["contextWindow"], i64::MAX);
    assert_eq!(p["tokens"]["threshold"], i64::MAX / 10);
    assert_eq!(p["decision"], json!({"deferred": false, "gate": "threshold"}));
    let mut s = Sidecar::ready();
    for cw in [json!(u64::MAX), json!(1e30), json!("big")] {
        let e = s.err("exposition/plan", json!({"scope": {}, "contextWindow": cw}));
        assert_eq!(e["code"], -32602, "{cw}: {e}");
    }
    s.shutdown();
}

#[test]
fn same_input_gives_byte_identical_output_but_the_plan_id() {
    let entries: Vec<Value> = (0..40).map(|i| tool(&format!("t{:02}", (i * 7) % 40), 500, json!({}))).collect();
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": entries}));
    let params = json!({"scope": {"settings": {"enableWebSearch": true}, "knowledgeBaseIds": ["k"]}, "contextWindow": 16000, "model": "gpt-4o-mini"});
    let mut a = s.ok("exposition/plan", params.clone());
    let mut b = s.ok("exposition/plan", params);
    assert_ne!(a["planId"], b["planId"]);
    a.as_object_mut().unwrap().remove("planId");
    b.as_object_mut().unwrap().remove("planId");
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    s.shutdown();
}
