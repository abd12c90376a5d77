//! `toolreg mcp` in front of an OAuth server (the fixture's `--oauth` mode): the authorization
//! page reaches the person through the client's URL elicitation, the tokens persist in an
//! owner-only file and serve the next run; a client that cannot show the page is told to run
//! `toolreg auth`, which authorizes from a terminal.

mod support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::gateway::{spawn, text, write_config, McpClient};
use support::oauth::{assert_no_token, get, OAuthFixture};
use support::TIMEOUT;

fn config(dir: &Path, url: &str) -> String {
    write_config(
        dir,
        &json!({"model": "gpt-4o", "contextWindow": 128000,
            "servers": [{"id": "web", "name": "Web", "trust": "auto", "transport": {"type": "http", "url": url}}],
            "gateway": {"cacheDir": dir.join("state"), "defer": "never"}}),
    )
}

/// A browser whose user clicks "allow": the page redirects to the gateway's loopback listener.
fn authorize_in_browser(url: &str) {
    let (status, location) = get(url);
    assert_eq!(status, 302, "the authorization page redirects back");
    let (status, _) = get(&location.expect("a redirect"));
    assert_eq!(status, 200, "the loopback listener took the code");
}

/// `toolreg mcp` (logging at trace) with a 2025-11-25 client of these capabilities; URL
/// elicitations are answered by opening the page.
fn gateway(config: &str, capabilities: Value) -> McpClient {
    let mut c = spawn(config, &["--log-level", "trace"], &[]);
    c.answer = Box::new(|m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        assert_eq!(m["params"]["mode"], "url", "{m}");
        authorize_in_browser(m["params"]["url"].as_str().unwrap());
        json!({"action": "accept"})
    });
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "oauth-test", "version": "0"}}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    c.notify("notifications/initialized", json!({}));
    c
}

/// Lists until `name` is there (the server is authorized and listed).
fn wait_tool(c: &mut McpClient, name: &str) {
    let start = Instant::now();
    while !c.tool_names().iter().any(|n| n == name) {
        assert!(start.elapsed() < TIMEOUT, "{name} never listed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Closes the session; everything the gateway wrote to stderr.
fn finish(mut c: McpClient) -> String {
    let stderr = std::mem::replace(&mut c.stderr, std::sync::mpsc::channel().1);
    assert!(c.finish().success());
    stderr.iter().collect::<Vec<_>>().join("\n")
}

fn token_files(dir: &Path) -> Vec<PathBuf> {
    let secrets = dir.join("state").join("secrets");
    std::fs::read_dir(secrets).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

#[test]
fn the_client_shows_the_authorization_page_and_the_tokens_serve_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &["--oauth-scopes", "mcp:read"]);
    let path = config(dir.path(), &fx.http.url);
    let mut c = gateway(&path, json!({"elicitation": {"url": {}}}));
    wait_tool(&mut c, "mcp__web__echo");
    assert_eq!(c.asked.len(), 1, "{:?}", c.asked);
    let asked = &c.asked[0]["params"];
    assert!(asked["url"].as_str().unwrap().contains("code_challenge_method=S256"), "{asked}");
    assert!(asked["message"].as_str().unwrap().contains("web"), "{asked}");
    let r = c.call("mcp__web__echo", json!({"text": "hi"}));
    assert_eq!(r["isError"], false, "{r}");
    let log = finish(c);
    assert_no_token("the gateway's stderr", &log);
    assert_eq!(fx.events()[..3], ["mcp 401", "register", "authorize scope=mcp:read"]);

    let files = token_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("oauth-") && name.ends_with(".json"), "{name}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert!(saved["credentials"]["token_response"]["access_token"].as_str().unwrap().starts_with("access-"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(files[0].parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    }

    // The next run, with a client that could not show a page: the saved tokens serve it.
    let before = fx.events().len();
    let mut c = gateway(&path, json!({}));
    wait_tool(&mut c, "mcp__web__echo");
    let r = c.call("mcp__web__echo", json!({"text": "again"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(c.asked.is_empty(), "asked again: {:?}", c.asked);
    let log = finish(c);
    assert_no_token("the second run's stderr", &log);
    let later = &fx.events()[before..];
    assert!(!later.iter().any(|e| e.starts_with("authorize") || e == "register"), "{later:?}");
}

#[test]
fn a_client_without_url_elicitation_is_told_to_run_toolreg_auth_which_authorizes() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let path = config(dir.path(), &fx.http.url);
    let mut c = gateway(&path, json!({"elicitation": {"form": {}}}));
    // Nothing of the server is listed; a call of its tool says what to run.
    let start = Instant::now();
    let refusal = loop {
        let r = c.request("tools/call", json!({"name": "mcp__web__echo", "arguments": {"text": "hi"}}));
        // Until the flow found no client to ask, the call says the server waits for the user.
        if r["result"]["isError"] == true && text(&r["result"]).contains("toolreg auth") {
            break text(&r["result"]);
        }
        assert!(start.elapsed() < TIMEOUT, "never refused with the command: {r}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(refusal.contains(&format!("toolreg auth --config {path} web")), "{refusal}");
    assert!(c.asked.is_empty(), "{:?}", c.asked);
    finish(c);
    // The client it registered is kept (for `toolreg auth` to reuse), no tokens yet.
    for f in token_files(dir.path()) {
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        assert!(saved.get("credentials").is_none(), "{saved}");
    }

    // `toolreg auth` from a terminal: the URL on stderr, opened here as the browser would.
    let mut auth = Command::new(support::bin())
        .args(["auth", "--config", &path, "web"])
        .env("TOOLREG_BROWSER", "true")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = Vec::new();
    for line in BufReader::new(auth.stderr.take().unwrap()).lines().map_while(Result::ok) {
        if let Some(url) = line.trim().strip_prefix("http://").map(|u| format!("http://{u}")) {
            authorize_in_browser(&url);
        }
        said.push(line);
    }
    let status = support::exit_of(&mut auth, "toolreg auth did not exit");
    let said = said.join("\n");
    assert!(status.success(), "{said}");
    assert!(said.contains("server web authorized"), "{said}");
    assert_no_token("toolreg auth's stderr", &said.replace(fx.http.url.as_str(), ""));
    assert_eq!(token_files(dir.path()).len(), 1);

    // The next gateway run needs no client that shows pages; a second `toolreg auth` has
    // nothing to do.
    let mut c = gateway(&path, json!({}));
    wait_tool(&mut c, "mcp__web__echo");
    assert_eq!(c.call("mcp__web__echo", json!({"text": "hi"}))["isError"], false);
    finish(c);
    let again = Command::new(support::bin()).args(["auth", "--config", &path, "web"]).output().unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already authorized"), "{}", String::from_utf8_lossy(&again.stderr));
    let unknown = Command::new(support::bin()).args(["auth", "--config", &path, "nope"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no server \"nope\""));
}
