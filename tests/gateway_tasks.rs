//! The tasks extension (SEP-2663) on `toolreg mcp --http`: an upstream's task (the fixture's
//! `--tasks` tools) reaches a 2026-07-28 client that declared the extension under an id of the
//! gateway's, which opens only where it was given (`/mcp`, not a profile's path, not for a
//! client without the extension), and `tasks/get` / `tasks/cancel` reach the upstream's task.
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
}
