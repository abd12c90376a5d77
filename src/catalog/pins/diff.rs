//! What changed between a tool's approved definition and its current one, for a person to
//! read in `catalog/pins`: which parts differ, the description before and after, the JSON
//! Pointers of the schema places that differ, and the approval hints that moved.

use std::collections::BTreeSet;

use serde_json::Value;

use super::PinDiff;
use crate::catalog::policy::ApprovalHints;
use crate::catalog::tool::McpTool;

/// A diff names at most this many schema paths: past that, "everything changed" is the news.
const MAX_PATHS: usize = 100;

/// What differs between two definitions of one tool.
pub fn diff(before: &McpTool, after: &McpTool) -> PinDiff {
    let mut paths = Vec::new();
    let null = Value::Null;
    value_paths(&before.input_schema, &after.input_schema, "/inputSchema", &mut paths);
    let (ob, oa) = (before.output_schema.as_ref().unwrap_or(&null), after.output_schema.as_ref().unwrap_or(&null));
    value_paths(ob, oa, "/outputSchema", &mut paths);
    let (input_changed, output_changed) = (before.input_schema != after.input_schema, ob != oa);
    let description_changed = before.description != after.description;
    let mut parts = Vec::new();
    if description_changed {
        parts.push("description");
    }
    if input_changed {
        parts.push("input schema");
    }
    if output_changed {
        parts.push("output schema");
    }
    let mut sentences = match parts.as_slice() {
        [] => Vec::new(),
        [one] => vec![format!("{one} differs")],
        [init @ .., last] => vec![format!("{} and {last} differ", init.join(", "))],
    };
    paths.truncate(MAX_PATHS);
    let (hb, ha) = (ApprovalHints::of(before), ApprovalHints::of(after));
    let show = |h: Option<bool>| h.map_or("absent".to_owned(), |b| b.to_string());
    for (name, b, a) in [("readOnlyHint", hb.read_only_hint, ha.read_only_hint), ("destructiveHint", hb.destructive_hint, ha.destructive_hint)] {
        if b != a {
            sentences.push(format!("{name} annotation went from {} to {}", show(b), show(a)));
            paths.push(format!("/annotations/{name}"));
        }
    }
    let summary = if sentences.is_empty() { "only the key order or formatting differs".to_owned() } else { sentences.join("; ") };
    PinDiff {
        summary,
        description_before: description_changed.then(|| before.description.clone()),
        description_after: description_changed.then(|| after.description.clone()),
        changed_paths: paths,
        hints_before: (hb != ha).then_some(hb),
        hints_after: (hb != ha).then_some(ha),
    }
}

fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// JSON Pointers of every place where `a` and `b` differ (added, removed, changed).
fn value_paths(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    if out.len() > MAX_PATHS || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = format!("{at}/{}", pointer_token(k));
                match (x.get(k), y.get(k)) {
                    (Some(va), Some(vb)) => value_paths(va, vb, &path, out),
                    _ => out.push(path),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let path = format!("{at}/{i}");
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => value_paths(va, vb, &path, out),
                    _ => out.push(path),
                }
            }
        }
        _ => out.push(at.to_owned()),
    }
}
