//! Argument validation per call, warm (schema compiled once and cached), over sample arguments
//! for real fixture tools; and repair of a double-encoded string.
//!
//! `cargo bench --bench validate`.

use divan::Bencher;
use serde_json::{json, Value};
use toolreg::validate::Validators;

#[path = "../tests/support/catalogs.rs"]
mod catalogs;
use catalogs::catalog_tools;

fn main() {
    divan::main();
}

/// Fixture tools whose schema requires only string properties: arguments are easy to build.
fn samples() -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for (_, t) in catalog_tools() {
        let schema = t["inputSchema"].clone();
        let props = schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let Some(props) = props else { continue };
        if required.iter().all(|k| props.get(*k).and_then(|p| p.get("type")) == Some(&json!("string"))) {
            let args: serde_json::Map<String, Value> = required.iter().map(|k| (k.to_string(), json!("value"))).collect();
            out.push((schema, Value::Object(args)));
        }
    }
    out
}

#[divan::bench]
fn validate_warm(bencher: Bencher) {
    let v = Validators::new();
    let samples = samples();
    let valid = samples.iter().filter(|(s, a)| v.validate(s, a).is_ok()).count();
    assert!(valid > 500, "only {valid} valid samples");
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % samples.len();
        let (s, a) = &samples[i];
        divan::black_box(v.validate(s, a).is_ok())
    });
}

#[divan::bench]
fn repair_double_encoded(bencher: Bencher) {
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]});
    let raw = json!("{\"query\": \"rust\", \"limit\": \"5\",}");
    bencher.bench_local(|| divan::black_box(toolreg::repair::candidates(&raw, &schema).len()));
}
