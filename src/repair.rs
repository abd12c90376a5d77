//! Deterministic repair of malformed tool-call arguments.
//!
//! [`candidates`] turns the arguments exactly as the model sent them into a list of
//! repaired alternatives, most preferred first. Every candidate differs from the raw
//! input and names what was changed; the caller validates the raw arguments first,
//! then each candidate, and takes the first valid one. Nothing is guessed: text that
//! cannot be parsed yields no candidate, and keys are never invented.

use serde_json::{Map, Number, Value};

/// A repaired set of arguments and the human-readable list of fixes applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    pub arguments: Value,
    pub fixes: Vec<String>,
}

/// Keys a model sometimes wraps the real arguments in.
const WRAPPERS: [&str; 5] = ["arguments", "args", "params", "parameters", "input"];
/// How many levels of JSON-inside-a-string are decoded.
const MAX_DECODE_LEVELS: usize = 4;
/// Recursion bound for schema walking (nested values, `$ref` chains, combinators).
const MAX_DEPTH: usize = 48;

/// Returns candidates in order of preference; the caller validates each and takes
/// the first valid one. The unchanged `raw` value is never among them.
pub fn candidates(raw: &Value, schema: &Value) -> Vec<Repaired> {
    let mut bases: Vec<(Value, Vec<String>)> = Vec::new();
    match raw {
        Value::String(s) if s.trim().is_empty() => {
            if declares_no_properties(schema) {
                bases.push((Value::Object(Map::new()), vec!["treated empty arguments as {}".into()]));
            }
        }
        Value::Null => {
            if declares_no_properties(schema) {
                bases.push((Value::Object(Map::new()), vec!["treated null arguments as {}".into()]));
            }
        }
        Value::String(s) => {
            if let Some(decoded) = decode_string(s) {
                bases.push(decoded);
            }
        }
        other => bases.push((other.clone(), Vec::new())),
    }

    let mut variants = Vec::new();
    for (value, fixes) in bases {
        if let Some((inner, more)) = unwrap_wrapper(&value, schema) {
            variants.push((inner, [fixes.clone(), more].concat()));
        }
        variants.push((value, fixes));
    }

    let mut out: Vec<Repaired> = Vec::new();
    for (value, fixes) in variants {
        let mut coerced = value.clone();
        let mut coerced_fixes = fixes.clone();
        coerce(&mut coerced, schema, schema, "", &mut coerced_fixes, 0);
        if coerced_fixes.len() > fixes.len() {
            out.push(Repaired { arguments: coerced, fixes: coerced_fixes });
        }
        if !fixes.is_empty() {
            out.push(Repaired { arguments: value, fixes });
        }
    }
    let mut unique: Vec<Repaired> = Vec::new();
    for candidate in out {
        if &candidate.arguments != raw && !unique.iter().any(|u| u.arguments == candidate.arguments) {
            unique.push(candidate);
        }
    }
    unique
}

/// True when the schema (after a root `$ref`) declares no properties and requires
/// none, i.e. it describes a zero-argument tool: only then may empty/null become `{}`.
fn declares_no_properties(schema: &Value) -> bool {
    let s = deref(schema, schema);
    match s {
        Value::Bool(_) => true,
        Value::Object(map) => {
            let props_empty = map.get("properties").and_then(Value::as_object).is_none_or(|p| p.is_empty());
            let required_empty = map.get("required").and_then(Value::as_array).is_none_or(|r| r.is_empty());
            props_empty && required_empty
        }
        _ => false,
    }
}

/// Decode a string holding JSON (possibly JSON-in-a-string several times, fenced,
/// or with lenient syntax). Only objects and arrays count as decoded arguments.
fn decode_string(s: &str) -> Option<(Value, Vec<String>)> {
    let mut fixes = Vec::new();
    let mut text = s.to_string();
    for level in 1..=MAX_DECODE_LEVELS {
        let value = lenient_parse(&text, &mut fixes)?;
        match value {
            Value::String(inner) => text = inner,
            Value::Object(_) | Value::Array(_) => {
                let what = if level == 1 {
                    "decoded double-encoded JSON".to_string()
                } else {
                    format!("decoded double-encoded JSON ({level} levels)")
                };
                fixes.insert(0, what);
                return Some((value, fixes));
            }
            _ => return None,
        }
    }
    None
}

/// `{"arguments": {...}}` (or a JSON string of an object) when the schema has no such property.
fn unwrap_wrapper(value: &Value, schema: &Value) -> Option<(Value, Vec<String>)> {
    let map = value.as_object().filter(|m| m.len() == 1)?;
    let (key, inner) = map.iter().next()?;
    if !WRAPPERS.contains(&key.as_str()) || find_property(schema, schema, key, 0).is_some() {
        return None;
    }
    let mut fixes = vec![format!("unwrapped lone `{key}` wrapper")];
    match inner {
        Value::Object(_) => Some((inner.clone(), fixes)),
        Value::String(s) => {
            let (decoded, more) = decode_string(s)?;
            decoded.is_object().then(|| {
                fixes.extend(more);
                (decoded, fixes)
            })
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Schema-driven coercion
// ---------------------------------------------------------------------------

fn coerce(v: &mut Value, schema: &Value, root: &Value, path: &str, fixes: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let s = deref(root, schema);
    if !s.is_object() {
        return;
    }
    let mut types = Vec::new();
    collect_types(root, s, &mut types, 0);
    if !types.is_empty() && !type_matches(v, &types) {
        if let Some((converted, mut more)) = convert(v, &types, path) {
            *v = converted;
            fixes.append(&mut more);
        } else if types.contains(&"array") && !v.is_array() && !v.is_null() {
            *v = Value::Array(vec![v.take()]);
            fixes.push(format!("wrapped value in array at {}", show_path(path)));
        }
    }
    match v {
        Value::Object(map) => {
            drop_null_optionals(map, s, root, path, fixes);
            for (key, child) in map.iter_mut() {
                if let Some(sub) = find_property(root, s, key, 0) {
                    coerce(child, sub, root, &format!("{path}/{}", escape_pointer(key)), fixes, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(sub) = find_item(root, s, i, 0) {
                    coerce(item, sub, root, &format!("{path}/{i}"), fixes, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// `null` for an optional property whose schema does not take null means "not given" (models
/// and hosts send it so; SEP-2243 omits a null header parameter): the key is dropped. A
/// required key, or one whose type is unknown, is left for validation to judge.
fn drop_null_optionals(map: &mut Map<String, Value>, s: &Value, root: &Value, path: &str, fixes: &mut Vec<String>) {
    let required = |k: &str| s.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|x| x == k));
    let drop: Vec<String> = map
        .iter()
        .filter(|(k, v)| v.is_null() && !required(k))
        .filter(|(k, _)| {
            let Some(sub) = find_property(root, s, k, 0) else { return false };
            let mut types = Vec::new();
            collect_types(root, deref(root, sub), &mut types, 0);
            !types.is_empty() && !types.contains(&"null")
        })
        .map(|(k, _)| k.clone())
        .collect();
    for key in drop {
        map.remove(&key);
        fixes.push(format!("dropped null for optional {key} at {}", show_path(&format!("{path}/{}", escape_pointer(&key)))));
    }
}

/// Convert a scalar the schema does not accept into one it does, if unambiguous.
fn convert(v: &Value, types: &[&str], path: &str) -> Option<(Value, Vec<String>)> {
    let at = show_path(path);
    match v {
        Value::String(s) => {
            let t = s.trim();
            let shown = preview(v);
            if types.contains(&"integer") || types.contains(&"number") {
                let parsed = if types.contains(&"number") {
                    serde_json::from_str::<Number>(t).ok()
                } else {
                    t.parse::<i64>().map(Number::from).ok().or_else(|| t.parse::<u64>().map(Number::from).ok())
                };
                if let Some(n) = parsed {
                    return Some((Value::Number(n), vec![format!("converted {shown} to number at {at}")]));
                }
            }
            if types.contains(&"boolean") {
                for (word, b) in [("true", true), ("false", false)] {
                    if t.eq_ignore_ascii_case(word) {
                        return Some((Value::Bool(b), vec![format!("converted {shown} to boolean at {at}")]));
                    }
                }
            }
            if types.contains(&"null") && t == "null" {
                return Some((Value::Null, vec![format!("converted {shown} to null at {at}")]));
            }
            if (types.contains(&"object") || types.contains(&"array")) && (t.starts_with(['{', '[', '`'])) {
                let mut more = Vec::new();
                let decoded = lenient_parse(t, &mut more)?;
                if type_matches(&decoded, types) && (decoded.is_object() || decoded.is_array()) {
                    more.insert(0, format!("decoded JSON string at {at}"));
                    return Some((decoded, more));
                }
            }
            None
        }
        Value::Number(n) if types.contains(&"string") => {
            Some((Value::String(n.to_string()), vec![format!("converted {n} to string at {at}")]))
        }
        _ => None,
    }
}

fn type_matches(v: &Value, types: &[&str]) -> bool {
    types.iter().any(|t| match (*t, v) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("number", Value::Number(_)) => true,
        ("string", Value::String(_)) | ("array", Value::Array(_)) | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    })
}

/// The JSON types a schema admits, as far as can be told; empty means "unknown".
fn collect_types<'a>(root: &'a Value, schema: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let s = deref(root, schema);
    let Some(map) = s.as_object() else { return };
    let push = |t: &'a str, out: &mut Vec<&'a str>| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    match map.get("type") {
        Some(Value::String(t)) => push(t, out),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).for_each(|t| push(t, out)),
        _ => {
            if map.contains_key("properties") {
                push("object", out);
            } else if map.contains_key("items") || map.contains_key("prefixItems") {
                push("array", out);
            }
        }
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        push("null", out);
    }
    let literals = map.get("enum").and_then(Value::as_array).map(|a| a.iter().collect::<Vec<_>>());
    for lit in literals.unwrap_or_default().into_iter().chain(map.get("const")) {
        push(json_type(lit), out);
    }
    for key in ["anyOf", "oneOf"] {
        for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            collect_types(root, branch, out, depth + 1);
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Follow local `$ref`s (`#/$defs/X`, `#/definitions/X`, any `#/...` pointer).
fn deref<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut s = schema;
    for _ in 0..MAX_DEPTH {
        let Some(r) = s.get("$ref").and_then(Value::as_str) else { break };
        let target = match r {
            "#" => Some(root),
            _ => r.strip_prefix('#').and_then(|p| root.pointer(p)),
        };
        match target {
            Some(t) => s = t,
            None => break,
        }
    }
    s
}

/// The subschema for property `key`: `properties`, then `allOf`/`anyOf`/`oneOf`
/// branches, then a schema-valued `additionalProperties`.
fn find_property<'a>(root: &'a Value, schema: &'a Value, key: &str, depth: usize) -> Option<&'a Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let s = deref(root, schema);
    if let Some(p) = s.get("properties").and_then(|p| p.get(key)) {
        return Some(p);
    }
    for comb in ["allOf", "anyOf", "oneOf"] {
        for branch in s.get(comb).and_then(Value::as_array).into_iter().flatten() {
            if let Some(p) = find_property(root, branch, key, depth + 1) {
                return Some(p);
            }
        }
    }
    s.get("additionalProperties").filter(|a| a.is_object())
}

/// The subschema for array element `i`: `prefixItems`, tuple `items`, `items`.
fn find_item<'a>(root: &'a Value, schema: &'a Value, i: usize, depth: usize) -> Option<&'a Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let s = deref(root, schema);
    if let Some(p) = s.get("prefixItems").and_then(Value::as_array) {
        if let Some(item) = p.get(i) {
            return Some(item);
        }
    }
    match s.get("items") {
        Some(Value::Array(tuple)) => {
            if let Some(item) = tuple.get(i) {
                return Some(item);
            }
        }
        Some(item @ Value::Object(_)) => return Some(item),
        _ => {}
    }
    for comb in ["allOf", "anyOf", "oneOf"] {
        for branch in s.get(comb).and_then(Value::as_array).into_iter().flatten() {
            if let Some(item) = find_item(root, branch, i, depth + 1) {
                return Some(item);
            }
        }
    }
    None
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn show_path(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

fn preview(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 40 {
        s
    } else {
        format!("{}…", s.chars().take(40).collect::<String>())
    }
}

// ---------------------------------------------------------------------------
// Lenient JSON: a small tokenizer that rewrites near-JSON into strict JSON.
// ---------------------------------------------------------------------------

#[path = "repair_lenient.rs"]
mod lenient;
use lenient::lenient_parse;


#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "flag": {"type": "boolean"},
                "gone": {"type": ["string", "null"]},
                "nothing": {"type": "null"},
                "labels": {"type": "array", "items": {"type": "string"}},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "filter": {"type": "object", "properties": {"since": {"type": "integer"}}},
                "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "ref": {"$ref": "#/$defs/Page"},
                "old": {"$ref": "#/definitions/Flag"}
            },
            "required": ["query"],
            "$defs": {"Page": {"type": "object", "properties": {"size": {"type": "integer"}}}},
            "definitions": {"Flag": {"type": "boolean"}}
        })
    }

    fn first(raw: Value) -> Repaired {
        candidates(&raw, &schema()).into_iter().next().expect("a candidate")
    }

    fn fixes(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn valid_input_yields_no_candidates() {
        assert_eq!(candidates(&json!({"query": "x", "count": 5}), &schema()), vec![]);
    }

    #[test]
    fn double_encoded_json() {
        let r = first(json!(r#"{"query": "rust"}"#));
        assert_eq!(r.arguments, json!({"query": "rust"}));
        assert_eq!(r.fixes, fixes(&["decoded double-encoded JSON"]));
    }

    #[test]
    fn double_encoded_twice() {
        let inner = json!({"query": "rust"}).to_string();
        let raw = Value::String(Value::String(inner).to_string());
        let r = first(raw);
        assert_eq!(r.arguments, json!({"query": "rust"}));
        assert_eq!(r.fixes, fixes(&["decoded double-encoded JSON (2 levels)"]));
    }

    #[test]
    fn lone_wrapper_is_unwrapped_first_then_kept_as_fallback() {
        for key in ["arguments", "args", "params", "input"] {
            let c = candidates(&json!({key: {"query": "x"}}), &schema());
            assert_eq!(c.len(), 1, "{key}");
            assert_eq!(c[0].arguments, json!({"query": "x"}));
            assert_eq!(c[0].fixes, vec![format!("unwrapped lone `{key}` wrapper")]);
        }
    }

    #[test]
    fn wrapper_holding_a_json_string() {
        let r = first(json!({"arguments": "{\"query\": \"x\", \"count\": \"2\"}"}));
        assert_eq!(r.arguments, json!({"query": "x", "count": 2}));
        assert_eq!(
            r.fixes,
            fixes(&["unwrapped lone `arguments` wrapper", "decoded double-encoded JSON", "converted \"2\" to number at /count"])
        );
    }

    #[test]
    fn wrapper_kept_when_schema_has_that_property() {
        let s = json!({"type": "object", "properties": {"input": {"type": "object"}}});
        assert_eq!(candidates(&json!({"input": {"a": 1}}), &s), vec![]);
        // Not lone: two keys are never unwrapped.
        assert_eq!(candidates(&json!({"arguments": {"query": "x"}, "x": 1}), &schema()), vec![]);
    }

    #[test]
    fn markdown_fence() {
        let r = first(json!("```json\n{\"query\": \"x\"}\n```"));
        assert_eq!(r.arguments, json!({"query": "x"}));
        assert_eq!(r.fixes, fixes(&["decoded double-encoded JSON", "stripped markdown code fence"]));
        let r = first(json!("Here you go:\n```\n{\"query\": \"y\"}\n```\nDone."));
        assert_eq!(r.arguments, json!({"query": "y"}));
    }

    #[test]
    fn trailing_commas() {
        let r = first(json!("{\"query\": \"x\", \"labels\": [\"a\", \"b\",],}"));
        assert_eq!(r.arguments, json!({"query": "x", "labels": ["a", "b"]}));
        assert_eq!(r.fixes, fixes(&["decoded double-encoded JSON", "removed trailing commas"]));
    }

    #[test]
    fn unquoted_keys() {
        let r = first(json!("{query: \"x\", count: 3}"));
        assert_eq!(r.arguments, json!({"query": "x", "count": 3}));
        assert_eq!(r.fixes, fixes(&["decoded double-encoded JSON", "quoted unquoted keys"]));
    }

    #[test]
    fn single_quotes_and_python_literals() {
        let r = first(json!("{'query': 'it\\'s \"ok\"', 'flag': True, 'gone': None}"));
        assert_eq!(r.arguments, json!({"query": "it's \"ok\"", "flag": true, "gone": null}));
        assert_eq!(
            r.fixes,
            fixes(&["decoded double-encoded JSON", "replaced single quotes with double quotes", "converted Python literals"])
        );
        // An apostrophe inside a double-quoted string is untouched.
        let r = first(json!("{\"query\": \"don't\",}"));
        assert_eq!(r.arguments, json!({"query": "don't"}));
    }

    #[test]
    fn ambiguous_single_quotes_give_no_candidate() {
        assert_eq!(candidates(&json!("{'query': 'it's'}"), &schema()), vec![]);
    }

    #[test]
    fn strings_to_numbers_booleans_null() {
        let r = first(json!({"query": "x", "count": "5", "ratio": " 2.5 ", "flag": "true", "nothing": "null", "opt": "7"}));
        assert_eq!(r.arguments, json!({"query": "x", "count": 5, "ratio": 2.5, "flag": true, "nothing": null, "opt": 7}));
        assert_eq!(
            r.fixes,
            fixes(&[
                "converted \"5\" to number at /count",
                "converted \" 2.5 \" to number at /ratio",
                "converted \"true\" to boolean at /flag",
                "converted \"null\" to null at /nothing",
                "converted \"7\" to number at /opt",
            ])
        );
    }

    #[test]
    fn null_for_an_optional_property_that_takes_no_null_is_dropped() {
        let r = first(json!({"query": "q", "flag": null, "gone": null, "opt": null, "nothing": null, "filter": {"since": null}, "extra": null}));
        // `gone`, `opt`, `nothing` take null; `extra` is not in the schema: all kept.
        assert_eq!(r.arguments, json!({"query": "q", "gone": null, "opt": null, "nothing": null, "filter": {}, "extra": null}));
        assert_eq!(r.fixes, fixes(&["dropped null for optional flag at /flag", "dropped null for optional since at /filter/since"]));
        // A required key keeps its null: validation refuses it, nothing is invented.
        assert_eq!(candidates(&json!({"query": null}), &schema()), vec![]);
    }

    #[test]
    fn no_conversion_when_string_is_allowed_or_not_a_number() {
        // `gone` accepts strings, so "null" stays a string; "abc" is no integer.
        let c = candidates(&json!({"query": "1", "gone": "null", "count": "abc"}), &schema());
        assert_eq!(c, vec![]);
        // "5.5" is not an integer.
        assert_eq!(candidates(&json!({"query": "q", "count": "5.5"}), &schema()), vec![]);
    }

    #[test]
    fn conversion_follows_nested_properties_items_and_refs() {
        let r = first(json!({"query": "x", "filter": {"since": "10"}, "ids": ["1", 2], "ref": {"size": "3"}, "old": "false"}));
        assert_eq!(r.arguments, json!({"query": "x", "filter": {"since": 10}, "ids": [1, 2], "ref": {"size": 3}, "old": false}));
        assert_eq!(
            r.fixes,
            fixes(&[
                "converted \"10\" to number at /filter/since",
                "converted \"1\" to number at /ids/0",
                "converted \"3\" to number at /ref/size",
                "converted \"false\" to boolean at /old",
            ])
        );
    }

    #[test]
    fn number_to_string_where_string_wanted() {
        let r = first(json!({"query": 42}));
        assert_eq!(r.arguments, json!({"query": "42"}));
        assert_eq!(r.fixes, fixes(&["converted 42 to string at /query"]));
    }

    #[test]
    fn single_value_wrapped_in_array() {
        let r = first(json!({"query": "x", "labels": "bug", "ids": "4"}));
        assert_eq!(r.arguments, json!({"query": "x", "labels": ["bug"], "ids": [4]}));
        assert_eq!(
            r.fixes,
            fixes(&["wrapped value in array at /labels", "wrapped value in array at /ids", "converted \"4\" to number at /ids/0"])
        );
    }

    #[test]
    fn json_string_where_object_or_array_wanted() {
        let r = first(json!({"query": "x", "filter": "{\"since\": \"1\"}", "labels": "[\"a\",\"b\",]"}));
        assert_eq!(r.arguments, json!({"query": "x", "filter": {"since": 1}, "labels": ["a", "b"]}));
        assert_eq!(
            r.fixes,
            fixes(&[
                "decoded JSON string at /filter",
                "converted \"1\" to number at /filter/since",
                "decoded JSON string at /labels",
                "removed trailing commas",
            ])
        );
    }

    #[test]
    fn combination_fenced_double_encoded_trailing_commas_string_number() {
        let inner = "```json\n{\n  \"query\": \"rust\",\n  \"count\": \"10\",\n}\n```";
        let raw = Value::String(Value::String(inner.to_string()).to_string());
        let c = candidates(&raw, &schema());
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].arguments, json!({"query": "rust", "count": 10}));
        assert_eq!(
            c[0].fixes,
            fixes(&[
                "decoded double-encoded JSON (2 levels)",
                "stripped markdown code fence",
                "removed trailing commas",
                "converted \"10\" to number at /count",
            ])
        );
        // Fallback without the schema-driven conversion.
        assert_eq!(c[1].arguments, json!({"query": "rust", "count": "10"}));
    }

    #[test]
    fn unparseable_string_yields_nothing_never_empty_object() {
        for raw in ["not json at all", "{\"query\": ", "{query: foo}", "```\n```", "42", "\"just a string\""] {
            assert_eq!(candidates(&json!(raw), &schema()), vec![], "{raw}");
        }
        // Empty/null arguments only become {} for a tool that takes no arguments.
        assert_eq!(candidates(&json!(""), &schema()), vec![]);
        assert_eq!(candidates(&json!(null), &schema()), vec![]);
        let none = json!({"type": "object", "properties": {}});
        assert_eq!(
            candidates(&json!(null), &none),
            vec![Repaired { arguments: json!({}), fixes: fixes(&["treated null arguments as {}"]) }]
        );
        assert_eq!(candidates(&json!("  "), &none)[0].fixes, fixes(&["treated empty arguments as {}"]));
    }

    #[test]
    fn never_invents_keys() {
        let r = first(json!("{\"count\": \"5\"}"));
        assert_eq!(r.arguments, json!({"count": 5}));
    }

    #[test]
    fn lenient_extras_comments_missing_commas_control_chars() {
        let r = first(json!("{\"query\": \"a\nb\" // note\n \"count\": 1}"));
        assert_eq!(r.arguments, json!({"query": "a\nb", "count": 1}));
        assert_eq!(
            r.fixes,
            fixes(&[
                "decoded double-encoded JSON",
                "escaped control characters in strings",
                "removed comments",
                "inserted missing commas",
            ])
        );
    }

    #[test]
    fn schema_without_type_and_recursive_refs_do_not_loop() {
        let s = json!({"properties": {"n": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}}},
                      "Loop": {"$ref": "#/$defs/Loop"}}});
        let r = candidates(&json!({"n": {"v": "1", "next": {"v": "2"}}}), &s);
        assert_eq!(r[0].arguments, json!({"n": {"v": 1, "next": {"v": 2}}}));
        let looped = json!({"properties": {"x": {"$ref": "#/$defs/Loop"}}, "$defs": {"Loop": {"$ref": "#/$defs/Loop"}}});
        assert_eq!(candidates(&json!({"x": "1"}), &looped), vec![]);
    }

    #[test]
    fn lenient_parse_unit_cases() {
        let mut f = Vec::new();
        assert_eq!(lenient_parse("[1, 2,]", &mut f), Some(json!([1, 2])));
        assert_eq!(f, fixes(&["removed trailing commas"]));
        let mut f = Vec::new();
        assert_eq!(lenient_parse("{a: [x]}", &mut f), None);
        assert_eq!(f, Vec::<String>::new());
        assert_eq!(lenient_parse("{\"a\": NaN}", &mut f), None);
        assert_eq!(lenient_parse("{\"a\": 1", &mut f), None);
    }
}
