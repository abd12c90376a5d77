//! MCP authorization (OAuth) over the real binary against the fixture server's `--oauth` mode
//! (its own authorization server: metadata, dynamic registration, PKCE, refresh, 401/403). The
//! test plays the host: it answers `host/openUrl` as a browser whose user clicks "allow" would
//! (GET the page, follow the redirect to the sidecar's loopback listener), and keeps
//! `host/secrets/*` in a map.

mod support;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};
use support::oauth::{get, OAuthFixture};
use support::{Sidecar, TIMEOUT};

/// The host: answers reverse requests, records what it was asked.
struct Host {
    s: Sidecar,
    secrets: HashMap<String, String>,
    opened: Vec<Value>,
    /// `host/openUrl` is declined when false (a user who closes the page).
    allow: bool,
}

impl Host {
    fn start(caps: Value, secrets: HashMap<String, String>, log_file: &Path) -> Host {
        let mut s = Sidecar::spawn_with(&["--log-file", log_file.to_str().unwrap(), "--log-level", "trace"], &[]);
        let r = s.request("initialize", json!({"clientInfo": {"name": "oauth-test"}, "capabilities": caps}));
        assert!(r.get("result").is_some(), "{r}");
        s.notify("initialized", json!({}));
        Host { s, secrets, opened: Vec::new(), allow: true }
    }

    fn answer(&mut self, m: &Value) {
        let id = m["id"].clone();
        let p = &m["params"];
        let result = match m["method"].as_str().unwrap() {
            "host/openUrl" => {
                self.opened.push(p.clone());
                if self.allow {
                    let (status, location) = get(p["url"].as_str().unwrap());
                    assert_eq!(status, 302, "the authorization page redirects back");
                    let (status, _) = get(&location.expect("a redirect"));
                    assert_eq!(status, 200, "the sidecar's loopback listener took the code");
                }
                json!({})
            }
            "host/secrets/get" => json!({"value": self.secrets.get(p["key"].as_str().unwrap())}),
            "host/secrets/set" => {
                self.secrets.insert(p["key"].as_str().unwrap().to_owned(), p["value"].as_str().unwrap().to_owned());
                json!({})
            }
            "host/secrets/delete" => {
                self.secrets.remove(p["key"].as_str().unwrap());
                json!({})
            }
            other => panic!("unexpected reverse request {other}"),
        };
        self.s.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// A request's response, answering reverse requests meanwhile.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = support::send_req(&mut self.s, method, params);
        loop {
            let m = self.s.recv();
            if m.get("method").is_some() && m.get("id").is_some() {
                self.answer(&m);
            } else if m.get("id") == Some(&id) {
                return m;
            }
        }
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params);
        r.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {r}"))
    }

    fn status(&mut self, id: &str) -> Value {
        let all = self.ok("catalog/status", json!({}));
        all["servers"].as_array().unwrap().iter().find(|s| s["id"] == id).cloned().unwrap()
    }

    /// Polls `catalog/status` (answering reverse requests) until the server is in `state`.
    fn wait_state(&mut self, id: &str, state: &str) -> Value {
        let start = Instant::now();
        loop {
            let st = self.status(id);
            if st["state"] == state {
                return st;
            }
            assert!(start.elapsed() < TIMEOUT, "{id} never reached {state}: {st}");
            // Reverse requests arrive on their own; take any that wait.
            if let Some(m) = self.s.try_recv(Duration::from_millis(20)) {
                if m.get("method").is_some() && m.get("id").is_some() {
                    self.answer(&m);
                }
            }
        }
    }

    fn set_server(&mut self, url: &str, oauth: Option<Value>) {
        let mut server = json!({"id": "web", "name": "Web", "trust": "auto", "transport": {"type": "http", "url": url}});
        if let Some(o) = oauth {
            server["oauth"] = o;
        }
        self.ok("catalog/setServers", json!({"servers": [server]}));
    }
}

#[test]
fn authorizes_through_the_host_keeps_tokens_in_its_secrets_and_reuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &["--oauth-scopes", "mcp:read"]);
    let log = dir.path().join("sidecar.log");
    let mut h = Host::start(json!({"openUrl": true, "secrets": true}), HashMap::new(), &log);
    h.set_server(&fx.http.url, None);
    let st = h.wait_state("web", "ready");
    assert_eq!(st["toolCount"], 3, "{st}"); // tool_0, echo, stats
    assert_eq!(h.opened.len(), 1);
    assert_eq!(h.opened[0]["serverId"], "web");
    assert!(h.opened[0]["url"].as_str().unwrap().contains("code_challenge_method=S256"));
    // The scope the challenge names; a client registered dynamically.
    assert_eq!(fx.events()[..3], ["mcp 401", "register", "authorize scope=mcp:read"]);
    let saved = h.secrets.get("toolreg/oauth/web").expect("tokens saved through the host").clone();
    let saved: Value = serde_json::from_str(&saved).unwrap();
    assert!(saved["credentials"]["token_response"]["access_token"].as_str().unwrap().starts_with("access-"));
    assert!(saved["registration"]["clientId"].as_str().unwrap().starts_with("fixture-client-"));
    h.ok("registry/syncMcp", json!({}));
    let r = h.ok("tool/invoke", json!({"name": "mcp__web__echo", "arguments": {"text": "hi"}}));
    assert_eq!(r["isError"], false, "{r}");
    let secrets = h.secrets.clone();
    drop(h);
    support::oauth::assert_no_token("the log", &std::fs::read_to_string(&log).unwrap());

    // A new process with the same keychain: no new authorization, the saved token is used.
    let before = fx.events().len();
    let mut h = Host::start(json!({"openUrl": true, "secrets": true}), secrets, &log);
    h.set_server(&fx.http.url, None);
    h.wait_state("web", "ready");
    assert!(h.opened.is_empty(), "asked the user again: {:?}", h.opened);
    assert!(!fx.events()[before..].iter().any(|e| e.starts_with("authorize") || e == "register"), "{:?}", fx.events());
}

#[test]
fn without_open_url_the_server_needs_auth_and_nothing_waits() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let mut h = Host::start(json!({}), HashMap::new(), &dir.path().join("sidecar.log"));
    h.set_server(&fx.http.url, None);
    let refreshed = h.ok("catalog/refresh", json!({"serverId": "web"}));
    assert_eq!(refreshed["state"], "needsAuth", "{refreshed}");
    assert!(refreshed["error"].as_str().unwrap().contains("openUrl"), "{refreshed}");
    let hint = authorization_hint(&h.status("web"));
    assert!(hint.contains("openUrl") && hint.contains("Sign in again"), "{hint}");
    assert!(h.opened.is_empty());
    assert!(!fx.events().iter().any(|e| e == "register"), "no flow without a way to ask the user");
}

#[test]
fn a_user_who_never_answers_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let mut h = Host::start(json!({"openUrl": true}), HashMap::new(), &dir.path().join("sidecar.log"));
    h.allow = false;
    h.set_server(&fx.http.url, None);
    let st = h.wait_state("web", "needsAuth");
    assert!(st["error"].as_str().unwrap().contains("waiting for the user"), "{st}");
    assert!(authorization_hint(&st).contains("Sign in on the authorization page"), "{st}");
    let start = Instant::now();
    while h.opened.is_empty() {
        assert!(start.elapsed() < TIMEOUT, "host/openUrl never came");
        if let Some(m) = h.s.try_recv(Duration::from_millis(20)) {
            if m.get("method").is_some() && m.get("id").is_some() {
                h.answer(&m);
            }
        }
    }
    assert_eq!(h.opened[0]["serverId"], "web");
    // The page is open and the user is away: an explicit refresh answers now, still needsAuth,
    // and starts no second flow.
    let refreshed = h.ok("catalog/refresh", json!({"serverId": "web"}));
    assert_eq!(refreshed["state"], "needsAuth", "{refreshed}");
    assert_eq!(h.opened.len(), 1);
    assert_eq!(fx.events().iter().filter(|e| e.starts_with("authorize")).count(), 0, "the user never got to the page");
}

#[test]
fn insufficient_scope_steps_up_and_the_call_fails_fast_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &["--oauth-scopes", "mcp:read", "--oauth-step-up", "echo=mcp:write"]);
    let mut h = Host::start(json!({"openUrl": true, "secrets": true}), HashMap::new(), &dir.path().join("sidecar.log"));
    h.set_server(&fx.http.url, None);
    h.wait_state("web", "ready");
    h.ok("registry/syncMcp", json!({}));
    let r = h.ok("tool/invoke", json!({"name": "mcp__web__echo", "arguments": {"text": "hi"}}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("needs more access"), "{r}");
    h.wait_state("web", "ready");
    let r = h.ok("tool/invoke", json!({"name": "mcp__web__echo", "arguments": {"text": "hi"}}));
    assert_eq!(r["isError"], false, "{r}");
    let authorizations: Vec<_> = fx.events().into_iter().filter(|e| e.starts_with("authorize")).collect();
    assert_eq!(authorizations, ["authorize scope=mcp:read", "authorize scope=mcp:read mcp:write"]);
    assert_eq!(fx.events().iter().filter(|e| *e == "register").count(), 1, "the registration is reused");
}

/// A server the user authorized, whose tokens live 4 s (the fixture's `flags` as well), called
/// in the last half of its first token's life: the host and the fixture's events. Then (rmcp:
/// less than min(30 s, ttl / 2) left, counted in whole seconds) the client refreshes instead of
/// sending the token. 3.2 s after it was received, whole seconds elapsed are at least 3 whatever
/// the fractions: 1 s left of 4, below 2.
fn call_late_in_a_tokens_life(dir: &Path, flags: &[&str]) -> (Host, Vec<String>) {
    let fx = OAuthFixture::start(dir, &[&["--oauth-token-ttl-s", "4"], flags].concat());
    let mut h = Host::start(json!({"openUrl": true}), HashMap::new(), &dir.join("sidecar.log"));
    h.set_server(&fx.http.url, None);
    h.wait_state("web", "ready");
    h.ok("registry/syncMcp", json!({}));
    std::thread::sleep(Duration::from_millis(3200));
    let r = h.ok("tool/invoke", json!({"name": "mcp__web__echo", "arguments": {"text": "hi"}}));
    assert_eq!(r["isError"], false, "{r}");
    (h, fx.events())
}

#[test]
fn tokens_are_refreshed_before_they_expire() {
    let dir = tempfile::tempdir().unwrap();
    let (h, events) = call_late_in_a_tokens_life(dir.path(), &[]);
    assert!(events.iter().any(|e| e == "token refresh_token"), "{events:?}");
    assert_eq!(events.iter().filter(|e| e.starts_with("authorize")).count(), 1, "{events:?}");
    assert_eq!(h.opened.len(), 1);
}

#[test]
fn a_pre_registered_client_is_used_and_its_secret_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &[]);
    let log = dir.path().join("sidecar.log");
    let mut h = Host::start(json!({"openUrl": true}), HashMap::new(), &log);
    h.set_server(&fx.http.url, Some(json!({"clientId": "pre-registered", "clientSecret": "S3CRET-pre"})));
    h.wait_state("web", "ready");
    assert!(h.opened[0]["url"].as_str().unwrap().contains("client_id=pre-registered"));
    assert!(!fx.events().iter().any(|e| e == "register"), "no dynamic registration: {:?}", fx.events());
    let status = h.ok("catalog/status", json!({}));
    drop(h);
    support::oauth::assert_no_token("the log", &std::fs::read_to_string(&log).unwrap());
    support::oauth::assert_no_token("the status", &status.to_string());
}

/// Polls `catalog/status` until the server's error contains `needle`.
/// A status's diagnosis of pending or failed authorization: it says so, and sends nobody to
/// check the network (the server answered). Its message, for the case's own words.
fn authorization_hint(st: &Value) -> String {
    let d = &st["diagnosis"];
    assert_eq!(d["kind"], "http", "{st}");
    let message = d["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("The server answered") && !message.contains("could not be reached") && !message.contains("proxy"), "{st}");
    message
}

fn wait_error(h: &mut Host, id: &str, needle: &str) -> Value {
    let start = Instant::now();
    loop {
        let st = h.status(id);
        if st["error"].as_str().is_some_and(|e| e.contains(needle)) {
            return st;
        }
        assert!(start.elapsed() < TIMEOUT, "{id} never failed with {needle:?}: {st}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The thumbprints of the keys the fixture's events name after `prefix` (`token client_credentials`,
/// `mcp`), one per event; `None` for an event of a token not bound to a key.
fn keys(events: &[String], prefix: &str) -> Vec<Option<String>> {
    events
        .iter()
        .filter_map(|e| e.strip_prefix(prefix))
        .filter(|rest| rest.is_empty() || rest.starts_with(" dpop="))
        .map(|rest| rest.strip_prefix(" dpop=").map(str::to_owned))
        .collect()
}

#[test]
fn a_grant_without_a_user_gets_a_dpop_bound_token_and_proves_its_key_on_every_request() {
    let dir = tempfile::tempdir().unwrap();
    // Every proof must carry the server's nonce; tokens live 4 s and come without a refresh token.
    let fx = OAuthFixture::start(dir.path(), &["--oauth-dpop", "--oauth-client", "svc:S3CRET-svc", "--oauth-token-ttl-s", "4"]);
    let log = dir.path().join("sidecar.log");
    let mut h = Host::start(json!({"secrets": true}), HashMap::new(), &log);
    h.set_server(&fx.http.url, Some(json!({"grant": "clientCredentials", "clientId": "svc", "clientSecret": "S3CRET-svc", "dpop": true})));
    h.wait_state("web", "ready");
    h.ok("registry/syncMcp", json!({}));
    let r = h.ok("tool/invoke", json!({"name": "mcp__web__echo", "arguments": {"text": "hi"}}));
    assert_eq!(r["isError"], false, "{r}");
    let events = fx.events();
    // The token request proved a key, once more with the authorization server's nonce; the
    // token is bound to it, and the server took it only as DPoP with proofs of that key (after
    // its own nonce).
    let grants = keys(&events, "token client_credentials");
    let Some(Some(key)) = grants.first().cloned() else { panic!("no bound grant: {events:?}") };
    let nonce_at = events.iter().position(|e| e == "token use_dpop_nonce").unwrap_or_else(|| panic!("no nonce retry: {events:?}"));
    assert!(nonce_at < events.iter().position(|e| e.starts_with("token client_credentials")).unwrap(), "{events:?}");
    assert!(events.iter().any(|e| e == "mcp use_dpop_nonce"), "{events:?}");
    let used = keys(&events, "mcp");
    assert!(!used.is_empty() && used.iter().all(|k| k.as_ref() == Some(&key)), "{events:?}");
    assert!(!events.iter().any(|e| e.contains("dpop-invalid") || e == "mcp bearer"), "{events:?}");
    // The key is kept with the token, as the token is.
    let saved: Value = serde_json::from_str(&h.secrets["toolreg/oauth/web"]).unwrap();
    assert!(saved["credentials"]["token_response"]["token_type"].as_str().unwrap().eq_ignore_ascii_case("dpop"), "{saved}");
    let dpop_key = saved["dpopKey"].as_str().expect("the DPoP key saved").to_owned();

    // The token expires (rmcp: less than min(30 s, ttl / 2) left, in whole seconds; 3.2 s after
    // it came at least 3 have passed) and there is no refresh token: a new grant, same key.
    std::thread::sleep(Duration::from_millis(3200));
    let start = Instant::now();
    loop {
        let r = h.ok("tool/invoke", json!({"name": "mcp__web__echo", "arguments": {"text": "again"}}));
        if r["isError"] == false {
            break;
        }
        assert!(start.elapsed() < TIMEOUT, "never served again: {r}");
        h.wait_state("web", "ready");
    }
    let events = fx.events();
    let grants = keys(&events, "token client_credentials");
    assert!(grants.len() >= 2 && grants.iter().all(|k| k.as_ref() == Some(&key)), "{events:?}");
    assert!(keys(&events, "mcp").iter().all(|k| k.as_ref() == Some(&key)), "{events:?}");
    drop(h);
    let text = std::fs::read_to_string(&log).unwrap();
    support::oauth::assert_no_token("the log", &text);
    assert!(!text.contains(&dpop_key), "the DPoP key reached the log");
}

#[test]
fn a_bearer_token_where_dpop_is_required_is_refused_and_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    // An authorization server that knows nothing of DPoP: its tokens are bearer tokens.
    let fx = OAuthFixture::start(dir.path(), &["--oauth-client", "svc:S3CRET-svc"]);
    let log = dir.path().join("sidecar.log");
    let mut h = Host::start(json!({"secrets": true}), HashMap::new(), &log);
    let oauth = json!({"grant": "clientCredentials", "clientId": "svc", "clientSecret": "S3CRET-svc", "dpop": true});
    h.set_server(&fx.http.url, Some(oauth));
    let st = wait_error(&mut h, "web", "oauth.dpop requires DPoP");
    assert_eq!(st["state"], "needsAuth", "{st}");
    assert!(st["error"].as_str().unwrap().to_lowercase().contains("a \"bearer\" token, not a dpop-bound one"), "{st}");
    let hint = authorization_hint(&st);
    assert!(hint.contains("oauth.dpop") && hint.contains("Check the client credentials"), "{hint}");
    assert!(!hint.contains("S3CRET"), "a secret in the hint: {hint}");
    let events = fx.events();
    assert_eq!(events.iter().filter(|e| *e == "token client_credentials").count(), 1, "{events:?}");
    // No request carried the token: every one the server saw was refused for having none.
    assert!(events.iter().filter(|e| e.starts_with("mcp")).all(|e| e == "mcp 401"), "{events:?}");
    assert!(!events.is_empty());
    let saved = h.secrets.get("toolreg/oauth/web").map(|s| serde_json::from_str::<Value>(s).unwrap());
    assert!(saved.as_ref().is_none_or(|s| s.get("credentials").is_none()), "the refused token was kept: {saved:?}");

    // Left to the servers (no `dpop`), the same grant is served with the bearer token.
    h.set_server(&fx.http.url, Some(json!({"grant": "clientCredentials", "clientId": "svc", "clientSecret": "S3CRET-svc"})));
    h.wait_state("web", "ready");
    assert!(fx.events().iter().any(|e| e == "mcp bearer"), "{:?}", fx.events());
    drop(h);
    support::oauth::assert_no_token("the log", &std::fs::read_to_string(&log).unwrap());
}

#[test]
fn a_user_authorized_dpop_bound_token_is_refreshed_with_a_proof_of_the_same_key() {
    let dir = tempfile::tempdir().unwrap();
    // No `dpop` in the configuration: the authorization server's metadata asks for it.
    let (_h, events) = call_late_in_a_tokens_life(dir.path(), &["--oauth-dpop"]);
    let Some(Some(key)) = keys(&events, "token authorization_code").first().cloned() else { panic!("no bound token: {events:?}") };
    let refreshed = keys(&events, "token refresh_token");
    assert!(!refreshed.is_empty() && refreshed.iter().all(|k| k.as_ref() == Some(&key)), "{events:?}");
    assert!(keys(&events, "mcp").iter().all(|k| k.as_ref() == Some(&key)), "{events:?}");
    assert!(!events.iter().any(|e| e.contains("dpop-invalid") || e == "mcp bearer"), "{events:?}");
}
