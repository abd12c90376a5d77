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
    // The capabilities are what the upstreams listed by `initialize`: wait for them however
    // slowly node starts on a loaded machine (the default warm-up is 5 s).
    let path = write_config(dir.path(), &json!({"servers": [everything("everything")], "gateway": {"defer": "never", "trustedClient": true, "warmupMs": 60000}}));
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

/// The `_meta` of a 2026-07-28 request: no session, its version and client in each request.
fn meta_2026() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "toolreg-test", "version": "0"}})
}

/// A 2026-07-28 client subscribes by `subscriptions/listen` with `resourceSubscriptions`: the
/// gateway acknowledges the URIs it can route, subscribes each upstream (a 2025-11-25 one by
/// `resources/subscribe`, a 2026-07-28 one by a listen stream of its own), forwards their
/// updates on the client's stream under the URIs it asked for, and leaves both upstreams when
/// the stream is cancelled. A 2025-11-25 client's `resources/subscribe` reaches a 2026-07-28
/// upstream the same way.
#[test]
fn a_2026_client_subscribes_to_resources_through_subscriptions_listen() {
    let dir = tempfile::tempdir().unwrap();
    let every = ["--conformance", "--updates-every-ms", "100"];
    let modern = ["--conformance", "--modern", "--updates-every-ms", "100"];
    let servers = json!([fixture("old", &every), fixture("new", &modern)]);
    let path = write_config(dir.path(), &json!({"servers": servers, "gateway": {"defer": "never"}}));
    let mut c = spawn(&path, &[], &[]);
    // Both serve the watched resource: listed qualified, one per server.
    let (old, new) = ("toolreg://old/test://watched-resource", "toolreg://new/test://watched-resource");
    let mut params = json!({});
    params["_meta"] = meta_2026();
    let start = Instant::now();
    while !field(&c.ok("resources/list", params.clone()), "resources", "uri").contains(&new.to_string()) {
        assert!(start.elapsed() < Duration::from_secs(30), "the upstreams never listed");
        std::thread::sleep(Duration::from_millis(200));
    }
    let asked = json!([old, new, "test://watched-resource", "toolreg://nowhere/x"]);
    c.send(&json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": asked}, "_meta": meta_2026()}}));
    let ack = c.wait_note("notifications/subscriptions/acknowledged", Duration::from_secs(10)).unwrap_or_else(|| panic!("no ack: {:?}", c.notes));
    // An ambiguous URI and an unknown server are not acknowledged: they would reach no one.
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!([old, new]), "{ack}");
    for uri in [old, new] {
        let start = Instant::now();
        loop {
            let note = c.wait_note("notifications/resources/updated", Duration::from_secs(10)).unwrap_or_else(|| panic!("no update of {uri}"));
            assert_eq!(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1", "{note}");
            if note["params"]["uri"] == uri {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "no update of {uri}");
        }
    }
    // Cancelled: both upstreams are left, so the updates stop.
    c.notify("notifications/cancelled", json!({"requestId": "sub-1"}));
    std::thread::sleep(Duration::from_millis(500));
    c.clear_notes();
    assert!(c.wait_note("notifications/resources/updated", Duration::from_millis(800)).is_none(), "updates after the stream ended");

    // A 2025-11-25 client's resources/subscribe of the 2026-07-28 upstream's resource.
    let (mut s, _) = spawn_ready(&path);
    list_until(&mut s, "resources/list", |r| field(r, "resources", "uri").contains(&new.to_string()));
    s.ok("resources/subscribe", json!({"uri": new}));
    let note = s.wait_note("notifications/resources/updated", Duration::from_secs(10)).unwrap_or_else(|| panic!("no update: {:?}", s.notes));
    assert_eq!(note["params"]["uri"], new, "{note}");
    s.ok("resources/unsubscribe", json!({"uri": new}));
    std::thread::sleep(Duration::from_millis(500));
    s.clear_notes();
    assert!(s.wait_note("notifications/resources/updated", Duration::from_millis(800)).is_none(), "updates after unsubscribe");
}
