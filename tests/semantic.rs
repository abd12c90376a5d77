//! tool_search's semantic signal through the real binary, with the real model
//! (all-MiniLM-L6-v2 int8; `scripts/embedding-model.sh`): a local ONNX model in the sidecar, and
//! a host that answers `host/embed` with the same model run here. Also what must never happen:
//! a search that waits for the catalog's vectors, an error to the model when embeddings fail.
//! Then the packaged model (`"kind": "auto"`) and `search` in `toolreg mcp` / `toolreg plan`
//! config files. And the local model optimised once and kept in a cache dir: the same vectors.

mod support;
#[path = "support/embedding.rs"]
mod embedding;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::Sidecar;

/// Ten tools from ten services; the queries below share no word with the tool they need.
fn entries() -> Vec<Value> {
    let tools = [
        ("convert_to_markdown", "Convert a resource described by an http:, https:, file: or data: URI to markdown"),
        ("create_branch", "Create a new branch in a GitHub repository"),
        ("send_message", "Send a message to a Slack channel"),
        ("get_forecast", "Get the weather forecast for a location"),
        ("create_event", "Create an event in the user's calendar"),
        ("run_query", "Run a read-only SQL query against the database"),
        ("list_issues", "List issues in a Jira project"),
        ("translate_text", "Translate text between languages"),
        ("take_screenshot", "Take a screenshot of the current browser page"),
        ("get_stock_price", "Get the latest price of a stock ticker"),
    ];
    tools
        .iter()
        .map(|(name, d)| json!({"name": name, "namespace": "demo", "description": d, "inputSchema": {"type": "object", "properties": {}}, "defer": "always"}))
        .collect()
}

const POOL: usize = 10;

fn embeddings_onnx() -> Value {
    let p = embedding::paths();
    json!({"kind": "onnx", "model": p.model, "tokenizer": p.tokenizer, "runtime": p.runtime})
}

/// The host side of `host/embed`: the same model, run in this process.
struct Host {
    onnx: toolreg::embed::onnx::Onnx,
    documents: usize,
    queries: usize,
    /// What to do instead of answering: "fail documents", "hang queries".
    mode: &'static str,
}

impl Host {
    fn new(mode: &'static str) -> Host {
        Host { onnx: embedding::model(), documents: 0, queries: 0, mode }
    }

    /// Answers one `host/embed` request (or doesn't, as `mode` says).
    fn on(&mut self, s: &mut Sidecar, m: &Value) {
        if m["method"] != "host/embed" {
            return;
        }
        let purpose = m["params"]["purpose"].as_str().unwrap();
        let texts: Vec<String> = m["params"]["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
        if purpose == "document" {
            self.documents += texts.len();
        } else {
            assert_eq!(texts.len(), 1, "one query at a time: {m}");
            self.queries += 1;
        }
        match (self.mode, purpose) {
            ("fail documents", "document") => {
                s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": "embedding API quota exceeded"}}));
            }
            ("hang queries", "query") => {}
            _ => {
                let e = if purpose == "query" { self.onnx.query_blocking(texts[0].clone()) } else { self.onnx.embed_blocking(texts) }.expect("embeds");
                s.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": {"vectors": e.vectors, "model": "all-MiniLM-L6-v2"}}));
            }
        }
    }
}

/// A request whose response may come after reverse requests, which `host` answers.
fn call(s: &mut Sidecar, method: &str, params: Value, host: &mut Option<&mut Host>) -> Value {
    let id = s.next_id();
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let m = s.recv();
        if m.get("method").is_none() && m["id"] == json!(id) {
            return m.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {m}"));
        }
        match host {
            Some(h) => h.on(s, &m),
            None => assert!(m["method"] != "host/embed", "host/embed without search.embeddings.kind host: {m}"),
        }
    }
}

fn start(search: Option<Value>, cache: &std::path::Path, host: &mut Option<&mut Host>) -> (Sidecar, String) {
    let mut s = Sidecar::spawn();
    let mut init = json!({"clientInfo": {"name": "test"}, "cacheDir": cache});
    if let Some(search) = search {
        init["search"] = search;
    }
    call(&mut s, "initialize", init, host);
    s.notify("initialized", json!({}));
    call(&mut s, "registry/register", json!({"entries": entries()}), host);
    let plan = call(
        &mut s,
        "exposition/plan",
        json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o", "clientTools": []}),
        host,
    );
    let id = plan["planId"].as_str().unwrap().to_string();
    (s, id)
}

/// How long a search waits for the query's vector from this test's host, which embeds it with
/// the model in-process: long enough that a loaded machine (CI builds and fuzzers beside it)
/// cannot turn a ranking test lexical; the timeout itself is tested with a host that hangs.
const HOST_QUERY_WAIT_MS: u64 = 30_000;

fn search(s: &mut Sidecar, plan: &str, query: &str, host: &mut Option<&mut Host>) -> Value {
    let r = call(s, "tool/invoke", json!({"name": "tool_search", "arguments": {"query": query}, "planId": plan}), host);
    assert_ne!(r["isError"], true, "tool_search never fails for embeddings: {r}");
    r["raw"].clone()
}

fn names(raw: &Value) -> Vec<String> {
    raw["hits"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap().to_string()).collect()
}

/// Searches until the whole pool has vectors (they come in the background).
fn until_embedded(s: &mut Sidecar, plan: &str, host: &mut Option<&mut Host>) -> Value {
    let start = Instant::now();
    loop {
        let raw = search(s, plan, "will it rain in Paris tomorrow", host);
        // `used` too: a search that began while no tool had a vector asks for no query vector,
        // and the pool may be embedded by the time it reports coverage (seen under load).
        if raw["semantic"]["embedded"] == POOL && raw["semantic"]["used"] == true {
            return raw;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the pool was not embedded: {raw}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_local_model_finds_tools_that_share_no_word_with_the_query() {
    let dir = tempfile::tempdir().unwrap();
    // Lexical only (no search settings): these queries find nothing, and nothing says semantic.
    let (mut s, plan) = start(None, dir.path(), &mut None);
    let raw = search(&mut s, &plan, "will it rain in Paris tomorrow", &mut None);
    assert_eq!(names(&raw), Vec::<String>::new(), "{raw}");
    assert!(raw.get("semantic").is_none(), "{raw}");
    s.shutdown();

    let (mut s, plan) = start(Some(json!({"embeddings": embeddings_onnx()})), dir.path(), &mut None);
    let raw = until_embedded(&mut s, &plan, &mut None);
    assert_eq!(raw["semantic"]["used"], true, "{raw}");
    assert!(raw["semantic"]["model"].as_str().unwrap().starts_with("onnx:"), "{raw}");
    assert_eq!(names(&raw)[0], "get_forecast", "{raw}");
    let raw = search(&mut s, &plan, "put a meeting on my schedule", &mut None);
    assert_eq!(names(&raw)[0], "create_event", "{raw}");
    // An exact name ranks first whatever the cosine says.
    let raw = search(&mut s, &plan, "take_screenshot", &mut None);
    assert_eq!(names(&raw)[0], "take_screenshot", "{raw}");
    s.shutdown();
    assert!(dir.path().join("embeddings-onnx.bin").is_file(), "the vectors are kept in cacheDir");
}

/// A sidecar with host embeddings on `cache`: searches until the pool is embedded, checks the
/// first hit, and returns the host with what it was asked.
fn search_after_restart(cache: &std::path::Path) -> Host {
    let mut host = Host::new("answer");
    let mut h = Some(&mut host);
    let (mut s, plan) = start(Some(json!({"embeddings": {"kind": "host"}, "queryTimeoutMs": HOST_QUERY_WAIT_MS})), cache, &mut h);
    let raw = until_embedded(&mut s, &plan, &mut h);
    assert_eq!(names(&raw).first().map(String::as_str), Some("get_forecast"), "{raw}");
    s.shutdown();
    host
}

#[test]
fn host_embeddings_rank_as_the_local_model_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new("answer");
    let mut h = Some(&mut host);
    let (mut s, plan) = start(Some(json!({"embeddings": {"kind": "host"}, "queryTimeoutMs": HOST_QUERY_WAIT_MS})), dir.path(), &mut h);
    let raw = until_embedded(&mut s, &plan, &mut h);
    assert_eq!(raw["semantic"]["model"], "host:all-MiniLM-L6-v2", "{raw}");
    assert_eq!(names(&raw)[0], "get_forecast", "{raw}");
    assert_eq!(names(&search(&mut s, &plan, "put a meeting on my schedule", &mut h))[0], "create_event");
    // The file is written once the queue is empty.
    let file = dir.path().join("embeddings-host.bin");
    let start_wait = Instant::now();
    while !file.is_file() {
        assert!(start_wait.elapsed() < Duration::from_secs(30), "no embedding cache written");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.shutdown();
    assert_eq!(host.documents, POOL, "each tool embedded once");

    // A new sidecar on the same cacheDir asks only for queries.
    let host = search_after_restart(dir.path());
    assert_eq!(host.documents, 0, "vectors came from the cache file");
    assert!(host.queries >= 1);

    // A corrupt cache file is survived: the search answers, and the tools are embedded again.
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    let host = search_after_restart(dir.path());
    assert_eq!(host.documents, POOL, "a truncated cache file is ignored, not trusted");
}

#[test]
fn failing_or_slow_embeddings_leave_the_search_lexical() {
    let dir = tempfile::tempdir().unwrap();
    // Documents fail: the search answers at once, lexically, and says why.
    let mut host = Host::new("fail documents");
    let mut h = Some(&mut host);
    let (mut s, plan) = start(Some(json!({"embeddings": {"kind": "host"}})), dir.path(), &mut h);
    let deadline = Instant::now() + Duration::from_secs(30);
    let raw = loop {
        let raw = search(&mut s, &plan, "weather forecast", &mut h);
        if raw["semantic"]["reason"].is_string() || Instant::now() > deadline {
            break raw;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(names(&raw)[0], "get_forecast", "lexical hits: {raw}");
    assert_eq!(raw["semantic"]["embedded"], 0, "{raw}");
    assert_eq!(raw["semantic"]["used"], false, "{raw}");
    assert!(raw["semantic"]["reason"].as_str().unwrap().contains("quota exceeded"), "{raw}");
    s.shutdown();

    // Queries hang: each search waits at most queryTimeoutMs, then answers lexically.
    let mut host = Host::new("hang queries");
    let mut h = Some(&mut host);
    let (mut s, plan) = start(Some(json!({"embeddings": {"kind": "host"}, "queryTimeoutMs": 300})), dir.path(), &mut h);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let raw = search(&mut s, &plan, "weather forecast", &mut h);
        if raw["semantic"]["embedded"] == POOL {
            break;
        }
        assert!(Instant::now() < deadline, "the pool was not embedded: {raw}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let raw = search(&mut s, &plan, "weather forecast", &mut h);
    assert_eq!(raw["semantic"]["embedded"], POOL, "{raw}");
    assert_eq!(raw["semantic"]["used"], false, "{raw}");
    assert!(raw["semantic"]["reason"].as_str().unwrap().contains("300 ms"), "{raw}");
    assert_eq!(names(&raw)[0], "get_forecast", "{raw}");
    s.shutdown();
}

#[test]
fn bad_embedding_settings_are_clear_errors() {
    let mut s = Sidecar::spawn();
    let e = s.err(
        "initialize",
        json!({"search": {"embeddings": {"kind": "onnx", "model": "/nonexistent/model.onnx", "tokenizer": "/nonexistent/tokenizer.json"}}}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["field"], "search.embeddings.model", "{e}");
    assert!(e["message"].as_str().unwrap().contains("/nonexistent/model.onnx"), "{e}");
    let e = s.err("initialize", json!({"search": {"embeddings": {"kind": "glove"}}}));
    assert_eq!(e["code"], -32602, "{e}");
    let e = s.err("initialize", json!({"search": {"embeddings": {"kind": "host"}, "semanticWeight": -1}}));
    assert_eq!(e["data"]["field"], "search.semanticWeight", "{e}");
    let e = s.err("initialize", json!({"search": {"embeddings": {"kind": "host"}, "semanticCjk": 2}}));
    assert_eq!(e["data"]["field"], "search.semanticCjk", "{e}");
    assert!(e["message"].as_str().unwrap().contains("from 0 to 1"), "{e}");
    // A model file that is not a model: initialize succeeds (paths exist), the search stays lexical.
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.onnx");
    std::fs::write(&junk, b"not a model").unwrap();
    let p = embedding::paths();
    let init = json!({"search": {"embeddings": {"kind": "onnx", "model": junk, "tokenizer": p.tokenizer, "runtime": p.runtime}}});
    s.ok("initialize", init);
    s.notify("initialized", json!({}));
    s.ok("registry/register", json!({"entries": entries()}));
    let plan = s.ok(
        "exposition/plan",
        json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 128000, "model": "gpt-4o", "clientTools": []}),
    );
    let raw = search(&mut s, plan["planId"].as_str().unwrap(), "weather forecast", &mut None);
    assert_eq!(names(&raw)[0], "get_forecast", "{raw}");
    s.shutdown();
}

// ---- the packaged model (`"kind": "auto"`) and `toolreg mcp` / `toolreg plan` config files ----
// The packaged model is found here through `$TOOLREG_EMBEDDING_DIR` pointed at target/embedding:
// the same search as for the pip and npm layouts (`embed::packaged`, whose unit test covers
// those two), with the same model files.

/// The ten tools of `entries()`, as the fixture MCP server's definitions.
fn fixture_with_the_ten_tools(dir: &std::path::Path) -> Value {
    let defs: Vec<Value> = entries().iter().map(|e| json!({"name": e["name"], "description": e["description"], "inputSchema": e["inputSchema"]})).collect();
    let file = dir.join("defs.json");
    std::fs::write(&file, serde_json::to_vec(&defs).unwrap()).unwrap();
    support::gateway::fixture("fx", &["--tools", "0", "--defs-file", file.to_str().unwrap()])
}

/// `toolreg mcp` on `config`, initialized, with `env`.
fn gateway(dir: &std::path::Path, config: Value, env: &[(&str, &str)]) -> support::gateway::McpClient {
    let path = support::gateway::write_config(dir, &config);
    let mut c = support::gateway::spawn(&path, &[], env);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "initialize failed: {r}");
    c.notify("notifications/initialized", json!({}));
    c
}

fn gateway_search(c: &mut support::gateway::McpClient, query: &str) -> String {
    support::gateway::text(&c.call("tool_search", json!({"query": query})))
}

#[test]
fn toolreg_mcp_takes_search_from_its_config_with_paths_or_auto() {
    let model = embedding::dir();
    let dir_env = model.to_str().unwrap();
    for search in [json!({"embeddings": embeddings_onnx()}), json!({"embeddings": {"kind": "auto"}})] {
        let dir = tempfile::tempdir().unwrap();
        let config = json!({"servers": [fixture_with_the_ten_tools(dir.path())], "gateway": {"defer": "always"}, "search": search});
        let mut c = gateway(dir.path(), config, &[("TOOLREG_EMBEDDING_DIR", dir_env)]);
        let start = Instant::now();
        // No word of the query is in get_forecast's definition: only the model finds it.
        while !gateway_search(&mut c, "will it rain in Paris tomorrow").starts_with("- mcp__fx__getForecast ") {
            assert!(start.elapsed() < Duration::from_secs(180), "never semantic with {search}");
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(gateway_search(&mut c, "put a meeting on my schedule").starts_with("- mcp__fx__createEvent "));
        assert!(c.finish().success());
    }
}

#[test]
fn toolreg_mcp_with_auto_and_no_model_stays_lexical_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let config = json!({"servers": [fixture_with_the_ten_tools(dir.path())], "gateway": {"defer": "always"}, "search": {"embeddings": {"kind": "auto"}}});
    let mut c = gateway(dir.path(), config, &[("TOOLREG_EMBEDDING_DIR", empty.path().to_str().unwrap())]);
    for _ in 0..3 {
        let found = gateway_search(&mut c, "will it rain in Paris tomorrow");
        assert!(!found.contains("getForecast"), "lexical finds no word of it: {found}");
    }
    assert!(gateway_search(&mut c, "weather forecast").starts_with("- mcp__fx__getForecast "), "words still find it");
    let stderr = std::mem::replace(&mut c.stderr, std::sync::mpsc::channel().1);
    assert!(c.finish().success());
    let said: Vec<String> = stderr.iter().filter(|l| l.contains("tool_search stays lexical")).collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("no packaged embedding model") && said[0].contains("TOOLREG_EMBEDDING_DIR"), "{said:?}");
}

/// `toolreg plan FILE` with `env`: (exit code, stdout, stderr).
fn plan_cli(config: &Value, env: &[(&str, &str)]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut cmd = std::process::Command::new(support::bin());
    cmd.arg("plan").arg(&path).env_remove("TOOLREG_EMBEDDING_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn toolreg_plan_says_how_tool_search_ranks_and_refuses_a_bad_search() {
    let model = embedding::dir();
    let with_model = [("TOOLREG_EMBEDDING_DIR", model.to_str().unwrap())];
    let (code, out, _) = plan_cli(&json!({}), &with_model);
    assert_eq!(code, 0);
    assert!(out.contains("tool_search: lexical (BM25F); \"search\": {\"embeddings\": {\"kind\": \"auto\"}} adds the local model"), "{out}");
    let auto = json!({"search": {"embeddings": {"kind": "auto"}}});
    let (code, out, _) = plan_cli(&auto, &with_model);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("tool_search: BM25F + the packaged model {}", model.join("model.onnx").display())), "{out}");
    assert!(out.contains(&format!(" + USE-m3 {}", model.join("use/weights.npz").display())), "target/embedding has USE-m3 too: {out}");
    // USE-m3 alone, as `npm install @toolreg/model-use-m3` or `pip install toolreg[multilingual]`
    // gives a host that does not want ONNX Runtime: `auto` takes it.
    let only_use = tempfile::tempdir().unwrap();
    std::fs::create_dir(only_use.path().join("use")).unwrap();
    let p = embedding::use_paths();
    std::os::unix::fs::symlink(&p.weights, only_use.path().join("use/weights.npz")).unwrap();
    std::os::unix::fs::symlink(&p.tokenizer, only_use.path().join("use/tokenizer.json")).unwrap();
    let (code, out, _) = plan_cli(&auto, &[("TOOLREG_EMBEDDING_DIR", only_use.path().to_str().unwrap())]);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("tool_search: BM25F + the packaged USE-m3 {}", only_use.path().join("use/weights.npz").display())), "{out}");
    let (code, out, _) = plan_cli(&auto, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("tool_search: lexical (BM25F): no packaged embedding model"), "{out}");
    let (code, out, _) = plan_cli(&json!({"search": {"embeddings": embeddings_onnx()}}), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("tool_search: BM25F + the local model "), "{out}");
    let (code, _, err) = plan_cli(&json!({"search": {"embeddings": {"kind": "onnx", "model": "/nonexistent/model.onnx", "tokenizer": "/x"}}}), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("search.embeddings.model") && err.contains("/nonexistent/model.onnx"), "{err}");
    let (code, _, err) = plan_cli(&json!({"search": {"semanticWeight": -1}}), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("semanticWeight"), "{err}");
    let (code, _, err) = plan_cli(&json!({"search": {"semanticCjk": -0.5}}), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("search.semanticCjk"), "{err}");
}

#[test]
fn toolreg_mcp_refuses_host_embeddings_and_bad_paths_at_start() {
    for (search, why) in [
        (json!({"embeddings": {"kind": "host"}}), "toolreg mcp has none"),
        (json!({"embeddings": {"kind": "onnx", "model": "/nonexistent/model.onnx", "tokenizer": "/x"}}), "search.embeddings.model"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = support::gateway::write_config(dir.path(), &json!({"servers": [], "search": search}));
        let mut c = support::gateway::spawn(&path, &[], &[]);
        assert_eq!(c.child.wait().unwrap().code(), Some(2));
        let err: Vec<String> = c.stderr.iter().collect();
        assert!(err.iter().any(|l| l.contains("not a usable config") && l.contains(why)), "{err:?}");
    }
}

#[test]
fn initialize_with_auto_finds_the_packaged_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = embedding::dir();
    let mut s = Sidecar::spawn_with(&[], &[("TOOLREG_EMBEDDING_DIR", model.to_str().unwrap())]);
    let host = &mut None;
    call(&mut s, "initialize", json!({"clientInfo": {"name": "test"}, "cacheDir": dir.path(), "search": {"embeddings": {"kind": "auto"}}}), host);
    s.notify("initialized", json!({}));
    call(&mut s, "registry/register", json!({"entries": entries()}), host);
    let plan = call(&mut s, "exposition/plan", json!({"scope": {}, "contextWindow": 128000, "model": "gpt-4o"}), host);
    let raw = until_embedded(&mut s, plan["planId"].as_str().unwrap(), host);
    assert!(raw["semantic"]["model"].as_str().unwrap().starts_with("onnx:"), "{raw}");
    assert_eq!(names(&raw)[0], "get_forecast", "{raw}");
    s.shutdown();
}

fn embeddings_use() -> Value {
    let p = embedding::use_paths();
    json!({"kind": "use", "weights": p.weights, "tokenizer": p.tokenizer})
}

#[test]
fn a_list_of_sources_fuses_minilm_and_use_m3() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, plan) = start(Some(json!({"embeddings": [embeddings_onnx(), embeddings_use()]})), dir.path(), &mut None);
    let started = Instant::now();
    // Will it rain in Paris tomorrow? No word of it is in any tool: the models find it.
    let query = "明天巴黎会下雨吗";
    let raw = loop {
        let raw = search(&mut s, &plan, query, &mut None);
        let sem = &raw["semantic"];
        if sem["embedded"] == POOL && sem["also"][0]["embedded"] == POOL && sem["used"] == true && sem["also"][0]["used"] == true {
            break raw;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "the pool was not embedded by both: {raw}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(raw["semantic"]["model"].as_str().unwrap().starts_with("onnx:"), "{raw}");
    assert!(raw["semantic"]["also"][0]["model"].as_str().unwrap().starts_with("use:"), "{raw}");
    assert_eq!(names(&raw)[0], "get_forecast", "{raw}");
    // Routed by what the query is written in: MiniLM reads a Chinese request through its English
    // gloss (so it is asked, and used), USE-m3 is not asked to read English.
    assert!(!raw["semantic"]["reason"].as_str().unwrap_or("").starts_with("not asked"), "{raw}");
    let en = search(&mut s, &plan, "will it rain tomorrow", &mut None);
    assert!(en["semantic"]["also"][0]["reason"].as_str().unwrap_or("").starts_with("not asked"), "{en}");
    assert_eq!(en["semantic"]["used"], true, "{en}");
    s.shutdown();

    // A bad path in the list names its place.
    let mut s = Sidecar::spawn();
    let bad = json!({"kind": "use", "weights": "/nonexistent/weights.npz", "tokenizer": embedding::use_paths().tokenizer});
    let e = s.err("initialize", json!({"search": {"embeddings": [embeddings_onnx(), bad]}}));
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["field"], "search.embeddings[1].weights", "{e}");
    let e = s.err("initialize", json!({"search": {"embeddings": []}}));
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn minilm_optimised_once_into_the_cache_dir_gives_the_same_vectors_and_damage_is_made_again() {
    use std::os::unix::fs::MetadataExt;
    let mut texts: Vec<String> = ["summarise this PDF", "create a branch in a GitHub repository", "在GitHub上创建一个新分支", "x"].map(String::from).to_vec();
    texts.push("mcp:filesystem read_file: Read the complete contents of a file from the file system. ".repeat(20));
    let want = embedding::model().embed_blocking(texts.clone()).expect("MiniLM embeds");
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("onnx-optimised");
    let weights = kept.join("weights.bin");
    let embed = || embedding::model_cached(dir.path()).embed_blocking(texts.clone()).expect("MiniLM embeds");
    let first = embed();
    assert_eq!(first.model, want.model, "the same model id: vectors kept before stay valid");
    assert!(first.vectors == want.vectors, "optimising at this start, keeping the result: the same vectors");
    let size = std::fs::metadata(&weights).expect("the optimised weights are kept").len();
    assert!(size > 50_000_000, "float32 weights in their own file: {size} bytes");
    let inode = || std::fs::metadata(&weights).unwrap().ino();
    let made = inode();
    assert!(embed().vectors == want.vectors, "loaded from the kept files: the same vectors");
    assert_eq!(inode(), made, "a second start loads the kept files, it does not make them again");

    let stamp = std::fs::read_to_string(kept.join("stamp")).unwrap();
    let damages: [(&str, &dyn Fn()); 4] = [
        ("a flipped byte in the weights", &|| {
            let mut b = std::fs::read(&weights).unwrap();
            b[size as usize / 2] ^= 0x40;
            std::fs::write(&weights, b).unwrap();
        }),
        ("the weights cut short", &|| std::fs::write(&weights, &std::fs::read(&weights).unwrap()[..size as usize / 2]).unwrap()),
        ("made by another runtime", &|| std::fs::write(kept.join("stamp"), stamp.replacen("onnx:", "onnx:other ", 1)).unwrap()),
        ("no stamp", &|| std::fs::remove_file(kept.join("stamp")).unwrap()),
    ];
    for (what, damage) in damages {
        let before = inode();
        damage();
        assert!(embed().vectors == want.vectors, "{what}: the same vectors");
        assert_eq!(std::fs::metadata(&weights).unwrap().len(), size, "{what}: the weights made again");
        assert_ne!(inode(), before, "{what}: made again");
    }
    // Nothing but the kept directory is left (no temporary one).
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["onnx-optimised"]);
}
