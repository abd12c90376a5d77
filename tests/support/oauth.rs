//! The fixture MCP server's `--oauth` mode (its own authorization server: metadata, dynamic
//! registration, PKCE, refresh, 401/403), and a browser whose user clicks "allow".

use super::gateway::{spawn, McpClient};
use super::{HttpFixture, TIMEOUT};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The fixture's `--oauth` mode over Streamable HTTP, with its event log.
pub struct OAuthFixture {
    pub http: HttpFixture,
    log: PathBuf,
}

impl OAuthFixture {
    pub fn start(dir: &Path, extra: &[&str]) -> OAuthFixture {
        let log = dir.join("oauth.log");
        let mut args = vec!["--tools", "1", "--oauth", "--oauth-log", log.to_str().unwrap()];
        args.extend(extra);
        OAuthFixture { http: HttpFixture::start(dir, &args), log }
    }

    /// The authorization server's events so far (`register`, `authorize scope=...`, ...).
    pub fn events(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_owned).collect()
    }
}

/// One HTTP/1.1 GET on loopback: (status, Location header).
pub fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let location = text
        .lines()
        .take_while(|l| !l.is_empty())
        .find_map(|l| l.strip_prefix("location: ").or_else(|| l.strip_prefix("Location: ")))
        .map(str::to_owned);
    (status, location)
}

/// A browser whose user clicks "allow": the page redirects to the gateway's loopback listener.
pub fn authorize_in_browser(url: &str) {
    let (status, location) = get(url);
    assert_eq!(status, 302, "the authorization page redirects back");
    let (status, _) = get(&location.expect("a redirect"));
    assert_eq!(status, 200, "the loopback listener took the code");
}

/// `toolreg mcp` (logging at trace, `env` added) with a 2025-11-25 client of these
/// capabilities; URL elicitations are answered by opening the page and allowing.
pub fn gateway(config: &str, env: &[(&str, &str)], capabilities: Value) -> McpClient {
    let mut c = spawn(config, &["--log-level", "trace"], env);
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

/// Nothing the fixture's authorization server issues (codes, tokens) nor a client secret of
/// the tests appears in `text`.
pub fn assert_no_token(what: &str, text: &str) {
    for needle in ["access-", "refresh-", "code-", "S3CRET"] {
        assert!(!text.contains(needle), "{what} contains {needle:?}");
    }
}
