//! OpenTelemetry export (issue 43, part 4), through the real binary: what `toolreg mcp`
//! (`gateway.telemetry`) and `toolreg serve` (`initialize.telemetry`) send to a collector over
//! OTLP/HTTP, decoded by `tests/telemetry/receiver.py` with the official `opentelemetry-proto`
//! package: a span per request with the MCP and GenAI attributes, a child span per upstream
//! call, an error span for a failing call, and the metrics (calls, errors, latency histograms,
//! approvals, deferred tokens). A dead collector (a closed port) and a black hole (a port that
//! takes the connection and never answers) change no call's answer, and the process still
//! exits; the configured header reaches the collector and never the log.

mod support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::gateway::{fixture, text, write_config, McpClient};
use support::{Sidecar, TIMEOUT};

const SECRET: &str = "otlp-key-SECRET-0123456789";

/// The Python collector, recording to `out`.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Receiver {
        let out = dir.join("received.jsonl");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/telemetry/receiver.py");
        let mut child = Command::new("python3").arg(script).arg(&out).stdout(Stdio::piped()).spawn().expect("python3 runs the receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the receiver did not start (is opentelemetry-proto installed? tests/reference-servers/requirements.txt): {line:?}"));
        Receiver { child, port, out }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn records(&self) -> Vec<Value> {
        let all: Vec<Value> = std::fs::read_to_string(&self.out).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(!all.iter().any(|r| r["signal"] == "bad"), "the receiver could not decode an export: {all:?}");
        all
    }

    fn spans(&self) -> Vec<Value> {
        self.records().into_iter().filter(|r| r["signal"] == "span").collect()
    }

    /// The last point exported of metric `name` whose attributes include `attrs` (metrics
    /// are cumulative: the last export holds the totals).
    fn metric(&self, name: &str, attrs: &Value) -> Value {
        let all = self.records();
        let matches = |r: &&Value| r["signal"] == "metric" && r["name"] == name && attrs.as_object().unwrap().iter().all(|(k, v)| &r["attributes"][k] == v);
        all.iter().rev().find(matches).cloned().unwrap_or_else(|| panic!("no {name} with {attrs}: {:#?}", all.iter().filter(|r| r["signal"] == "metric").collect::<Vec<_>>()))
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn span<'a>(spans: &'a [Value], name: &str, kind: &str) -> &'a Value {
    spans.iter().find(|s| s["name"] == name && s["kind"] == kind).unwrap_or_else(|| {
        let names: Vec<String> = spans.iter().map(|s| format!("{} {}", s["kind"], s["name"])).collect();
        panic!("no {kind} span {name:?} among {names:#?}")
    })
}

/// The gateway's config: `fx` (conformance tools: `testErrorHandling` answers an error;
/// `echo` asks approval) listed, `fy` deferred, and `telemetry` as given.
fn gateway_config(dir: &Path, telemetry: Value) -> String {
    let mut fx = fixture("fx", &["--conformance"]);
    fx["approvalTools"] = json!(["echo"]);
    let fy = fixture("fy", &[]);
    write_config(dir, &json!({"servers": [fx, fy], "gateway": {"deferServers": {"fx": "never", "fy": "always"}, "telemetry": telemetry}}))
}

fn approving(c: &mut McpClient) {
    c.answer = Box::new(|m| {
        assert_eq!(m["method"], "elicitation/create", "{m}");
        json!({"action": "accept", "content": {"decision": "approve"}})
    });
}

fn wait_listed(c: &mut McpClient, name: &str) {
    let t = Instant::now();
    while !c.tool_names().iter().any(|n| n == name) {
        assert!(t.elapsed() < TIMEOUT, "{name} was never listed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn over_http_a_tools_call_has_its_request_span_with_the_upstream_call_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    let config = gateway_config(dir.path(), json!({"endpoint": rx.endpoint(), "exportIntervalMs": 200}));
    let token = "http-token-0123456789abcdef";
    let (_c, addr) = support::gateway::spawn_http(&config, &[("TOOLREG_MCP_TOKEN", token)]);
    let t = Instant::now();
    loop {
        let (_, r) = support::gateway::rpc_2026(&addr, "/mcp", token, "tools/call", json!({"name": "mcp__fx__testErrorHandling", "arguments": {}}));
        if r["result"]["isError"] == true && text(&r["result"]).contains("error") {
            break;
        }
        assert!(t.elapsed() < TIMEOUT, "the tool never answered: {r}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let t = Instant::now();
    let (call, spans) = loop {
        let spans = rx.spans();
        let found = spans.iter().find(|s| s["name"] == "tools/call mcp__fx__testErrorHandling" && s["kind"] == "SPAN_KIND_SERVER").cloned();
        if let Some(call) = found {
            break (call, spans);
        }
        assert!(t.elapsed() < TIMEOUT, "no request span over HTTP: {spans:#?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(call["attributes"]["network.transport"], "tcp", "{call}");
    assert_eq!(call["attributes"]["gen_ai.tool.name"], "mcp__fx__testErrorHandling", "{call}");
    let t = Instant::now();
    while !rx.spans().iter().any(|s| s["parentSpanId"] == call["spanId"] && s["kind"] == "SPAN_KIND_CLIENT") {
        assert!(t.elapsed() < TIMEOUT, "no upstream span under the HTTP request's: {spans:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_gateway_exports_a_span_per_request_and_per_upstream_call_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    let config = gateway_config(dir.path(), json!({"endpoint": rx.endpoint(), "headers": {"x-api-key": SECRET}, "serviceName": "gw-test"}));
    let mut c = McpClient::ready(&config, json!({"elicitation": {"form": {}}}));
    approving(&mut c);
    wait_listed(&mut c, "mcp__fx__echo");
    let r = c.call("mcp__fx__echo", json!({"say": "hi"}));
    assert_eq!(r["isError"], false, "{r}");
    let r = c.call("mcp__fx__testErrorHandling", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    let bad = c.request("tools/call", json!({"name": "mcp__fx__echo", "arguments": "not an object"}));
    assert!(bad.get("error").is_some() || bad["result"]["isError"] == true, "{bad}");
    let err = std::mem::replace(&mut c.stderr, std::sync::mpsc::channel().1);
    assert!(c.finish().success());
    let lines: Vec<String> = err.iter().collect();
    assert!(!lines.iter().any(|l| l.contains(SECRET)), "the header's value reached the log: {lines:#?}");

    let spans = rx.spans();
    // The request's span: SERVER, named after the method and the tool, MCP and GenAI attributes.
    let call = span(&spans, "tools/call mcp__fx__echo", "SPAN_KIND_SERVER");
    let a = &call["attributes"];
    assert_eq!((&a["mcp.method.name"], &a["gen_ai.operation.name"], &a["gen_ai.tool.name"], &a["network.transport"]), (&json!("tools/call"), &json!("execute_tool"), &json!("mcp__fx__echo"), &json!("pipe")), "{call}");
    assert!(a["jsonrpc.request.id"].is_string() && a["gen_ai.tool.call.id"].is_string(), "{call}");
    assert_eq!(call["status"]["code"], "STATUS_CODE_UNSET", "{call}");
    assert_eq!((&call["resource"]["service.name"], &call["scope"]), (&json!("gw-test"), &json!("toolreg")), "{call}");
    assert_eq!(call["headers"]["x-api-key"], SECRET, "the configured header reaches the collector");
    // The upstream call: CLIENT, the upstream's own tool name, a child of the request's span.
    let upstream = spans
        .iter()
        .find(|s| s["name"] == "tools/call echo" && s["parentSpanId"] == call["spanId"])
        .unwrap_or_else(|| panic!("no upstream span under {call}: {spans:#?}"));
    assert_eq!((&upstream["kind"], &upstream["traceId"]), (&json!("SPAN_KIND_CLIENT"), &call["traceId"]), "{upstream}");
    let u = &upstream["attributes"];
    assert_eq!((&u["mcp.method.name"], &u["gen_ai.tool.name"], &u["toolreg.server"], &u["toolreg.tool"], &u["toolreg.outcome"]), (&json!("tools/call"), &json!("echo"), &json!("fx"), &json!("mcp__fx__echo"), &json!("ok")), "{upstream}");
    assert!(upstream["start"].as_u64() >= call["start"].as_u64() && upstream["end"].as_u64() <= call["end"].as_u64(), "the upstream call sits inside the request: {call} {upstream}");
    // A tool that answers an error: both spans failed with `error.type = tool_error`.
    let failed = span(&spans, "tools/call mcp__fx__testErrorHandling", "SPAN_KIND_SERVER");
    assert_eq!((&failed["status"]["code"], &failed["attributes"]["error.type"]), (&json!("STATUS_CODE_ERROR"), &json!("tool_error")), "{failed}");
    let failed_up = span(&spans, "tools/call test_error_handling", "SPAN_KIND_CLIENT");
    assert_eq!((&failed_up["attributes"]["error.type"], &failed_up["parentSpanId"]), (&json!("tool_error"), &failed["spanId"]), "{failed_up}");
    // Every request has its span, not only tool calls.
    for method in ["initialize", "tools/list"] {
        let s = span(&spans, method, "SPAN_KIND_SERVER");
        assert_eq!(s["attributes"]["mcp.method.name"], method, "{s}");
    }

    // Metrics: runs by tool and outcome, errors, both latency histograms, the approval, and
    // the tokens fy's deferred definitions kept out of the context.
    let calls = rx.metric("toolreg.tool.calls", &json!({"gen_ai.tool.name": "mcp__fx__echo", "toolreg.outcome": "ok", "toolreg.server": "fx"}));
    assert_eq!((&calls["type"], &calls["value"], &calls["monotonic"]), (&json!("sum"), &json!(1), &json!(true)), "{calls}");
    let errors = rx.metric("toolreg.tool.errors", &json!({"gen_ai.tool.name": "mcp__fx__testErrorHandling", "error.type": "tool_error"}));
    assert_eq!(errors["value"], 1, "{errors}");
    let served = rx.metric("mcp.server.operation.duration", &json!({"mcp.method.name": "tools/call", "gen_ai.tool.name": "mcp__fx__echo"}));
    assert_eq!((&served["type"], &served["count"], &served["unit"]), (&json!("histogram"), &json!(1), &json!("s")), "{served}");
    assert_eq!(served["bucketCounts"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).sum::<u64>(), 1, "{served}");
    assert_eq!(served["explicitBounds"].as_array().unwrap().len() + 1, served["bucketCounts"].as_array().unwrap().len(), "{served}");
    let served_err = rx.metric("mcp.server.operation.duration", &json!({"gen_ai.tool.name": "mcp__fx__testErrorHandling", "error.type": "tool_error"}));
    assert_eq!(served_err["count"], 1, "{served_err}");
    let client = rx.metric("mcp.client.operation.duration", &json!({"gen_ai.tool.name": "echo", "toolreg.server": "fx"}));
    assert_eq!(client["count"], 1, "{client}");
    let approvals = rx.metric("toolreg.approvals", &json!({"toolreg.decision": "approved"}));
    assert_eq!(approvals["value"], 1, "{approvals}");
    let deferred = rx.metric("toolreg.deferral.tokens", &json!({}));
    assert!(deferred["value"].as_i64().unwrap() > 0, "{deferred}");
}

#[test]
fn the_sidecar_exports_under_initialize_telemetry() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    let stderr = dir.path().join("stderr.txt");
    let mut s = Sidecar::spawn_stderr_to(&[], &[("OTEL_EXPORTER_OTLP_HEADERS", &format!("x-api-key={SECRET}")), ("OTEL_SERVICE_NAME", "from-env")], Some(&stderr));
    let r = s.request("initialize", json!({"clientInfo": {"name": "desk-app"}, "telemetry": {"endpoint": rx.endpoint()}}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    s.notify("initialized", json!({}));
    s.ok("catalog/setServers", json!({"servers": [{"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": support::fixture_mcp()}}]}));
    let t = Instant::now();
    while s.ok("catalog/status", json!({}))["servers"][0]["state"] != "ready" {
        assert!(t.elapsed() < TIMEOUT, "fx never became ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    s.ok("registry/syncMcp", json!({}));
    let r = s.ok("tool/invoke", json!({"name": "mcp__fx__echo", "arguments": {"say": "hi"}, "callId": "c-1"}));
    assert_eq!(r["isError"], false, "{r}");
    let e = s.err("tool/invoke", json!({"name": "mcp__fx__nothing", "arguments": {}, "callId": "c-2"}));
    let code = e["code"].as_i64().unwrap_or_else(|| panic!("{e}"));
    s.shutdown();

    let spans = rx.spans();
    let call = span(&spans, "tool/invoke mcp__fx__echo", "SPAN_KIND_SERVER");
    let a = &call["attributes"];
    assert_eq!((&a["rpc.system"], &a["rpc.method"], &a["gen_ai.operation.name"], &a["gen_ai.tool.name"], &a["gen_ai.tool.call.id"]), (&json!("jsonrpc"), &json!("tool/invoke"), &json!("execute_tool"), &json!("mcp__fx__echo"), &json!("c-1")), "{call}");
    assert!(a["jsonrpc.request.id"].is_string(), "{call}");
    assert_eq!((&call["resource"]["service.name"], &call["headers"]["x-api-key"]), (&json!("from-env"), &json!(SECRET)), "the OTEL_* variables fill what initialize leaves out: {call}");
    let upstream = span(&spans, "tools/call echo", "SPAN_KIND_CLIENT");
    assert_eq!((&upstream["parentSpanId"], &upstream["traceId"], &upstream["attributes"]["gen_ai.tool.call.id"]), (&call["spanId"], &call["traceId"], &json!("c-1")), "{upstream}");
    let failed = span(&spans, "tool/invoke mcp__fx__nothing", "SPAN_KIND_SERVER");
    assert_eq!((&failed["status"]["code"], &failed["attributes"]["error.type"]), (&json!("STATUS_CODE_ERROR"), &json!(code.to_string())), "{failed}");
    let served = rx.metric("rpc.server.call.duration", &json!({"rpc.method": "tool/invoke", "gen_ai.tool.name": "mcp__fx__echo"}));
    assert_eq!(served["count"], 1, "{served}");
    let calls = rx.metric("toolreg.tool.calls", &json!({"gen_ai.tool.name": "mcp__fx__echo", "toolreg.outcome": "ok"}));
    assert_eq!(calls["value"], 1, "{calls}");
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(!log.contains(SECRET), "the header's value reached the log:\n{log}");
}

/// Calls through a gateway whose collector is `endpoint`: each answers as without telemetry,
/// and the gateway exits when its client leaves. Returns its stderr.
fn calls_with_collector(endpoint: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let config = gateway_config(dir.path(), json!({"endpoint": endpoint, "headers": {"authorization": format!("Bearer {SECRET}")}, "timeoutMs": 600_000, "exportIntervalMs": 100}));
    let mut c = McpClient::ready(&config, json!({"elicitation": {"form": {}}}));
    approving(&mut c);
    wait_listed(&mut c, "mcp__fx__echo");
    for i in 0..20 {
        let r = c.call("mcp__fx__echo", json!({"i": i}));
        assert_eq!(r["isError"], false, "{r}");
        assert!(text(&r).contains(&format!("\"i\":{i}")), "{r}");
    }
    let r = c.call("mcp__fx__testErrorHandling", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    let status = c.child.try_wait().unwrap();
    assert!(status.is_none(), "the gateway died: {status:?}");
    let err = std::mem::replace(&mut c.stderr, std::sync::mpsc::channel().1);
    assert!(c.finish().success());
    let lines: Vec<String> = err.iter().collect();
    assert!(!lines.iter().any(|l| l.contains(SECRET)), "the header's value reached the log: {lines:#?}");
    lines
}

#[test]
fn a_dead_collector_costs_calls_nothing_and_is_said_once() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let lines = calls_with_collector(&endpoint);
    let said: Vec<&String> = lines.iter().filter(|l| l.contains("telemetry: cannot export")).collect();
    assert_eq!(said.len(), 1, "the loss is said once: {lines:#?}");
}

#[test]
fn a_collector_that_never_answers_blocks_no_call() {
    // Takes connections (the kernel's backlog) and never reads or answers.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", hole.local_addr().unwrap());
    calls_with_collector(&endpoint);
    drop(hole);
}
