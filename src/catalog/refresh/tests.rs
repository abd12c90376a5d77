//! The state machine of one server, driven against the real fixture MCP server
//! (`toolreg-fixture-mcp`, its faults chosen by flags) over the catalog's own stdio transport.
//! Waits poll a state with a generous deadline that only fails on a hang; nothing asserts on
//! wall-clock time.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::catalog::auth::NoAuthHost;
use crate::catalog::elicit::NoHost;

/// Beside the test binary (`target/release/deps/..` -> `target/release/`), as `cargo build`
/// leaves it; absent, the test fails rather than passes.
fn fixture() -> String {
    if let Ok(path) = std::env::var("TOOLREG_FIXTURE_MCP") {
        return path;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(Path::parent).expect("target profile directory");
    let bin = dir.join("toolreg-fixture-mcp");
    assert!(
        bin.is_file(),
        "{} is missing: `cargo build --release -p toolreg-fixture-mcp` (or set TOOLREG_FIXTURE_MCP)",
        bin.display()
    );
    bin.to_string_lossy().into_owned()
}

fn config(id: &str, command: &str, args: &[&str]) -> ServerConfig {
    serde_json::from_value(json!({"id": id, "name": id,
        "transport": {"type": "stdio", "command": command, "args": args}}))
    .unwrap()
}

fn fixture_config(id: &str, args: &[&str]) -> ServerConfig {
    config(id, &fixture(), args)
}

/// Short grace so stops do not linger; a long back-off unless a test wants the retry.
fn opts(backoff_base: Duration) -> CatalogOptions {
    CatalogOptions {
        backoff_base,
        backoff_max: Duration::from_secs(600),
        stop_grace: Duration::from_millis(200),
        ..CatalogOptions::default()
    }
}

fn shared(opts: CatalogOptions) -> (Arc<Shared>, mpsc::UnboundedReceiver<CatalogEvent>) {
    let (events, rx) = mpsc::unbounded_channel();
    let shared = Shared {
        opts,
        events,
        warm_slots: Arc::new(Semaphore::new(4)),
        host: Arc::new(NoHost),
        auth_host: Arc::new(NoAuthHost),
        pins_store: Default::default(),
    };
    (Arc::new(shared), rx)
}

fn names(server: &Server) -> Vec<String> {
    let list = server.last_known_good().expect("a list");
    list.tools.into_iter().map(|t| t.name).collect()
}

/// Poll until `ok` holds; the deadline only catches a hang.
async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    for _ in 0..3000 {
        if ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn drain(rx: &mut mpsc::UnboundedReceiver<CatalogEvent>) -> Vec<CatalogEvent> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn tools_changed(events: &[CatalogEvent]) -> usize {
    events.iter().filter(|e| matches!(e, CatalogEvent::ToolsChanged { .. })).count()
}

fn read_pid(path: &Path) -> i32 {
    let text = std::fs::read_to_string(path).expect("pid file written before the handshake");
    text.trim().parse().expect("a pid")
}

/// Alive and not a zombie (a reaped child has no /proc entry at all).
fn pid_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|st| !st.split_whitespace().nth(2).is_some_and(|state| state == "Z"))
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
}

fn path(dir: &tempfile::TempDir, name: &str) -> (PathBuf, String) {
    let p = dir.path().join(name);
    let s = p.to_string_lossy().into_owned();
    (p, s)
}

fn a_tool(name: &str) -> McpTool {
    serde_json::from_value(json!({"name": name, "description": "from before", "inputSchema": {"type": "object"}})).unwrap()
}

/// A fixture server (`--tools 1`) listed once and Ready, with the file its pid is in.
struct Running {
    server: Arc<Server>,
    events: mpsc::UnboundedReceiver<CatalogEvent>,
    pid_file: PathBuf,
    pid: i32,
    _dir: tempfile::TempDir,
}

async fn running() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let (pid_file, pid_arg) = path(&dir, "pid");
    let (shared, events) = shared(opts(Duration::from_secs(60)));
    let server = Server::new(fixture_config("fx", &["--tools", "1", "--pid-file", &pid_arg]), shared, None, None);
    assert_eq!(server.start_refresh(true).unwrap().await.state, ServerState::Ready);
    let pid = read_pid(&pid_file);
    Running { server, events, pid_file, pid, _dir: dir }
}

#[tokio::test]
async fn connect_lists_tools_and_turns_ready() {
    let (shared, mut rx) = shared(opts(Duration::from_secs(60)));
    let server = Server::new(fixture_config("fx", &["--tools", "2"]), shared, None, None);
    assert_eq!(server.status().state, ServerState::Connecting);
    assert!(server.last_known_good().is_none(), "cold before the first list");

    let status = server.start_refresh(true).expect("an enabled server refreshes").await;
    assert_eq!(status.state, ServerState::Ready);
    assert_eq!((status.error, status.tool_count, status.cached), (None, Some(4), true));
    assert!(status.refreshed_at.is_some());
    assert_eq!(names(&server), ["echo", "stats", "tool_0", "tool_1"]);
    let events = drain(&mut rx);
    assert_eq!(tools_changed(&events), 1, "{events:?}");
    assert!(events.iter().any(|e| matches!(e, CatalogEvent::DidChange { status: ServerState::Ready, tool_count: Some(4), .. })));
    server.stop().await;
}

#[tokio::test]
async fn failed_connect_keeps_last_known_good_and_schedules_back_off() {
    let (shared, mut rx) = shared(opts(Duration::from_secs(60)));
    let carry = CachedList { tools: vec![a_tool("kept")], refreshed_at: Some("2026-01-01T00:00:00Z".into()), extras: None };
    let server = Server::new(config("bad", "/nonexistent/toolreg-test-server", &[]), shared, Some(carry), None);

    let status = server.start_refresh(true).unwrap().await;
    assert_eq!(status.state, ServerState::Error);
    assert!(status.error.is_some());
    assert_eq!((status.tool_count, status.cached), (Some(1), true));
    assert_eq!(status.refreshed_at.as_deref(), Some("2026-01-01T00:00:00Z"), "a failure is not a refresh");
    assert_eq!(names(&server), ["kept"]);
    {
        let d = lock(&server.data);
        assert_eq!(d.failures, 1);
        assert!(d.retry_at.is_some_and(|t| t > Instant::now()), "back-off ahead");
        assert!(d.retry_scheduled);
    }
    // Backing off: an automatic refresh does not start; an explicit one skips the back-off.
    assert!(server.start_refresh(false).is_none());
    let again = server.start_refresh(true).expect("explicit refreshes skip the back-off").await;
    assert_eq!(again.state, ServerState::Error);
    assert_eq!(lock(&server.data).failures, 2);
    let events = drain(&mut rx);
    assert_eq!(tools_changed(&events), 0, "the list never changed: {events:?}");
    let states: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            CatalogEvent::DidChange { status, tool_count, .. } => Some((*status, *tool_count)),
            _ => None,
        })
        .collect();
    let (connecting, error) = ((ServerState::Connecting, Some(1)), (ServerState::Error, Some(1)));
    assert_eq!(states, [connecting, error, connecting, error], "each try connects, then fails; the list stays");
    server.stop().await;
}

#[tokio::test]
async fn back_off_retries_on_its_own() {
    let (shared, _rx) = shared(opts(Duration::from_millis(20)));
    let server = Server::new(config("bad", "/nonexistent/toolreg-test-server", &[]), shared, None, None);
    assert_eq!(server.start_refresh(true).unwrap().await.state, ServerState::Error);
    until("two automatic retries", || lock(&server.data).failures >= 3).await;
    assert_eq!(server.status().state, ServerState::Error);
    assert!(server.last_known_good().is_none(), "nothing was ever listed");
    server.stop().await;
}

#[tokio::test]
async fn refresh_while_connected_reuses_the_session_and_stores_the_new_list() {
    let dir = tempfile::tempdir().unwrap();
    let (defs, defs_arg) = path(&dir, "defs.json");
    let (pid_file, pid_arg) = path(&dir, "pid");
    let (count, count_arg) = path(&dir, "lists");
    let args = ["--defs-file", &defs_arg, "--pid-file", &pid_arg, "--list-count-file", &count_arg];
    let (shared, mut rx) = shared(opts(Duration::from_secs(60)));
    let server = Server::new(fixture_config("fx", &args), shared, None, None);
    assert_eq!(server.start_refresh(true).unwrap().await.tool_count, Some(2));
    let pid = read_pid(&pid_file);
    let first = server.connection().await.expect("live session");
    drain(&mut rx);

    // The same list again is not news.
    assert_eq!(server.start_refresh(true).unwrap().await.state, ServerState::Ready);
    assert_eq!(tools_changed(&drain(&mut rx)), 0);

    std::fs::write(&defs, json!([{"name": "extra", "inputSchema": {"type": "object"}}]).to_string()).unwrap();
    let status = server.start_refresh(true).unwrap().await;
    assert_eq!((status.state, status.tool_count), (ServerState::Ready, Some(3)));
    assert_eq!(names(&server), ["echo", "stats", "extra"]);
    assert_eq!(tools_changed(&drain(&mut rx)), 1);
    assert!(Arc::ptr_eq(&first, &server.connection().await.unwrap()), "same session");
    assert_eq!(read_pid(&pid_file), pid, "no respawn");
    assert_eq!(lines(&count), 3);
    server.stop().await;
}

#[tokio::test]
async fn list_changed_notification_refreshes() {
    let dir = tempfile::tempdir().unwrap();
    let (defs, defs_arg) = path(&dir, "defs.json");
    let (shared, _rx) = shared(opts(Duration::from_secs(60)));
    let server = Server::new(fixture_config("fx", &["--defs-file", &defs_arg, "--watch-defs"]), shared, None, None);
    assert_eq!(server.start_refresh(true).unwrap().await.tool_count, Some(2));

    std::fs::write(&defs, json!([{"name": "pushed", "inputSchema": {"type": "object"}}]).to_string()).unwrap();
    until("the notified list", || server.status().tool_count == Some(3)).await;
    assert_eq!(names(&server), ["echo", "stats", "pushed"]);
    assert_eq!(server.status().state, ServerState::Ready);
    server.stop().await;
}

#[tokio::test]
async fn single_flight_two_refreshes_one_listing() {
    let dir = tempfile::tempdir().unwrap();
    let (count, count_arg) = path(&dir, "lists");
    let (shared, _rx) = shared(opts(Duration::from_secs(60)));
    let server = Server::new(fixture_config("fx", &["--slow-list-ms", "300", "--list-count-file", &count_arg]), shared, None, None);
    let a = server.start_refresh(true).unwrap();
    let b = server.start_refresh(false).expect("an automatic refresh joins the running one");
    let c = server.start_refresh(true).unwrap();
    let (a, b, c) = tokio::join!(a, b, c);
    assert_eq!(a.state, ServerState::Ready);
    assert_eq!((&a.tool_count, &a.refreshed_at), (&b.tool_count, &b.refreshed_at));
    assert_eq!((&a.tool_count, &a.refreshed_at), (&c.tool_count, &c.refreshed_at));
    assert_eq!(lines(&count), 1, "one tools/list for three callers");
    assert!(lock(&server.data).in_flight.is_none());
    server.stop().await;
}

#[tokio::test]
async fn list_timeout_is_a_failure_that_keeps_the_list() {
    let (shared, _rx) = shared(CatalogOptions { list_timeout: Duration::from_millis(300), ..opts(Duration::from_secs(60)) });
    let carry = CachedList { tools: vec![a_tool("kept")], refreshed_at: None, extras: None };
    let server = Server::new(fixture_config("fx", &["--hang-list"]), shared, Some(carry), None);
    let status = server.start_refresh(true).unwrap().await;
    assert_eq!((status.state, status.tool_count), (ServerState::Error, Some(1)));
    assert_eq!(names(&server), ["kept"]);
    assert!(matches!(&*lock(&server.session), Session::Idle), "a timed-out session is dropped");
    server.stop().await;
}

#[tokio::test]
async fn dead_server_turns_error_keeps_its_list_and_restart_recovers() {
    let Running { server, events: mut rx, pid_file, pid: first, _dir } = running().await;
    drain(&mut rx);

    assert_eq!(unsafe { libc::kill(first, libc::SIGKILL) }, 0);
    until("Error after the crash", || server.status().state == ServerState::Error).await;
    let status = server.status();
    assert_eq!((status.tool_count, status.cached), (Some(3), true));
    assert_eq!(names(&server), ["echo", "stats", "tool_0"]);
    assert!(matches!(&*lock(&server.session), Session::Idle));
    assert_eq!(lock(&server.data).failures, 1);
    assert_eq!(tools_changed(&drain(&mut rx)), 0);

    std::fs::remove_file(&pid_file).unwrap();
    let status = server.restart().await.expect("an enabled server restarts");
    assert_eq!((status.state, status.error, status.tool_count), (ServerState::Ready, None, Some(3)));
    let second = read_pid(&pid_file);
    assert_ne!(first, second, "a new process");
    {
        let d = lock(&server.data);
        assert_eq!((d.failures, d.retry_at), (0, None), "restart forgets the back-off");
    }
    server.stop().await;
}

#[tokio::test]
async fn restart_closes_the_live_session_and_spawns_a_new_one() {
    let Running { server, pid_file, pid: first, _dir, .. } = running().await;
    let old = server.connection().await.unwrap();
    std::fs::remove_file(&pid_file).unwrap();

    let status = server.restart().await.unwrap();
    assert_eq!(status.state, ServerState::Ready);
    let second = read_pid(&pid_file);
    assert_ne!(first, second);
    assert!(!Arc::ptr_eq(&old, &server.connection().await.unwrap()));
    until("the old child gone", || !pid_alive(first)).await;
    assert!(pid_alive(second));
    server.stop().await;
}

#[tokio::test]
async fn stop_kills_the_child_and_ends_refreshes() {
    let Running { server, pid, _dir, .. } = running().await;
    assert!(pid_alive(pid));

    server.stop().await;
    until("the child gone", || !pid_alive(pid)).await;
    assert!(server.start_refresh(true).is_none(), "a stopped server never refreshes");
    assert!(server.connection().await.is_err(), "nor connects");
    assert!(server.restart().await.is_none());
    assert_eq!(server.last_known_good().map(|l| l.tools.len()), Some(3), "the list stays for a successor");
}

#[tokio::test]
async fn stop_during_a_slow_connect_abandons_it() {
    let (shared, _rx) = shared(opts(Duration::from_secs(60)));
    let server = Server::new(fixture_config("fx", &["--slow-start-ms", "1000"]), shared, None, None);
    let refresh = server.start_refresh(true).unwrap();
    until("the connect under way", || matches!(&*lock(&server.session), Session::Connecting { .. })).await;
    server.stop().await;
    let status = refresh.await;
    assert_ne!(status.state, ServerState::Ready);
    assert!(server.last_known_good().is_none());
    assert!(matches!(&*lock(&server.session), Session::Idle));
}
