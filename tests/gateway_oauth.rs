//! `toolreg mcp` in front of an OAuth server (the fixture's `--oauth` mode): the authorization
//! page reaches the person through the client's URL elicitation (a 2026-07-28 client's: an
//! input-required URL request on its call), the tokens persist in the state directory's store
//! (which `--check` reads too) and serve the next run; a client that cannot show the page is
//! told to run `toolreg auth`, which authorizes from a terminal.

mod support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::gateway::{spawn, text, write_config, McpClient};
use support::oauth::{assert_no_token, authorize_in_browser, get, OAuthFixture};
use support::TIMEOUT;

fn config(dir: &Path, url: &str) -> String {
    config_deferring(dir, url, "never")
}

fn config_deferring(dir: &Path, url: &str, defer: &str) -> String {
    write_config(
        dir,
        &json!({"model": "gpt-4o", "contextWindow": 128000,
            "servers": [{"id": "web", "name": "Web", "trust": "auto", "transport": {"type": "http", "url": url}}],
            "gateway": {"cacheDir": dir.join("state"), "defer": defer}}),
    )
}

/// `toolreg mcp` whose client has these capabilities (URL elicitations open the page).
fn gateway(config: &str, capabilities: Value) -> McpClient {
    support::oauth::gateway(config, &[], capabilities)
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

/// The server's state as `toolreg mcp --check` reports it from the stored tokens (`ready`
/// when a gateway signed in, `needsAuth` when not), asking no one.
fn checked(config: &str) -> String {
    let out = Command::new(support::bin()).args(["mcp", "--config", config, "--check"]).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_no_token("--check's table", &table);
    let row = table.lines().find(|l| l.starts_with("web ")).unwrap_or_else(|| panic!("no row for web: {table}"));
    row.split_whitespace().nth(1).unwrap().to_owned()
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

    // The tokens are kept where every gateway of the state directory reads them, `--check`
    // included; the store is the owner's alone.
    assert_eq!(checked(&path), "ready", "--check reads the stored tokens");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let db = dir.path().join("state").join("state.db");
        assert_eq!(std::fs::metadata(&db).unwrap().permissions().mode() & 0o777, 0o600);
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
    // `--check` diagnoses authorization, not reachability: the server answered.
    let out = Command::new(support::bin()).args(["mcp", "--config", &path, "--check"]).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("web: http: The server answered") && !table.contains("could not be reached"), "{table}");
    // No tokens yet.
    assert_eq!(checked(&path), "needsAuth");

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
    // The client the gateway registered was kept, and reused.
    assert_eq!(fx.events().iter().filter(|e| *e == "register").count(), 1, "{:?}", fx.events());
    assert_eq!(checked(&path), "ready");

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

/// A `tools/call` of a 2026-07-28 client that can show URLs (it takes no requests, and never
/// initializes): `_meta` names its version and capabilities; `extra` adds a retry's fields.
fn call_2026(c: &mut McpClient, name: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "oauth-test", "version": "0"}}});
    params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    c.request("tools/call", params)
}

/// Calls until the answer is the authorization round (until the flow parked its page, the
/// server waits without one): the URL request and the state.
fn auth_round(c: &mut McpClient, name: &str, arguments: &Value) -> (Value, String) {
    let start = Instant::now();
    loop {
        let r = call_2026(c, name, arguments.clone(), json!({}));
        if r["result"]["resultType"] == "input_required" {
            let asked = r["result"]["inputRequests"]["authorize"].clone();
            assert_eq!((&asked["method"], &asked["params"]["mode"]), (&json!("elicitation/create"), &json!("url")), "{r}");
            return (asked["params"].clone(), r["result"]["requestState"].as_str().expect("a state").to_owned());
        }
        assert!(r["result"]["isError"] == true || r.get("error").is_some(), "until then the call is refused: {r}");
        assert!(start.elapsed() < TIMEOUT, "never asked: {r}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The retry of a round with this answer to the page.
fn answer_round(c: &mut McpClient, name: &str, arguments: &Value, state: &str, action: &str) -> Value {
    call_2026(c, name, arguments.clone(), json!({"inputResponses": {"authorize": {"action": action}}, "requestState": state}))
}

/// What a sealed state holds (its body is base64url JSON, readable by design).
fn sealed(state: &str) -> Value {
    let body = state.split_once('.').unwrap().0;
    serde_json::from_slice(&data_encoding::BASE64URL_NOPAD.decode(body.as_bytes()).unwrap()).unwrap()
}

#[test]
fn a_2026_client_gets_the_page_as_a_url_request_and_its_retry_runs_the_call_once_authorized() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let path = config(dir.path(), &fx.http.url);
    let mut c = spawn(&path, &["--log-level", "trace"], &[]);
    let args = json!({"text": "hi"});
    let (page, state) = auth_round(&mut c, "mcp__web__echo", &args);
    let url = page["url"].as_str().unwrap().to_owned();
    assert!(url.contains("code_challenge_method=S256"), "{page}");
    assert!(page["message"].as_str().unwrap().contains("web") && page["elicitationId"].is_string(), "{page}");
    // The state names the server and a nonce, never the page (it carries the flow's state).
    let value = &sealed(&state)["value"];
    assert_eq!(value["server"], "web", "{value}");
    assert!(!value.to_string().contains("127.0.0.1") && !value.to_string().contains("code_challenge"), "{value}");

    // Declined: refused with the command, nothing ran; the state is spent.
    let r = answer_round(&mut c, "mcp__web__echo", &args, &state, "decline");
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text(&r["result"]).contains(&format!("toolreg auth --config {path} web")), "{r}");
    let r = answer_round(&mut c, "mcp__web__echo", &args, &state, "accept");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("used already"), "{r}");
    // Altered, or sealed for another tool: refused, nothing waited for.
    let (_, state) = auth_round(&mut c, "mcp__web__echo", &args);
    let r = answer_round(&mut c, "mcp__web__echo", &args, &format!("{state}x"), "accept");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = answer_round(&mut c, "tool_search", &json!({"query": "echo"}), &state, "accept");
    assert!(r.get("error").is_some() || r["result"]["isError"] == true, "a state of another call runs nothing: {r}");

    // The person opens the page and signs in; the retry waits for the server, then runs.
    let (page, state) = auth_round(&mut c, "mcp__web__echo", &args);
    assert_eq!(page["url"], url.as_str(), "the same flow's page");
    authorize_in_browser(&url);
    let r = answer_round(&mut c, "mcp__web__echo", &args, &state, "accept");
    assert_eq!((&r["result"]["resultType"], &r["result"]["isError"]), (&json!("complete"), &json!(false)), "{r}");
    assert!(text(&r["result"]).contains("\"hi\""), "the tool ran: {r}");
    let r = call_2026(&mut c, "mcp__web__echo", json!({"text": "again"}), json!({}));
    assert_eq!((&r["result"]["resultType"], &r["result"]["isError"]), (&json!("complete"), &json!(false)), "later calls run unasked: {r}");
    let log = finish(c);
    assert_no_token("the gateway's stderr", &log);
    assert!(!log.contains("code_challenge"), "the page's URL reached the log");
    assert_eq!(fx.events().iter().filter(|e| e.starts_with("authorize")).count(), 1, "{:?}", fx.events());
    assert_eq!(checked(&path), "ready", "the tokens persist");
}

/// The redirect a browser makes when its user clicks "deny" on the page at `url`.
fn deny_in_browser(url: &str) {
    let query = url.split_once('?').unwrap().1;
    let param = |k: &str| form_urlencoded::parse(query.as_bytes()).find(|(n, _)| n == k).map(|(_, v)| v.into_owned()).unwrap();
    let back = format!("{}?error=access_denied&state={}", param("redirect_uri"), param("state"));
    assert_eq!(get(&back).0, 400, "the loopback listener took the refusal");
}

/// A gateway whose OAuth server's tools are all deferred (reached through `tool_invoke`).
fn deferring_gateway() -> (tempfile::TempDir, OAuthFixture, String, McpClient) {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let path = config_deferring(dir.path(), &fx.http.url, "always");
    let c = spawn(&path, &[], &[]);
    (dir, fx, path, c)
}

#[test]
fn through_tool_invoke_the_page_goes_out_and_a_refused_authorization_is_refused_with_toolreg_auth() {
    let (dir, fx, path, mut c) = deferring_gateway();
    let args = json!({"name": "mcp__web__echo", "params": {"text": "hi"}});
    let (page, state) = auth_round(&mut c, "tool_invoke", &args);
    deny_in_browser(page["url"].as_str().unwrap());
    // The person answered the client, but the flow ended without tokens: refused at once.
    let r = answer_round(&mut c, "tool_invoke", &args, &state, "accept");
    assert_eq!(r["result"]["isError"], true, "{r}");
    let said = text(&r["result"]);
    assert!(said.contains("access_denied") && said.contains(&format!("toolreg auth --config {path} web")), "{said}");
    // No flow runs now: no page to give, the call is refused with the command.
    let r = call_2026(&mut c, "tool_invoke", args.clone(), json!({}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    finish(c);
    assert_eq!(checked(&path), "needsAuth", "no tokens were kept");
    drop((dir, fx));
}

#[test]
fn through_tool_invoke_an_authorized_retry_reaches_the_deferred_tool() {
    let (dir, fx, path, mut c) = deferring_gateway();
    let args = json!({"name": "mcp__web__echo", "params": {"text": "hi"}});
    let (page, state) = auth_round(&mut c, "tool_invoke", &args);
    authorize_in_browser(page["url"].as_str().unwrap());
    // The deferred tool is in the plan now: the retry runs it (inspected or not), and so does
    // a later call.
    let r = answer_round(&mut c, "tool_invoke", &args, &state, "accept");
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(text(&r["result"]).contains("hi"), "{r}");
    let r = call_2026(&mut c, "tool_invoke", args, json!({}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(text(&r["result"]).contains("hi"), "{r}");
    finish(c);
    assert_eq!(checked(&path), "ready", "the tokens persist");
    drop((dir, fx));
}
