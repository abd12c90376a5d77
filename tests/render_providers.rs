//! Issue 55 over the real binary and the 2,422 fixture tools: `render: "gemini"` (names within
//! Gemini's rule, every schema an object with its references inside it, the meta-tools when the
//! pool is deferred, `tool/invoke` unchanged) and OpenAI's `strict` (at least 95% strict, every
//! strict schema within OpenAI's rules as checked here, apart from the converter, and a call in
//! the strict shape reaching a real MCP server without the nulls). The Python client's test
//! checks the Gemini declarations against `google-genai`'s own types.
mod support;
use serde_json::{json, Value};
use std::time::Instant;
use support::*;
use toolreg::registry::Registry;

/// The fixture catalogs as `registry/register` entries, under the names a sync gives them.
fn fixture_entries(defer: &str) -> Vec<Value> {
    let mut names = Registry::default();
    let mut out = Vec::new();
    for (server, t) in catalogs::catalog_tools() {
        let wire = names.mcp_wire_name(&server, &server, t["name"].as_str().unwrap());
        names.insert(catalogs::mcp_entry(&server, &t, wire.clone()));
        let schema = t.get("inputSchema").cloned().unwrap_or(json!({"type": "object"}));
        out.push(json!({"name": wire, "namespace": format!("mcp:{server}"), "description": t["description"].as_str().unwrap_or(""), "inputSchema": schema, "defer": defer}));
    }
    assert_eq!(out.len(), 2422);
    out
}

fn sidecar_with(entries: &[Value]) -> Sidecar {
    let mut s = Sidecar::ready();
    for chunk in entries.chunks(1_000) {
        s.ok("registry/register", json!({"entries": chunk}));
    }
    s
}

fn plan(s: &mut Sidecar, extra: Value) -> Value {
    let mut p = json!({"scope": {}, "contextWindow": 128000, "model": "gpt-4o"});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    s.ok("exposition/plan", p)
}

fn gemini_name(n: &str) -> bool {
    let b = n.as_bytes();
    !b.is_empty() && b.len() <= 64 && (b[0].is_ascii_alphabetic() || b[0] == b'_') && b.iter().all(|c| c.is_ascii_alphanumeric() || b"_.:-".contains(c))
}

/// Every `$ref` in `v` names a node of `root`.
fn refs_resolve(v: &Value, root: &Value) -> Result<(), String> {
    match v {
        Value::Object(o) => {
            if let Some(r) = o.get("$ref") {
                let r = r.as_str().ok_or("a $ref that is not a string")?;
                let ok = r == "#" || r.strip_prefix('#').is_some_and(|p| root.pointer(p).is_some());
                if !ok {
                    return Err(format!("{r} does not resolve"));
                }
            }
            o.values().try_for_each(|c| refs_resolve(c, root))
        }
        Value::Array(a) => a.iter().try_for_each(|c| refs_resolve(c, root)),
        _ => Ok(()),
    }
}

fn declarations(plan: &Value) -> &Vec<Value> {
    let tools = plan["request"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "one Tool with every declaration");
    tools[0]["functionDeclarations"].as_array().unwrap()
}

#[test]
fn gemini_declares_every_fixture_tool_within_its_rules() {
    let mut s = sidecar_with(&fixture_entries("never"));
    let p = plan(&mut s, json!({"render": "gemini"}));
    let decls = declarations(&p);
    assert_eq!(decls.len(), 2422 + 1, "every tool inline, and tool_result_read: {}", decls.len());
    for d in decls {
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "description", "parametersJsonSchema"], "{d}");
        let name = d["name"].as_str().unwrap();
        assert!(gemini_name(name), "{name}");
        let schema = &d["parametersJsonSchema"];
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        refs_resolve(schema, schema).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert!(p["request"].get("systemInstruction").is_none(), "nothing deferred, no instruction");
    s.shutdown();

    // Deferred: the meta-tools are the declarations and the section is the instruction.
    let mut s = sidecar_with(&fixture_entries("always"));
    let p = plan(&mut s, json!({"render": "gemini"}));
    let names: Vec<&str> = declarations(&p).iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tool_search", "tool_inspect", "tool_invoke", "tool_result_read"]);
    let text = p["request"]["systemInstruction"]["parts"][0]["text"].as_str().unwrap();
    assert!(text.contains("DEFERRED_TOOLS") && text.contains("mcp:github"), "{text}");
    assert_eq!(p["request"].as_object().unwrap().len(), 2, "tools and systemInstruction only");
    // tool/invoke is the portable plan's: a search answers text, and no providerOutput.
    let found = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "create a github issue"}, "planId": p["planId"]}));
    assert_eq!(found["isError"], false, "{found}");
    assert!(found.get("providerOutput").is_none(), "{found}");
    assert!(found["output"]["value"].as_str().unwrap().contains("tool_inspect"), "{found}");
    // A client tool whose name Gemini refuses is refused here, not sent.
    let bad = s.err("exposition/plan", json!({"scope": {}, "render": "gemini", "clientTools": [{"name": "9lives", "description": "d", "inputSchema": {"type": "object"}}]}));
    assert_eq!(bad["code"], -32602, "{bad}");
    assert_eq!(bad["data"]["name"], "9lives", "{bad}");
    s.shutdown();
}

/// Why `s` breaks OpenAI's strict rules, if it does. Written from the published rules, apart
/// from the converter: the root an object and not `anyOf`; every object closed with every
/// property required; only supported keywords; at most 5,000 properties and 10 levels.
fn strict_violation(s: &Value) -> Option<String> {
    const KEYWORDS: &[&str] = &[
        "type", "description", "title", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs",
        "definitions", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
    ];
    const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
    fn walk(v: &Value, root: &Value, depth: usize, props: &mut usize) -> Result<(), String> {
        let o = v.as_object().ok_or_else(|| format!("a schema that is not an object: {v}"))?;
        if let Some(k) = o.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
            return Err(format!("keyword {k}"));
        }
        if let Some(f) = o.get("format") {
            if !FORMATS.contains(&f.as_str().unwrap_or_default()) {
                return Err(format!("format {f}"));
            }
        }
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            return if r == "#" || r.strip_prefix('#').is_some_and(|p| root.pointer(p).is_some()) { Ok(()) } else { Err(format!("{r} unresolved")) };
        }
        for k in ["$defs", "definitions"] {
            for d in o.get(k).and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
                walk(d, root, 0, props)?;
            }
        }
        if let Some(any) = o.get("anyOf") {
            return any.as_array().ok_or("anyOf not a list")?.iter().try_for_each(|b| walk(b, root, depth, props));
        }
        let types: Vec<&str> = match o.get("type") {
            Some(Value::String(t)) => vec![t],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if o.contains_key("enum") || o.contains_key("const") => vec![],
            _ => return Err("no type".into()),
        };
        if types.contains(&"object") {
            if depth + 1 > 10 {
                return Err("more than 10 levels".into());
            }
            if o.get("additionalProperties") != Some(&Value::Bool(false)) {
                return Err("an object without additionalProperties: false".into());
            }
            let p = o.get("properties").and_then(Value::as_object).ok_or("an object without properties")?;
            let required: Vec<&str> = o.get("required").and_then(Value::as_array).ok_or("no required")?.iter().filter_map(Value::as_str).collect();
            for (name, sub) in p {
                if !required.contains(&name.as_str()) {
                    return Err(format!("{name} not in required"));
                }
                *props += 1;
                walk(sub, root, depth + 1, props)?;
            }
        }
        if types.contains(&"array") {
            walk(o.get("items").ok_or("an array without items")?, root, depth, props)?;
        }
        Ok(())
    }
    if s.get("type") != Some(&json!("object")) {
        return Some("the root is not an object".into());
    }
    let mut props = 0;
    if let Err(e) = walk(s, s, 0, &mut props) {
        return Some(e);
    }
    (props > 5_000).then(|| format!("{props} properties"))
}

/// Every function of an OpenAI request, inline or in a namespace.
fn functions(request: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for t in request["tools"].as_array().unwrap() {
        match t["type"].as_str() {
            Some("function") => out.push(t),
            Some("namespace") => out.extend(t["tools"].as_array().unwrap()),
            _ => {}
        }
    }
    out
}

#[test]
fn strict_sends_most_fixture_tools_strict_and_says_why_not_for_the_rest() {
    // Some inline (never), most deferred into namespaces: both paths are checked.
    let mut entries = fixture_entries("always");
    for e in entries.iter_mut().step_by(10) {
        e["defer"] = json!("never");
    }
    let mut s = sidecar_with(&entries);
    let p = plan(&mut s, json!({"render": "openai", "strict": true, "include": ["deferred"]}));
    let fns: Vec<&Value> = functions(&p["request"]).into_iter().filter(|f| f["name"] != "tool_result_read").collect();
    assert_eq!(fns.len(), 2422);
    let mut strict = 0;
    for f in &fns {
        let name = f["name"].as_str().unwrap();
        match f["strict"].as_bool() {
            Some(true) => {
                strict += 1;
                if let Some(why) = strict_violation(&f["parameters"]) {
                    panic!("{name} is sent strict but breaks the rules ({why}): {}", f["parameters"]);
                }
            }
            Some(false) => {
                let note = p["placements"][name]["note"].as_str().unwrap_or_else(|| panic!("{name}: no note"));
                assert!(note.contains("not strict: "), "{name}: {note}");
            }
            None => panic!("{name} has no strict flag: {f}"),
        }
    }
    let share = strict as f64 / 2422.0;
    eprintln!("strict: {strict} of 2422 ({:.1}%)", share * 100.0);
    assert!(share >= 0.95, "only {strict} of 2,422 strict");
    // A search loads the strict forms the request has.
    let hit = s.ok("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "create a github issue"}, "planId": p["planId"], "callId": "c1"}));
    let loaded = &hit["providerOutput"]["tools"][0]["tools"][0];
    let sent = fns.iter().find(|f| f["name"] == loaded["name"]).unwrap();
    assert_eq!((&loaded["parameters"], &loaded["strict"]), (&sent["parameters"], &sent["strict"]), "{hit}");
    // Without strict, nothing changes: every function strict: false or none.
    let plain = plan(&mut s, json!({"render": "openai"}));
    assert!(functions(&plain["request"]).iter().all(|f| f["strict"] != true));
    let wrong = s.err("exposition/plan", json!({"scope": {}, "render": "anthropic", "strict": true}));
    assert_eq!((wrong["code"].as_i64(), wrong["data"]["field"].as_str()), (Some(-32602), Some("strict")), "{wrong}");
    s.shutdown();
}

#[test]
fn a_call_in_strict_shape_reaches_the_server_without_the_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let (defs, calls) = (dir.path().join("defs.json"), dir.path().join("calls.txt"));
    let schema = json!({"type": "object", "properties": {
        "title": {"type": "string"},
        "location": {"type": "string"},
        "note": {"type": ["string", "null"]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "when": {"type": "object", "properties": {"day": {"type": "string"}, "hour": {"type": "integer"}}, "required": ["day"]}
    }, "required": ["title"]});
    std::fs::write(&defs, serde_json::to_vec(&json!([{"name": "make_event", "description": "Make a calendar event.", "inputSchema": schema}])).unwrap()).unwrap();
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": dir.path().join("cache")}));
    let server = json!({"id": "cal", "name": "cal", "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--defs-file", defs, "--calls-file", calls]}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [server]}));
    let t = Instant::now();
    while s.ok_past_notes("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(t.elapsed() < TIMEOUT, "cal never became ready");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    let name = synced["registered"].as_array().unwrap().iter().filter_map(Value::as_str).find(|n| n.ends_with("makeEvent")).unwrap().to_string();
    let p = s.ok_past_notes("exposition/plan", json!({"scope": {}, "render": "openai", "strict": true}));
    let f = functions(&p["request"]).into_iter().find(|f| f["name"] == name.as_str()).unwrap().clone();
    assert_eq!(f["strict"], true, "{f}");
    assert_eq!(strict_violation(&f["parameters"]), None);
    // What a strict model sends: every property, null for the ones it leaves out (as text, as
    // OpenAI sends function arguments).
    // An open map is asked for as JSON text, and parsed back.
    assert_eq!(f["parameters"]["properties"]["labels"]["type"], json!(["string", "null"]), "{f}");
    let args = json!({"title": "Standup", "location": null, "note": null, "labels": "{\"team\": \"core\"}", "when": {"day": "Mon", "hour": null}}).to_string();
    let r = s.ok_past_notes("tool/invoke", json!({"name": name, "arguments": args, "planId": p["planId"]}));
    assert_eq!(r["isError"], false, "{r}");
    let said = r["output"]["value"].as_str().unwrap_or_default().to_string();
    let got: Value = serde_json::from_str(said.split_once(" called with ").map(|x| x.1).unwrap_or_else(|| panic!("{r}"))).unwrap();
    assert_eq!(got, json!({"title": "Standup", "note": null, "labels": {"team": "core"}, "when": {"day": "Mon"}}), "the nulls the schema refuses are dropped, the one it allows kept");
    s.shutdown();
}
