//! `exposition/definitions` over the real binary (issue 55): a plan's deferred definitions for a
//! host whose own loop defers tools (the AI SDK's `toolSearch`), cheap without schemas.
mod support;
use serde_json::{json, Value};
use support::*;

fn catalog() -> Vec<Value> {
    let mut v: Vec<Value> = (0..12)
        .map(|i| {
            json!({"name": format!("crm_tool_{i:02}"), "namespace": if i < 8 { "mcp:crm" } else { "mcp:billing" }, "defer": "always",
                   "description": format!("CRM operation {i} on customer records."),
                   "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}})
        })
        .collect();
    v.push(json!({"name": "notes_create", "namespace": "notes", "description": "Create a note.", "defer": "never",
                  "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}}}));
    v
}

fn names(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_plans_deferred_definitions_with_and_without_schemas() {
    let mut s = Sidecar::ready();
    s.ok("registry/register", json!({"entries": catalog()}));
    let plan = s.ok("exposition/plan", json!({"scope": {}}));
    let id = plan["planId"].clone();
    let all = s.ok("exposition/definitions", json!({"planId": id}));
    let deferred: Vec<String> = (0..12).map(|i| format!("crm_tool_{i:02}")).collect();
    assert_eq!(names(&all["tools"]), deferred, "every deferred tool, in name order, and only those");
    assert_eq!(all["tools"][3], json!({"name": "crm_tool_03", "description": "CRM operation 3 on customer records.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}));
    let prompt = all["systemPrompt"].as_str().unwrap();
    assert!(prompt.contains("find it with tool_search; the tools it finds are loaded and you call them directly"), "{prompt}");
    assert!(prompt.contains("- mcp:billing (4)\n- mcp:crm (8)\n"), "{prompt}");
    assert!(all.get("missing").is_none());

    let lean = s.ok("exposition/definitions", json!({"planId": id, "schemas": false}));
    assert_eq!(names(&lean["tools"]), deferred);
    assert!(lean["tools"].as_array().unwrap().iter().all(|t| t.get("inputSchema").is_none() && t["description"].is_string()));

    let some = s.ok("exposition/definitions", json!({"planId": id, "names": ["crm_tool_05", "notes_create", "nope", "crm_tool_05"]}));
    assert_eq!(names(&some["tools"]), ["crm_tool_05"]);
    assert!(some["tools"][0]["inputSchema"].is_object());
    assert_eq!(some["missing"], json!(["nope", "notes_create"]), "an inline tool is not a deferred one");
    assert_eq!(some["systemPrompt"], Value::Null);

    // An Anthropic-rendered plan defers the same tools.
    let native = s.ok("exposition/plan", json!({"scope": {}, "render": "anthropic"}));
    let defs = s.ok("exposition/definitions", json!({"planId": native["planId"], "schemas": false}));
    let in_request: Vec<String> = native["request"]["tools"].as_array().unwrap().iter().filter(|t| t["defer_loading"] == true).map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names(&defs["tools"]), in_request);

    let gone = s.err("exposition/definitions", json!({"planId": "no-such-plan"}));
    assert_eq!(gone["code"], -32011);
    assert_eq!(gone["data"], json!({"planId": "no-such-plan"}));
    let bad = s.err("exposition/definitions", json!({}));
    assert_eq!(bad["code"], -32602);
}
