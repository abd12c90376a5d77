//! The plan for Gemini (issue 55): `{tools: [{functionDeclarations: [{name, description,
//! parametersJsonSchema}]}], systemInstruction?: {parts: [{text}]}}`.
//!
//! Gemini has no tool search of its own, so the plan is the portable one (the meta-tools as
//! functions, the DEFERRED_TOOLS section as the system instruction) said in Gemini's terms, and
//! `tool/invoke` is unchanged.
//!
//! Names: Gemini's rule is `^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`. Registered names already keep
//! the stricter rule every provider shares (`wire_name::is_valid`, checked at registration),
//! and so do the meta-tools; only a host's own client tool may break it, and the plan is then
//! refused (`RenderError::GeminiName`) rather than sent under a name the host would not know.
//!
//! Schemas: every `parametersJsonSchema` is an object schema whose `$ref`s resolve inside it:
//! a schema without `type` is given `type: "object"`, a boolean one becomes an object schema,
//! and a reference that names nothing inside it becomes an untyped schema that says so.

use super::strict::resolve;
use super::ToolDefinition;
use serde_json::{json, Value};

/// Whether `name` keeps Gemini's function name rule.
pub fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b.len() <= 64 && (b[0].is_ascii_alphabetic() || b[0] == b'_') && b.iter().all(|c| c.is_ascii_alphanumeric() || b"_.:-".contains(c))
}

/// The request's parts: its one `tools` item and its `systemInstruction`.
pub struct Gemini {
    pub tools: Value,
    pub system: Option<Value>,
}

/// The request's parts for `tools` (the plan's, meta-tools included) and `system` (its
/// DEFERRED_TOOLS section). Err: the name that breaks Gemini's rule.
pub fn request(tools: &[ToolDefinition], system: Option<&str>) -> Result<Gemini, String> {
    let mut declarations = Vec::with_capacity(tools.len());
    for t in tools {
        if !is_valid_name(&t.name) {
            return Err(t.name.clone());
        }
        declarations.push(json!({"name": t.name, "description": t.description, "parametersJsonSchema": parameters(&t.input_schema)}));
    }
    Ok(Gemini { tools: json!({"functionDeclarations": declarations}), system: system.map(|text| json!({"parts": [{"text": text}]})) })
}

/// `schema` as an object schema whose references all resolve inside it.
pub fn parameters(schema: &Value) -> Value {
    let mut s = match schema {
        Value::Object(o) => Value::Object(o.clone()),
        Value::Bool(false) => json!({"type": "object", "properties": {}, "additionalProperties": false}),
        _ => json!({"type": "object"}),
    };
    if s.get("type").is_none() {
        s["type"] = "object".into();
    }
    let root = s.clone();
    unresolved_to_untyped(&mut s, &root);
    s
}

fn unresolved_to_untyped(v: &mut Value, root: &Value) {
    match v {
        Value::Object(o) => {
            if let Some(r) = o.get("$ref").and_then(Value::as_str) {
                if resolve(root, r).is_none() {
                    let said = format!("(refers to {r}, which this schema does not contain)");
                    o.remove("$ref");
                    let text = match o.get("description").and_then(Value::as_str) {
                        Some(d) => format!("{d} {said}"),
                        None => said,
                    };
                    o.insert("description".into(), text.into());
                }
            }
            o.values_mut().for_each(|c| unresolved_to_untyped(c, root));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| unresolved_to_untyped(c, root)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_geminis_rule() {
        for ok in ["a", "_x", "mcp__github__createIssue", "a.b:c-d", &"n".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "1a", "-a", "a b", "名前", &"n".repeat(65)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn every_schema_is_an_object_with_its_references_inside() {
        assert_eq!(parameters(&json!(true)), json!({"type": "object"}));
        assert_eq!(parameters(&json!({"properties": {}})), json!({"type": "object", "properties": {}}));
        let s = parameters(&json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}, "b": {"$ref": "other.json#/x"}}, "$defs": {"a": {"type": "string"}}}));
        assert_eq!(s["properties"]["a"], json!({"$ref": "#/$defs/a"}));
        assert_eq!(s["properties"]["b"], json!({"description": "(refers to other.json#/x, which this schema does not contain)"}));
    }
}
