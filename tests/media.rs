//! Images and audio the model can see, structured data kept (issue 52 §3, §4), over the real
//! binary: an MCP result's images (and audio, for a model that takes it) reach the model as
//! `content` parts; `results.media: "placeholder"` keeps the text placeholders; a part over 5 MB,
//! audio for Anthropic, OpenAI or no model, and an image over the budget (by the provider's
//! image-token rule) stay placeholders saying why; structured content joins the text; a
//! script's nested images pass beside its text; server-everything's real image reaches an
//! Anthropic plan as an `image` block and an OpenAI plan as `input_image`, and passes through
//! `toolreg mcp` unchanged. The host tools here are the test's own (host/executeTool), answering
//! the results a media-returning MCP server would.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::gateway::write_config;
use support::*;

/// The header of a `w` x `h` PNG, base64 (what the image-token rules read).
fn png(w: u32, h: u32) -> String {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend(w.to_be_bytes());
    b.extend(h.to_be_bytes());
    b.extend([8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
    data_encoding::BASE64.encode(&b)
}

/// What each host tool returns.
fn result_of(name: &str) -> Value {
    match name {
        "shot" => json!({"content": [{"type": "text", "text": "the screen"}, {"type": "image", "data": png(1000, 1000), "mimeType": "image/png"}]}),
        "voice" => json!({"content": [{"type": "text", "text": "the memo"}, {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}]}),
        "huge" => json!({"content": [{"type": "image", "data": "A".repeat(7_200_000), "mimeType": "image/png"}]}),
        "answer" => json!({"content": [{"type": "text", "text": "Answer"}, {"type": "image", "data": png(20, 20), "mimeType": "image/png"}], "structuredContent": {"answer": 42}}),
        other => panic!("no such tool {other}"),
    }
}

fn entry(name: &str) -> Value {
    json!({"name": name, "namespace": "media", "description": format!("Returns {name}."), "inputSchema": {"type": "object"}, "defer": "never"})
}

fn start(results: Value) -> Sidecar {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"capabilities": {"hostTools": true}, "results": results, "codeMode": {}}));
    let entries: Vec<Value> = ["shot", "voice", "huge", "answer"].map(entry).into();
    s.ok("registry/register", json!({"entries": entries}));
    s
}

/// `tool/invoke` of a host tool, the host answering with `result_of`.
fn invoke(s: &mut Sidecar, name: &str, plan: Option<&Value>) -> Value {
    let mut p = json!({"name": name, "arguments": {}, "callId": format!("call_{name}")});
    if let Some(plan) = plan {
        p["planId"] = plan["planId"].clone();
    }
    let r = call(s, "tool/invoke", p, &mut |s, m| {
        if method(m) == "host/executeTool" {
            answer(s, m, result_of(m["params"]["name"].as_str().unwrap()));
        }
    });
    r.get("result").cloned().unwrap_or_else(|| panic!("{r}"))
}

fn plan(s: &mut Sidecar, extra: Value) -> Value {
    let mut p = json!({"scope": {}, "contextWindow": 200000});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    s.ok("exposition/plan", p)
}

fn parts(r: &Value) -> &Vec<Value> {
    assert_eq!(r["output"]["type"], "content", "{r}");
    r["output"]["value"].as_array().unwrap()
}

fn text(r: &Value) -> String {
    match r["output"]["value"].as_array() {
        Some(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        None => r["output"]["value"].as_str().map(str::to_string).unwrap_or_default(),
    }
}

#[test]
fn images_reach_the_model_as_content_unless_the_host_asks_for_placeholders() {
    let mut s = start(json!({}));
    let r = invoke(&mut s, "shot", None);
    assert_eq!(r["isError"], false);
    assert_eq!(parts(&r)[0], json!({"type": "text", "text": "the screen"}));
    assert_eq!(parts(&r)[1], json!({"type": "image-data", "data": png(1000, 1000), "mediaType": "image/png"}));
    assert_eq!(r["raw"]["content"][1]["data"], png(1000, 1000), "raw stays the tool's own");
    s.shutdown();

    let mut s = start(json!({"media": "placeholder"}));
    let r = invoke(&mut s, "shot", None);
    assert_eq!(r["output"], json!({"type": "text", "value": "the screen\n[image: image/png, 33 bytes, not shown]"}));
    s.shutdown();
}

#[test]
fn audio_and_oversized_parts_stay_placeholders_saying_why() {
    let mut s = start(json!({}));
    // A model that takes audio in a tool result (neither Anthropic nor OpenAI).
    let gemini = plan(&mut s, json!({"model": "gemini-2.5-pro"}));
    let r = invoke(&mut s, "voice", Some(&gemini));
    assert_eq!(parts(&r)[1], json!({"type": "file-data", "data": "UklGRiQAAABXQVZF", "mediaType": "audio/wav"}));
    let claude = plan(&mut s, json!({"model": "claude-sonnet-4-5"}));
    let r = invoke(&mut s, "voice", Some(&claude));
    assert_eq!(r["output"]["type"], "text", "{r}");
    assert!(text(&r).contains("[audio: audio/wav, 12 bytes, not shown: Anthropic takes no audio in a tool result]"), "{r}");
    let openai = plan(&mut s, json!({"model": "gpt-4o", "render": "openai"}));
    assert!(text(&invoke(&mut s, "voice", Some(&openai))).contains("not shown: OpenAI takes no audio"));
    let r = invoke(&mut s, "voice", None);
    assert!(text(&r).contains("not shown: the call's plan names no model that takes audio"), "{r}");
    let r = invoke(&mut s, "huge", Some(&gemini));
    assert_eq!(r["output"]["type"], "text");
    assert!(text(&r).contains("[image: image/png, 5400000 bytes, not shown: over the 5 MB a media part may be]"), "{}", text(&r));
    s.shutdown();
}

#[test]
fn structured_content_joins_the_text_unless_a_text_part_is_it() {
    let mut s = start(json!({}));
    let r = invoke(&mut s, "answer", None);
    let texts = text(&r);
    assert_eq!(texts, "Answer\n{\"answer\":42}", "{r}");
    assert_eq!(parts(&r)[1]["type"], "image-data");
    s.shutdown();
}

#[test]
fn images_count_against_the_budget_by_the_providers_rule() {
    let mut s = start(json!({"maxTokens": 1000}));
    // Anthropic: 1000 x 1000 / 750 = 1334 tokens, over the 800 the budget leaves beside text.
    let claude = plan(&mut s, json!({"model": "claude-sonnet-4-5"}));
    let r = invoke(&mut s, "shot", Some(&claude));
    assert_eq!(r["output"]["type"], "text", "{r}");
    assert!(text(&r).contains("not shown: its 1334 tokens are over the result budget (results.maxTokens 1000)"), "{r}");
    // OpenAI, high detail: scaled to 768 x 768, four tiles: 85 + 4 * 170 = 765 tokens.
    let gpt = plan(&mut s, json!({"model": "gpt-4o"}));
    let r = invoke(&mut s, "shot", Some(&gpt));
    assert_eq!(parts(&r)[1]["type"], "image-data", "{r}");
    // A model with no published rule: not counted.
    let other = plan(&mut s, json!({"model": "gemini-2.5-pro"}));
    assert_eq!(parts(&invoke(&mut s, "shot", Some(&other)))[1]["type"], "image-data");
    s.shutdown();
}

#[test]
fn a_scripts_nested_images_pass_beside_its_text() {
    let mut s = start(json!({}));
    let p = plan(&mut s, json!({"codeMode": "sandbox", "model": "gpt-4o"}));
    let code = "const a = await tools.call('shot', {}); const b = await tools.call('answer', {}); return {a, b};";
    let r = call(&mut s, "tool/invoke", json!({"name": "tool_exec", "arguments": {"code": code}, "callId": "run", "planId": p["planId"]}), &mut |s, m| {
        if method(m) == "host/executeTool" {
            answer(s, m, result_of(m["params"]["name"].as_str().unwrap()));
        }
    });
    let r = &r["result"];
    assert_eq!(r["isError"], false, "{r}");
    let parts = parts(r);
    assert!(parts[0]["text"].as_str().unwrap().contains("Tool calls:"), "{r}");
    assert_eq!(parts[1], json!({"type": "image-data", "data": png(1000, 1000), "mediaType": "image/png"}));
    assert_eq!(parts[2], json!({"type": "image-data", "data": png(20, 20), "mediaType": "image/png"}));
    s.shutdown();
}

/// Under the default sandbox, as a user would run it: the screenshot reaches the model confined.
fn everything() -> Value {
    json!({"id": "everything", "name": "everything", "transport": {"type": "stdio", "command": "node", "args": [reference_server("server-everything"), "stdio"]}})
}

/// server-everything's image tool's wire name, once its server is ready and synced.
fn everything_ready(s: &mut Sidecar) -> String {
    s.ok("catalog/setServers", json!({"servers": [everything()]}));
    let start = Instant::now();
    loop {
        let st = s.ok_past_notes("catalog/status", json!({}));
        if st["servers"][0]["state"] == "ready" {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "not ready: {st}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    let names: Vec<&str> = synced["registered"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    names.iter().find(|n| n.to_ascii_lowercase().replace(['-', '_'], "").contains("tinyimage")).unwrap_or_else(|| panic!("{names:?}")).to_string()
}

#[test]
fn a_real_screenshot_reaches_native_renderings_the_providers_way() {
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"timeouts": {"connectMs": 60000, "listMs": 60000}}));
    let name = everything_ready(&mut s);
    let invoke = |s: &mut Sidecar, render: &str, call_id: &str| {
        let p = s.ok_past_notes("exposition/plan", json!({"scope": {}, "contextWindow": 200000, "model": "claude-sonnet-4-5", "render": render}));
        s.ok_past_notes("tool/invoke", json!({"name": name, "arguments": {}, "callId": call_id, "planId": p["planId"]}))
    };
    let a = invoke(&mut s, "anthropic", "toolu_01");
    let image = a["raw"]["content"].as_array().unwrap().iter().find(|p| p["type"] == "image").unwrap_or_else(|| panic!("{a}")).clone();
    let data = image["data"].as_str().unwrap();
    assert!(data.starts_with("iVBORw0KGgo"), "a PNG");
    let blocks = a["providerOutput"].as_array().unwrap_or_else(|| panic!("{a}"));
    assert_eq!(blocks[0], json!({"type": "text", "text": "Here's the image you requested:"}));
    assert_eq!(blocks[1], json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}));
    let o = invoke(&mut s, "openai", "call_01");
    let out = &o["providerOutput"];
    assert_eq!(out["type"], "function_call_output", "{o}");
    assert_eq!(out["call_id"], "call_01");
    assert_eq!(out["output"][1], json!({"type": "input_image", "image_url": format!("data:image/png;base64,{data}"), "detail": "high"}));
    assert_eq!(out["output"][0], json!({"type": "input_text", "text": "Here's the image you requested:"}));
    // A portable plan answers the AI SDK shape only.
    let p = s.ok_past_notes("exposition/plan", json!({"scope": {}, "contextWindow": 200000}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": name, "arguments": {}, "planId": p["planId"]}));
    assert!(r.get("providerOutput").is_none(), "{r}");
    assert_eq!(parts(&r)[1], json!({"type": "image-data", "data": data, "mediaType": "image/png"}));
    s.shutdown();
}

#[test]
fn the_gateway_passes_a_real_image_unchanged_and_names_it_under_placeholder() {
    let upstream = {
        let mut s = Sidecar::spawn();
        s.ok("initialize", json!({"timeouts": {"connectMs": 60000, "listMs": 60000}}));
        let name = everything_ready(&mut s);
        let r = s.ok_past_notes("tool/invoke", json!({"name": name, "arguments": {}}));
        s.shutdown();
        r["raw"]["content"].clone()
    };
    let dir = tempfile::tempdir().unwrap();
    for (media, expect_image) in [("model", true), ("placeholder", false)] {
        let server = json!({"id": "everything", "name": "everything", "trust": "auto", "transport": everything()["transport"]});
        let path = write_config(dir.path(), &json!({"servers": [server], "gateway": {"defer": "never", "warmupMs": 60000}, "results": {"media": media}}));
        let mut c = support::gateway::McpClient::ready(&path, json!({}));
        let start = Instant::now();
        let name = loop {
            let names = c.tool_names();
            if let Some(n) = names.iter().find(|n| n.to_ascii_lowercase().contains("tiny")) {
                break n.clone();
            }
            assert!(start.elapsed() < Duration::from_secs(60), "{names:?}");
            std::thread::sleep(Duration::from_millis(200));
        };
        let r = c.call(&name, json!({}));
        let content = r["content"].as_array().unwrap();
        if expect_image {
            assert_eq!(r["content"], upstream, "the image part passes unchanged");
        } else {
            assert!(content.iter().all(|p| p["type"] == "text"), "{r}");
            assert!(content[1]["text"].as_str().unwrap().starts_with("[image: image/png, "), "{r}");
        }
        c.finish();
    }
}
