//! `toolreg mcp --http`: the loopback Streamable HTTP endpoint refuses requests without the
//! bearer token (401) and requests from a foreign `Host` or `Origin` (403, DNS rebinding),
//! and serves MCP to a request that has both right, statelessly to a 2026-07-28 request; a long
//! call's SSE stream is closed and resumed with `Last-Event-ID`; `DELETE` ends a session with
//! 204.

mod support;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use support::gateway::{fixture, spawn, write_config, McpClient};

/// Starts `toolreg mcp --http 127.0.0.1:0` and returns it with its `host:port` and token.
fn start(dir: &std::path::Path, token_env: Option<&str>) -> (McpClient, String, String) {
    start_with(dir, &json!({"servers": [fixture("fx", &[])]}), token_env)
}

fn start_with(dir: &std::path::Path, config: &Value, token_env: Option<&str>) -> (McpClient, String, String) {
    let path = write_config(dir, config);
    let env: Vec<(&str, &str)> = token_env.map(|t| ("TOOLREG_MCP_TOKEN", t)).into_iter().collect();
    let c = spawn(&path, &["--http", "127.0.0.1:0"], &env);
    let (mut addr, mut token) = (None, token_env.map(str::to_string));
    let deadline = Instant::now() + support::TIMEOUT;
    while addr.is_none() || token.is_none() {
        let line = c.stderr.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("toolreg mcp --http said where it listens");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            addr = Some(rest.trim_end_matches("/mcp").to_string());
        }
        if let Some(rest) = line.split("bearer token ").nth(1) {
            token = Some(rest.split_whitespace().next().unwrap().to_string());
        }
    }
    (c, addr.unwrap(), token.unwrap())
}

/// POSTs an `initialize` to /mcp with these headers; returns the status code and the body.
fn post(addr: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "http-test", "version": "0"}}});
    post_body(addr, headers, &body)
}

/// POSTs one JSON-RPC request (id 1) to /mcp; returns the status code and the raw response.
fn post_body(addr: &str, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
    exchange(addr, "POST", headers, &body.to_string(), 1, Duration::from_secs(5))
}

/// Sends one HTTP request to /mcp and reads until the answer to JSON-RPC request `id` arrives,
/// the server closes, or nothing comes for `quiet`; returns the status code and the raw response.
fn exchange(addr: &str, method: &str, headers: &[(&str, &str)], body: &str, id: u64, quiet: Duration) -> (u16, String) {
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(quiet)).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    // An SSE answer stays open after the response event: read until it arrives.
    let (mut got, mut buf, id) = (Vec::new(), [0u8; 4096], format!("\"id\":{id}"));
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        let answered = text.contains(&id) && (text.contains("\"result\"") || text.contains("\"error\"")) && (text.ends_with('}') || text.ends_with("\n\n"));
        if answered || (text.contains("\r\n\r\n") && !text.starts_with("HTTP/1.1 200")) {
            break;
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status line: {text:?}"));
    (status, text)
}

#[test]
fn requests_without_the_bearer_token_get_401() {
    let dir = tempfile::tempdir().unwrap();
    let (_c, addr, token) = start(dir.path(), Some("s3cret-token"));
    let (status, text) = post(&addr, &[]);
    assert_eq!(status, 401, "{text}");
    assert!(text.to_ascii_lowercase().contains("www-authenticate: bearer"), "{text}");
    assert_eq!(post(&addr, &[("Authorization", "Bearer wrong-token!")]).0, 401);
    assert_eq!(post(&addr, &[("Authorization", "s3cret-token")]).0, 401, "the Bearer scheme is required");
    let bearer = format!("Bearer {token}");
    let (status, text) = post(&addr, &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"name\":\"toolreg\""), "{text}");
}

#[test]
fn a_printed_token_is_made_when_none_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let (_c, addr, token) = start(dir.path(), None);
    assert_eq!(token.len(), 64, "{token}");
    assert_eq!(post(&addr, &[]).0, 401);
    assert_eq!(post(&addr, &[("Authorization", &format!("Bearer {token}"))]).0, 200);
}

#[test]
fn foreign_host_and_origin_are_refused_before_the_token_is_looked_at() {
    let dir = tempfile::tempdir().unwrap();
    let (_c, addr, token) = start(dir.path(), Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let port = addr.rsplit(':').next().unwrap();
    let evil_host = format!("evil.example:{port}");
    // A rebinding page: its name resolves to 127.0.0.1, its requests say its own Host.
    assert_eq!(post(&addr, &[("Host", &evil_host), ("Authorization", &bearer)]).0, 403);
    assert_eq!(post(&addr, &[("Host", &evil_host)]).0, 403, "no 401 that tells a foreign page a server is here");
    assert_eq!(post(&addr, &[("Origin", "http://evil.example"), ("Authorization", &bearer)]).0, 403);
    assert_eq!(post(&addr, &[("Origin", "http://evil.example")]).0, 403);
    // Loopback names and origins pass.
    let local_origin = format!("http://localhost:{port}");
    assert_eq!(post(&addr, &[("Origin", &local_origin), ("Authorization", &bearer)]).0, 200);
    assert_eq!(post(&addr, &[("Host", &format!("localhost:{port}")), ("Authorization", &bearer)]).0, 200);
}

#[test]
fn a_non_loopback_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &json!({"servers": []}));
    let mut c = spawn(&path, &["--http", "0.0.0.0:0"], &[("TOOLREG_MCP_TOKEN", "t")]);
    assert_eq!(c.child.wait().unwrap().code(), Some(2));
}

/// A 2026-07-28 request: no session, its version, client and capabilities in `_meta` and the
/// version and method in headers. Returns the JSON-RPC `result`.
fn call_2026(addr: &str, bearer: &str, method: &str, name: Option<&str>, params: Value) -> Value {
    let response = rpc_2026(addr, bearer, method, name, params, json!({}));
    response.get("result").cloned().unwrap_or_else(|| panic!("no result: {response}"))
}

/// As `call_2026` for a client with these capabilities; the whole JSON-RPC response.
fn rpc_2026(addr: &str, bearer: &str, method: &str, name: Option<&str>, params: Value, capabilities: Value) -> Value {
    let raw = raw_2026(addr, bearer, method, name, params, capabilities);
    let response: Value = serde_json::from_str(&raw).unwrap_or_else(|e| panic!("{e}: {raw}"));
    assert!(response.get("result").is_some() || response.get("error").is_some(), "{raw}");
    response
}

/// `rpc_2026`'s JSON-RPC response, as the bytes that came.
fn raw_2026(addr: &str, bearer: &str, method: &str, name: Option<&str>, mut params: Value, capabilities: Value) -> String {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "http-test", "version": "0"}});
    let mut headers = vec![("Authorization", bearer), ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    let (status, text) = post_body(addr, &headers, &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    assert!(status == 200 || status == 400, "{text}");
    // A JSON body, or an SSE event whose data line holds the response.
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json = body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(body);
    json.trim().to_string()
}

#[test]
fn a_2026_client_gets_results_marked_complete() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"servers": [fixture("fx", &["--tools", "1"])], "gateway": {"defer": "never", "toolNames": "upstream"}});
    let (_c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let list = call_2026(&addr, &bearer, "tools/list", None, json!({}));
    assert_eq!(list["resultType"], "complete", "{list}");
    assert!(list["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"), "{list}");
    let call = call_2026(&addr, &bearer, "tools/call", Some("echo"), json!({"name": "echo", "arguments": {"a": 1}}));
    assert_eq!(call["resultType"], "complete", "{call}");
    assert_eq!(call["content"][0]["text"], "{\"a\":1}", "{call}");
}

/// A gated call from a 2026-07-28 client, which may not be sent requests: the first round ends
/// with the approval form as an input request and a sealed state; the retry with the answer and
/// the state runs it once. A denial, a changed call, a reused, tampered or foreign state never run.
#[test]
fn a_2026_client_approves_a_gated_call_by_input_required_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.txt");
    let mut server = fixture("fx", &["--calls-file", calls.to_str().unwrap()]);
    server["approvalTools"] = json!(["echo"]);
    let config = json!({"servers": [server], "gateway": {"defer": "never", "toolNames": "upstream"}});
    let (_c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let ran = || std::fs::read_to_string(&calls).unwrap_or_default();
    let caps = json!({"elicitation": {"form": {}}});
    let call = |params: Value| rpc_2026(&addr, &bearer, "tools/call", Some("echo"), params, caps.clone());
    let first_round = |args: Value| {
        let r = call(json!({"name": "echo", "arguments": args}))["result"].clone();
        assert_eq!(r["resultType"], "input_required", "{r}");
        let form = &r["inputRequests"]["approval"];
        assert_eq!(form["method"], "elicitation/create", "{r}");
        assert_eq!(form["params"]["mode"], "form", "{r}");
        assert!(form["params"]["message"].as_str().unwrap().contains("echo"), "{r}");
        r["requestState"].as_str().expect("a state").to_owned()
    };
    let approve = json!({"approval": {"action": "accept", "content": {"decision": "approve"}}});

    // Approved: runs once, with the arguments asked about.
    let state = first_round(json!({"a": 1}));
    assert_eq!(ran(), "", "nothing runs before the answer");
    let r = call(json!({"name": "echo", "arguments": {"a": 1}, "inputResponses": approve, "requestState": state}));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "{\"a\":1}", "{r}");
    assert_eq!(ran(), "echo\n");
    // The same state again: refused, whatever the answer.
    let r = call(json!({"name": "echo", "arguments": {"a": 1}, "inputResponses": approve, "requestState": state}));
    assert!(r["error"]["message"].as_str().unwrap().contains("used already"), "{r}");
    // Tampered: refused before anything runs.
    let state = first_round(json!({"a": 2}));
    let r = call(json!({"name": "echo", "arguments": {"a": 2}, "inputResponses": approve, "requestState": format!("{state}-TAMPERED")}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // An approval for other arguments is no approval of these: asked again.
    let r = call(json!({"name": "echo", "arguments": {"a": 3}, "inputResponses": approve, "requestState": state}));
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    // Denied: not run, the model reads why.
    let state = first_round(json!({"a": 4}));
    let deny = json!({"approval": {"action": "accept", "content": {"decision": "deny"}}});
    let r = call(json!({"name": "echo", "arguments": {"a": 4}, "inputResponses": deny, "requestState": state}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("denied"), "{r}");
    assert_eq!(ran(), "echo\n", "only the approved call ran");
    // Without elicitation the client cannot be asked: refused as for any such client.
    let r = rpc_2026(&addr, &bearer, "tools/call", Some("echo"), json!({"name": "echo", "arguments": {"a": 5}}), json!({}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(ran(), "echo\n");
}

#[test]
fn every_client_gets_the_same_tools_list_with_hints_consistent_with_list_changed() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"servers": [fixture("fx", &["--tools", "6"])], "gateway": {"defer": "never"}});
    let (_c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    // Each 2026-07-28 request is a client of its own (no session): the bytes must not differ.
    let first = raw_2026(&addr, &bearer, "tools/list", None, json!({}), json!({}));
    let second = raw_2026(&addr, &bearer, "tools/list", None, json!({}), json!({}));
    assert_eq!(first, second);
    let list: Value = serde_json::from_str(&first).unwrap();
    let names: Vec<&str> = list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.len() > 6, "{names:?}");
    // Fresh for no time, private: a change is announced (listChanged), the next read asks again.
    assert_eq!((&list["result"]["ttlMs"], &list["result"]["cacheScope"]), (&json!(0), &json!("private")), "{list}");
}

/// An upstream tool that needs input (a 2026-07-28 fixture): the 2026-07-28 client gets the
/// upstream's input requests unchanged under a state of the gateway's, and its retry reaches the
/// upstream with its answers and the upstream's own state. A tampered state, or one made for
/// another tool, is refused before anything reaches the upstream; a second round gets a new state.
#[test]
fn a_2026_client_answers_an_upstream_tools_input_requests_itself() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.jsonl");
    let server = fixture("fx", &["--modern", "--answers-file", answers.to_str().unwrap()]);
    let config = json!({"servers": [server], "gateway": {"defer": "never", "toolNames": "upstream"}});
    let (_c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let rounds = || -> Vec<Value> { std::fs::read_to_string(&answers).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect() };
    let caps = json!({"elicitation": {"form": {}}, "sampling": {}});
    let call = |tool: &str, extra: Value, caps: &Value| {
        let mut params = json!({"name": tool, "arguments": {}});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        rpc_2026(&addr, &bearer, "tools/call", Some(tool), params, caps.clone())
    };
    let tool = "test_input_required_result_request_state";

    let r = call(tool, json!({}), &caps)["result"].clone();
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert_eq!(r["inputRequests"]["confirm"]["method"], "elicitation/create", "{r}");
    assert_eq!(r["inputRequests"]["confirm"]["params"]["requestedSchema"]["required"], json!(["ok"]), "{r}");
    let state = r["requestState"].as_str().expect("a state").to_owned();
    let upstream_state = rounds()[0].clone();
    assert!(upstream_state["requestState"].is_null(), "the first round carries no state");
    let confirm = json!({"confirm": {"action": "accept", "content": {"ok": true}}});

    // Tampered, or sealed for another tool: refused, nothing reaches the upstream.
    let r = call(tool, json!({"inputResponses": confirm, "requestState": format!("{state}-TAMPERED")}), &caps);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let other = "test_input_required_result_tampered_state";
    let r = call(other, json!({"inputResponses": confirm, "requestState": state}), &caps);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(rounds().len(), 1, "{:?}", rounds());

    // The retry: answers unchanged, and the upstream's state as the upstream sent it.
    let r = call(tool, json!({"inputResponses": confirm, "requestState": state}), &caps)["result"].clone();
    assert_eq!(r["resultType"], "complete", "{r}");
    assert!(r["content"][0]["text"].as_str().unwrap().starts_with("state-ok"), "{r}");
    let retry = rounds()[1].clone();
    assert_eq!(retry["inputResponses"], confirm);
    let sent = retry["requestState"].as_str().expect("the upstream's state");
    assert!(sent.contains("\"tool\":\"request_state\"") && sent.contains('é'), "verbatim: {sent}");
    assert!(!state.contains(sent), "the client never sees the upstream's state in clear");

    // Two rounds, each with a new state.
    let multi = "test_input_required_result_multi_round";
    let r = call(multi, json!({}), &caps)["result"].clone();
    let s1 = r["requestState"].as_str().unwrap().to_owned();
    let name = json!({"step1": {"action": "accept", "content": {"name": "Ada"}}});
    let r = call(multi, json!({"inputResponses": name, "requestState": s1}), &caps)["result"].clone();
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert!(r["inputRequests"]["step2"].is_object(), "{r}");
    let s2 = r["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2);
    let color = json!({"step2": {"action": "accept", "content": {"color": "green"}}});
    let r = call(multi, json!({"inputResponses": color, "requestState": s2}), &caps)["result"].clone();
    assert_eq!(r["content"][0]["text"], "state-ok: \"Ada\" likes \"green\"", "{r}");

    // The upstream asks only for what the client can do.
    let r = call("test_input_required_result_capabilities", json!({}), &json!({"sampling": {}}))["result"].clone();
    let keys: Vec<&String> = r["inputRequests"].as_object().unwrap_or_else(|| panic!("{r}")).keys().collect();
    assert_eq!(keys, ["greeting"], "{r}");
}

/// `prompts/get` and `resources/read` of a 2026-07-28 upstream that answers input-required:
/// the 2026-07-28 client gets the requests unchanged under a state of the gateway's, sealed for
/// that very prompt or resource; its retry reaches the upstream with its answers and the
/// upstream's own state. A tampered state, or one made for another request, is refused first.
#[test]
fn a_2026_client_answers_an_upstream_prompts_and_resources_input_requests_itself() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.jsonl");
    let server = fixture("fx", &["--modern", "--conformance", "--answers-file", answers.to_str().unwrap()]);
    let config = json!({"servers": [server], "gateway": {"defer": "never", "toolNames": "upstream"}});
    let (_c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let rounds = || -> Vec<Value> { std::fs::read_to_string(&answers).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect() };
    let caps = json!({"elicitation": {"form": {}}});
    // The `Mcp-Name` header: the prompt's name, the resource's URI.
    let ask = |method: &str, params: Value| {
        let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).unwrap().to_owned();
        rpc_2026(&addr, &bearer, method, Some(&name), params, caps.clone())
    };
    let with = |mut params: Value, extra: Value| {
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        params
    };

    // The upstream's prompts reach the shelf a moment after its tools: wait for them.
    let start = Instant::now();
    while !rpc_2026(&addr, &bearer, "prompts/list", None, json!({}), json!({}))["result"]["prompts"].to_string().contains("test_input_required_result_prompt") {
        assert!(start.elapsed() < support::TIMEOUT, "the upstream's prompts never listed");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The suite's prompt: asks, then answers with what the client said.
    let prompt = json!({"name": "test_input_required_result_prompt"});
    let r = ask("prompts/get", prompt.clone());
    let r = r.get("result").cloned().unwrap_or_else(|| panic!("{r}"));
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert_eq!(r["inputRequests"]["user_context"]["method"], "elicitation/create", "{r}");
    let prompt_state = r["requestState"].as_str().expect("a state").to_owned();
    let context = json!({"user_context": {"action": "accept", "content": {"context": "ctx"}}});
    let r = ask("prompts/get", with(prompt.clone(), json!({"inputResponses": context, "requestState": prompt_state})))["result"].clone();
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(r["messages"][0]["content"]["text"], "Prompt with context: ctx", "{r}");

    // A resource whose upstream keeps a state between rounds.
    let resource = json!({"uri": "test://input-required"});
    let r = ask("resources/read", resource.clone())["result"].clone();
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert_eq!(r["inputRequests"]["confirm"]["params"]["requestedSchema"]["required"], json!(["ok"]), "{r}");
    let state = r["requestState"].as_str().expect("a state").to_owned();
    let confirm = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    // Tampered, or the prompt's state: refused, nothing reaches the upstream.
    let before = rounds().len();
    let r = ask("resources/read", with(resource.clone(), json!({"inputResponses": confirm, "requestState": format!("{state}-TAMPERED")})));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = ask("resources/read", with(resource.clone(), json!({"inputResponses": confirm, "requestState": prompt_state})));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(rounds().len(), before, "{:?}", rounds());
    // The retry: answers unchanged, and the upstream's state as the upstream sent it.
    let r = ask("resources/read", with(resource.clone(), json!({"inputResponses": confirm, "requestState": state})))["result"].clone();
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(r["contents"][0]["text"], "state-ok: confirmed true", "{r}");
    let retry = rounds().last().cloned().unwrap();
    assert_eq!(retry["inputResponses"], confirm);
    let sent = retry["requestState"].as_str().expect("the upstream's state");
    assert!(sent.contains('é'), "verbatim: {sent}");
    assert!(!state.contains(sent), "the client never sees the upstream's state in clear");
}

/// An upstream's JSON-RPC error that the client can act on keeps its code and data: a tool
/// that needs the client's sampling answers -32021, and runs for a client that declares it.
#[test]
fn an_upstream_missing_capability_error_reaches_the_client_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"servers": [fixture("fx", &["--modern", "--conformance"])], "gateway": {"defer": "never", "toolNames": "upstream"}});
    let (_c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let tool = "test_missing_capability";
    let r = rpc_2026(&addr, &bearer, "tools/call", Some(tool), json!({"name": tool, "arguments": {}}), json!({}));
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}), "{r}");
    let r = rpc_2026(&addr, &bearer, "tools/call", Some(tool), json!({"name": tool, "arguments": {}}), json!({"sampling": {}}));
    assert_eq!(r["result"]["content"][0]["text"], "the client can sample", "{r}");
}

/// SSE polling (SEP-1699), asked by `gateway.ssePollAfterMs`: a call still running after 5 s
/// has its POST stream closed, after an event id and a `retry`, without the answer; a GET with
/// that `Last-Event-ID` gets the answer. Without the option the answer comes on the POST.
#[test]
fn a_long_calls_stream_is_closed_and_resumed_with_last_event_id() {
    let (first, resume) = long_call(json!(5000));
    assert!(!first.contains("\"result\""), "the answer came before the stream was closed: {first}");
    assert!(first.lines().any(|l| l.strip_prefix("retry:").is_some_and(|ms| ms.trim() == "1000")), "no 1 s retry field: {first}");
    let last = first.lines().filter_map(|l| l.strip_prefix("id: ")).last().unwrap_or_else(|| panic!("no event id: {first}")).trim().to_string();
    let resumed = resume(&last);
    assert!(resumed.contains("Answered after the stream was closed and resumed."), "{resumed}");
    let (whole, _) = long_call(json!(null));
    assert!(whole.contains("Answered after the stream was closed and resumed."), "without ssePollAfterMs the answer comes on the POST: {whole}");
}

/// Calls the fixture's 6 s `test_reconnection` over a new HTTP session of a gateway with
/// `ssePollAfterMs: poll`: the POST's SSE body, and a way to resume its stream from an event id.
fn long_call(poll: Value) -> (String, impl Fn(&str) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"servers": [fixture("fx", &["--conformance"])], "gateway": {"defer": "never", "toolNames": "upstream", "ssePollAfterMs": poll}});
    let (c, addr, token) = start_with(dir.path(), &config, Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let (status, init) = post(&addr, &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{init}");
    let session = init.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap_or_else(|| panic!("no session id: {init}")).trim().to_string();
    let headers = vec![("Authorization", bearer), ("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25".to_string())];
    let send = move |method: &str, extra: Option<(&'static str, String)>, body: &str, id: u64, wait: u64| {
        let h: Vec<(&str, &str)> = headers.iter().chain(extra.iter()).map(|(k, v)| (*k, v.as_str())).collect();
        exchange(&addr, method, &h, body, id, Duration::from_secs(wait))
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(send("POST", None, &initialized, 0, 5).0, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_reconnection", "arguments": {}}}).to_string();
    let (status, first) = send("POST", None, &call, 2, 30);
    assert_eq!(status, 200, "{first}");
    let resume = move |last: &str| {
        let _keep = (&c, &dir);
        let (status, resumed) = send("GET", Some(("Last-Event-ID", last.to_string())), "", 2, 30);
        assert_eq!(status, 200, "{resumed}");
        resumed
    };
    (first, resume)
}

/// Ending a session (issue 64): `DELETE` with the session's id is 204 with no body (rmcp says
/// 202, which the MCP Python SDK logs as a failure), and the session is gone: a request with
/// its id is 404, and so is a second `DELETE`. A `DELETE` naming no session is 400, one without
/// the token 401, and a 2026-07-28 one 405: that face has no sessions to end.
#[test]
fn delete_ends_a_session_with_204_and_its_id_is_refused_after() {
    let dir = tempfile::tempdir().unwrap();
    let (_c, addr, token) = start(dir.path(), Some("s3cret-token"));
    let bearer = format!("Bearer {token}");
    let (status, init) = post(&addr, &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{init}");
    let session = init.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap_or_else(|| panic!("no session id: {init}")).trim().to_string();
    let headers = [("Authorization", bearer.as_str()), ("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    let send = |method: &str, body: &Value, id: u64| exchange(&addr, method, &headers, &body.to_string(), id, Duration::from_secs(5));
    let end = |headers: &[(&str, &str)]| exchange(&addr, "DELETE", headers, "", 0, Duration::from_secs(5));
    assert_eq!(send("POST", &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), 0).0, 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let (status, listed) = send("POST", &list, 2);
    assert_eq!(status, 200, "{listed}");

    let (status, ended) = end(&headers);
    assert_eq!(status, 204, "{ended}");
    let (head, body) = ended.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no end of headers: {ended:?}"));
    assert_eq!(body, "", "a 204 has no body: {ended:?}");
    assert!(!head.to_ascii_lowercase().contains("content-length: ") || head.to_ascii_lowercase().contains("content-length: 0"), "{head}");

    let (status, refused) = send("POST", &list, 2);
    assert_eq!(status, 404, "a request of the ended session: {refused}");
    assert_eq!(end(&headers).0, 404, "a second DELETE of the ended session");
    assert_eq!(end(&headers[..1]).0, 400, "a DELETE naming no session");
    assert_eq!(end(&headers[1..]).0, 401, "a DELETE without the token");
    let (status, stateless) = end(&[headers[0], ("MCP-Protocol-Version", "2026-07-28")]);
    assert_eq!(status, 405, "a 2026-07-28 DELETE: no sessions on that face: {stateless}");
}
