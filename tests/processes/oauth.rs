//! OAuth sign-ins across processes: two `toolreg mcp` of one state directory share one server
//! whose refresh tokens are single-use (the fixture's `--oauth`) and whose access tokens live
//! 1 s, so that while both call at once, round after round, the refresh token is rotated many
//! times, by one process or the other. Both stay signed in: every call succeeds and no one is
//! asked to sign in again.

use crate::support::gateway::{text, write_config, McpClient};
use crate::support::oauth::{assert_no_token, gateway, OAuthFixture};
use crate::support::TIMEOUT;
use serde_json::json;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const ROUNDS: usize = 30;
const TOKEN_TTL_S: &str = "1";

fn wait_tool(c: &mut McpClient, name: &str) {
    let start = Instant::now();
    while !c.tool_names().iter().any(|n| n == name) {
        assert!(start.elapsed() < TIMEOUT, "{name} never listed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `ROUNDS` calls, each started with the other gateway's at the barrier: the failures.
fn rounds(mut c: McpClient, who: &'static str, start: Arc<Barrier>) -> (McpClient, Vec<String>) {
    let mut failed = Vec::new();
    for i in 0..ROUNDS {
        start.wait();
        let said = format!("{who} round {i}");
        let r = c.request("tools/call", json!({"name": "mcp__web__echo", "arguments": {"text": said}}));
        let result = &r["result"];
        if result["isError"] != false || !text(result).contains(&said) {
            failed.push(format!("{said}: {r}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    (c, failed)
}

#[test]
fn two_gateways_stay_signed_in_through_many_refresh_token_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let fx = OAuthFixture::start(dir.path(), &["--oauth-token-ttl-s", TOKEN_TTL_S]);
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let config = write_config(
        dir.path(),
        &json!({"model": "gpt-4o", "contextWindow": 128000,
            "servers": [{"id": "web", "name": "Web", "trust": "auto", "transport": {"type": "http", "url": fx.http.url}}],
            "gateway": {"defer": "never"}}),
    );
    // One person signs in once, through the first gateway's client; the second gateway starts
    // signed in from the shared state and has no client that could show a page.
    let mut a = gateway(&config, &[("TOOLREG_STATE_DIR", state)], json!({"elicitation": {"url": {}}}));
    wait_tool(&mut a, "mcp__web__echo");
    assert_eq!(a.asked.len(), 1, "{:?}", a.asked);
    let mut b = gateway(&config, &[("TOOLREG_STATE_DIR", state)], json!({}));
    wait_tool(&mut b, "mcp__web__echo");
    let signed_in = fx.events().len();

    let start = Arc::new(Barrier::new(2));
    let other = start.clone();
    let b_rounds = std::thread::spawn(move || rounds(b, "b", other));
    let (mut a, mut failed) = rounds(a, "a", start);
    let (mut b, b_failed) = b_rounds.join().unwrap();
    failed.extend(b_failed);

    let events = fx.events()[signed_in..].to_vec();
    let rotations = events.iter().filter(|e| e.starts_with("token refresh_token")).count();
    eprintln!("{rotations} refresh-token rotations in {} calls", 2 * ROUNDS);
    assert!(failed.is_empty(), "{} of {} calls failed ({rotations} rotations); first: {}", failed.len(), 2 * ROUNDS, failed[0]);
    assert!(rotations >= 5, "the refresh token was rotated {rotations} times: {events:?}");
    assert!(!events.iter().any(|e| e.starts_with("authorize") || e == "register"), "signed in again: {events:?}");
    assert!(a.asked.len() == 1 && b.asked.is_empty(), "asked again: {:?} {:?}", a.asked, b.asked);
    for (who, c) in [("a", &mut a), ("b", &mut b)] {
        assert!(c.tool_names().iter().any(|n| n == "mcp__web__echo"), "{who} lists the server's tool");
        let stderr: Vec<String> = c.stderr.try_iter().collect();
        assert_no_token(who, &stderr.join("\n"));
    }
}
