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
#[path = "inspect_tests.rs"]
mod tests;
