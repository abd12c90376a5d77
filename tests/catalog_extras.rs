//! Everything a server offers beside tools, on the sidecar face (issue 39 §1): resources,
//! resource templates, prompts, completions and subscriptions of the real reference server
//! server-everything (which offers them all) and of the fixture server with tools only,
//! through the real binary.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

fn wait_ready(s: &mut Sidecar, id: &str, notes: &mut Vec<Value>) {
    let start = Instant::now();
    loop {
        let st = s.call_noting("catalog/status", json!({}), notes)["result"].clone();
        let me = st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).unwrap().clone();
        if me["state"] == "ready" {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{id} not ready: {me}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn everything_and_plain(s: &mut Sidecar) -> Vec<Value> {
    s.ok("initialize", json!({"timeouts": {"connectMs": 30000, "listMs": 30000}}));
    s.ok("catalog/setServers", json!({"servers": [
        {"id": "everything", "name": "Everything", "enabled": true, "transport": {"type": "stdio", "command": "node", "args": [reference_server("server-everything"), "stdio"]}},
        {"id": "plain", "name": "Plain", "enabled": true, "transport": {"type": "stdio", "command": fixture_mcp(), "args": ["--tools", "2"]}}
    ]}));
    let mut notes = Vec::new();
    wait_ready(s, "everything", &mut notes);
    wait_ready(s, "plain", &mut notes);
    // The lists arrive with the tools, so both are known once the servers are ready.
    notes
}

fn noted(notes: &[Value], method: &str, server: &str) -> bool {
    notes.iter().any(|n| n["method"] == method && n["params"]["serverId"] == server)
}

#[test]
fn lists_come_from_the_catalog_with_their_server_and_say_what_is_not_offered() {
    let mut s = Sidecar::spawn();
    let notes = everything_and_plain(&mut s);
    assert!(noted(&notes, "catalog/resourcesChanged", "everything"), "{notes:?}");
    assert!(noted(&notes, "catalog/promptsChanged", "everything"), "{notes:?}");
    assert!(!noted(&notes, "catalog/resourcesChanged", "plain") && !noted(&notes, "catalog/promptsChanged", "plain"), "{notes:?}");

    let all = s.ok("catalog/listResources", json!({}));
    let resources = all["resources"].as_array().unwrap();
    assert!(resources.len() >= 5, "{all}");
    assert!(resources.iter().all(|r| r["serverId"] == "everything" && r["uri"].is_string() && r["name"].is_string()), "{all}");
    assert!(resources.iter().any(|r| r["uri"] == "demo://resource/static/document/architecture.md"), "{all}");
    assert_eq!(s.ok("catalog/listResources", json!({"serverId": "everything"}))["resources"], all["resources"]);

    let templates = s.ok("catalog/listResourceTemplates", json!({"serverId": "everything"}));
    let uris: Vec<&str> = templates["resourceTemplates"].as_array().unwrap().iter().map(|t| t["uriTemplate"].as_str().unwrap()).collect();
    assert!(uris.contains(&"demo://resource/dynamic/text/{resourceId}"), "{templates}");

    let prompts = s.ok("catalog/listPrompts", json!({}));
    let names: Vec<&str> = prompts["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"simple-prompt") && names.contains(&"args-prompt"), "{prompts}");
    let args = prompts["prompts"].as_array().unwrap().iter().find(|p| p["name"] == "args-prompt").unwrap();
    assert_eq!(args["serverId"], "everything");
    assert_eq!(args["arguments"][0]["name"], "city", "{args}");

    // Not offered is an error naming what, never an empty list.
    for (method, upstream) in [("catalog/listResources", "resources/list"), ("catalog/listResourceTemplates", "resources/templates/list"), ("catalog/listPrompts", "prompts/list")] {
        let e = s.err(method, json!({"serverId": "plain"}));
        assert_eq!(e["code"], -32016, "{method}: {e}");
        assert_eq!(e["data"], json!({"serverId": "plain", "method": upstream}), "{method}: {e}");
        assert!(e["message"].as_str().unwrap().contains("does not offer"), "{e}");
    }
    assert_eq!(s.err("catalog/listResources", json!({"serverId": "nope"}))["code"], -32012);
    let bad = s.err("catalog/listResources", json!({"cursor": "not-a-cursor"}));
    assert_eq!(bad["code"], -32602, "{bad}");
    s.shutdown();
}

#[test]
fn reads_gets_and_completions_go_to_the_server() {
    let mut s = Sidecar::spawn();
    everything_and_plain(&mut s);

    let read = s.ok("catalog/readResource", json!({"serverId": "everything", "uri": "demo://resource/dynamic/text/7"}));
    let content = &read["contents"][0];
    assert_eq!(content["uri"], "demo://resource/dynamic/text/7", "{read}");
    assert!(content["text"].as_str().is_some_and(|t| t.contains('7')), "{read}");
    let doc = s.ok("catalog/readResource", json!({"serverId": "everything", "uri": "demo://resource/static/document/architecture.md"}));
    assert!(doc["contents"][0]["text"].as_str().is_some_and(|t| t.len() > 100), "{doc}");

    let prompt = s.ok("catalog/getPrompt", json!({"serverId": "everything", "name": "args-prompt", "arguments": {"city": "Lisbon"}}));
    assert!(prompt["messages"].to_string().contains("Lisbon"), "{prompt}");

    let done = s.ok("catalog/complete", json!({"serverId": "everything", "ref": {"type": "ref/prompt", "name": "completable-prompt"}, "argument": {"name": "department", "value": "Eng"}}));
    assert_eq!(done["completion"]["values"], json!(["Engineering"]), "{done}");

    // The server's own refusal comes back as an error, its text kept.
    let unknown = s.err("catalog/getPrompt", json!({"serverId": "everything", "name": "no-such-prompt"}));
    assert!(unknown["message"].as_str().unwrap().to_lowercase().contains("prompt"), "{unknown}");
    for (method, params) in [
        ("catalog/readResource", json!({"serverId": "plain", "uri": "x://y"})),
        ("catalog/getPrompt", json!({"serverId": "plain", "name": "p"})),
        ("catalog/complete", json!({"serverId": "plain", "ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}})),
    ] {
        let e = s.err(method, params);
        assert_eq!(e["code"], -32016, "{method}: {e}");
    }
    s.shutdown();
}

#[test]
fn a_subscribed_resource_reports_updates_until_unsubscribed() {
    let mut s = Sidecar::spawn();
    everything_and_plain(&mut s);
    s.ok("registry/syncMcp", json!({}));
    let uri = "demo://resource/dynamic/text/1";
    s.ok("catalog/subscribeResource", json!({"serverId": "everything", "uri": uri}));
    // server-everything sends updates of subscribed resources every 5 s once asked to.
    let on = s.ok("tool/invoke", json!({"name": "mcp__everything__toggleSubscriberUpdates", "arguments": {}}));
    assert_eq!(on["isError"], false, "{on}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let update = loop {
        assert!(Instant::now() < deadline, "no catalog/resourceUpdated within 30 s");
        if let Some(m) = s.try_recv(Duration::from_millis(500)) {
            if m["method"] == "catalog/resourceUpdated" {
                break m;
            }
        }
    };
    assert_eq!(update["params"], json!({"serverId": "everything", "uri": uri}), "{update}");
    s.ok("catalog/unsubscribeResource", json!({"serverId": "everything", "uri": uri}));
    assert_eq!(s.err("catalog/subscribeResource", json!({"serverId": "plain", "uri": uri}))["code"], -32016);
    s.shutdown();
}
