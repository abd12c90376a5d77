//! Results that fit the context (issue 42), over the real binary and real servers: a 2 MB file
//! read by `@modelcontextprotocol/server-filesystem` and a long page from the fixture server
//! over Streamable HTTP reach the model within `results.maxTokens` (counted here with
//! tiktoken-rs's own o200k_base, not toolreg's counter), every byte is read back by paging with
//! `tool_result_read`, `raw` stays whole, and a ref is never served to another session, on the
//! sidecar (`toolreg serve`) and the gateway (`toolreg mcp`, stdio and HTTP).
mod support;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};
use support::gateway::{text, write_config, McpClient};
use support::*;

/// Tokens as the model's provider counts them: tiktoken-rs itself.
fn tokens(text: &str) -> usize {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().unwrap()).encode_ordinary(text).len()
}

/// A 2 MB text file of numbered lines in two scripts (so pages split inside characters too).
fn big_file(dir: &Path) -> (std::path::PathBuf, String) {
    let allowed = dir.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() < 2_000_000 {
        text.push_str(&format!("{i:07} 文件的第{i}行 — the {}th line of a long file, read by page 🧾\n", i * 31 % 977));
        i += 1;
    }
    let path = allowed.join("big.txt");
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

fn filesystem(dir: &Path) -> Value {
    json!({"id": "fs", "name": "fs", "transport": {"type": "stdio", "command": "node",
        "args": [reference_server("server-filesystem"), dir.join("allowed")]}})
}

/// The sidecar with these servers ready and synced, its results budget `results`.
fn sidecar(servers: Value, results: Value) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 60000, "listMs": 60000}, "results": results}));
    s.ok("catalog/setServers", json!({"servers": servers}));
    let start = Instant::now();
    loop {
        let st = s.ok_past_notes("catalog/status", json!({}));
        if st["servers"].as_array().unwrap().iter().all(|x| x["state"] == "ready") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "not ready: {st}");
        std::thread::sleep(Duration::from_millis(100));
    }
    s.ok_past_notes("registry/syncMcp", json!({}));
    s
}

fn plan(s: &mut Sidecar, session: &str) -> Value {
    s.ok_past_notes("exposition/plan", json!({"scope": {}, "contextWindow": 200000, "model": "gpt-4o", "session": session}))
}

fn output_text(r: &Value) -> String {
    r["output"]["value"].as_str().map(str::to_owned).unwrap_or_else(|| r["output"]["value"].to_string())
}

/// The text before the note a cut answer or a page ends with.
fn body(text: &str) -> &str {
    &text[..text.rfind("\n[toolreg: ").unwrap_or_else(|| panic!("no note: …{}", &text[text.len().saturating_sub(300)..]))]
}

/// Reads a ref page by page from `offset` with `read(args)`, checking each page's size;
/// returns the text read.
fn read_on(reference: &str, mut offset: u64, budget: usize, mut read: impl FnMut(Value) -> (String, bool)) -> String {
    let mut out = String::new();
    loop {
        let (page, err) = read(json!({"ref": reference, "offset": offset}));
        assert!(!err, "{page}");
        assert!(tokens(&page) <= budget, "a page of {} tokens", tokens(&page));
        out.push_str(body(&page));
        match page.rsplit("\"offset\": ").next().and_then(|t| t.trim_end_matches("}.]").parse::<u64>().ok()) {
            Some(next) if page.contains("Next page") => {
                assert!(next > offset);
                offset = next;
            }
            _ => {
                assert!(page.ends_with("the end of the result.]"), "{}", &page[page.len().saturating_sub(200)..]);
                return out;
            }
        }
    }
}

#[test]
fn a_2mb_file_reaches_the_model_within_the_budget_and_is_read_whole_by_page_on_the_sidecar() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (path, whole) = big_file(dir.path());
    let mut s = sidecar(json!([filesystem(dir.path())]), json!({}));
    let p = plan(&mut s, "conversation-a");
    let names: Vec<&str> = p["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"tool_result_read"), "offered in every plan: {names:?}");
    assert_eq!(p["placements"]["tool_result_read"]["reason"], "meta");
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__fs__readTextFile", "arguments": {"path": path}, "planId": p["planId"]}));
    let shown = output_text(&r);
    assert_eq!(r["isError"], false, "{r}");
    assert!(tokens(&shown) <= 25_000, "the model's text is {} tokens", tokens(&shown));
    let cut = &r["cut"];
    let total = tokens(&whole) as u64;
    // toolreg's count of the whole is tiktoken's, give or take the joins of its pieces.
    assert!(cut["totalTokens"].as_u64().unwrap().abs_diff(total) <= 2, "{cut} vs {total}");
    assert!(cut["shownTokens"].as_u64().unwrap() > 20_000, "{cut}");
    assert_eq!(r["raw"]["content"][0]["text"], whole, "raw stays whole for the host's UI");
    let reference = cut["ref"].as_str().unwrap().to_string();
    assert!(shown.contains(&format!("tool_result_read {{\"ref\": \"{reference}\", \"offset\": {}}}", cut["shownTokens"])), "{}", &shown[shown.len() - 300..]);

    // The next plan of the same conversation reads on; another conversation cannot.
    let later = plan(&mut s, "conversation-a");
    let other = plan(&mut s, "conversation-b");
    let refused = s.ok_past_notes("tool/invoke", json!({"name": "tool_result_read", "arguments": {"ref": reference}, "planId": other["planId"]}));
    assert_eq!(refused["isError"], true);
    assert!(output_text(&refused).contains("No kept result has the ref"), "{refused}");
    let rest = read_on(&reference, cut["shownTokens"].as_u64().unwrap(), 25_000, |args| {
        let r = s.ok_past_notes("tool/invoke", json!({"name": "tool_result_read", "arguments": args, "planId": later["planId"]}));
        (output_text(&r), r["isError"] == true)
    });
    assert_eq!(format!("{}{rest}", body(&shown)), whole, "every byte, once, in order");
    s.shutdown();
}

#[test]
fn a_long_page_over_http_meta_tools_and_scripts_answer_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let page = HttpFixture::start(dir.path(), &["--big-result-bytes", "300000"]);
    let server = json!({"id": "web", "name": "web", "transport": {"type": "http", "url": page.url}});
    let mut s = sidecar(json!([server]), json!({"maxTokens": 3000}));
    // A host tool with a large schema, deferred: tool_inspect's answer is cut too.
    let props: serde_json::Map<String, Value> = (0..400)
        .map(|i| (format!("field_{i}"), json!({"type": "string", "description": format!("The {i}th field of a very wide form, with a long description to read")})))
        .collect();
    s.ok("registry/register", json!({"entries": [{"name": "wide_form", "namespace": "forms", "description": "Fill a very wide form.",
        "inputSchema": {"type": "object", "properties": props}, "defer": "always"}]}));
    let p = s.ok_past_notes("exposition/plan", json!({"scope": {}, "contextWindow": 200000, "model": "gpt-4o", "codeMode": "sandbox"}));
    let plan_id = p["planId"].clone();
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__web__fetchPage", "arguments": {"url": "https://example.test/long"}, "planId": plan_id}));
    let shown = output_text(&r);
    assert!(tokens(&shown) <= 3_000, "{} tokens", tokens(&shown));
    let whole = r["raw"]["content"][0]["text"].as_str().unwrap().to_string();
    assert!(whole.len() > 299_000, "{}", whole.len());
    let reference = r["cut"]["ref"].as_str().unwrap().to_string();
    let rest = read_on(&reference, r["cut"]["shownTokens"].as_u64().unwrap(), 3_000, |args| {
        let r = s.ok_past_notes("tool/invoke", json!({"name": "tool_result_read", "arguments": args, "planId": plan_id}));
        (output_text(&r), r["isError"] == true)
    });
    assert_eq!(format!("{}{rest}", body(&shown)), whole);

    let inspected = s.ok_past_notes("tool/invoke", json!({"name": "tool_inspect", "arguments": {"name": "wide_form"}, "planId": plan_id}));
    assert!(inspected["cut"].is_object(), "{}", &inspected.to_string()[..300]);
    assert!(tokens(&output_text(&inspected)) <= 3_000);
    let script = "let s = ''; for (let i = 0; i < 2000; i++) { s += 'row ' + i + ' of a report the script built; '; } return s;";
    let ran = s.ok_past_notes("tool/invoke", json!({"name": "tool_exec", "arguments": {"code": script}, "planId": plan_id}));
    assert!(ran["cut"].is_object(), "{}", &ran.to_string()[..300.min(ran.to_string().len())]);
    assert!(tokens(&output_text(&ran)) <= 3_000);
    s.shutdown();
}

#[test]
fn a_budget_out_of_range_is_refused_naming_its_field() {
    let mut s = Sidecar::spawn();
    let e = s.err("initialize", json!({"results": {"maxTokens": 50}}));
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["field"], "results.maxTokens", "{e}");
    // Off: results pass whole and no plan offers tool_result_read.
    s.ok("initialize", json!({"results": {"maxTokens": 0}}));
    s.ok("registry/register", json!({"entries": [{"name": "t", "namespace": "n", "description": "d", "inputSchema": {"type": "object"}}]}));
    let p = s.ok("exposition/plan", json!({"scope": {}, "contextWindow": 200000}));
    assert!(!p["tools"].to_string().contains("tool_result_read"), "{p}");
    s.shutdown();
}

#[test]
fn toolreg_plan_shows_the_budget() {
    let out = std::process::Command::new(bin()).arg("plan").output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("tool results: at most 25000 tokens each reach the model (results.maxTokens)"), "{table}");
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("host.json");
    std::fs::write(&cfg, json!({"results": {"maxTokens": 4000}, "entries": []}).to_string()).unwrap();
    let out = std::process::Command::new(bin()).args(["plan", cfg.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains("at most 4000 tokens"));
}

/// The gateway over stdio: the client's result is cut (content and `_meta`), and
/// `tool_result_read` (listed) reads the rest.
#[test]
fn the_gateway_cuts_a_2mb_file_and_pages_it_to_its_client() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (path, whole) = big_file(dir.path());
    let config = json!({"servers": [filesystem(dir.path())], "gateway": {"defer": "never", "warmupMs": 60000, "results": {"maxTokens": 20000}}});
    let cfg = write_config(dir.path(), &config);
    let mut c = McpClient::ready(&cfg, json!({}));
    assert!(c.tool_names().contains(&"tool_result_read".to_string()));
    let r = c.call("mcp__fs__readTextFile", json!({"path": path}));
    let shown = text(&r);
    assert!(tokens(&shown) <= 20_000, "{} tokens", tokens(&shown));
    let cut = &r["_meta"]["toolreg/cut"];
    assert!(r.get("structuredContent").is_none(), "a cut result carries no structured content");
    let reference = cut["ref"].as_str().unwrap().to_string();
    let rest = read_on(&reference, cut["shownTokens"].as_u64().unwrap(), 20_000, |args| {
        let r = c.call("tool_result_read", args);
        (text(&r), r["isError"] == true)
    });
    assert_eq!(format!("{}{rest}", body(&shown)), whole);
    assert!(c.finish().success());
}

/// Over HTTP, two MCP sessions of one gateway: a ref made in one is unknown in the other.
#[test]
fn a_ref_is_never_served_to_another_gateway_session() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"servers": [support::gateway::fixture("fx", &["--big-result-bytes", "200000"])],
        "gateway": {"defer": "never", "toolNames": "upstream"}, "results": {"maxTokens": 2000}});
    let cfg = write_config(dir.path(), &config);
    let c = support::gateway::spawn(&cfg, &["--http", "127.0.0.1:0"], &[("TOOLREG_MCP_TOKEN", "s3cret-token")]);
    let deadline = Instant::now() + TIMEOUT;
    let addr = loop {
        let line = c.stderr.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("the address");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.trim_end_matches("/mcp").trim().to_string();
        }
    };
    let a = HttpSession::open(&addr);
    let b = HttpSession::open(&addr);
    let r = a.rpc(2, "tools/call", json!({"name": "fetch_page", "arguments": {}}));
    let reference = r["result"]["_meta"]["toolreg/cut"]["ref"].as_str().unwrap_or_else(|| panic!("{r}")).to_string();
    let theirs = b.rpc(3, "tools/call", json!({"name": "tool_result_read", "arguments": {"ref": reference}}));
    assert_eq!(theirs["result"]["isError"], true, "{theirs}");
    assert!(theirs["result"]["content"][0]["text"].as_str().unwrap().contains("No kept result has the ref"), "{theirs}");
    let mine = a.rpc(4, "tools/call", json!({"name": "tool_result_read", "arguments": {"ref": reference, "offset": 10}}));
    assert_eq!(mine["result"]["isError"], false, "{mine}");
    assert!(tokens(mine["result"]["content"][0]["text"].as_str().unwrap()) <= 2_000);
}

/// One MCP session over the gateway's HTTP endpoint.
struct HttpSession {
    addr: String,
    id: String,
}

impl HttpSession {
    fn open(addr: &str) -> HttpSession {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "results-test", "version": "0"}}});
        let answer = post(addr, None, &init);
        let id = answer.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap_or_else(|| panic!("no session: {answer}")).trim().to_string();
        let s = HttpSession { addr: addr.to_string(), id };
        post(&s.addr, Some(&s.id), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn rpc(&self, id: u64, method: &str, params: Value) -> Value {
        let raw = post(&self.addr, Some(&self.id), &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let needle = format!("\"id\":{id}");
        raw.lines()
            .filter_map(|l| l.strip_prefix("data: ").or(Some(l)))
            .filter(|l| l.contains(&needle))
            .find_map(|l| serde_json::from_str(l.trim()).ok())
            .unwrap_or_else(|| panic!("no answer to {id}: {raw}"))
    }
}

/// POSTs one message to /mcp and reads the whole answer (the server closes: `Connection: close`).
fn post(addr: &str, session: Option<&str>, body: &Value) -> String {
    let body = body.to_string();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret-token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        req.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let (mut got, mut buf) = (Vec::new(), [0u8; 65536]);
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        // An SSE answer may stay open after its response event.
        if text.contains("\"result\"") && text.ends_with("\n\n") || text.starts_with("HTTP/1.1 202") {
            break;
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}
