//! Argument repair from arbitrary JSON `[raw arguments, schema]` (anything else is taken as
//! the raw arguments against an empty schema). Checks the contract `repair::candidates`
//! states: no panic, every candidate differs from the raw input and names what it changed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use toolreg::repair::candidates;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else { return };
    let (raw, schema) = match &input {
        Value::Array(parts) if parts.len() == 2 => (parts[0].clone(), parts[1].clone()),
        other => (other.clone(), json!({})),
    };
    for c in candidates(&raw, &schema) {
        assert_ne!(c.arguments, raw, "a candidate equal to the raw arguments: {:?}", c.fixes);
        assert!(!c.fixes.is_empty(), "a candidate that names no fix: {}", c.arguments);
    }
});
