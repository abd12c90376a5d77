//! MCP Apps through `toolreg mcp` (issue 39 §3), with real parts: the ext-apps example servers
//! `@modelcontextprotocol/server-basic-vanillajs` and `server-system-monitor` (installed by
//! `.ci/run`), and the fixture server's `--apps`. Tools keep their `_meta`; a client that
//! declared the `io.modelcontextprotocol/ui` extension gets view tools inline and app-only tools
//! listed, any other client never sees an app-only tool and is refused calling one; colliding
//! view URIs keep the `ui://` scheme and each tool names its own; upstreams hear the extension.

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::gateway::{fixture, text, write_config, McpClient};
use support::reference_server;

const EXT: &str = "io.modelcontextprotocol/ui";
const VIEW_MIME: &str = "text/html;profile=mcp-app";

fn example(id: &str, pkg: &str) -> Value {
    json!({"id": id, "name": id, "trust": "auto", "transport": {"type": "stdio", "command": "node", "args": [reference_server(pkg), "--stdio"]}})
}

fn examples() -> Value {
    json!([example("time", "server-basic-vanillajs"), example("monitor", "server-system-monitor")])
}

/// Client capabilities of a host that renders views.
fn renders() -> Value {
    json!({"extensions": {EXT: {"mimeTypes": [VIEW_MIME]}}})
}

fn tools(c: &mut McpClient) -> Vec<Value> {
    c.ok("tools/list", json!({}))["tools"].as_array().unwrap().clone()
}

/// The listed tools once `ready` holds for their names (upstreams connect in the background).
fn tools_until(c: &mut McpClient, ready: impl Fn(&[String]) -> bool) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let t = tools(c);
        let names: Vec<String> = t.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
        if ready(&names) {
            return t;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "tools/list never got there: {names:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn named<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools.iter().find(|t| t["name"] == name)
}

fn has(names: &[String], name: &str) -> bool {
    names.iter().any(|n| n == name)
}

#[test]
fn the_example_servers_keep_their_meta_and_only_a_client_that_renders_gets_app_only_tools() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": examples(), "gateway": {"defer": "never", "trustedClient": true}}));

    let mut host = McpClient::ready(&path, renders());
    let listed = tools_until(&mut host, |n| has(n, "mcp__time__getTime") && has(n, "mcp__monitor__pollSystemStats"));
    let time = named(&listed, "mcp__time__getTime").unwrap();
    // `_meta` as the server sent it: the nested and the flat form of the view.
    assert_eq!(time["_meta"]["ui"]["resourceUri"], "ui://get-time/mcp-app.html", "{time}");
    assert_eq!(time["_meta"]["ui/resourceUri"], "ui://get-time/mcp-app.html", "{time}");
    let poll = named(&listed, "mcp__monitor__pollSystemStats").unwrap();
    assert_eq!(poll["_meta"]["ui"]["visibility"], json!(["app"]), "{poll}");
    // The view's call of an app-only tool reaches the server.
    let r = host.call("mcp__monitor__pollSystemStats", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(r["structuredContent"].is_object() || !text(&r).is_empty(), "{r}");
    let r = host.call("mcp__time__getTime", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(r["structuredContent"]["time"].is_string(), "{r}");
    // The view is read by the URI the tool names.
    let view = host.ok("resources/read", json!({"uri": "ui://get-time/mcp-app.html"}));
    assert_eq!(view["contents"][0]["mimeType"], VIEW_MIME, "{view}");

    let mut plain = McpClient::ready(&path, json!({}));
    let listed = tools_until(&mut plain, |n| has(n, "mcp__time__getTime") && has(n, "mcp__monitor__getSystemInfo"));
    // A client that does not render still gets the tools' `_meta` ...
    let info = named(&listed, "mcp__monitor__getSystemInfo").unwrap();
    assert_eq!(info["_meta"]["ui"]["resourceUri"], "ui://system-monitor/mcp-app.html", "{info}");
    // ... but never an app-only tool, and its call of one is refused with the reason.
    assert!(named(&listed, "mcp__monitor__pollSystemStats").is_none(), "{listed:?}");
    let r = plain.call("mcp__monitor__pollSystemStats", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("view only"), "{r}");
}

#[test]
fn view_tools_stay_inline_for_a_client_that_renders_and_app_only_tools_stay_out_of_the_meta_tools() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": examples(), "gateway": {"defer": "always", "trustedClient": true}}));

    let mut host = McpClient::ready(&path, renders());
    let listed = tools_until(&mut host, |n| has(n, "mcp__time__getTime") && has(n, "mcp__monitor__getSystemInfo"));
    // Deferral would apply (`defer: always`), but a tool with a view is never deferred for it.
    assert!(named(&listed, "mcp__monitor__pollSystemStats").is_some(), "{listed:?}");

    let mut plain = McpClient::ready(&path, json!({}));
    let listed = tools(&mut plain);
    let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!names.contains(&"mcp__time__getTime") && !names.contains(&"mcp__monitor__pollSystemStats"), "{names:?}");
    // Found by tool_search: the deferred view tool, never the app-only one.
    let found = text(&plain.call("tool_search", json!({"query": "system stats poll monitor"})));
    assert!(found.contains("getSystemInfo"), "{found}");
    assert!(!found.contains("pollSystemStats"), "{found}");
    let r = plain.call("tool_invoke", json!({"name": "mcp__monitor__pollSystemStats", "params": {}}));
    assert_eq!(r["isError"], true, "an app-only tool ran for the model: {r}");
    assert!(text(&r).contains("not available"), "{r}");
}

/// Two fixture servers whose views share one URI, each with its own view version.
fn colliding(dir: &std::path::Path, views: Option<bool>) -> String {
    let server = |id: &str, version: &str| fixture(id, &["--apps", "--view-uri", "ui://fx/view.html", "--view-version", version]);
    let mut gateway = json!({"defer": "never", "trustedClient": true});
    if let Some(on) = views {
        gateway["views"] = json!(on);
    }
    write_config(dir, &json!({"servers": [server("a", "1"), server("b", "2")], "gateway": gateway}))
}

#[test]
fn colliding_view_uris_keep_the_ui_scheme_and_each_tool_names_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut host = McpClient::ready(&colliding(dir.path(), None), renders());
    // Until both servers listed their tools and their views: the names settle when both did.
    let start = Instant::now();
    let listed = loop {
        let listed = tools_until(&mut host, |n| has(n, "mcp__a__showView") && has(n, "mcp__b__showView"));
        if listed.iter().all(|t| t["_meta"]["ui"]["resourceUri"] != "ui://fx/view.html") {
            break listed;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the colliding view URI is still listed bare: {listed:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let resources = host.ok("resources/list", json!({}));
    let uris: Vec<&str> = resources["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&"ui://toolreg/a/fx/view.html") && uris.contains(&"ui://toolreg/b/fx/view.html"), "{uris:?}");
    assert!(!uris.contains(&"ui://fx/view.html"), "a shared view URI must not be listed bare: {uris:?}");
    for (server, version) in [("a", 1), ("b", 2)] {
        let listed_uri = format!("ui://toolreg/{server}/fx/view.html");
        for tool in ["showView", "appRefresh"] {
            let t = named(&listed, &format!("mcp__{server}__{tool}")).unwrap_or_else(|| panic!("{tool} of {server}: {listed:?}"));
            assert_eq!(t["_meta"]["ui"]["resourceUri"], listed_uri.as_str(), "{t}");
        }
        let show = named(&listed, &format!("mcp__{server}__showView")).unwrap();
        assert_eq!(show["_meta"]["ui/resourceUri"], listed_uri.as_str(), "{show}");
        assert_eq!(show["_meta"]["fixture/extra"], "kept", "other _meta keys pass: {show}");
        let read = host.ok("resources/read", json!({"uri": listed_uri}));
        let content = &read["contents"][0];
        assert_eq!(content["uri"], listed_uri.as_str(), "{read}");
        assert_eq!(content["mimeType"], VIEW_MIME, "{read}");
        assert!(content["text"].as_str().unwrap_or_default().contains(&format!("version {version}")), "{read}");
        // The view's own `_meta.ui` (its CSP) passes unchanged.
        assert_eq!(content["_meta"]["ui"]["csp"]["resourceDomains"], json!(["https://cdn.example.test"]), "{read}");
        // The view's call of its app-only tool reaches its own server.
        let r = host.call(&format!("mcp__{server}__appRefresh"), json!({}));
        assert_eq!(r["structuredContent"], json!({"refreshed": true, "version": version}), "{r}");
    }
}

#[test]
fn upstreams_hear_the_extension_and_views_off_serves_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut host = McpClient::ready(&colliding(dir.path(), None), renders());
    tools_until(&mut host, |n| has(n, "mcp__a__showView"));
    let r = host.call("mcp__a__showView", json!({}));
    assert_eq!(r["structuredContent"]["clientRenders"], true, "the upstream was not told the client renders: {r}");
    drop(host);

    // `gateway.views: false`: nothing declared upstream, no view named, no app-only tool.
    let off = tempfile::tempdir().unwrap();
    let mut host = McpClient::ready(&colliding(off.path(), Some(false)), renders());
    let listed = tools_until(&mut host, |n| has(n, "mcp__a__showView"));
    let show = named(&listed, "mcp__a__showView").unwrap();
    assert!(show["_meta"].get("ui").is_none() && show["_meta"].get("ui/resourceUri").is_none(), "{show}");
    assert_eq!(show["_meta"]["fixture/extra"], "kept", "{show}");
    assert!(named(&listed, "mcp__a__appRefresh").is_none(), "{listed:?}");
    let r = host.call("mcp__a__showView", json!({}));
    assert_eq!(r["structuredContent"]["clientRenders"], false, "{r}");
    let r = host.call("mcp__a__appRefresh", json!({}));
    assert_eq!(r["isError"], true, "{r}");
}

#[test]
fn a_view_call_of_a_gated_app_only_tool_is_still_gated() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.txt");
    let mut server = fixture("fx", &["--apps", "--calls-file", calls.to_str().unwrap()]);
    server["approvalTools"] = json!(["app_refresh"]);
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
    // A host that renders but cannot ask its user: the gated call is refused, not run.
    let mut host = McpClient::ready(&path, renders());
    tools_until(&mut host, |n| has(n, "mcp__fx__appRefresh"));
    let r = host.call("mcp__fx__appRefresh", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("approval"), "{r}");
    assert_eq!(host.call("mcp__fx__showView", json!({}))["isError"], false);
    assert_eq!(std::fs::read_to_string(&calls).unwrap_or_default(), "show_view\n", "the gated tool must not have run");
}

/// The `_meta` of a 2026-07-28 request: no session, its version and client capabilities in each.
fn meta_2026(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "toolreg-test", "version": "0"}})
}

#[test]
fn a_2026_client_renders_per_request_and_its_capabilities_reach_a_2026_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": [fixture("fx", &["--apps", "--modern"])], "gateway": {"defer": "never", "trustedClient": true}}));
    let mut c = support::gateway::spawn(&path, &[], &[]);
    let list = |c: &mut McpClient, caps: Value| -> Vec<String> {
        let r = c.ok("tools/list", json!({"_meta": meta_2026(caps)}));
        r["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
    };
    let start = Instant::now();
    while !has(&list(&mut c, renders()), "mcp__fx__appRefresh") {
        assert!(start.elapsed() < Duration::from_secs(30), "app_refresh never listed for a 2026 client that renders");
        std::thread::sleep(Duration::from_millis(200));
    }
    let names = list(&mut c, json!({}));
    assert!(has(&names, "mcp__fx__showView") && !has(&names, "mcp__fx__appRefresh"), "{names:?}");
    for (caps, renders_) in [(renders(), true), (json!({}), false)] {
        let r = c.ok("tools/call", json!({"name": "mcp__fx__showView", "arguments": {}, "_meta": meta_2026(caps)}));
        assert_eq!(r["structuredContent"]["clientRenders"], renders_, "{r}");
    }
    let r = c.ok("tools/call", json!({"name": "mcp__fx__appRefresh", "arguments": {}, "_meta": meta_2026(json!({}))}));
    assert_eq!(r["isError"], true, "{r}");
}

#[test]
fn a_view_changed_after_approval_is_not_served_and_holds_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    let view = dir.path().join("view.html");
    std::fs::write(&view, "<html><body>approved view</body></html>").unwrap();
    let server = fixture("fx", &["--apps", "--view-file", view.to_str().unwrap()]);
    let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never"}}));
    let state = dir.path().join("state").to_string_lossy().into_owned();
    let mut c = support::gateway::spawn(&path, &[], &[("TOOLREG_STATE_DIR", &state)]);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": renders(), "clientInfo": {"name": "toolreg-test", "version": "0"}}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    c.notify("notifications/initialized", json!({}));
    tools_until(&mut c, |n| has(n, "mcp__fx__showView"));

    // The first read is pinned with the tools that name the view.
    let first = c.ok("resources/read", json!({"uri": "ui://fixture/view.html"}));
    assert!(first["contents"][0]["text"].as_str().unwrap().contains("approved view"), "{first}");
    // Other HTML under the same URI: not served, the read names the view, its tools are held.
    std::fs::write(&view, "<html><body>swapped<script>steal()</script></body></html>").unwrap();
    let r = c.request("resources/read", json!({"uri": "ui://fixture/view.html"}));
    let e = r.get("error").unwrap_or_else(|| panic!("a changed view is refused: {r}"));
    assert!(e["message"].as_str().unwrap().contains("ui://fixture/view.html"), "{e}");
    assert!(!r.to_string().contains("steal()"), "{r}");
    let r = c.call("mcp__fx__showView", json!({}));
    assert_eq!(r["isError"], true, "the tool of a changed view is held: {r}");
    assert!(text(&r).contains("changed since the user approved it"), "{r}");

    // `toolreg pins` (another process) shows why and approves the view as it was read; the
    // running gateway adopts that at its next call.
    let pins = |args: &[&str]| {
        let out = std::process::Command::new(support::bin()).args(["pins", "--config", &path]).args(args).env("TOOLREG_STATE_DIR", &state).env("TOOLREG_LOG", "warn").output().unwrap();
        assert!(out.status.success(), "toolreg pins {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = pins(&[]);
    assert!(shown.contains("its view ui://fixture/view.html changed since the user approved it"), "{shown}");
    pins(&["--approve", "fx/show_view"]);
    pins(&["--approve", "fx/app_refresh"]);
    let r = c.call("mcp__fx__showView", json!({}));
    assert_eq!(r["isError"], false, "approved with its new view: {r}");
    let now = c.ok("resources/read", json!({"uri": "ui://fixture/view.html"}));
    assert!(now["contents"][0]["text"].as_str().unwrap().contains("swapped"), "{now}");
}
