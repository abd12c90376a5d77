//! No hidden text anywhere the model or the user reads, over the real binary and the fixture
//! MCP server's `--hidden` tools (hidden characters in a property name, also behind a `$ref`,
//! an enum value, a `const`, a `default`, `examples`, a `pattern`, nested descriptions, a tool
//! name; and two property names that differ only by a zero-width space):
//! - the model reads clean definitions in every plan rendering, `tool_search`, `tool_inspect`
//!   and `toolreg mcp`'s `tools/list`, and a call with the cleaned property names reaches the
//!   server under its own names (both faces);
//! - the user reads every hidden character shown as `\u{...}` in `catalog/listTools`,
//!   `catalog/pins` and the gateway's approval prompt;
//! - the plan's warnings name each tool that had some once, and the tool whose names would
//!   merge is refused, readably, and never called.
mod support;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use support::gateway::{fixture, write_config, McpClient};
use support::*;

/// Raw hidden characters in `text` (tag block, bidi controls, zero-width, BOM, controls).
fn raw_hidden(text: &str) -> Vec<String> {
    text.chars()
        .filter(|c| {
            matches!(*c as u32, 0xE0000..=0xE007F | 0x202A..=0x202E | 0x2066..=0x2069 | 0x200B..=0x200F | 0x2060..=0x2064 | 0xFEFF | 0x00..=0x08 | 0x0E..=0x1F)
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

fn assert_clean(what: &str, v: &Value) {
    let body = serde_json::to_string(v).unwrap();
    assert_eq!(raw_hidden(&body), Vec::<String>::new(), "{what}: {body}");
}

fn start(cache: &Path, servers: Value) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": cache.to_str().unwrap(), "timeouts": {"connectMs": 5000, "listMs": 5000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": servers}));
    let t = Instant::now();
    while s.ok_past_notes("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(t.elapsed() < TIMEOUT, "the server never became ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    s
}

fn quit(mut s: Sidecar) {
    let r = s.call_noting("shutdown", Value::Null, &mut Vec::new());
    assert_eq!(r["result"], Value::Null, "{r}");
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

fn server(args: &[&str]) -> Value {
    json!({"id": "hid", "name": "hid", "transport": {"type": "stdio", "command": fixture_mcp(), "args": args}})
}

fn out_text(r: &Value) -> String {
    r["output"]["value"].as_str().map(str::to_string).unwrap_or_else(|| r["output"].to_string())
}

const SNEAKY: &str = "mcp__hid__sneaky";
const TWINS: &str = "mcp__hid__twins";

/// What the server received, as the fixture's `sneaky` echoes it: the server's own names.
fn received(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not the fixture's echo ({e}): {text}"))
}

#[test]
fn the_model_reads_clean_definitions_and_calls_reach_the_server_under_its_own_names() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.txt");
    let mut s = start(&dir.path().join("cache"), json!([server(&["--hidden", "--tools", "60", "--calls-file", calls.to_str().unwrap()])]));
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    let registered = synced["registered"].as_array().unwrap();
    assert!(registered.contains(&json!(SNEAKY)) && registered.contains(&json!(TWINS)), "{synced}");
    let listed = s.ok_past_notes("registry/list", json!({"namespace": "mcp:hid"}));
    assert_clean("registry/list", &listed);
    assert!(listed["entries"].as_array().unwrap().iter().any(|e| e["source"]["toolName"] == "peek\\u{200B}"), "{listed}");

    let scope = json!({"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []});
    let mut plan_id = String::new();
    // A large window lists every definition inline; a small one defers them, which the native
    // renderings still send whole (`defer_loading`), and which the meta-tools search.
    for (render, window) in [("portable", 1_000_000), ("anthropic", 16000), ("openai", 16000), ("portable", 16000)] {
        let p = s.ok_past_notes("exposition/plan", json!({"scope": scope, "contextWindow": window, "model": "gpt-4o", "include": ["deferred"], "render": render}));
        assert_clean(render, &p);
        let deferred = p["deferred"].as_array().unwrap().iter().any(|d| d["name"] == SNEAKY);
        assert_eq!(deferred, window == 16000, "{render} {window}: {}", p["deferred"]);
        if render == "portable" && deferred {
            plan_id = p["planId"].as_str().unwrap().to_string();
            continue;
        }
        let body = serde_json::to_string(&p).unwrap();
        assert!(body.contains("Label a note.") && body.contains("\"label\"") && body.contains("memo"), "{render}: the visible text stays: {body}");
        assert!(p["placements"].get(TWINS).is_none(), "{render}: the tool whose names would merge is not offered: {body}");
        // Each tool that had hidden text is named once, however many places it had them.
        let warned: Vec<&str> = p["warnings"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
        assert_eq!(warned, [SNEAKY, TWINS], "{render}: {}", p["warnings"]);
        let sneaky = &p["warnings"][0]["message"];
        assert!(sneaky.as_str().unwrap().contains("hidden characters") && sneaky.as_str().unwrap().contains("3 property names changed"), "{sneaky}");
        assert!(p["warnings"][1]["message"].as_str().unwrap().contains("not offered"), "{}", p["warnings"]);
    }

    let meta = |s: &mut Sidecar, tool: &str, args: Value| s.ok_past_notes("tool/invoke", json!({"name": tool, "arguments": args, "callId": "c1", "planId": plan_id}));
    for args in [json!({"query": "label a note"}), json!({"query": "label a note", "verbose": true})] {
        let r = meta(&mut s, "tool_search", args.clone());
        assert_clean("tool_search", &r);
        assert!(out_text(&r).contains(SNEAKY), "{args}: {r}");
    }
    let r = meta(&mut s, "tool_inspect", json!({"name": SNEAKY}));
    assert_eq!(r["isError"], false, "{r}");
    assert_clean("tool_inspect", &r);
    let sig = out_text(&r);
    assert!(sig.contains("label") && sig.contains("owner") && sig.contains("\"fast\"") && sig.contains("\"memo\""), "{sig}");

    // The model sends the names it saw; the server gets its own, at every depth.
    let args = json!({"label": "todo", "meta": {"owner": "me"}, "place": {"city": "Oslo"}});
    let want = json!({"lab\u{200b}el": "todo", "meta": {"ow\u{200d}ner": "me"}, "place": {"ci\u{200c}ty": "Oslo"}, "mode": "slow"});
    let r = s.ok_past_notes("tool/invoke", json!({"name": SNEAKY, "arguments": args, "callId": "c2"}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(received(&out_text(&r)), want);
    let r = meta(&mut s, "tool_invoke", json!({"name": SNEAKY, "params": args}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(received(&out_text(&r)), want);
    // Validated against what the model saw: a value outside the cleaned enum is refused.
    let r = s.ok_past_notes("tool/invoke", json!({"name": SNEAKY, "arguments": {"label": "todo", "mode": "fast\u{200b}x"}, "callId": "c3"}));
    assert_eq!(r["isError"], true, "{r}");

    // The tool whose names would merge is refused, readably, and never reaches the server.
    let r = s.ok_past_notes("tool/invoke", json!({"name": TWINS, "arguments": {"id": "1"}, "callId": "c4"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(out_text(&r).contains("differ only in hidden characters"), "{r}");
    assert_clean("refusal", &r);
    let ran: Vec<String> = std::fs::read_to_string(&calls).unwrap().lines().map(str::to_string).collect();
    assert_eq!(ran, ["sneaky", "sneaky"]);
    quit(s);
}

#[test]
fn the_user_reviews_hidden_characters_shown_in_list_tools_and_pins() {
    let dir = tempfile::tempdir().unwrap();
    let defs = dir.path().join("defs.json");
    let mut s = start(&dir.path().join("cache"), json!([server(&["--hidden", "--defs-file", defs.to_str().unwrap()])]));

    let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "hid"}));
    assert_clean("listTools", &list);
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"peek\\u{200B}"), "a hidden character in a name is shown: {names:?}");
    let sneaky = tools.iter().find(|t| t["name"] == "sneaky").unwrap();
    assert!(sneaky["description"].as_str().unwrap().starts_with("Label a note.\\u{E0041}\\u{E006C}\\u{E0073}"), "{sneaky}");
    let label = &sneaky["inputSchema"]["properties"]["lab\\u{200B}el"];
    assert_eq!(label["pattern"], "^[a-z]+\\u{2060}$", "{sneaky}");
    assert_eq!(label["examples"], json!(["todo\\u{202E}"]));
    assert_eq!(sneaky["inputSchema"]["properties"]["mode"]["enum"], json!(["fast\\u{200B}", "slow"]));
    assert_eq!(sneaky["inputSchema"]["properties"]["mode"]["default"], "slow\\u{FEFF}");
    assert_eq!(sneaky["inputSchema"]["properties"]["kind"]["const"], "memo\\u{2066}");
    assert_eq!(sneaky["inputSchema"]["required"], json!(["lab\\u{200B}el"]));
    let twins = tools.iter().find(|t| t["name"] == "twins").unwrap();
    let props: Vec<&String> = twins["inputSchema"]["properties"].as_object().unwrap().keys().collect();
    assert_eq!(props, ["id", "i\\u{200B}d"], "both names shown, neither dropped");

    // The server rewrites `sneaky` (a bidi override in the description, a hidden property) and
    // a tool appears whose name hides a character.
    let poisoned = "Label a note.\u{202e}txt.exe";
    std::fs::write(&defs, serde_json::to_vec(&json!([
        {"name": "sneaky", "description": poisoned, "inputSchema": {"type": "object", "properties": {"ke\u{200b}y": {"type": "string"}}}},
        {"name": "up\u{200b}load", "description": "Upload", "inputSchema": {"type": "object"}}
    ])).unwrap()).unwrap();
    let mut notes = Vec::new();
    let t = Instant::now();
    let notice = loop {
        s.call_noting("catalog/refresh", json!({"serverId": "hid"}), &mut notes);
        if let Some(n) = notes.iter().find(|n| n["method"] == "catalog/didChange" && n["params"].get("newTools").is_some_and(|v| v != &json!([]))) {
            break n["params"].clone();
        }
        assert!(t.elapsed() < TIMEOUT, "no didChange naming the held tools: {notes:?}");
        if let Some(m) = s.try_recv(Duration::from_millis(100)) {
            notes.push(m);
        }
    };
    assert_clean("didChange", &notice);
    assert_eq!(notice["newTools"], json!(["up\\u{200B}load"]), "{notice}");

    let pins = s.ok_past_notes("catalog/pins", json!({"serverId": "hid"}));
    assert_clean("pins", &pins);
    let pin = |name: &str| pins["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no pin for {name}: {pins}")).clone();
    let changed = pin("sneaky");
    assert_eq!(changed["state"], "changed", "{changed}");
    assert!(changed["diff"]["descriptionBefore"].as_str().unwrap().starts_with("Label a note.\\u{E0041}"), "{changed}");
    assert_eq!(changed["diff"]["descriptionAfter"], "Label a note.\\u{202E}txt.exe");
    assert!(changed["diff"]["changedPaths"].as_array().unwrap().contains(&json!("/inputSchema/properties/ke\\u{200B}y")), "{changed}");
    let new = pin("up\\u{200B}load");
    assert_eq!(new["state"], "new");

    // The host approves what it was shown, by the name it was shown.
    let fp = new["fingerprint"].clone();
    let approved = s.ok_past_notes("catalog/approveTools", json!({"serverId": "hid", "tools": ["up\\u{200B}load"], "fingerprints": {"up\\u{200B}load": fp}}));
    let after = approved["tools"].as_array().unwrap().iter().find(|t| t["name"] == "up\\u{200B}load").unwrap().clone();
    assert_eq!(after["state"], "approved", "{approved}");
    quit(s);
}

#[test]
fn toolreg_mcp_lists_clean_tools_asks_with_hidden_text_shown_and_calls_under_the_servers_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = fixture("hid", &["--hidden"]);
    server["approvalTools"] = json!(["sneaky"]);
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
    let mut c = McpClient::ready(&path, json!({"elicitation": {"form": {}}}));
    let list = c.ok("tools/list", json!({}));
    assert_clean("tools/list", &list);
    let tools = list["tools"].as_array().unwrap();
    let sneaky = tools.iter().find(|t| t["name"] == SNEAKY).unwrap_or_else(|| panic!("{list}"));
    let props: Vec<&String> = sneaky["inputSchema"]["properties"].as_object().unwrap().keys().collect();
    assert_eq!(props, ["label", "mode", "kind", "meta", "place"]);
    assert!(!tools.iter().any(|t| t["name"] == TWINS), "{list}");

    c.answer = Box::new(|m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        json!({"action": "accept", "content": {"decision": "approve"}})
    });
    let r = c.call(SNEAKY, json!({"label": "todo", "meta": {"owner": "a\u{202e}b"}}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(received(&support::gateway::text(&r)), json!({"lab\u{200b}el": "todo", "meta": {"ow\u{200d}ner": "a\u{202e}b"}, "mode": "slow"}));
    let asked = &c.asked[0]["params"];
    assert_clean("approval prompt", asked);
    let message = asked["message"].as_str().unwrap();
    assert!(message.contains("a\\u{202E}b") && message.contains("\"owner\""), "the user sees the hidden character the model sent: {message}");
    // The log names each tool once, however often the listing is rebuilt.
    c.ok("tools/list", json!({}));
    let log: Vec<String> = c.stderr.try_iter().collect();
    let sneaky = log.iter().filter(|l| l.contains(SNEAKY) && l.contains("hidden characters")).count();
    let twins = log.iter().filter(|l| l.contains(TWINS) && l.contains("not offered")).count();
    assert_eq!((sneaky, twins), (1, 1), "{log:#?}");
}

#[test]
fn the_hosts_approval_request_shows_hidden_characters_the_model_sent() {
    let dir = tempfile::tempdir().unwrap();
    let mut srv = server(&["--hidden"]);
    srv["approvalTools"] = json!(["sneaky"]);
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": dir.path().to_str().unwrap(), "capabilities": {"approval": true}, "timeouts": {"connectMs": 5000, "listMs": 5000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [srv]}));
    let t = Instant::now();
    while s.ok_past_notes("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(t.elapsed() < TIMEOUT, "the server never became ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    s.ok_past_notes("registry/syncMcp", json!({}));
    let id = s.next_id();
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tool/invoke", "params": {"name": SNEAKY, "callId": "c1",
        "arguments": {"label": "todo", "meta": {"owner": "a\u{202e}b"}}}}));
    let asked = loop {
        let m = s.recv();
        if m["method"] == "approval/request" {
            break m["params"].clone();
        }
        assert!(m.get("id").is_none() || m["id"] != json!(id), "answered before the approval: {m}");
    };
    assert_clean("approval/request", &asked);
    assert_eq!(asked["arguments"], json!({"label": "todo", "meta": {"owner": "a\\u{202E}b"}, "mode": "slow"}), "the model's names (and defaults), hidden characters shown");
    s.send(&json!({"jsonrpc": "2.0", "id": "ap", "method": "approval/respond", "params": {"approvalId": asked["approvalId"], "decision": "approve"}}));
    let r = loop {
        let m = s.recv();
        if m["id"] == json!(id) {
            break m["result"].clone();
        }
    };
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(received(&out_text(&r)), json!({"lab\u{200b}el": "todo", "meta": {"ow\u{200d}ner": "a\u{202e}b"}, "mode": "slow"}), "the server gets the model's value under its own names");
    quit(s);
}
