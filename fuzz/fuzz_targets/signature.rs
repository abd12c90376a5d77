//! `tool_inspect`'s signature from arbitrary JSON: a tool (`{name, description, inputSchema}`,
//! as MCP servers publish them) or a bare schema. Schemas may be cyclic (`$ref`), huge or
//! nonsensical. Checks: no panic, no endless recursion, and the declaration is always there.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolreg::meta::inspect::signature;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let (name, description, schema) = match v.get("inputSchema") {
        Some(schema) => (
            v.get("name").and_then(Value::as_str).unwrap_or("t"),
            v.get("description").and_then(Value::as_str).unwrap_or(""),
            schema,
        ),
        None => ("t", "", &v),
    };
    let out = signature(name, description, schema);
    assert!(out.contains(&format!("declare function {name}(")), "{out}");
});
