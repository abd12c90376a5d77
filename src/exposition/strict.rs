//! OpenAI's strict function schemas (issue 55): `strict: true` makes the model's arguments
//! always match the schema, but only for schemas in a strict form.
//!
//! `convert` gives a tool's schema in that form, or says why it has none:
//! - the root is an object (never `anyOf`); every object is closed (`additionalProperties:
//!   false`) and lists every property in `required`, the optional ones made nullable;
//! - `oneOf`, `allOf`, `not`, `if`/`then`/`else`, `patternProperties`, `dependent*` have no
//!   strict form; nor has a value of any type, nor an open root;
//! - an open object below the root (`additionalProperties` other than false, or no properties:
//!   a map, free-form settings) is asked for as JSON text, a string whose description says so;
//! - at most `MAX_PROPERTIES` properties and `MAX_DEPTH` levels of objects;
//! - a keyword outside OpenAI's supported list (`minLength`, `default`, an unknown `format`...)
//!   is moved into the description, where the model still reads it.
//!
//! `restore` is the way back: arguments in the strict form carry a null for every optional
//! property the model left out; the server gets its own shape, a null dropped where the
//! original schema did not allow one, kept where it did, and an object sent as JSON text
//! parsed where the original schema wants an object and no string.

use serde_json::{json, Map, Value};

pub const MAX_PROPERTIES: usize = 5_000;
pub const MAX_DEPTH: usize = 10;

/// The keywords a strict schema may carry (OpenAI's supported list).
const SUPPORTED: &[&str] = &[
    "type", "description", "title", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs",
    "definitions", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
];
/// Keywords that change what is valid and cannot be said in the strict form.
const REFUSED: &[&str] =
    &["oneOf", "allOf", "not", "if", "then", "else", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies", "prefixItems", "unevaluatedProperties", "unevaluatedItems"];
/// Annotations about the document, not the value: dropped.
const DROPPED: &[&str] = &["$schema", "$id", "$comment"];
/// The string formats strict mode supports.
const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// `schema` in the strict form, or why it has none (a sentence for `placements[name].note`).
pub fn convert(schema: &Value) -> Result<Value, String> {
    let root = match schema {
        Value::Bool(true) => return Ok(json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})),
        Value::Object(o) => o,
        _ => return Err("the schema accepts no arguments".into()),
    };
    if root.contains_key("anyOf") || !is_object(root) {
        return Err("the root is not an object schema".into());
    }
    let mut c = Conv { root: schema, properties: 0 };
    let out = c.node(schema, 0, true)?;
    if c.properties > MAX_PROPERTIES {
        return Err(format!("{} properties, more than strict mode's {MAX_PROPERTIES}", c.properties));
    }
    Ok(out)
}

fn is_object(o: &Map<String, Value>) -> bool {
    match o.get("type") {
        Some(t) => types(t).contains(&"object"),
        None => !o.contains_key("anyOf") && !o.contains_key("$ref") && !o.contains_key("enum") && !o.contains_key("const"),
    }
}

fn types(t: &Value) -> Vec<&str> {
    match t {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

struct Conv<'a> {
    root: &'a Value,
    properties: usize,
}

impl Conv<'_> {
    /// One schema; `depth` counts the objects around it.
    fn node(&mut self, s: &Value, depth: usize, root: bool) -> Result<Value, String> {
        let Some(o) = s.as_object() else { return Err("a property accepts a value of any type".into()) };
        if let Some(k) = REFUSED.iter().find(|k| o.contains_key(**k)) {
            return Err(format!("`{k}` has no strict form"));
        }
        let mut out = Map::new();
        let mut moved = Vec::new();
        for (k, v) in o {
            match k.as_str() {
                k if DROPPED.contains(&k) => {}
                "format" if !v.as_str().is_some_and(|f| FORMATS.contains(&f)) => moved.push(format!("format: {v}")),
                k if SUPPORTED.contains(&k) => {}
                _ => moved.push(format!("{k}: {v}")),
            }
        }
        if let Some(r) = o.get("$ref") {
            let r = r.as_str().unwrap_or_default();
            if resolve(self.root, r).is_none() {
                return Err(format!("the reference {r:?} does not resolve inside the schema"));
            }
            out.insert("$ref".into(), r.into());
            return Ok(with_description(out, o, moved));
        }
        for k in ["$defs", "definitions"] {
            if let Some(defs) = o.get(k).and_then(Value::as_object) {
                let mut d = Map::new();
                for (name, def) in defs {
                    d.insert(name.clone(), self.node(def, 0, false)?);
                }
                out.insert(k.into(), Value::Object(d));
            }
        }
        if let Some(any) = o.get("anyOf") {
            let branches = any.as_array().ok_or("`anyOf` is not a list")?;
            let converted = branches.iter().map(|b| self.node(b, depth, false)).collect::<Result<Vec<_>, _>>()?;
            out.insert("anyOf".into(), Value::Array(converted));
            return Ok(with_description(out, o, moved));
        }
        let kinds = o.get("type").map(types).unwrap_or_default();
        for k in ["type", "enum", "const", "pattern", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems", "title"] {
            if let Some(v) = o.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
        if let Some(f) = o.get("format").filter(|f| f.as_str().is_some_and(|f| FORMATS.contains(&f))) {
            out.insert("format".into(), f.clone());
        }
        let open = !matches!(o.get("additionalProperties"), None | Some(Value::Bool(false)))
            || (o.get("properties").and_then(Value::as_object).is_none_or(Map::is_empty) && o.get("additionalProperties").is_none());
        if kinds.contains(&"object") && open && !root {
            return Ok(as_json_text(o, &kinds));
        }
        if kinds.contains(&"object") || (root && o.get("type").is_none()) {
            if depth + 1 > MAX_DEPTH {
                return Err(format!("objects nested more than strict mode's {MAX_DEPTH} levels"));
            }
            out.insert("type".into(), o.get("type").cloned().unwrap_or_else(|| "object".into()));
            self.object(o, &mut out, depth + 1, root)?;
        } else if kinds.contains(&"array") {
            match o.get("items") {
                Some(items @ Value::Object(_)) => {
                    let items = self.node(items, depth, false)?;
                    out.insert("items".into(), items);
                }
                _ => return Err("an array of items of any type".into()),
            }
        } else if kinds.is_empty() && !o.contains_key("enum") && !o.contains_key("const") {
            return Err("a property accepts a value of any type".into());
        }
        Ok(with_description(out, o, moved))
    }

    fn object(&mut self, o: &Map<String, Value>, out: &mut Map<String, Value>, depth: usize, root: bool) -> Result<(), String> {
        match o.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => return Err("an open object (additionalProperties) at the root".into()),
        }
        debug_assert!(root || o.get("properties").is_some());
        let props = o.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = o.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let mut converted = Map::new();
        for (name, p) in props.into_iter().flatten() {
            self.properties += 1;
            let c = self.node(p, depth, false)?;
            converted.insert(name.clone(), if required.contains(&name.as_str()) { c } else { nullable(c) });
        }
        let names: Vec<Value> = converted.keys().map(|k| Value::String(k.clone())).collect();
        out.insert("properties".into(), Value::Object(converted));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }
}

/// An open object asked for as JSON text: a string (nullable if the original allowed null),
/// whose description says what the text must hold.
fn as_json_text(o: &Map<String, Value>, kinds: &[&str]) -> Value {
    let mut what = String::from("a JSON object written as JSON text");
    if let Some(v) = o.get("additionalProperties").filter(|v| v.is_object() && v.as_object().is_some_and(|m| !m.is_empty())) {
        what.push_str(&format!(", each value {v}"));
    }
    if let Some(p) = o.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) {
        what.push_str(&format!(", with properties {}", Value::Object(p.clone())));
    }
    let mut text = o.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(&format!("({what})"));
    let t = if kinds.contains(&"null") { json!(["string", "null"]) } else { json!("string") };
    json!({"type": t, "description": text})
}

/// `out` with the original description, and what could not stay as keywords after it.
fn with_description(mut out: Map<String, Value>, o: &Map<String, Value>, moved: Vec<String>) -> Value {
    let mut text = o.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
    if !moved.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("({})", moved.join("; ")));
    }
    if !text.is_empty() {
        out.insert("description".into(), text.into());
    }
    Value::Object(out)
}

/// `s` accepting null too: what an optional property becomes.
fn nullable(s: Value) -> Value {
    let Value::Object(mut o) = s else { return s };
    if o.contains_key("$ref") || o.contains_key("const") {
        let description = o.remove("description");
        let mut wrapped = Map::new();
        wrapped.insert("anyOf".into(), json!([Value::Object(o), {"type": "null"}]));
        if let Some(d) = description {
            wrapped.insert("description".into(), d);
        }
        return Value::Object(wrapped);
    }
    if let Some(Value::Array(any)) = o.get_mut("anyOf") {
        if !any.iter().any(|b| b.get("type") == Some(&json!("null"))) {
            any.push(json!({"type": "null"}));
        }
    }
    match o.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            o.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) if !ts.contains(&json!("null")) => ts.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(e)) = o.get_mut("enum") {
        if !e.contains(&Value::Null) {
            e.push(Value::Null);
        }
    }
    Value::Object(o)
}

/// The schema an internal reference (`#`, `#/$defs/x`, JSON Pointer escapes) names in `root`.
pub fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let pointer = r.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// `restore` of a call's arguments, as an object or the JSON text of one (OpenAI sends text).
pub fn restore_call(arguments: Value, schema: &Value) -> Value {
    let mut args = match arguments {
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => v,
            _ => return Value::String(s),
        },
        other => other,
    };
    restore(&mut args, schema);
    args
}

/// Arguments in the strict form of `schema` made the server's own shape: a null for an
/// optional property whose schema does not allow null is dropped, in nested objects and array
/// items too (through internal references). Everything else is left as it came.
pub fn restore(args: &mut Value, schema: &Value) {
    restore_in(args, schema, schema, 0);
}

fn restore_in(v: &mut Value, s: &Value, root: &Value, hops: usize) {
    if hops > 64 {
        return;
    }
    let Some(o) = s.as_object() else { return };
    if let Some(target) = o.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)) {
        return restore_in(v, target, root, hops + 1);
    }
    if let Value::String(text) = v {
        if wants_object(s, root, 0) {
            if let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
                *v = parsed;
            }
        }
    }
    // A union: the strict form converted each branch, so the value follows the branch it is in.
    if !o.contains_key("properties") && !o.contains_key("items") {
        if let Some(b) = ["anyOf", "oneOf"].iter().find_map(|k| o.get(*k).and_then(Value::as_array)).and_then(|bs| branch_for(v, bs, root)) {
            return restore_in(v, b, root, hops + 1);
        }
    }
    match v {
        Value::Object(args) => {
            let Some(props) = o.get("properties").and_then(Value::as_object) else { return };
            let required: Vec<&str> = o.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            args.retain(|k, v| !(v.is_null() && !required.contains(&k.as_str()) && props.get(k).is_some_and(|p| !allows_null(p, root, 0))));
            for (k, v) in args.iter_mut() {
                if let Some(p) = props.get(k) {
                    restore_in(v, p, root, hops + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = o.get("items") {
                for v in items {
                    restore_in(v, item, root, hops + 1);
                }
            }
        }
        _ => {}
    }
}

/// The branch of a union whose shape `v` has (references resolved): for an object, the object
/// branch naming the most of its keys; for an array, the first array branch. None for a scalar.
fn branch_for<'a>(v: &Value, branches: &'a [Value], root: &'a Value) -> Option<&'a Value> {
    let deref = |b: &'a Value| b.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)).unwrap_or(b);
    let has = |b: &Value, kind: &str, key: &str| b.get("type").is_some_and(|t| types(t).contains(&kind)) || b.get(key).is_some();
    match v {
        Value::Object(args) => {
            let objects = branches.iter().map(deref).filter(|b| has(b, "object", "properties")).enumerate();
            // Ties go to the first branch: max_by_key keeps the last maximum, so the index counts down.
            let best = objects.max_by_key(|(i, b)| {
                let props = b.get("properties").and_then(Value::as_object);
                (args.keys().filter(|k| props.is_some_and(|p| p.contains_key(*k))).count(), std::cmp::Reverse(*i))
            });
            best.map(|(_, b)| b)
        }
        Value::Array(_) => branches.iter().map(deref).find(|b| has(b, "array", "items")),
        _ => None,
    }
}

/// Whether `s` asks for an object and takes no string: a string in its place is JSON text.
fn wants_object(s: &Value, root: &Value, hops: usize) -> bool {
    let Some(o) = s.as_object() else { return false };
    if hops > 64 {
        return false;
    }
    if let Some(t) = o.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)) {
        return wants_object(t, root, hops + 1);
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(bs) = o.get(k).and_then(Value::as_array) {
            return bs.iter().any(|b| wants_object(b, root, hops + 1)) && !bs.iter().any(|b| takes_string(b, root, hops + 1));
        }
    }
    o.get("type").is_some_and(|t| types(t).contains(&"object") && !types(t).contains(&"string"))
}

fn takes_string(s: &Value, root: &Value, hops: usize) -> bool {
    let Some(o) = s.as_object() else { return true };
    if hops > 64 {
        return true;
    }
    if let Some(t) = o.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)) {
        return takes_string(t, root, hops + 1);
    }
    match o.get("type") {
        Some(t) => types(t).contains(&"string"),
        None => !o.contains_key("anyOf") && !o.contains_key("oneOf") && !o.contains_key("enum") && !o.contains_key("const"),
    }
}

/// Whether `s` accepts null (any branch of a union does, an untyped schema does).
fn allows_null(s: &Value, root: &Value, hops: usize) -> bool {
    let Some(o) = s.as_object() else { return s.as_bool().unwrap_or(false) };
    if hops > 64 {
        return true;
    }
    if let Some(r) = o.get("$ref").and_then(Value::as_str) {
        return resolve(root, r).is_none_or(|t| allows_null(t, root, hops + 1));
    }
    if o.get("nullable") == Some(&Value::Bool(true)) || o.get("const") == Some(&Value::Null) {
        return true;
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(bs) = o.get(k).and_then(Value::as_array) {
            return bs.iter().any(|b| allows_null(b, root, hops + 1));
        }
    }
    if let Some(e) = o.get("enum").and_then(Value::as_array) {
        return e.contains(&Value::Null);
    }
    if o.contains_key("const") {
        return false;
    }
    match o.get("type") {
        Some(t) => types(t).contains(&"null"),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_nullable_and_required() {
        let s = json!({"type": "object", "$schema": "x", "properties": {
            "title": {"type": "string", "minLength": 1},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "kind": {"$ref": "#/$defs/k"}
        }, "required": ["title"], "$defs": {"k": {"type": "string", "enum": ["x"]}}});
        let c = convert(&s).unwrap();
        assert_eq!(c["required"], json!(["title", "when", "tags", "kind"]), "every property, in order");
        assert_eq!(c["additionalProperties"], false);
        assert_eq!(c["properties"]["title"], json!({"type": "string", "description": "(minLength: 1)"}));
        assert_eq!(c["properties"]["when"]["type"], json!(["string", "null"]));
        assert_eq!(c["properties"]["tags"]["items"]["enum"], json!(["a", "b"]), "items are not optional");
        assert_eq!(c["properties"]["kind"], json!({"anyOf": [{"$ref": "#/$defs/k"}, {"type": "null"}]}));
        assert!(c.get("$schema").is_none());
    }

    #[test]
    fn what_has_no_strict_form_says_why() {
        let open = json!({"type": "object", "properties": {"m": {"type": "string"}}, "additionalProperties": true});
        assert_eq!(convert(&open).unwrap_err(), "an open object (additionalProperties) at the root");
        assert!(convert(&json!({"anyOf": [{"type": "object"}]})).unwrap_err().contains("root"));
        assert!(convert(&json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}})).unwrap_err().contains("oneOf"));
        assert!(convert(&json!({"type": "object", "properties": {"a": {}}})).unwrap_err().contains("any type"));
        let mut deep = json!({"type": "object", "properties": {"leaf": {"type": "string"}}});
        for _ in 0..10 {
            deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        }
        assert!(convert(&deep).unwrap_err().contains("10 levels"));
    }

    #[test]
    fn open_objects_are_asked_for_as_json_text_and_parsed_back() {
        let s = json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Labels."},
            "settings": {"type": "object"},
            "params": {"anyOf": [{"type": "object", "additionalProperties": true}, {"type": "null"}]}
        }, "required": ["labels"]});
        let c = convert(&s).unwrap();
        assert_eq!(c["properties"]["labels"], json!({"type": "string", "description": "Labels. (a JSON object written as JSON text, each value {\"type\":\"string\"})"}));
        assert_eq!(c["properties"]["settings"]["type"], json!(["string", "null"]));
        assert_eq!(c["properties"]["params"]["anyOf"][0]["type"], "string");
        let mut args = json!({"labels": "{\"a\": \"b\"}", "settings": null, "params": "{\"x\": 1}"});
        restore(&mut args, &s);
        assert_eq!(args, json!({"labels": {"a": "b"}, "params": {"x": 1}}));
        // A string the original schema takes stays a string.
        let either = json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "object"}, {"type": "string"}]}}});
        let mut args = json!({"v": "{}"});
        restore(&mut args, &either);
        assert_eq!(args, json!({"v": "{}"}));
    }

    #[test]
    fn restore_drops_only_the_nulls_the_original_refuses() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": ["string", "null"]}, "c": {"type": "string"},
            "n": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
            "r": {"$ref": "#/$defs/r"}
        }, "required": ["c"], "$defs": {"r": {"type": "object", "properties": {"z": {"type": "string"}}}}});
        let mut args = json!({"a": null, "b": null, "c": null, "n": {"x": null, "y": null}, "r": {"z": null}});
        restore(&mut args, &s);
        assert_eq!(args, json!({"b": null, "c": null, "n": {"y": null}, "r": {}}));
    }

    #[test]
    fn restore_follows_the_union_branch_the_value_is_in() {
        // An optional object that is nullable in the original, and an array of either of two objects.
        let s = json!({"type": "object", "properties": {
            "when": {"anyOf": [{"type": "object", "properties": {"day": {"type": "string"}, "hour": {"type": "integer"}}}, {"type": "null"}]},
            "items": {"type": "array", "items": {"anyOf": [
                {"type": "object", "properties": {"text": {"type": "string"}, "lang": {"type": "string"}}},
                {"$ref": "#/$defs/img"}
            ]}},
            "list": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}]}
        }, "$defs": {"img": {"type": "object", "properties": {"url": {"type": "string"}, "alt": {"type": ["string", "null"]}}}}});
        assert!(convert(&s).is_ok(), "the schema has a strict form");
        let mut args = json!({
            "when": {"day": "tomorrow", "hour": null},
            "items": [{"text": "hi", "lang": null}, {"url": "u", "alt": null}],
            "list": [{"k": null}],
        });
        restore(&mut args, &s);
        assert_eq!(args, json!({"when": {"day": "tomorrow"}, "items": [{"text": "hi"}, {"url": "u", "alt": null}], "list": [{}]}));
        // A null for the union itself stays: its original allows null.
        let mut args = json!({"when": null});
        restore(&mut args, &s);
        assert_eq!(args, json!({"when": null}));
    }
}
