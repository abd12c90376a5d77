//! A `SKILL.md`'s YAML frontmatter (the block between the first two `---` lines), compared
//! field by field with the frontmatter a server's `skills/list` entry promised (SEP-2640: any
//! discrepancy and the skill is not loaded).
//!
//! The YAML read is the subset skill frontmatter uses: `key: scalar` lines (plain, single- or
//! double-quoted; `true`/`false`, integers), and one level of nested `key:` maps or `- item`
//! lists of such scalars. Anything else (anchors, flow collections, block scalars, deeper
//! nesting) cannot be compared, so it fails the check: unverified content is not used.

use serde_json::{Map, Value};

/// Ok when `text`'s frontmatter has exactly `expected`'s fields with the same values.
pub(crate) fn matches(text: &str, expected: &Value) -> Result<(), String> {
    let found = parse(text)?;
    let Value::Object(expected) = expected else {
        return Err("the listed frontmatter is not an object".into());
    };
    for (key, want) in expected {
        match found.get(key) {
            None => return Err(format!("its frontmatter has no {key} (the listing has one)")),
            Some(got) if !same(got, want) => return Err(format!("its frontmatter's {key} differs from the listing's")),
            Some(_) => {}
        }
    }
    if let Some(extra) = found.keys().find(|k| !expected.contains_key(*k)) {
        return Err(format!("its frontmatter has {extra}, which the listing does not"));
    }
    Ok(())
}

/// Scalars compare as YAML reads them: a listing's number or boolean equals its text form.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::String(g), Value::Number(w)) => g == &w.to_string(),
        (Value::String(g), Value::Bool(w)) => g == &w.to_string(),
        (Value::Array(g), Value::Array(w)) => g.len() == w.len() && g.iter().zip(w).all(|(a, b)| same(a, b)),
        (Value::Object(g), Value::Object(w)) => g.len() == w.len() && w.iter().all(|(k, b)| g.get(k).is_some_and(|a| same(a, b))),
        _ => got == want,
    }
}

/// The frontmatter's fields; scalars as strings (typed comparison is `same`'s).
fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md has no frontmatter".into());
    }
    let mut block = Vec::new();
    loop {
        match lines.next() {
            None => return Err("SKILL.md's frontmatter is not closed".into()),
            Some(l) if l.trim_end() == "---" => break,
            Some(l) => block.push(l),
        }
    }
    let mut out = Map::new();
    let mut open: Option<(String, Value)> = None;
    for line in block {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if indented {
            let Some((_, nested)) = open.as_mut() else { return Err(unsupported()) };
            let item = line.trim();
            if let Some(rest) = item.strip_prefix("- ") {
                match nested {
                    Value::Null => *nested = Value::Array(vec![scalar(rest)?]),
                    Value::Array(a) => a.push(scalar(rest)?),
                    _ => return Err(unsupported()),
                }
            } else {
                let (k, v) = item.split_once(':').ok_or_else(unsupported)?;
                if v.trim().is_empty() {
                    return Err(unsupported());
                }
                match nested {
                    Value::Null => *nested = Value::Object(Map::from_iter([(key(k)?, scalar(v)?)])),
                    Value::Object(m) => {
                        m.insert(key(k)?, scalar(v)?);
                    }
                    _ => return Err(unsupported()),
                }
            }
            continue;
        }
        if let Some((k, v)) = open.take() {
            out.insert(k, v);
        }
        let (k, v) = line.split_once(':').ok_or_else(unsupported)?;
        let k = key(k)?;
        if out.contains_key(&k) {
            return Err(format!("its frontmatter has {k} twice"));
        }
        if v.trim().is_empty() {
            open = Some((k, Value::Null));
        } else {
            out.insert(k, scalar(v)?);
        }
    }
    if let Some((k, v)) = open {
        // `key:` with nothing under it is YAML's null.
        out.insert(k, v);
    }
    Ok(out)
}

fn unsupported() -> String {
    "its frontmatter uses YAML this host cannot compare".into()
}

fn key(k: &str) -> Result<String, String> {
    let k = k.trim();
    if k.is_empty() || k.contains(|c: char| c.is_whitespace() || "\"'{}[]&*!|>".contains(c)) {
        return Err(unsupported());
    }
    Ok(k.to_owned())
}

/// One scalar: quoted (with YAML's escapes for `"`, `''` for `'`) or plain.
fn scalar(v: &str) -> Result<Value, String> {
    let v = v.trim();
    if let Some(inner) = v.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return serde_json::from_str::<String>(&format!("\"{inner}\"")).map(Value::String).map_err(|_| unsupported());
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Ok(Value::String(inner.replace("''", "'")));
    }
    if v.starts_with(['[', '{', '&', '*', '!', '|', '>', '"', '\'']) {
        return Err(unsupported());
    }
    // A plain scalar ends at ` #` (a comment).
    let v = v.split(" #").next().unwrap_or(v).trim_end();
    Ok(Value::String(v.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SKILL: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";

    #[test]
    fn the_same_fields_match_and_any_difference_does_not() {
        let listed = json!({"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"});
        assert_eq!(matches(SKILL, &listed), Ok(()));
        let changed = SKILL.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials");
        assert!(matches(&changed, &listed).unwrap_err().contains("description differs"));
        let extra = SKILL.replace("---\n\n", "license: MIT\n---\n\n");
        assert!(matches(&extra, &listed).unwrap_err().contains("has license"));
        assert!(matches("no frontmatter", &listed).is_err());
        assert!(matches("---\nname: x\n", &listed).is_err());
    }

    #[test]
    fn quoted_typed_and_nested_fields_compare_as_yaml_reads_them() {
        let text = "---\nname: 'it''s'\ndescription: \"a \\\"b\\\"\"\nversion: 2 # note\nmetadata:\n  author: me\nallowed-tools:\n  - Read\n  - Bash\n---\n";
        let listed = json!({"name": "it's", "description": "a \"b\"", "version": 2, "metadata": {"author": "me"}, "allowed-tools": ["Read", "Bash"]});
        assert_eq!(matches(text, &listed), Ok(()));
        assert!(matches("---\nname: &a x\n---\n", &json!({"name": "x"})).is_err());
        assert!(matches("---\nname: x\ndescription: |\n  long\n---\n", &json!({"name": "x", "description": "long"})).is_err());
    }
}
