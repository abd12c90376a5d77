//! `tool_inspect`: a TypeScript-style declaration generated from a tool's JSON Schema.
//!
//! The output is meant for a model to read, so it favours faithful, compact types
//! over strict TypeScript validity in one place: the function name is the tool's
//! exact name (a model must call it by that name), even when it is not an identifier.
//! Output is deterministic: properties keep schema order.
//!
//! Work is linear in the schema and the output is bounded, whatever a server sends: unions
//! dedupe through a hash set, a union shows its first `MAX_UNION` members and says how many
//! more there are (a 100k-value enum is one line, not 100k), at most `MAX_MEMBERS` object
//! members and `MAX_NODES` schema nodes are rendered (`$ref` and combinator fan-out can be
//! exponential otherwise), and literals show hidden characters as escapes.

use serde_json::{Map, Value};
use std::collections::HashSet;

/// Object/array nesting beyond this renders as `object` / `unknown[]`.
const MAX_LEVEL: usize = 6;
/// Bound on total recursion (combinators, `$ref` chains).
const MAX_GUARD: usize = 64;
/// At most this many object members are rendered; beyond, nested objects render as `object`.
const MAX_MEMBERS: usize = 4000;
/// At most this many schema nodes are rendered; beyond, a node renders as `unknown`.
const MAX_NODES: usize = 20_000;
/// A union (enum, `anyOf`/`oneOf`, type list) shows at most this many members.
const MAX_UNION: usize = 20;
/// Nested objects without comments are written on one line when this short.
const INLINE_WIDTH: usize = 80;

pub fn signature(name: &str, description: &str, schema: &Value) -> String {
    signature_counted(name, description, schema).0
}

/// The signature and how many schema nodes were rendered (for the bound's tests).
fn signature_counted(name: &str, description: &str, schema: &Value) -> (String, usize) {
    let mut out = String::new();
    push_doc(&mut out, 0, description);
    let mut r = Renderer { root: schema, stack: vec!["#".to_string()], budget: MAX_MEMBERS, nodes: MAX_NODES };
    match r.params(schema) {
        Some(params) => out.push_str(&format!("declare function {name}(params: {params}): unknown;")),
        None => out.push_str(&format!("declare function {name}(): unknown;")),
    }
    (out, MAX_NODES - r.nodes)
}

struct Renderer<'a> {
    root: &'a Value,
    /// `$ref`s currently being inlined (recursion guard).
    stack: Vec<String>,
    /// Object members still allowed (guards against exponential `$ref` fan-out).
    budget: usize,
    /// Schema nodes still allowed (guards against combinator fan-out).
    nodes: usize,
}

impl<'a> Renderer<'a> {
    /// The parameter type, or None when the tool takes no arguments.
    fn params(&mut self, schema: &'a Value) -> Option<String> {
        let Some((s, pushed)) = self.enter_ref(schema) else {
            return Some(self.ty(schema, 0, 0, 0));
        };
        let result = match s {
            Value::Bool(true) => None,
            Value::Object(map) if is_plain_object(map) && !has_combinator(map) => {
                let has_props = map.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
                let has_index = map.get("additionalProperties").is_some_and(Value::is_object);
                (has_props || has_index).then(|| self.object(map, 0, 0, 0, true))
            }
            _ => Some(self.ty(s, 0, 0, 0)),
        };
        if pushed {
            self.stack.pop();
        }
        result
    }

    /// Follow one `$ref` at `schema` (if any), pushing it onto the stack; the bool says
    /// whether something was pushed. None if the ref is recursive or unresolvable.
    fn enter_ref(&mut self, schema: &'a Value) -> Option<(&'a Value, bool)> {
        let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
            return Some((schema, false));
        };
        if self.stack.iter().any(|s| s == r) {
            return None;
        }
        let target = resolve(self.root, r)?;
        self.stack.push(r.to_string());
        Some((target, true))
    }

    fn ty(&mut self, schema: &'a Value, indent: usize, level: usize, guard: usize) -> String {
        if guard > MAX_GUARD || self.nodes == 0 {
            return "unknown".into();
        }
        self.nodes -= 1;
        let map = match schema {
            Value::Bool(false) => return "never".into(),
            Value::Object(map) => map,
            _ => return "unknown".into(),
        };
        if let Some(r) = map.get("$ref").and_then(Value::as_str) {
            return match self.enter_ref(schema) {
                Some((target, pushed)) => {
                    let t = self.ty(target, indent, level, guard + 1);
                    if pushed {
                        self.stack.pop();
                    }
                    t
                }
                None if resolve(self.root, r).is_some() => ref_name(r),
                None => "unknown".into(),
            };
        }
        let mut core = if let Some(c) = map.get("const") {
            literal(c)
        } else if let Some(values) = map.get("enum").and_then(Value::as_array) {
            if values.is_empty() { "never".into() } else { union(values.iter().map(literal), 0) }
        } else {
            self.structural(map, indent, level, guard)
        };
        if map.get("nullable") == Some(&Value::Bool(true)) && core != "unknown" && !splits(&core, " | ").contains(&"null") {
            core.push_str(" | null");
        }
        core
    }

    /// `type` (or inferred type) combined with `anyOf`/`oneOf` (union) and `allOf` (intersection).
    fn structural(&mut self, map: &'a Map<String, Value>, indent: usize, level: usize, guard: usize) -> String {
        let mut types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if types.is_empty() {
            if is_plain_object(map) && ["properties", "additionalProperties", "patternProperties"].iter().any(|k| map.contains_key(*k)) {
                types.push("object");
            } else if map.contains_key("items") || map.contains_key("prefixItems") {
                types.push("array");
            }
        }
        let mut own = Vec::new();
        for t in types {
            let rendered = match t {
                "string" => "string".to_string(),
                "integer" | "number" => "number".to_string(),
                "boolean" => "boolean".to_string(),
                "null" => "null".to_string(),
                "array" => self.array(map, indent, level, guard),
                "object" => self.object(map, indent, level, guard, false),
                _ => "unknown".to_string(),
            };
            own.push(rendered);
        }
        let own = (!own.is_empty()).then(|| union(own.into_iter(), 0));

        // Branches are rendered until the union has `MAX_UNION` distinct members; the rest are
        // counted, not rendered (they may repeat a shown one: the count is an upper bound).
        let branches: Vec<&'a Value> =
            ["anyOf", "oneOf"].iter().flat_map(|k| map.get(*k).and_then(Value::as_array).into_iter().flatten()).collect();
        let mut alternatives = Vec::new();
        let mut distinct = HashSet::new();
        let mut rendered = 0;
        for &branch in &branches {
            if distinct.len() >= MAX_UNION {
                break;
            }
            let t = self.ty(branch, indent, level, guard + 1);
            rendered += 1;
            if distinct.insert(t.clone()) {
                alternatives.push(t);
            }
        }
        let unrendered = branches.len() - rendered;
        let informative = unrendered > 0 || alternatives.iter().any(|a| a != "unknown");
        let alternatives = (informative || (own.is_none() && !alternatives.is_empty()))
            .then(|| union(alternatives.into_iter(), unrendered));

        let mut parts: Vec<String> = own.into_iter().chain(alternatives).collect();
        let mut seen: HashSet<String> = parts.iter().cloned().collect();
        for branch in map.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            let t = self.ty(branch, indent, level, guard + 1);
            if t != "unknown" && seen.insert(t.clone()) {
                parts.push(t);
            }
        }
        match parts.len() {
            0 => "unknown".into(),
            1 => parts.remove(0),
            _ => parts.iter().map(|p| paren_if(p, &[" | "])).collect::<Vec<_>>().join(" & "),
        }
    }

    fn array(&mut self, map: &'a Map<String, Value>, indent: usize, level: usize, guard: usize) -> String {
        if level >= MAX_LEVEL {
            return "unknown[]".into();
        }
        // Tuple forms: 2020-12 `prefixItems` (+ `items` for the rest) or draft-07 array `items` (+ `additionalItems`).
        let (tuple, rest) = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(p)), items) => (Some(p), items),
            (_, Some(Value::Array(p))) => (Some(p), map.get("additionalItems")),
            (_, items) => (None, items),
        };
        let rest = match rest {
            Some(s @ Value::Object(_)) => Some(self.ty(s, indent, level + 1, guard + 1)),
            Some(Value::Bool(false)) => None,
            _ if tuple.is_some() => None,
            _ => Some("unknown".to_string()),
        };
        match tuple {
            Some(items) => {
                let mut elems: Vec<String> = items.iter().map(|s| self.ty(s, indent, level + 1, guard + 1)).collect();
                if let Some(rest) = rest {
                    elems.push(format!("...{}[]", paren_if(&rest, &[" | ", " & "])));
                }
                format!("[{}]", elems.join(", "))
            }
            None => format!("{}[]", paren_if(&rest.unwrap_or_else(|| "never".into()), &[" | ", " & "])),
        }
    }

    fn object(&mut self, map: &'a Map<String, Value>, indent: usize, level: usize, guard: usize, multiline: bool) -> String {
        if level >= MAX_LEVEL || self.budget == 0 {
            return "object".into();
        }
        let required: HashSet<&str> =
            map.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut members: Vec<(String, String)> = Vec::new(); // (doc, member)
        let properties = map.get("properties").and_then(Value::as_object);
        let mut left_out = 0;
        for (i, (key, sub)) in properties.into_iter().flatten().enumerate() {
            if self.budget == 0 {
                left_out = properties.map_or(0, Map::len) - i;
                break;
            }
            self.budget -= 1;
            let optional = if required.contains(key.as_str()) { "" } else { "?" };
            let t = self.ty(sub, indent + 1, level + 1, guard + 1);
            members.push((doc_text(self.root, sub), format!("{}{optional}: {t}", prop_name(key))));
        }
        match map.get("additionalProperties") {
            Some(extra @ Value::Object(_)) => {
                let t = self.ty(extra, indent + 1, level + 1, guard + 1);
                members.push((doc_text(self.root, extra), format!("[key: string]: {t}")));
            }
            Some(Value::Bool(false)) => {}
            _ if members.is_empty() => members.push((String::new(), "[key: string]: unknown".into())),
            _ => {}
        }
        if left_out > 0 {
            members.push((String::new(), format!("/* ... and {} more properties */", thousands(left_out))));
        }
        if members.is_empty() {
            return "{}".into();
        }
        if !multiline && members.iter().all(|(doc, m)| doc.is_empty() && !m.contains('\n')) {
            let inline = format!("{{ {} }}", members.iter().map(|(_, m)| m.as_str()).collect::<Vec<_>>().join("; "));
            if inline.len() + indent * 2 <= INLINE_WIDTH {
                return inline;
            }
        }
        let mut out = String::from("{\n");
        for (doc, member) in &members {
            push_doc(&mut out, indent + 1, doc);
            out.push_str(&"  ".repeat(indent + 1));
            out.push_str(member);
            out.push_str(if member.starts_with("/*") { "\n" } else { ";\n" });
        }
        out.push_str(&"  ".repeat(indent));
        out.push('}');
        out
    }
}

/// A `properties`-style object schema (not one whose `type` says otherwise).
fn is_plain_object(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    }
}

/// Keywords that make a schema more than a plain object: rendered through `ty`.
fn has_combinator(map: &Map<String, Value>) -> bool {
    ["anyOf", "oneOf", "allOf", "enum", "const", "$ref"].iter().any(|k| map.contains_key(*k))
}

fn resolve<'v>(root: &'v Value, r: &str) -> Option<&'v Value> {
    match r {
        "#" => Some(root),
        _ => r.strip_prefix('#').and_then(|p| root.pointer(p)),
    }
}

/// The name a recursive reference is shown as: the last pointer segment as an identifier.
fn ref_name(r: &str) -> String {
    let last = r.rsplit('/').next().unwrap_or("").replace("~1", "/").replace("~0", "~");
    let mut name: String = last.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '$' { c } else { '_' }).collect();
    if name.is_empty() || name == "_" {
        name = "Self".into();
    } else if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// A JSON literal. Invisible and direction-changing characters (which JSON leaves raw) are
/// written as `\u` escapes, so a value can neither hide text nor reorder what the model reads.
fn literal(v: &Value) -> String {
    let json = serde_json::to_string(v).unwrap_or_else(|_| "unknown".into());
    if !json.chars().any(crate::registry::hidden::is_hidden) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if crate::registry::hidden::is_hidden(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `a | b | c`, duplicates dropped, at most `MAX_UNION` members shown; the rest (plus
/// `unrendered` members the caller did not render) are counted in a trailing comment.
fn union(parts: impl Iterator<Item = String>, unrendered: usize) -> String {
    let mut seen: HashSet<String> = HashSet::new();
    let mut shown: Vec<String> = Vec::new();
    let mut more = unrendered;
    for part in parts {
        // A member that is itself a union is flattened: `a | (a | b)` is `a | b`.
        for p in splits(&part, " | ") {
            if seen.contains(p) {
                continue;
            }
            if shown.len() < MAX_UNION {
                shown.push(p.to_string());
            } else {
                more += 1;
            }
            seen.insert(p.to_string());
        }
    }
    let mut out = shown.iter().map(|p| paren_if(p, &[" & "])).collect::<Vec<_>>().join(" | ");
    if more > 0 {
        out.push_str(&format!(" /* ... and {} more */", thousands(more)));
    }
    out
}

/// `99990` -> `99,990`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Wrap `t` in parentheses if it contains one of `ops` outside any bracket or string.
fn paren_if(t: &str, ops: &[&str]) -> String {
    if ops.iter().any(|op| splits(t, op).len() > 1) {
        format!("({t})")
    } else {
        t.to_string()
    }
}

/// Split `t` at top-level occurrences of `op` (outside brackets and string literals).
fn splits<'t>(t: &'t str, op: &str) -> Vec<&'t str> {
    let bytes = t.as_bytes();
    let (mut depth, mut in_str, mut start, mut i) = (0i32, false, 0, 0);
    let mut parts = Vec::new();
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            if b == b'\\' {
                i += 1;
            } else if b == b'"' {
                in_str = false;
            }
        } else {
            match b {
                b'/' if bytes[i..].starts_with(b"/*") => {
                    // Skip a doc comment (its text never contains `*/`, see `push_doc`).
                    match t[i + 2..].find("*/") {
                        Some(end) => i += end + 4,
                        None => i = bytes.len(),
                    }
                    continue;
                }
                b'"' => in_str = true,
                b'{' | b'[' | b'(' => depth += 1,
                b'}' | b']' | b')' => depth -= 1,
                _ if depth == 0 && bytes[i..].starts_with(op.as_bytes()) => {
                    parts.push(&t[start..i]);
                    i += op.len();
                    start = i;
                    continue;
                }
                _ => {}
            }
        }
        i += 1;
    }
    parts.push(&t[start..]);
    parts
}

fn prop_name(key: &str) -> String {
    let mut chars = key.chars();
    let ident = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if ident {
        key.to_string()
    } else {
        literal(&Value::String(key.to_string()))
    }
}

/// Comment text for a property: description (falling back to a `$ref` target's),
/// then `(default X)` and `(format: F)`.
fn doc_text(root: &Value, schema: &Value) -> String {
    let mut s = schema;
    let mut description = s.get("description").and_then(Value::as_str);
    for _ in 0..MAX_GUARD {
        let Some(target) = s.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)) else { break };
        s = target;
        description = description.or_else(|| s.get("description").and_then(Value::as_str));
    }
    let mut parts: Vec<String> = description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).into_iter().collect();
    if let Some(default) = schema.get("default").or_else(|| s.get("default")) {
        let mut shown = literal(default);
        if shown.chars().count() > 60 {
            shown = format!("{}…", shown.chars().take(60).collect::<String>());
        }
        parts.push(format!("(default {shown})"));
    }
    if let Some(format) = schema.get("format").or_else(|| s.get("format")).and_then(Value::as_str) {
        parts.push(format!("(format: {format})"));
    }
    parts.join(" ")
}

/// Append a `/** ... */` comment at `indent` (nothing for empty text).
fn push_doc(out: &mut String, indent: usize, text: &str) {
    let text = text.trim().replace("*/", "*\\/");
    if text.is_empty() {
        return;
    }
    let pad = "  ".repeat(indent);
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    // Remove the common indentation of continuation lines (Python docstrings).
    let common = lines.iter().skip(1).filter(|l| !l.is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    for line in lines.iter_mut().skip(1) {
        *line = line.get(common..).unwrap_or_else(|| line.trim_start());
    }
    if lines.len() == 1 {
        out.push_str(&format!("{pad}/** {} */\n", lines[0]));
        return;
    }
    out.push_str(&format!("{pad}/**\n"));
    for line in lines {
        if line.is_empty() {
            out.push_str(&format!("{pad} *\n"));
        } else {
            out.push_str(&format!("{pad} * {line}\n"));
        }
    }
    out.push_str(&format!("{pad} */\n"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig(schema: Value) -> String {
        signature("t", "", &schema)
    }

    #[test]
    fn example_from_the_brief() {
        let schema = json!({"type": "object", "properties": {
            "query": {"type": "string", "description": "Search query"},
            "perPage": {"type": "number", "description": "Max results", "default": 30},
            "state": {"type": "string", "enum": ["open", "closed"]},
            "labels": {"type": "array", "items": {"type": "string"}},
            "filter": {"type": "object", "properties": {
                "since": {"type": "string"}, "assignee": {"type": ["string", "null"]}}}
        }, "required": ["query"]});
        let expected = r#"/** Search issues in a repository. */
declare function mcp__github__searchIssues(params: {
  /** Search query */
  query: string;
  /** Max results (default 30) */
  perPage?: number;
  state?: "open" | "closed";
  labels?: string[];
  filter?: { since?: string; assignee?: string | null };
}): unknown;"#;
        assert_eq!(signature("mcp__github__searchIssues", "Search issues in a repository.", &schema), expected);
    }

    #[test]
    fn no_arguments() {
        assert_eq!(sig(json!({"type": "object", "properties": {}})), "declare function t(): unknown;");
        assert_eq!(sig(json!({})), "declare function t(): unknown;");
        assert_eq!(sig(json!(true)), "declare function t(): unknown;");
        assert_eq!(sig(json!({"type": "object"})), "declare function t(): unknown;");
    }

    #[test]
    fn nested_objects_with_comments_are_indented() {
        let schema = json!({"properties": {"a": {"type": "object", "required": ["b"], "properties": {
            "b": {"description": "Deep", "type": "object", "properties": {"c": {"type": "integer", "description": "C"}}}}}}});
        let expected = "declare function t(params: {
  a?: {
    /** Deep */
    b: {
      /** C */
      c?: number;
    };
  };
}): unknown;";
        assert_eq!(sig(schema), expected);
    }

    #[test]
    fn arrays_tuples_and_unions_in_arrays() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "array", "items": {"type": ["string", "number"]}},
            "b": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
            "c": {"type": "array"},
            "d": {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}},
            "e": {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "number"}},
            "f": {"type": "array", "prefixItems": [{"type": "string"}]},
            "g": {"type": "array", "items": [{"type": "string"}, {"type": "boolean"}]}
        }});
        let expected = "declare function t(params: {
  a?: (string | number)[];
  b?: [string, number];
  c?: unknown[];
  d?: boolean[][];
  e?: [string, ...number[]];
  f?: [string];
  g?: [string, boolean];
}): unknown;";
        assert_eq!(sig(schema), expected);
    }

    #[test]
    fn enums_consts_unions_intersections_nullable() {
        let schema = json!({"type": "object", "properties": {
            "e": {"enum": ["a", 1, null]},
            "k": {"const": "fixed"},
            "u": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "o": {"oneOf": [{"type": "integer"}, {"type": "object", "properties": {"x": {"type": "string"}}}]},
            "i": {"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}},
                            {"type": "object", "properties": {"y": {"type": "number"}}}]},
            "n": {"type": "string", "nullable": true},
            "ne": {"type": "string", "enum": ["p", "q"], "nullable": true},
            "ia": {"allOf": [{"anyOf": [{"type": "string"}, {"type": "number"}]}, {"const": 1}]}
        }});
        let expected = r#"declare function t(params: {
  e?: "a" | 1 | null;
  k?: "fixed";
  u?: string | null;
  o?: number | { x?: string };
  i?: { x?: string } & { y?: number };
  n?: string | null;
  ne?: "p" | "q" | null;
  ia?: (string | number) & 1;
}): unknown;"#;
        assert_eq!(sig(schema), expected);
    }

    #[test]
    fn constraint_only_combinators_do_not_add_noise() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert_eq!(sig(schema), "declare function t(params: { a?: string; b?: string }): unknown;");
    }

    #[test]
    fn refs_are_inlined_and_recursion_is_named() {
        let schema = json!({"type": "object", "properties": {
            "p": {"$ref": "#/$defs/Point"},
            "tree": {"$ref": "#/definitions/Node"}
        }, "required": ["p"],
        "$defs": {"Point": {"description": "A point", "type": "object", "required": ["x", "y"],
                            "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
        "definitions": {"Node": {"type": "object", "properties": {
            "value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}}}});
        let expected = "declare function t(params: {
  /** A point */
  p: { x: number; y: number };
  tree?: { value?: string; children?: Node[] };
}): unknown;";
        assert_eq!(sig(schema), expected);
    }

    #[test]
    fn root_ref_and_unresolvable_ref() {
        let schema = json!({"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}}}});
        assert_eq!(sig(schema), "declare function t(params: {\n  q?: string;\n}): unknown;");
        let schema = json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}});
        assert_eq!(sig(schema), "declare function t(params: {\n  x?: unknown;\n}): unknown;");
    }

    #[test]
    fn index_signatures() {
        let schema = json!({"type": "object", "properties": {
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "meta": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "number"}},
            "closed": {"type": "object", "additionalProperties": false},
            "any": {"type": "object"}
        }});
        let expected = "declare function t(params: {
  env?: { [key: string]: string };
  meta?: { a?: string; [key: string]: number };
  closed?: {};
  any?: { [key: string]: unknown };
}): unknown;";
        assert_eq!(sig(schema), expected);
    }

    #[test]
    fn quoted_names_format_default_multiline_and_escaped_comments() {
        let schema = json!({"type": "object", "properties": {
            "foo-bar": {"type": "string", "format": "date-time"},
            "2x": {"type": "boolean", "default": false},
            "ok_$1": {"type": "string", "description": "Line one\nLine two\n\nEnd */ here"}
        }});
        let expected = r#"declare function t(params: {
  /** (format: date-time) */
  "foo-bar"?: string;
  /** (default false) */
  "2x"?: boolean;
  /**
   * Line one
   * Line two
   *
   * End *\/ here
   */
  ok_$1?: string;
}): unknown;"#;
        assert_eq!(sig(schema), expected);
    }

    #[test]
    fn schemas_without_type() {
        let schema = json!({"properties": {"a": {}, "b": {"properties": {"c": {"type": "string"}}}, "d": {"items": {"type": "string"}}}});
        assert_eq!(sig(schema), "declare function t(params: {\n  a?: unknown;\n  b?: { c?: string };\n  d?: string[];\n}): unknown;");
    }

    #[test]
    fn depth_limit_renders_object() {
        let mut schema = json!({"type": "object", "properties": {"leaf": {"type": "string"}}});
        for _ in 0..10 {
            schema = json!({"type": "object", "properties": {"n": schema}});
        }
        let out = sig(schema);
        assert!(out.contains("n?: object"), "{out}");
        assert!(!out.contains("leaf"));
        assert_eq!(out, "declare function t(params: {\n  n?: { n?: { n?: { n?: { n?: { n?: object } } } } };\n}): unknown;");
    }

    #[test]
    fn long_inline_objects_break_into_lines() {
        let props: Map<String, Value> = (0..8).map(|i| (format!("field{i}"), json!({"type": "string"}))).collect();
        let schema = json!({"type": "object", "properties": {"o": {"type": "object", "properties": props}}});
        let out = sig(schema);
        assert!(out.starts_with("declare function t(params: {\n  o?: {\n    field0?: string;\n"), "{out}");
        assert!(out.ends_with("    field7?: string;\n  };\n}): unknown;"), "{out}");
    }

    #[test]
    fn self_referencing_root_and_ref_cycles_terminate() {
        let schema = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        assert_eq!(sig(schema), "declare function t(params: {\n  next?: Self;\n}): unknown;");
        let schema = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        assert_eq!(sig(schema), "declare function t(params: {\n  x?: A;\n}): unknown;");
    }

    #[test]
    fn docstring_indentation_is_removed() {
        let out = signature("t", "Summary.\n\n    Args:\n        q: query\n", &json!({}));
        assert_eq!(out, "/**\n * Summary.\n *\n * Args:\n *     q: query\n */\ndeclare function t(): unknown;");
    }

    #[test]
    fn comments_with_brackets_and_quotes_do_not_confuse_parenthesization() {
        let schema = json!({"type": "object", "properties": {"a": {"anyOf": [
            {"type": "object", "properties": {"x": {"type": "string", "description": "it's \"{ | ( é"}}},
            {"type": "null"}]}}});
        let expected = r#"declare function t(params: {
  a?: {
    /** it's "{ | ( é */
    x?: string;
  } | null;
}): unknown;"#;
        assert_eq!(sig(schema), expected);
        assert_eq!(splits("{ a: 1 } | /** x | \"y */ null", " | ").len(), 2);
    }

    #[test]
    fn exponential_ref_fan_out_is_bounded() {
        let mut defs = Map::new();
        for level in 0..6 {
            let props: Map<String, Value> =
                (0..12).map(|i| (format!("p{i}"), json!({"$ref": format!("#/$defs/L{}", level + 1)}))).collect();
            defs.insert(format!("L{level}"), json!({"type": "object", "properties": props}));
        }
        defs.insert("L6".into(), json!({"type": "string"}));
        let schema = json!({"$ref": "#/$defs/L0", "$defs": defs});
        let out = sig(schema);
        assert!(out.len() < 200_000, "{}", out.len());
        assert!(out.ends_with("  /* ... and 11 more properties */\n}): unknown;"), "{out}");
        assert_eq!(out.matches("?: string;").count(), MAX_MEMBERS - out.matches("?: {").count());
    }

    #[test]
    fn output_is_deterministic_and_keeps_schema_order() {
        let schema = json!({"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "string"}}});
        assert_eq!(sig(schema.clone()), sig(schema.clone()));
        assert_eq!(sig(schema), "declare function t(params: {\n  z?: string;\n  a?: string;\n}): unknown;");
    }

    #[test]
    fn long_enums_show_the_first_values_and_count_the_rest() {
        let values: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
        let out = sig(json!({"properties": {"x": {"enum": values}}}));
        let first: Vec<String> = (0..MAX_UNION).map(|i| i.to_string()).collect();
        assert_eq!(out, format!("declare function t(params: {{\n  x?: {} /* ... and 99,980 more */;\n}}): unknown;", first.join(" | ")));
        // Duplicates are not counted as more values.
        let out = sig(json!({"properties": {"x": {"enum": ["a", "a", "b"], "type": "string"}}}));
        assert_eq!(out, "declare function t(params: {\n  x?: \"a\" | \"b\";\n}): unknown;");
    }

    #[test]
    fn long_unions_are_abbreviated_inside_arrays_too() {
        let branches: Vec<Value> = (0..25).map(|i| json!({"const": format!("v{i}")})).collect();
        let out = sig(json!({"properties": {"x": {"type": "array", "items": {"anyOf": branches}}}}));
        let shown: Vec<String> = (0..MAX_UNION).map(|i| format!("\"v{i}\"")).collect();
        assert_eq!(out, format!("declare function t(params: {{\n  x?: ({} /* ... and 5 more */)[];\n}}): unknown;", shown.join(" | ")));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(
            [0, 7, 999, 1000, 99_990, 1_234_567].map(thousands),
            ["0", "7", "999", "1,000", "99,990", "1,234,567"].map(String::from)
        );
    }

    #[test]
    fn combinator_fan_out_is_bounded_by_the_node_budget() {
        // Every level is an anyOf of 20 refs to the next (one distinct type each): 20^8 nodes
        // unbounded. Rendering stops after MAX_NODES.
        let mut defs = Map::new();
        for level in 0..8 {
            let refs: Vec<Value> = (0..20).map(|_| json!({"$ref": format!("#/$defs/L{}", level + 1)})).collect();
            defs.insert(format!("L{level}"), json!({"anyOf": refs}));
        }
        defs.insert("L8".into(), json!({"type": "string"}));
        let schema = json!({"properties": {"x": {"$ref": "#/$defs/L0"}}, "$defs": defs});
        let (out, nodes) = signature_counted("t", "", &schema);
        assert!(nodes <= MAX_NODES, "{nodes}");
        assert_eq!(out, "declare function t(params: {\n  x?: string | unknown;\n}): unknown;");
    }

    #[test]
    fn wide_objects_stop_at_the_member_budget_and_say_how_many_are_left() {
        let n = MAX_MEMBERS + 10;
        let props: Map<String, Value> = (0..n).map(|i| (format!("p{i:05}"), json!({"type": "string"}))).collect();
        let required: Vec<String> = (0..n).map(|i| format!("p{i:05}")).collect();
        let (out, nodes) = signature_counted("t", "", &json!({"properties": props, "required": required}));
        assert_eq!(nodes, MAX_MEMBERS);
        assert!(out.ends_with(&format!("  p{:05}: string;\n  /* ... and 10 more properties */\n}}): unknown;", MAX_MEMBERS - 1)), "{}", &out[out.len() - 200..]);
    }

    #[test]
    fn literals_show_hidden_characters_as_escapes() {
        let out = sig(json!({"properties": {"x": {"enum": ["a\u{202e}b", "c\u{e0041}"], "default": "d\u{200b}"}}}));
        assert_eq!(out, "declare function t(params: {\n  /** (default \"d\\u200b\") */\n  x?: \"a\\u202eb\" | \"c\\udb40\\udc41\";\n}): unknown;");
    }
}
