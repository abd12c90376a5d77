//! The tasks extension (SEP-2663) on `toolreg mcp --http`: an upstream's task (the fixture's
//! `--tasks` tools) reaches a 2026-07-28 client that declared the extension under an id of the
//! gateway's, which opens only where it was given (`/mcp`, not a profile's path, not for a
//! client without the extension), and `tasks/get` / `tasks/cancel` reach the upstream's task; a
//! tool that runs only as a task is refused (-32021) to a client without the extension, naming
//! the tool; a completed task's result is cut and its media handled as a direct call's.
//! The conformance suite's tasks scenarios check the wire shapes (scripts/conformance-server.sh).
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::gateway::{fixture, rpc_2026_declaring, spawn_http, write_config};

const TOKEN: &str = "tasks-token-0123456789abcdef";

fn tasks() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

#[test]
fn an_upstream_task_is_the_clients_under_an_id_that_opens_only_where_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let fx = fixture("fx", &["--modern", "--tasks", "--tasks-poll-ms", "100"]);
    let config = write_config(dir.path(), &json!({"servers": [fx], "gateway": {"defer": "never", "toolNames": "upstream",
        "profiles": {"p": {"servers": ["fx"]}}}}));
    let (_gw, addr) = spawn_http(&config, &[("TOOLREG_MCP_TOKEN", TOKEN)]);
    let rpc = |path: &str, method: &str, params: Value, caps: Value| rpc_2026_declaring(&addr, path, TOKEN, method, params, caps);

    let (status, d) = rpc("/mcp", "server/discover", json!({}), json!({}));
    assert_eq!(status, 200);
    assert!(d["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(), "{d}");

    // The first call waits for the warm-up; a client with the extension gets a task.
    let (_, r) = rpc("/mcp", "tools/call", json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "bound"}}), tasks());
    let made = &r["result"];
    assert_eq!(made["resultType"], "task", "{r}");
    let id = made["taskId"].as_str().unwrap().to_owned();
    assert!(id.len() == 64 && id.bytes().all(|c| c.is_ascii_hexdigit()), "an id of the gateway's: {id}");

    let (_, got) = rpc("/mcp", "tasks/get", json!({"taskId": id}), tasks());
    assert_eq!((&got["result"]["taskId"], &got["result"]["status"]), (&json!(id), &json!("working")), "{got}");
    // Elsewhere, or never given, the id is unknown; without the extension, refused.
    let (_, other) = rpc("/mcp/p", "tasks/get", json!({"taskId": id}), tasks());
    assert_eq!(other["error"]["code"], -32602, "{other}");
    let (_, never) = rpc("/mcp", "tasks/get", json!({"taskId": "f".repeat(64)}), tasks());
    assert_eq!(never["error"]["code"], -32602, "{never}");
    // (-32021, Missing Required Client Capability, goes out with HTTP 400.)
    let (status, _) = rpc("/mcp", "tasks/get", json!({"taskId": id}), json!({}));
    assert_eq!(status, 400);

    // Cancelled upstream: the task settles as cancelled.
    let (_, ack) = rpc("/mcp", "tasks/cancel", json!({"taskId": id}), tasks());
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, got) = rpc("/mcp", "tasks/get", json!({"taskId": id}), tasks());
        if got["result"]["status"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < until, "never cancelled: {got}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // A client without the extension gets the result itself.
    let (_, sync) = rpc("/mcp", "tools/call", json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "now"}}), json!({}));
    assert_eq!(sync["result"]["content"][0]["text"], "computed now in 0 s", "{sync}");
    // A tool that runs only as a task, called without the extension: -32021, saying which
    // tool needs which extension, in its message and its data.
    let (_, refused) = rpc("/mcp", "tools/call", json!({"name": "failing_job", "arguments": {}}), json!({}));
    let error = &refused["error"];
    assert_eq!(error["code"], -32021, "{refused}");
    assert!(error["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(), "{refused}");
    assert_eq!(error["data"]["tool"], "failing_job", "{refused}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("failing_job") && message.contains("io.modelcontextprotocol/tasks"), "{message}");
}

/// Polls `tasks/get` (bounded) until the task is terminal; its answer.
fn settled(rpc: &dyn Fn(&str, Value) -> Value, id: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let got = rpc("tasks/get", json!({"taskId": id}));
        if ["completed", "failed", "cancelled"].iter().any(|s| got["result"]["status"] == *s) {
            return got;
        }
        assert!(Instant::now() < until, "never settled: {got}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A task's result inlined in `tasks/get` takes a direct call's result steps: cut to the result
/// budget (its whole read on by `tool_result_read`), its image passed (`media: "model"`) or named
/// (`media: "placeholder"`), as the same tool's direct call (no extension, no task) is.
#[test]
fn a_completed_tasks_result_is_cut_and_its_media_handled_as_a_direct_calls() {
    for media in ["model", "placeholder"] {
        let dir = tempfile::tempdir().unwrap();
        let fx = fixture("fx", &["--modern", "--tasks", "--tasks-poll-ms", "100"]);
        let config = write_config(dir.path(), &json!({"servers": [fx], "gateway": {"defer": "never", "toolNames": "upstream",
            "results": {"maxTokens": 2000, "media": media}}}));
        let (_gw, addr) = spawn_http(&config, &[("TOOLREG_MCP_TOKEN", TOKEN)]);
        let rpc = |method: &str, params: Value| rpc_2026_declaring(&addr, "/mcp", TOKEN, method, params, tasks()).1;

        let (_, direct) = rpc_2026_declaring(&addr, "/mcp", TOKEN, "tools/call", json!({"name": "report", "arguments": {}}), json!({}));
        let direct = &direct["result"];
        assert!(direct["_meta"]["toolreg/cut"].is_object(), "the direct call is cut: {direct}");
        let made = rpc("tools/call", json!({"name": "report", "arguments": {}}));
        assert_eq!(made["result"]["resultType"], "task", "{made}");
        let id = made["result"]["taskId"].as_str().unwrap().to_owned();
        let got = settled(&rpc, &id);
        assert_eq!(got["result"]["status"], "completed", "{got}");
        let result = &got["result"]["result"];
        let cut = &result["_meta"]["toolreg/cut"];
        assert_eq!(cut["totalTokens"], direct["_meta"]["toolreg/cut"]["totalTokens"], "{result}");
        assert_eq!(cut["shownTokens"], direct["_meta"]["toolreg/cut"]["shownTokens"], "{result}");
        let shown = result["content"][0]["text"].as_str().unwrap();
        assert!(shown.len() < 40_000, "cut to the budget: {} bytes", shown.len());
        let image = result["content"].as_array().unwrap().iter().find(|p| p["type"] == "image").cloned();
        let placeholder = result["content"].as_array().unwrap().iter().any(|p| p["text"].as_str().is_some_and(|t| t.starts_with("[image: image/png")));
        match media {
            "model" => assert!(image.is_some() && !placeholder, "the image passes: {result}"),
            _ => assert!(image.is_none() && placeholder, "the image is named: {result}"),
        }
        // The whole is kept for the task's client, read on as a direct call's is.
        let reference = cut["ref"].as_str().unwrap();
        let (_, more) = rpc_2026_declaring(&addr, "/mcp", TOKEN, "tools/call", json!({"name": "tool_result_read", "arguments": {"ref": reference, "offset": cut["shownTokens"]}}), json!({}));
        assert_eq!(more["result"]["isError"], false, "{more}");
        assert!(more["result"]["content"][0]["text"].as_str().unwrap().contains("Paragraph"), "{more}");
    }
}

/// A 2026-07-28 `subscriptions/listen` stream over HTTP, read as its events arrive.
struct Listen {
    stream: std::net::TcpStream,
    got: String,
}

impl Listen {
    fn open(addr: &str, path: &str, id: &str, filter: Value) -> Listen {
        use std::io::Write;
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": tasks(),
            "io.modelcontextprotocol/clientInfo": {"name": "toolreg-test", "version": "0"}});
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {"notifications": filter, "_meta": meta}}).to_string();
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nAuthorization: Bearer {TOKEN}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n\r\n{body}",
            body.len()
        );
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.write_all(req.as_bytes()).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        Listen { stream, got: String::new() }
    }

    /// The `notifications/tasks` received so far, reading until `until`.
    fn tasks_until(&mut self, until: Instant) -> Vec<Value> {
        use std::io::Read;
        let mut buf = [0u8; 65536];
        while Instant::now() < until {
            match self.stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.got.push_str(&String::from_utf8_lossy(&buf[..n])),
                Err(_) => {}
            }
            if self.got.contains("\"status\":\"completed\"") {
                break;
            }
        }
        let notes = self.got.lines().filter_map(|l| l.strip_prefix("data: ")).filter_map(|l| serde_json::from_str::<Value>(l).ok());
        notes.filter(|n| n["method"] == "notifications/tasks").collect()
    }
}

/// A listen stream that names its tasks (SEP-2663's `taskIds`) is told `notifications/tasks`
/// as they change, under the gateway's ids, a completed one with its result; a stream of another
/// owner (a profile's path) naming the same id, or an id never given, is told nothing.
#[test]
fn a_listen_stream_is_told_of_the_tasks_it_named_and_only_its_owners() {
    let dir = tempfile::tempdir().unwrap();
    let fx = fixture("fx", &["--modern", "--tasks", "--tasks-poll-ms", "100"]);
    let config = write_config(dir.path(), &json!({"servers": [fx], "gateway": {"defer": "never", "toolNames": "upstream",
        "profiles": {"p": {"servers": ["fx"]}}}}));
    let (_gw, addr) = spawn_http(&config, &[("TOOLREG_MCP_TOKEN", TOKEN)]);
    let (_, made) = rpc_2026_declaring(&addr, "/mcp", TOKEN, "tools/call", json!({"name": "slow_compute", "arguments": {"seconds": 1, "label": "heard"}}), tasks());
    let id = made["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{made}")).to_owned();

    let never = "f".repeat(64);
    let mut theirs = Listen::open(&addr, "/mcp/p", "listen-p", json!({"taskIds": [id]}));
    let mut mine = Listen::open(&addr, "/mcp", "listen-1", json!({"taskIds": [id, never]}));
    let told = mine.tasks_until(Instant::now() + Duration::from_secs(20));
    assert!(!told.is_empty(), "never told: {}", mine.got);
    for note in &told {
        assert_eq!(note["params"]["taskId"], json!(id), "only the named task, under the gateway's id: {note}");
        assert_eq!(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1", "{note}");
    }
    let last = told.last().unwrap();
    assert_eq!(last["params"]["status"], "completed", "{}", mine.got);
    assert_eq!(last["params"]["result"]["content"][0]["text"], "computed heard in 1 s", "{last}");
    // Another owner's stream, open as long, heard nothing of it.
    let heard = theirs.tasks_until(Instant::now() + Duration::from_millis(500));
    assert!(theirs.got.contains("notifications/subscriptions/acknowledged") && heard.is_empty(), "{}", theirs.got);
    // The first status told was the task's own at the time, before it completed.
    assert_eq!(told[0]["params"]["status"], "working", "{told:?}");
}
