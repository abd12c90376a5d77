//! The local embedding model on Windows: ONNX Runtime's `onnxruntime.dll` (the win_amd64 wheel,
//! scripts/windows/wine-env.sh) loads in the Windows sidecar and `tool_search` is semantic: a
//! query that shares no word with its tool finds it.

use super::wine::*;
use crate::support::Sidecar;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A file of scripts/embedding-model.sh's `target/embedding` in this checkout.
fn model_file(name: &str) -> String {
    let p = win(&format!("{}/target/embedding/{name}", env!("CARGO_MANIFEST_DIR")));
    assert!(std::path::Path::new(&p).is_file(), "{p} is missing: run scripts/embedding-model.sh first");
    p
}

fn entries() -> Vec<Value> {
    let tools = [
        ("get_forecast", "Get the weather forecast for a location"),
        ("create_event", "Create an event in the user's calendar"),
        ("send_message", "Send a message to a Slack channel"),
        ("run_query", "Run a read-only SQL query against the database"),
    ];
    tools.iter().map(|(n, d)| json!({"name": n, "namespace": "demo", "description": d, "inputSchema": {"type": "object"}, "defer": "always"})).collect()
}

#[test]
fn onnx_runtimes_dll_loads_and_tool_search_is_semantic() {
    let runtime = input("TOOLREG_WIN_ORT");
    let cache = tempfile::tempdir().unwrap();
    let embeddings = json!({"kind": "onnx", "model": model_file("model.onnx"), "tokenizer": model_file("tokenizer.json"), "runtime": runtime});
    let mut s = Sidecar::spawn();
    s.ok("initialize", json!({"cacheDir": cache.path(), "search": {"embeddings": embeddings}}));
    s.ok_past_notes("registry/register", json!({"entries": entries()}));
    let plan = s.ok_past_notes("exposition/plan", json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []},
        "contextWindow": 128000, "model": "gpt-4o", "clientTools": []}));
    let start = Instant::now();
    let raw = loop {
        let r = s.ok_past_notes("tool/invoke", json!({"name": "tool_search", "arguments": {"query": "will it rain in Paris tomorrow"}, "planId": plan["planId"]}));
        let raw = r["raw"].clone();
        if raw["semantic"]["embedded"] == 4 && raw["semantic"]["used"] == true {
            break raw;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "never semantic: {raw}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(raw["semantic"]["model"].as_str().unwrap_or_default().starts_with("onnx:"), "{raw}");
    assert_eq!(raw["hits"][0]["name"], "get_forecast", "{raw}");
    s.shutdown();
}
