//! `applies` predicates: arbitrary JSON as `[predicate, scope, entry name]` (anything else is
//! tried as a bare predicate, so deserialization is fuzzed too). Checks: no panic; a predicate
//! survives a serialize/deserialize round trip; `not`, one-element `all` and `any` agree with
//! the predicate they wrap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use toolreg::registry::Predicate;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else { return };
    let (pred, scope, name) = match &input {
        Value::Array(parts) if parts.len() == 3 => (parts[0].clone(), parts[1].clone(), parts[2].as_str().unwrap_or("").to_string()),
        other => (other.clone(), json!({}), String::new()),
    };
    let Ok(p) = serde_json::from_value::<Predicate>(pred) else { return };

    let again: Predicate = serde_json::from_value(serde_json::to_value(&p).expect("serializes")).expect("round trips");
    assert_eq!(again, p);

    let result = p.eval(&scope, &name);
    assert_eq!(Predicate::Not(Box::new(p.clone())).eval(&scope, &name), result.clone().map(|b| !b));
    assert_eq!(Predicate::All(vec![p.clone()]).eval(&scope, &name), result);
    assert_eq!(Predicate::Any(vec![p]).eval(&scope, &name), result);
});
