//! The meta-tools (`tool_search`, `tool_inspect`, `tool_invoke`) over the real binary, scoped
//! to a plan whose deferred pool is made of `defer: "always"` host tools. The test plays the
//! host and answers `host/executeTool`.
mod support;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use support::*;

// ---------------------------------------------------------------------------------------------
// Playing the host (send_req, call, answer, runner: tests/support/host.rs)
// ---------------------------------------------------------------------------------------------

fn start(caps: Value) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"clientInfo": {"name": "meta-test"}, "capabilities": caps}));
    s.notify("initialized", json!({}));
    s
}

fn silent(_: &mut Sidecar, m: &Value) {
    if matches!(method(m), "host/executeTool" | "host/repairToolCall" | "approval/request") {
        panic!("the host should receive nothing here: {m}");
    }
}

// ---------------------------------------------------------------------------------------------
// The registry and the plan
// ---------------------------------------------------------------------------------------------

fn entry(name: &str, ns: &str, description: &str, schema: Value, extra: Value) -> Value {
    let mut e = json!({"name": name, "namespace": ns, "description": description, "inputSchema": schema});
    e.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    e
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

const DEFERRED: [&str; 5] = ["calendar_create_event", "calendar_list_events", "stocks_quote", "weather_alerts", "weather_forecast"];

fn entries() -> Vec<Value> {
    let always = json!({"defer": "always"});
    vec![
        entry(
            "weather_forecast",
            "weather",
            "Get the weather forecast for a city for the next days.",
            obj(
                json!({"city": {"type": "string", "description": "City name"},
                       "days": {"type": "integer", "default": 3},
                       "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"}}),
                &["city"],
            ),
            always.clone(),
        ),
        entry("weather_alerts", "weather", "List active severe weather alerts for a region.", obj(json!({"region": {"type": "string"}}), &["region"]), always.clone()),
        entry(
            "calendar_create_event",
            "calendar",
            "Create a calendar event with a title and a start time.",
            obj(json!({"title": {"type": "string"}, "start": {"type": "string", "description": "ISO 8601 start time"}}), &["title", "start"]),
            always.clone(),
        ),
        entry("calendar_list_events", "calendar", "List calendar events in a date range.", obj(json!({"from": {"type": "string"}, "to": {"type": "string"}}), &[]), always.clone()),
        entry("stocks_quote", "finance", "Get the latest stock quote for a ticker symbol.", obj(json!({"symbol": {"type": "string"}}), &["symbol"]), always),
        // Inline (never deferred), and matching a "weather" query: search must not list it.
        entry("weather_now", "weather", "Get the current weather for a city right now.", obj(json!({"city": {"type": "string"}}), &["city"]), json!({"defer": "never"})),
        // Approval-gated: inline whatever its policy, and refused by the meta-tools.
        entry("notes_delete", "notes", "Delete a note by id.", obj(json!({"id": {"type": "string"}}), &["id"]), json!({"approval": true, "defer": "always"})),
    ]
}

/// A sidecar with the entries above and a plan; returns the plan id. A tool registered after
/// the plan (`late_tool`) exists but is outside the plan.
fn planned(caps: Value) -> (Sidecar, String) {
    let mut s = start(caps);
    s.ok("registry/register", json!({"entries": entries()}));
    let plan = s.ok(
        "exposition/plan",
        json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o", "clientTools": [], "include": ["deferred"]}),
    );
    let deferred: BTreeSet<&str> = plan["deferred"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().or_else(|| d["name"].as_str()).unwrap())
        .collect();
    assert_eq!(deferred, DEFERRED.into_iter().collect(), "{plan}");
    let tools: Vec<&str> = plan["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for t in ["tool_search", "tool_inspect", "tool_invoke", "weather_now", "notes_delete"] {
        assert!(tools.contains(&t), "{t} inline: {tools:?}");
    }
    s.ok(
        "registry/register",
        json!({"entries": [entry("late_tool", "weather", "A weather tool registered after the plan.", obj(json!({}), &[]), json!({"defer": "always"}))]}),
    );
    let id = plan["planId"].as_str().unwrap().to_string();
    (s, id)
}

/// One meta-tool call; the `tool/invoke` result.
fn meta(s: &mut Sidecar, plan: &str, tool: &str, args: Value, on: &mut dyn FnMut(&mut Sidecar, &Value)) -> Value {
    let r = call(s, "tool/invoke", json!({"name": tool, "arguments": args, "callId": "outer-1", "planId": plan}), on);
    r.get("result").cloned().unwrap_or_else(|| panic!("{tool} {args}: {r}"))
}

fn search(s: &mut Sidecar, plan: &str, args: Value) -> Value {
    let r = meta(s, plan, "tool_search", args.clone(), &mut silent);
    assert_eq!(r["isError"], false, "{args}: {r}");
    r
}

fn text(r: &Value) -> &str {
    r["output"]["value"].as_str().unwrap_or_else(|| panic!("no text: {r}"))
}

fn hit_names(r: &Value) -> Vec<String> {
    r["raw"]["hits"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap().to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// tool_search
// ---------------------------------------------------------------------------------------------

#[test]
fn search_lists_only_deferred_tools_ranked_with_scores() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = search(&mut s, &plan, json!({"query": "weather forecast for a city"}));
    let names = hit_names(&r);
    assert_eq!(names.first().map(String::as_str), Some("weather_forecast"), "{r}");
    assert!(names.iter().all(|n| DEFERRED.contains(&n.as_str())), "only deferred tools: {names:?}");
    assert!(!text(&r).contains("weather_now") && !text(&r).contains("late_tool"), "{r}");
    let hits = r["raw"]["hits"].as_array().unwrap();
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().expect("numeric score")).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "ranked: {scores:?}");
    for h in hits {
        let keys: BTreeSet<&str> = h.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, BTreeSet::from(["name", "namespace", "score"]), "{h}");
    }
    assert_eq!(hits[0]["namespace"], "weather");
    // The text lists the hits in the same order.
    let pos: Vec<usize> = names.iter().map(|n| text(&r).find(n.as_str()).unwrap()).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{r}");
    s.shutdown();
}

#[test]
fn search_puts_an_exact_name_first_and_respects_the_limit() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    for name in DEFERRED {
        let r = search(&mut s, &plan, json!({"query": name}));
        assert_eq!(hit_names(&r).first().map(String::as_str), Some(name), "{r}");
    }
    let broad = "weather calendar events stock quote forecast alerts city";
    let all = hit_names(&search(&mut s, &plan, json!({"query": broad, "limit": 20})));
    assert!(all.len() >= 3 && all.len() <= 5, "{all:?}");
    for limit in [1usize, 2] {
        let some = hit_names(&search(&mut s, &plan, json!({"query": broad, "limit": limit})));
        assert_eq!(some, all[..limit], "limit {limit}");
    }
    s.shutdown();
}

#[test]
fn search_namespace_filter_returns_one_group() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = search(&mut s, &plan, json!({"query": "list events alerts", "namespace": "calendar"}));
    let hits = r["raw"]["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{r}");
    assert!(hits.iter().all(|h| h["namespace"] == "calendar"), "{r}");
    // Browsing one namespace lists its deferred tools.
    let r = search(&mut s, &plan, json!({"namespace": "weather"}));
    let names: BTreeSet<String> = hit_names(&r).into_iter().collect();
    assert_eq!(names, BTreeSet::from(["weather_alerts".to_string(), "weather_forecast".to_string()]), "{r}");
    s.shutdown();
}

#[test]
fn search_without_a_query_browses_namespaces_with_counts() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = search(&mut s, &plan, json!({}));
    assert_eq!(
        r["raw"]["namespaces"],
        json!([{"namespace": "calendar", "count": 2}, {"namespace": "finance", "count": 1}, {"namespace": "weather", "count": 2}]),
        "{r}"
    );
    assert!(text(&r).contains("- weather (2)"), "{r}");
    assert!(!text(&r).contains("notes"), "inline namespaces are not listed: {r}");
    // Missing arguments and a blank query browse too.
    assert_eq!(search(&mut s, &plan, Value::Null)["raw"], r["raw"]);
    assert_eq!(search(&mut s, &plan, json!({"query": "  "}))["raw"], r["raw"]);
    s.shutdown();
}

#[test]
fn search_without_a_match_says_so() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = search(&mut s, &plan, json!({"query": "xylophone"}));
    assert_eq!(r["raw"]["hits"], json!([]), "{r}");
    assert!(text(&r).contains("No deferred tool matches"), "{r}");
    assert_eq!(r["raw"]["coldServers"], json!([]), "says whether an MCP server is still cold: {r}");
    // The inline tool's exact name is no match either.
    let r = search(&mut s, &plan, json!({"query": "notes_delete"}));
    assert!(!hit_names(&r).contains(&"notes_delete".to_string()), "{r}");
    s.shutdown();
}

#[test]
fn verbose_search_shows_signatures_and_counts_as_inspection() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = search(&mut s, &plan, json!({"query": "stock quote ticker", "verbose": true}));
    assert_eq!(hit_names(&r).first().map(String::as_str), Some("stocks_quote"), "{r}");
    assert!(text(&r).contains("declare function stocks_quote("), "{r}");
    let mut executed = Vec::new();
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "stocks_quote", "params": {"symbol": "ACME"}}), &mut runner(&mut executed));
    assert_eq!(r["isError"], false, "runs without an inspect step: {r}");
    assert_eq!(executed, [json!({"name": "stocks_quote", "arguments": {"symbol": "ACME"}, "callId": "outer-1::stocks_quote"})]);
    s.shutdown();
}

// ---------------------------------------------------------------------------------------------
// tool_inspect
// ---------------------------------------------------------------------------------------------

#[test]
fn inspect_refuses_what_the_plan_does_not_allow() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = meta(&mut s, &plan, "tool_inspect", json!({"name": "late_tool"}), &mut silent);
    assert_eq!(r["isError"], true);
    assert!(text(&r).contains("not available in this request"), "{r}");
    let r = meta(&mut s, &plan, "tool_inspect", json!({"name": "no_such_tool"}), &mut silent);
    assert_eq!(r["isError"], true);
    assert!(text(&r).contains("not found"), "{r}");
    let r = meta(&mut s, &plan, "tool_inspect", json!({"name": "weather_now"}), &mut silent);
    assert_eq!(r["isError"], true);
    assert!(text(&r).contains("call it directly"), "{r}");
    // Invoking late_tool is refused for being outside the plan, not answered with a signature.
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "late_tool", "params": {}}), &mut silent);
    assert!(text(&r).contains("not available in this request") && !text(&r).contains("declare function"), "{r}");
    s.shutdown();
}

#[test]
fn inspect_returns_a_typescript_signature_and_records_it() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let r = meta(&mut s, &plan, "tool_inspect", json!({"name": "weather_forecast"}), &mut silent);
    assert_eq!(r["isError"], false, "{r}");
    let sig = text(&r);
    assert!(sig.contains("declare function weather_forecast("), "{sig}");
    assert!(sig.contains("city: string") && sig.contains("days?: number"), "{sig}");
    assert!(sig.contains("\"metric\" | \"imperial\""), "{sig}");
    assert!(sig.contains("Get the weather forecast"), "{sig}");
    // The tool_invoke runs, with the schema's defaults applied.
    let mut executed = Vec::new();
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "weather_forecast", "params": {"city": "Oslo"}}), &mut runner(&mut executed));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["output"], json!({"type": "text", "value": "ran weather_forecast"}));
    assert_eq!(
        executed,
        [json!({"name": "weather_forecast", "arguments": {"city": "Oslo", "days": 3, "units": "metric"}, "callId": "outer-1::weather_forecast"})]
    );
    s.shutdown();
}

// ---------------------------------------------------------------------------------------------
// tool_invoke
// ---------------------------------------------------------------------------------------------

#[test]
fn invoke_refuses_outside_the_plan_unknown_and_gated_tools() {
    let (mut s, plan) = planned(json!({"hostTools": true, "approval": true}));
    for (name, says) in [
        ("late_tool", "not available in this request"),
        ("no_such_tool", "not found"),
        ("notes_delete", "call it directly"),
        ("weather_now", "call it directly"),
    ] {
        // Twice: a refusal leaves nothing behind that would let a second call through.
        for _ in 0..2 {
            let r = meta(&mut s, &plan, "tool_invoke", json!({"name": name, "params": {"id": "n1", "city": "Oslo"}}), &mut silent);
            assert_eq!(r["isError"], true, "{name}: {r}");
            assert!(text(&r).contains(says), "{name}: {r}");
        }
    }
    s.shutdown();
}

/// Inspection gates nothing (a client may open a new process for every call): valid params
/// run at once; invalid ones get what was wrong and the signature, inspected or not.
#[test]
fn an_uninspected_tool_with_valid_params_runs_at_once() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let params = json!({"title": "Standup", "start": "2026-12-01T09:00:00Z"});
    let mut executed = Vec::new();
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "calendar_create_event", "params": params}), &mut runner(&mut executed));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(executed, [json!({"name": "calendar_create_event", "arguments": params, "callId": "outer-1::calendar_create_event"})]);
    s.shutdown();
}

#[test]
fn invalid_params_return_the_error_and_the_signature() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    // Uninspected, then inspected: the same answer, nothing run.
    for inspected in [false, true] {
        if inspected {
            meta(&mut s, &plan, "tool_inspect", json!({"name": "calendar_create_event"}), &mut silent);
        }
        let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "calendar_create_event", "params": {"title": "x"}}), &mut silent);
        assert_eq!(r["isError"], true, "{r}");
        assert!(text(&r).contains("Invalid params") && text(&r).contains("not run"), "{r}");
        assert!(text(&r).contains("start"), "names the missing field: {r}");
        assert!(text(&r).contains("declare function calendar_create_event("), "{r}");
    }
    // No name at all: an error the model can read.
    let r = meta(&mut s, &plan, "tool_invoke", json!({"params": {}}), &mut silent);
    assert_eq!(r["isError"], true, "{r}");
    s.shutdown();
}

#[test]
fn missing_params_mean_an_empty_object() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    meta(&mut s, &plan, "tool_inspect", json!({"name": "calendar_list_events"}), &mut silent);
    let mut executed = Vec::new();
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "calendar_list_events"}), &mut runner(&mut executed));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(executed, [json!({"name": "calendar_list_events", "arguments": {}, "callId": "outer-1::calendar_list_events"})]);
    s.shutdown();
}

#[test]
fn tool_invoke_of_a_tool_whose_schema_does_not_compile_says_so_without_repair() {
    let mut s = start(json!({"hostTools": true, "repair": true}));
    let broken = entry("broken_tool", "misc", "A tool with a broken schema.", json!({"type": "object", "properties": {"a": {"type": "nonsense"}}}), json!({"defer": "always"}));
    s.ok("registry/register", json!({"entries": [broken]}));
    let plan = s.ok("exposition/plan", json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o", "clientTools": []}));
    let plan = plan["planId"].as_str().unwrap().to_string();
    meta(&mut s, &plan, "tool_inspect", json!({"name": "broken_tool"}), &mut silent);
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "broken_tool", "params": {"a": 1}}), &mut silent);
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("broken_tool") && text(&r).contains("schema is invalid"), "{r}");
    assert!(!text(&r).contains("Invalid params"), "not an argument error: {r}");
    s.shutdown();
}

#[test]
fn params_repaired_by_the_host_are_asked_for_once() {
    let (mut s, plan) = planned(json!({"hostTools": true, "repair": true}));
    meta(&mut s, &plan, "tool_inspect", json!({"name": "weather_alerts"}), &mut silent);
    let (mut repairs, mut executed) = (Vec::new(), Vec::new());
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "weather_alerts", "params": {"area": "north"}}), &mut |s, m| match method(m) {
        "host/repairToolCall" => {
            repairs.push(m["params"].clone());
            answer(s, m, json!({"arguments": {"region": "north"}}));
        }
        "host/executeTool" => {
            executed.push(m["params"].clone());
            answer(s, m, json!({"content": [{"type": "text", "text": "no alerts"}]}));
        }
        _ => {}
    });
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["repaired"]["by"], "host", "{r}");
    assert_eq!(executed, [json!({"name": "weather_alerts", "arguments": {"region": "north"}, "callId": "outer-1::weather_alerts"})]);
    assert_eq!(repairs.len(), 1, "one tool call, one host repair request: {repairs:#?}");
    s.shutdown();
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

#[test]
fn meta_tools_need_a_known_plan() {
    let (mut s, _plan) = planned(json!({"hostTools": true}));
    for tool in ["tool_search", "tool_inspect", "tool_invoke"] {
        let r = call(&mut s, "tool/invoke", json!({"name": tool, "arguments": {"name": "stocks_quote"}}), &mut silent);
        assert_eq!(r["error"]["code"], -32602, "{tool}: {r}");
        assert_eq!(r["error"]["data"]["name"], tool, "{r}");
        let r = call(&mut s, "tool/invoke", json!({"name": tool, "arguments": {"name": "stocks_quote"}, "planId": "plan-nope"}), &mut silent);
        assert_eq!(r["error"]["code"], -32011, "{tool}: {r}");
        assert_eq!(r["error"]["data"]["planId"], "plan-nope", "{r}");
    }
    s.shutdown();
}

#[test]
fn an_unknown_plan_tells_the_host_to_plan_again() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let n: u64 = plan.trim_start_matches("plan-").parse().unwrap();
    for id in [format!("plan-{}", n + 1000), "plan-0".to_string()] {
        let r = call(&mut s, "tool/invoke", json!({"name": "tool_search", "arguments": {"query": "weather"}, "planId": id}), &mut silent);
        assert_eq!(r["error"]["code"], -32011, "{r}");
        let msg = r["error"]["message"].as_str().unwrap();
        assert!(msg.contains("plan again") && msg.contains("exposition/plan"), "{msg}");
        assert_eq!(r["error"]["data"]["planId"], id.as_str(), "{r}");
    }
    s.shutdown();
}

#[test]
fn a_plan_reaches_only_its_own_pool() {
    let (mut s, plan) = planned(json!({"hostTools": true}));
    let other = s.ok("exposition/plan", json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 128000}));
    let other = other["planId"].as_str().unwrap().to_string();
    assert_ne!(other, plan);
    let mut executed = Vec::new();
    for id in [&plan, &other] {
        let r = meta(&mut s, id, "tool_invoke", json!({"name": "stocks_quote", "params": {"symbol": "ACME"}}), &mut runner(&mut executed));
        assert_eq!(r["isError"], false, "{id}: {r}");
    }
    assert_eq!(executed.len(), 2);
    // late_tool was registered between the two plans: only the later one reaches it.
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "late_tool", "params": {}}), &mut silent);
    assert!(text(&r).contains("not available in this request"), "{r}");
    let r = meta(&mut s, &other, "tool_invoke", json!({"name": "late_tool", "params": {}}), &mut runner(&mut executed));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(executed.len(), 3);
    s.shutdown();
}

/// Fail closed: a host without `hostTools` is never asked to run a tool through `tool_invoke`,
/// even an inspected one with valid params; the model reads why.
#[test]
fn invoke_of_a_host_tool_without_host_tools_runs_nothing() {
    let (mut s, plan) = planned(json!({}));
    meta(&mut s, &plan, "tool_inspect", json!({"name": "stocks_quote"}), &mut silent);
    let r = meta(&mut s, &plan, "tool_invoke", json!({"name": "stocks_quote", "params": {"symbol": "ACME"}}), &mut silent);
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("did not offer to execute tools"), "{r}");
    // Nothing reaches the host afterwards either.
    let late = s.try_recv(std::time::Duration::from_millis(100));
    assert!(late.is_none(), "{late:?}");
    s.shutdown();
}
