//! Adding a server from an MCP registry (issue 56), through the real binary: a registry on
//! loopback (this file's own small HTTP server, answering the generic registry API, `GET
//! /v0.1/servers?search=&limit=&cursor=` and `/v0.1/servers/{name}/versions/{version}`, with
//! `server.json` documents as the official registry publishes them: npm, PyPI, a remote with a
//! secret header, one without a pinned version, a NuGet one), searched and resolved through the
//! sidecar, with the refusals and the errors (a registry that is down, one that never answers,
//! an unknown name); `@modelcontextprotocol/server-everything` resolved, installed with its
//! secret input filled, started under the default sandbox, its tools held until approved, then
//! synced and called; and `toolreg add` into a fresh config, then `toolreg mcp --check`.
//!
//! The registry is the one part mocked: the official one is on the internet. So is `npx -y`'s
//! download: a resolved npm server runs `npx -y @modelcontextprotocol/server-everything@<v>`,
//! which would fetch the package; the tests assert that command, then start the same package,
//! with the same arguments and environment, from tests/reference-servers/node_modules with
//! `node` (as the other tests start it), so they run offline.
mod support;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};
use support::*;

/// The version tests/reference-servers/package.json installs.
const EVERYTHING_VERSION: &str = "2026.8.31";
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

fn documents() -> Vec<Value> {
    vec![
        json!({"$schema": SCHEMA, "name": "io.github.modelcontextprotocol/server-everything", "title": "Everything",
            "description": "MCP server that exercises all the features of the MCP protocol", "version": EVERYTHING_VERSION,
            "repository": {"url": "https://github.com/modelcontextprotocol/servers", "source": "github", "subfolder": "src/everything"},
            "packages": [{"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org", "identifier": "@modelcontextprotocol/server-everything",
                "version": EVERYTHING_VERSION, "transport": {"type": "stdio"},
                "packageArguments": [{"type": "positional", "value": "stdio"}],
                "environmentVariables": [{"name": "EVERYTHING_TOKEN", "description": "A token the server is given", "isSecret": true, "isRequired": true}]}]}),
        json!({"$schema": SCHEMA, "name": "io.github.modelcontextprotocol/time", "description": "Time and timezone conversion", "version": "2025.9.25",
            "packages": [{"registryType": "pypi", "registryBaseUrl": "https://pypi.org", "identifier": "mcp-server-time", "version": "2025.9.25",
                "runtimeHint": "uvx", "transport": {"type": "stdio"},
                "packageArguments": [{"type": "named", "name": "--local-timezone", "description": "The IANA timezone", "default": "UTC"}]}]}),
        json!({"$schema": SCHEMA, "name": "com.example/weather", "title": "Weather", "description": "Forecasts for a city", "version": "3.1.0",
            "remotes": [{"type": "streamable-http", "url": "https://mcp.weather.example.com/mcp",
                "headers": [{"name": "Authorization", "value": "Bearer {api_key}", "description": "The API key",
                    "variables": {"api_key": {"description": "Your key", "isSecret": true, "isRequired": true, "default": "sk-publisher-sample"}}}]}]}),
        json!({"$schema": SCHEMA, "name": "io.github.example/unpinned", "description": "A package without a version", "version": "0.1.0",
            "packages": [{"registryType": "npm", "identifier": "@example/unpinned", "transport": {"type": "stdio"}}]}),
        json!({"$schema": SCHEMA, "name": "io.github.example/dotnet-tools", "description": "A .NET tool", "version": "1.0.0",
            "packages": [{"registryType": "nuget", "identifier": "Example.Tools", "version": "1.0.0", "transport": {"type": "stdio"}}]}),
    ]
}

/// A registry on loopback: the generic API over `documents`, under `/v0.1` (else `/v0` only).
struct Registry {
    url: String,
}

impl Registry {
    fn start(prefix: &'static str) -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || answer(stream, prefix));
            }
        });
        Registry { url }
    }
}

fn answer(mut stream: std::net::TcpStream, prefix: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let target = line.split(' ').nth(1).unwrap_or_default().to_owned();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    let (status, body) = route(&target, prefix);
    let body = body.to_string();
    let _ = write!(stream, "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
}

fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned()
}

fn route(target: &str, prefix: &str) -> (u16, Value) {
    let official = |doc: &Value| json!({"server": doc, "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}});
    let Some(rest) = target.strip_prefix(prefix) else { return (404, json!({"title": "Not Found"})) };
    if let Some(query) = rest.strip_prefix("/servers?") {
        let q: std::collections::HashMap<String, String> = query.split('&').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_owned(), decode(v))).collect();
        let search = q.get("search").cloned().unwrap_or_default().to_lowercase();
        let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(30);
        let mut matching: Vec<Value> = documents().into_iter().filter(|d| d["name"].as_str().unwrap().to_lowercase().contains(&search)).collect();
        if let Some(cursor) = q.get("cursor") {
            let at = matching.iter().position(|d| d["name"] == **cursor).map_or(0, |i| i + 1);
            matching.drain(..at);
        }
        let next = (matching.len() > limit).then(|| matching[limit - 1]["name"].clone());
        matching.truncate(limit);
        let servers: Vec<Value> = matching.iter().map(official).collect();
        return (200, json!({"servers": servers, "metadata": {"count": servers.len(), "nextCursor": next}}));
    }
    if let Some(path) = rest.strip_prefix("/servers/") {
        let (name, version) = path.split_once("/versions/").unwrap_or((path, ""));
        let (name, version) = (decode(name), decode(version));
        let found = documents().into_iter().find(|d| d["name"] == name && (version == "latest" || d["version"] == version));
        return match found {
            Some(doc) => (200, official(&doc)),
            None => (404, json!({"title": "Not Found", "detail": "Server not found"})),
        };
    }
    (404, json!({"title": "Not Found"}))
}

fn sidecar_with(registry: &str, timeout_ms: u64) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"mcpRegistry": {"url": registry, "timeoutMs": timeout_ms}, "timeouts": {"connectMs": 30000, "listMs": 30000}}));
    s
}

#[test]
fn a_registry_is_searched_and_its_documents_resolved_pinned_and_quarantined() {
    let registry = Registry::start("/v0.1");
    let mut s = sidecar_with(&registry.url, 5000);
    let found = s.ok("catalog/searchRegistry", json!({"query": "everything"}));
    assert_eq!(found["servers"], json!([{"name": "io.github.modelcontextprotocol/server-everything", "title": "Everything",
        "description": "MCP server that exercises all the features of the MCP protocol", "version": EVERYTHING_VERSION, "kinds": ["npm"]}]));
    // Pages: two, then the rest from the cursor.
    let first = s.ok("catalog/searchRegistry", json!({"query": "", "limit": 2}));
    assert_eq!(first["servers"].as_array().unwrap().len(), 2);
    let rest = s.ok("catalog/searchRegistry", json!({"query": "", "limit": 10, "cursor": first["nextCursor"]}));
    let names: Vec<&str> = rest["servers"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["com.example/weather", "io.github.example/unpinned", "io.github.example/dotnet-tools"]);
    assert_eq!(rest["servers"][0]["kinds"], json!(["remote"]));
    assert!(rest.get("nextCursor").is_none(), "{rest}");

    // PyPI: uvx with the exact version; the named argument's default is an input.
    let time = s.ok("catalog/resolveRegistryServer", json!({"name": "io.github.modelcontextprotocol/time"}));
    assert_eq!(time["server"]["transport"]["command"], "uvx");
    assert_eq!(time["server"]["transport"]["args"], json!(["mcp-server-time==2025.9.25", "--local-timezone={local-timezone}"]));
    assert_eq!(time["inputs"], json!([{"name": "local-timezone", "description": "The IANA timezone", "isSecret": false, "isRequired": false, "default": "UTC", "where": "argument"}]));
    assert_eq!((time["server"]["id"].clone(), time["server"]["quarantine"].clone(), time["server"]["sandbox"].clone()), (json!("time"), json!(true), json!(true)));

    // A remote with a secret header: http, the header's variable an input, its default never echoed.
    let weather = s.request("catalog/resolveRegistryServer", json!({"name": "com.example/weather", "version": "3.1.0"}));
    assert!(!weather.to_string().contains("sk-publisher-sample"), "{weather}");
    let weather = &weather["result"];
    assert_eq!(weather["server"]["transport"], json!({"type": "http", "url": "https://mcp.weather.example.com/mcp", "headers": {"Authorization": "Bearer {api_key}"}}));
    assert_eq!(weather["inputs"], json!([{"name": "api_key", "description": "Your key", "isSecret": true, "isRequired": true, "where": "header"}]));
    assert_eq!(weather["server"]["quarantine"], true);

    // The refusals: a package without a pinned version, a kind toolreg does not run.
    let unpinned = s.err("catalog/resolveRegistryServer", json!({"name": "io.github.example/unpinned"}));
    assert_eq!(unpinned["code"], -32021, "{unpinned}");
    assert!(unpinned["message"].as_str().unwrap().contains("npm package @example/unpinned has no version: toolreg installs only a pinned version"), "{unpinned}");
    let nuget = s.err("catalog/resolveRegistryServer", json!({"name": "io.github.example/dotnet-tools"}));
    assert_eq!(nuget["code"], -32021);
    assert!(nuget["message"].as_str().unwrap().contains("nuget package"), "{nuget}");
    // An unknown name, and a version the registry does not have: named.
    let unknown = s.err("catalog/resolveRegistryServer", json!({"name": "io.github.nobody/nothing"}));
    assert_eq!((unknown["code"].clone(), unknown["data"]["reason"].clone()), (json!(-32012), json!("notInRegistry")));
    assert!(unknown["message"].as_str().unwrap().contains("has no server \"io.github.nobody/nothing\""), "{unknown}");
    let old = s.err("catalog/resolveRegistryServer", json!({"name": "com.example/weather", "version": "1.0.0"}));
    assert!(old["message"].as_str().unwrap().contains("at version \"1.0.0\""), "{old}");
    s.shutdown();
}

#[test]
fn a_registry_with_only_v0_is_read_there() {
    let registry = Registry::start("/v0");
    let mut s = sidecar_with(&registry.url, 5000);
    let r = s.ok("catalog/resolveRegistryServer", json!({"name": "com.example/weather"}));
    assert_eq!(r["server"]["transport"]["type"], "http");
    assert_eq!(s.ok("catalog/searchRegistry", json!({"query": "weather"}))["servers"][0]["name"], "com.example/weather");
    s.shutdown();
}

#[test]
fn a_registry_that_is_down_or_slow_is_an_error_within_its_timeout_and_blocks_nothing() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut s = sidecar_with(&down, 5000);
    let e = s.err("catalog/searchRegistry", json!({"query": "x"}));
    assert_eq!((e["code"].clone(), e["data"]["reason"].clone()), (json!(-32020), json!("unreachable")), "{e}");
    assert!(e["message"].as_str().unwrap().contains(&format!("the MCP registry at {down} cannot be reached")), "{e}");
    s.shutdown();

    // Takes connections (the kernel's backlog) and never answers.
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    let slow = format!("http://{}", hole.local_addr().unwrap());
    let mut s = sidecar_with(&slow, 1500);
    let id = s.next_id();
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "catalog/resolveRegistryServer", "params": {"name": "a.b/c"}}));
    // Asked after it, answered before it: the registry's wait holds nothing else up.
    assert!(s.ok("registry/list", json!({}))["entries"].is_array());
    let answer = s.response(&json!(id));
    let e = &answer["error"];
    assert_eq!(e["code"], -32020, "{answer}");
    assert!(e["message"].as_str().unwrap().contains("did not answer within 1500 ms (mcpRegistry.timeoutMs)"), "{e}");
    drop(hole);
    s.shutdown();
}

/// The resolved npm command, checked, then the same package started from the local install
/// (see the module's comment): `npx -y <pkg>@<v> <args>` becomes `node <its entry> <args>`.
fn offline(server: &Value) -> Value {
    let mut server = server.clone();
    let t = &mut server["transport"];
    assert_eq!(t["command"], "npx");
    let args = t["args"].as_array().unwrap().clone();
    assert_eq!(args[..2], [json!("-y"), json!(format!("@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"))]);
    t["command"] = json!("node");
    t["args"] = json!([vec![json!(reference_server("server-everything"))], args[2..].to_vec()].concat());
    server
}

#[test]
fn server_everything_from_the_registry_runs_confined_with_its_tools_held_until_approved() {
    let registry = Registry::start("/v0.1");
    let mut s = sidecar_with(&registry.url, 5000);
    let r = s.ok("catalog/resolveRegistryServer", json!({"name": "io.github.modelcontextprotocol/server-everything"}));
    let server = &r["server"];
    assert_eq!(server["id"], "server-everything");
    assert_eq!(server["transport"]["args"], json!(["-y", format!("@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"), "stdio"]));
    assert_eq!(server["transport"]["env"], json!({"EVERYTHING_TOKEN": "{EVERYTHING_TOKEN}"}));
    assert_eq!((server["quarantine"].clone(), server["sandbox"].clone()), (json!(true), json!(true)));
    assert_eq!(r["inputs"], json!([{"name": "EVERYTHING_TOKEN", "description": "A token the server is given", "isSecret": true, "isRequired": true, "where": "env"}]));
    // The host fills the input where `{EVERYTHING_TOKEN}` stands and installs the server.
    let mut installed = offline(server);
    installed["transport"]["env"]["EVERYTHING_TOKEN"] = json!("tok-filled-by-the-host");
    s.ok("catalog/setServers", json!({"servers": [installed]}));
    let start = Instant::now();
    let status = loop {
        let st = s.server_status("server-everything");
        if st["state"] == "ready" {
            break st;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never ready: {st}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status["sandbox"]["state"], "enforced", "{status}");
    // Quarantined: its first list is held, every tool of it new.
    let pins = s.ok_past_notes("catalog/pins", json!({"serverId": "server-everything"}));
    let tools: Vec<String> = pins["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    assert!(tools.contains(&"echo".to_owned()), "{pins}");
    assert!(pins["tools"].as_array().unwrap().iter().all(|t| t["state"] == "new"), "{pins}");
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(synced["registered"], json!([]), "nothing held is synced");
    // Approved, synced, called.
    let approved = s.ok_past_notes("catalog/approveTools", json!({"serverId": "server-everything", "tools": tools}));
    assert!(approved["tools"].as_array().unwrap().iter().all(|t| t["state"] == "approved"), "{approved}");
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    let echo = synced["registered"].as_array().unwrap().iter().find(|n| n.as_str().unwrap().ends_with("__echo")).cloned().unwrap_or_else(|| panic!("{synced}"));
    let called = s.ok_past_notes("tool/invoke", json!({"name": echo, "arguments": {"message": "from the registry"}}));
    assert!(called["output"].to_string().contains("from the registry"), "{called}");
    s.shutdown();
}

#[test]
fn toolreg_add_writes_a_quarantined_entry_with_its_secret_kept_out() {
    let registry = Registry::start("/v0.1");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let state = dir.path().join("state");
    let secret = "tok-never-printed-or-written";
    let out = std::process::Command::new(bin())
        .args(["add", "io.github.modelcontextprotocol/server-everything", "--config", config.to_str().unwrap(), "--registry", &registry.url])
        .arg(format!("--set=EVERYTHING_TOKEN={secret}"))
        .env("TOOLREG_STATE_DIR", &state)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains(secret) && !stderr.contains(secret), "{stdout}\n{stderr}");
    assert!(stdout.contains("added \"server-everything\"") && stdout.contains("toolreg pins --config"), "{stdout}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(!text.contains(secret), "{text}");
    let written: Value = serde_json::from_str(&text).unwrap();
    let entry = &written["servers"][0];
    assert_eq!((entry["quarantine"].clone(), entry["sandbox"].clone()), (json!(true), json!(true)), "{entry}");
    let kept = std::path::PathBuf::from(entry["transport"]["env"]["EVERYTHING_TOKEN"]["file"].as_str().unwrap_or_else(|| panic!("{entry}")));
    assert!(kept.starts_with(&state), "{}", kept.display());
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), secret);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);

    // A second server without its secret given: read from the environment at start.
    let out = std::process::Command::new(bin())
        .args(["add", "com.example/weather", "--config", config.to_str().unwrap(), "--registry", &registry.url])
        .env("TOOLREG_STATE_DIR", &state)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("read from $API_KEY at start: set it to Bearer <api_key>"), "{stdout}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(written["servers"][1]["transport"]["headers"]["Authorization"], json!({"env": "API_KEY"}));
    assert_eq!(written["servers"][0], *entry, "the first entry is kept as it was");

    // `--check` shows it quarantined, its tools held: the everything entry started offline
    // (see `offline`), its secret still read from its file. The weather entry is left out
    // (its host is not on this machine).
    let mut check_config = written.clone();
    check_config["servers"] = json!([offline(entry)]);
    std::fs::write(&config, check_config.to_string()).unwrap();
    let out = std::process::Command::new(bin()).args(["mcp", "--config", config.to_str().unwrap(), "--check"]).env("TOOLREG_STATE_DIR", &state).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", String::from_utf8_lossy(&out.stderr));
    let line = table.lines().find(|l| l.starts_with("server-everything: quarantined, ")).unwrap_or_else(|| panic!("{table}"));
    assert!(!line.contains(", 0 tool(s) held") && line.contains("--approve server-everything"), "{line}");
    assert!(!table.contains(secret), "{table}");
}
