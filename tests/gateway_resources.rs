//! `toolreg mcp` aggregating resources, resource templates, prompts and completion, against the
//! real reference server `@modelcontextprotocol/server-everything` (installed by `.ci/run`):
//! upstream names kept when unique, qualified when two upstreams share them (`shelf.rs`), a
//! subscription's updates forwarded, and a hung upstream delaying no list.

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::gateway::{fixture, spawn, write_config, McpClient};
use support::reference_server;

fn everything(id: &str) -> Value {
    json!({"id": id, "name": id, "trust": "auto", "transport": {"type": "stdio", "command": "node", "args": [reference_server("server-everything"), "stdio"]}})
}

fn field(list: &Value, key: &str, name: &str) -> Vec<String> {
    list[key].as_array().unwrap().iter().map(|i| i[name].as_str().unwrap().to_string()).collect()
}

/// Lists `method` until `ready` holds for the result (upstreams connect in the background).
fn list_until(c: &mut McpClient, method: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let r = c.ok(method, json!({}));
        if ready(&r) {
            return r;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{method} never got there: {r}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn text_of(result: &Value) -> String {
    result["messages"].as_array().unwrap().iter().filter_map(|m| m["content"]["text"].as_str()).collect::<Vec<_>>().join("\n")
}

#[test]
fn one_upstream_keeps_its_names_for_resources_prompts_and_completion() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [everything("everything")], "gateway": {"defer": "never", "trustedClient": true}}));
    let (mut c, caps) = spawn_ready(&path);
    assert_eq!(caps["resources"], json!({"listChanged": true, "subscribe": true}), "{caps}");
    assert_eq!(caps["prompts"], json!({"listChanged": true}), "{caps}");
    assert!(caps["completions"].is_object() && caps["tools"].is_object(), "{caps}");
    let resources = list_until(&mut c, "resources/list", |r| r["resources"].as_array().is_some_and(|a| !a.is_empty()));
    let uris = field(&resources, "resources", "uri");
    let doc = uris.iter().find(|u| u.starts_with("demo://resource/static/document/")).unwrap_or_else(|| panic!("{uris:?}")).clone();
    // Text, by its upstream URI.
    let read = c.ok("resources/read", json!({"uri": doc}));
    assert_eq!(read["contents"][0]["uri"], doc.as_str(), "{read}");
    assert!(!read["contents"][0]["text"].as_str().unwrap_or_default().is_empty(), "{read}");
    // Templates, and a blob read through one.
    let templates = field(&c.ok("resources/templates/list", json!({})), "resourceTemplates", "uriTemplate");
    assert!(templates.contains(&"demo://resource/dynamic/blob/{resourceId}".to_string()), "{templates:?}");
    let blob = c.ok("resources/read", json!({"uri": "demo://resource/dynamic/blob/3"}));
    assert!(blob["contents"][0]["blob"].as_str().is_some_and(|b| !b.is_empty()), "{blob}");
    // Prompts, one with arguments.
    let prompts = field(&c.ok("prompts/list", json!({})), "prompts", "name");
    assert!(prompts.contains(&"args-prompt".to_string()) && prompts.contains(&"simple-prompt".to_string()), "{prompts:?}");
    let got = c.ok("prompts/get", json!({"name": "args-prompt", "arguments": {"city": "Paris", "state": "Texas"}}));
    assert!(text_of(&got).contains("Paris, Texas"), "{got}");
    // Completion of a prompt argument and of a template variable.
    let done = c.ok("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "completable-prompt"}, "argument": {"name": "department", "value": "Eng"}}));
    assert_eq!(done["completion"]["values"], json!(["Engineering"]), "{done}");
    let done = c.ok("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}, "argument": {"name": "resourceId", "value": "1"}}));
    assert!(done["completion"]["values"].as_array().is_some(), "{done}");
    // A subscription's updates reach the client under the URI it subscribed with.
    let uri = "demo://resource/dynamic/text/1";
    c.ok("resources/subscribe", json!({"uri": uri}));
    let names = c.tool_names();
    let toggle = names.iter().find(|n| n.ends_with("toggleSubscriberUpdates")).unwrap_or_else(|| panic!("{names:?}")).clone();
    let r = c.call(&toggle, json!({}));
    assert_eq!(r["isError"], false, "{r}");
    let note = c.wait_note("notifications/resources/updated", Duration::from_secs(15)).unwrap_or_else(|| panic!("no update: {:?}", c.notes));
    assert_eq!(note["params"]["uri"], uri);
    c.ok("resources/unsubscribe", json!({"uri": uri}));
    let _ = c.call(&toggle, json!({}));
    // An unknown prompt is the client's error, not a silent pick.
    let r = c.request("prompts/get", json!({"name": "no-such-prompt"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[test]
fn two_upstreams_sharing_names_are_both_reachable_and_a_hung_one_delays_no_list() {
    let dir = tempfile::tempdir().unwrap();
    // `hung` never finishes its handshake; the warm-up gives up on it after a second.
    let servers = json!([everything("ev1"), everything("ev2"), fixture("hung", &["--slow-start-ms", "600000"])]);
    let path = write_config(dir.path(), &json!({"servers": servers, "gateway": {"defer": "never", "warmupMs": 1000}}));
    let (mut c, _) = spawn_ready(&path);
    let both = |r: &Value| {
        let uris = r["resources"].as_array().map(|a| a.iter().filter_map(|i| i["uri"].as_str()).collect::<Vec<_>>()).unwrap_or_default();
        uris.iter().any(|u| u.starts_with("toolreg://ev1/")) && uris.iter().any(|u| u.starts_with("toolreg://ev2/"))
    };
    list_until(&mut c, "resources/list", both);
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let start = Instant::now();
        c.ok(method, json!({}));
        assert!(start.elapsed() < Duration::from_millis(500), "{method} took {:?} with a hung upstream", start.elapsed());
    }
    let resources = c.ok("resources/list", json!({}));
    let uris = field(&resources, "resources", "uri");
    // Shared by both: no bare upstream URI is listed.
    assert!(uris.iter().all(|u| u.starts_with("toolreg://")), "{uris:?}");
    for server in ["ev1", "ev2"] {
        let uri = uris.iter().find(|u| u.starts_with(&format!("toolreg://{server}/demo://resource/static/document/"))).unwrap().clone();
        let read = c.ok("resources/read", json!({"uri": uri}));
        assert_eq!(read["contents"][0]["uri"], uri.as_str(), "{read}");
        let got = c.ok("prompts/get", json!({"name": format!("mcp__{server}__args-prompt"), "arguments": {"city": server}}));
        assert!(text_of(&got).contains(server), "{got}");
        let blob = c.ok("resources/read", json!({"uri": format!("toolreg://{server}/demo://resource/dynamic/blob/2")}));
        assert!(blob["contents"][0]["blob"].is_string(), "{blob}");
        let done = c.ok("completion/complete", json!({"ref": {"type": "ref/prompt", "name": format!("mcp__{server}__completable-prompt")}, "argument": {"name": "department", "value": "Sa"}}));
        assert_eq!(done["completion"]["values"], json!(["Sales"]), "{done}");
    }
    let prompts = field(&c.ok("prompts/list", json!({})), "prompts", "name");
    assert!(prompts.contains(&"mcp__ev1__simple-prompt".to_string()) && prompts.contains(&"mcp__ev2__simple-prompt".to_string()), "{prompts:?}");
    assert!(!prompts.contains(&"simple-prompt".to_string()), "{prompts:?}");
    let templates = field(&c.ok("resources/templates/list", json!({})), "resourceTemplates", "uriTemplate");
    assert!(templates.contains(&"toolreg://ev2/demo://resource/dynamic/text/{resourceId}".to_string()), "{templates:?}");
    // The shared bare names never resolve to one of them: the error names both forms.
    let r = c.request("prompts/get", json!({"name": "simple-prompt"}));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("mcp__ev1__simple-prompt") && message.contains("mcp__ev2__simple-prompt"), "{r}");
    let r = c.request("resources/read", json!({"uri": "demo://resource/dynamic/text/1"}));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("toolreg://ev1/") && message.contains("toolreg://ev2/"), "{r}");
}

/// Initialized as a 2025-11-25 client: `initialize` waits for the warm-up, so its capabilities
/// declare what the upstreams that listed offer.
fn spawn_ready(path: &str) -> (McpClient, Value) {
    let mut c = spawn(path, &[], &[]);
    let r = c.ok("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "toolreg-test", "version": "0"}}));
    c.notify("notifications/initialized", json!({}));
    (c, r["capabilities"].clone())
}
