//! Declarative `applies` predicates over the request scope.
//!
//! A predicate is data, not code, so the host can send it over the wire and every platform
//! evaluates it the same way. Evaluation either answers a boolean or says why it could not
//! (a missing field, a wrong type); the caller turns the latter into "inactive + warning".

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `{"flag": "enableWebSearch"}` (a boolean setting is true), `{"nonEmpty": "knowledgeBaseIds"}`
/// (a list has items), `{"member": "mcpToolIds"}` (the entry's own name is in that list;
/// `contains` is an alias), and the combinators `all`, `any`, `not`.
///
/// Paths are looked up in `scope.settings` first, then at the top level of the scope; a dotted
/// path (`"settings.enableWebSearch"`) walks objects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Predicate {
    Flag(String),
    NonEmpty(String),
    #[serde(alias = "contains")]
    Member(String),
    All(Vec<Predicate>),
    Any(Vec<Predicate>),
    Not(Box<Predicate>),
}

fn lookup<'a>(scope: &'a Value, path: &str) -> Option<&'a Value> {
    let walk = |root: &'a Value| {
        path.split('.').try_fold(root, |v, key| v.as_object()?.get(key))
    };
    scope.get("settings").and_then(walk).or_else(|| walk(scope))
}

impl Predicate {
    /// `Err` carries a short reason the host can read.
    pub fn eval(&self, scope: &Value, entry_name: &str) -> Result<bool, String> {
        match self {
            Predicate::Flag(path) => match lookup(scope, path) {
                Some(Value::Bool(b)) => Ok(*b),
                Some(other) => Err(format!("flag {path:?} is {}, not a boolean", kind(other))),
                None => Err(format!("scope has no setting {path:?}")),
            },
            Predicate::NonEmpty(path) => match lookup(scope, path) {
                Some(Value::Array(a)) => Ok(!a.is_empty()),
                Some(other) => Err(format!("{path:?} is {}, not a list", kind(other))),
                None => Err(format!("scope has no list {path:?}")),
            },
            Predicate::Member(path) => match lookup(scope, path) {
                Some(Value::Array(a)) => Ok(a.iter().any(|v| v.as_str() == Some(entry_name))),
                Some(other) => Err(format!("{path:?} is {}, not a list", kind(other))),
                None => Err(format!("scope has no list {path:?}")),
            },
            // Three-valued, as in SQL: one false branch decides `all` and one true branch decides
            // `any`, whatever the others say; otherwise the first branch that could not be
            // evaluated is the answer.
            Predicate::All(ps) => decide(ps, scope, entry_name, false),
            Predicate::Any(ps) => decide(ps, scope, entry_name, true),
            Predicate::Not(p) => Ok(!p.eval(scope, entry_name)?),
        }
    }
}

/// `all` (`decisive` = false) or `any` (`decisive` = true) over `ps`.
fn decide(ps: &[Predicate], scope: &Value, entry_name: &str, decisive: bool) -> Result<bool, String> {
    let mut first_err = None;
    for p in ps {
        match p.eval(scope, entry_name) {
            Ok(b) if b == decisive => return Ok(decisive),
            Ok(_) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    first_err.map_or(Ok(!decisive), Err)
}

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Predicate {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn flag_reads_settings_then_top_level() {
        let scope = json!({"settings": {"enableWebSearch": true}, "beta": false});
        assert_eq!(p(json!({"flag": "enableWebSearch"})).eval(&scope, "x"), Ok(true));
        assert_eq!(p(json!({"flag": "beta"})).eval(&scope, "x"), Ok(false));
        assert!(p(json!({"flag": "missing"})).eval(&scope, "x").is_err());
        let bad = json!({"settings": {"enableWebSearch": "yes"}});
        assert_eq!(
            p(json!({"flag": "enableWebSearch"})).eval(&bad, "x"),
            Err("flag \"enableWebSearch\" is a string, not a boolean".into())
        );
    }

    #[test]
    fn lists_and_combinators() {
        let scope = json!({"knowledgeBaseIds": ["kb1"], "mcpToolIds": ["a", "b"], "empty": []});
        assert_eq!(p(json!({"nonEmpty": "knowledgeBaseIds"})).eval(&scope, "x"), Ok(true));
        assert_eq!(p(json!({"nonEmpty": "empty"})).eval(&scope, "x"), Ok(false));
        assert_eq!(p(json!({"member": "mcpToolIds"})).eval(&scope, "b"), Ok(true));
        assert_eq!(p(json!({"contains": "mcpToolIds"})).eval(&scope, "c"), Ok(false));
        let all = p(json!({"all": [{"nonEmpty": "knowledgeBaseIds"}, {"not": {"member": "mcpToolIds"}}]}));
        assert_eq!(all.eval(&scope, "c"), Ok(true));
        assert_eq!(all.eval(&scope, "a"), Ok(false));
        let any = p(json!({"any": [{"nonEmpty": "empty"}, {"member": "mcpToolIds"}]}));
        assert_eq!(any.eval(&scope, "a"), Ok(true));
        assert_eq!(p(json!({"all": []})).eval(&scope, "a"), Ok(true));
        assert_eq!(p(json!({"any": []})).eval(&scope, "a"), Ok(false));
    }

    #[test]
    fn a_deciding_branch_wins_over_an_unknown_one() {
        let scope = json!({"mcpToolIds": ["a"], "settings": {"on": true, "off": false}});
        let any = p(json!({"any": [{"flag": "missing"}, {"member": "mcpToolIds"}]}));
        assert_eq!(any.eval(&scope, "a"), Ok(true));
        assert_eq!(any.eval(&scope, "b"), Err("scope has no setting \"missing\"".into()));
        let all = p(json!({"all": [{"flag": "missing"}, {"flag": "off"}]}));
        assert_eq!(all.eval(&scope, "a"), Ok(false));
        let all = p(json!({"all": [{"flag": "on"}, {"flag": "missing"}, {"flag": "alsoMissing"}]}));
        assert_eq!(all.eval(&scope, "a"), Err("scope has no setting \"missing\"".into()));
        let any = p(json!({"any": [{"flag": "off"}, {"nonEmpty": "settings"}]}));
        assert_eq!(any.eval(&scope, "a"), Err("\"settings\" is an object, not a list".into()));
    }

    #[test]
    fn dotted_paths_walk_objects() {
        let scope = json!({"assistant": {"flags": {"x": true}}});
        assert_eq!(p(json!({"flag": "assistant.flags.x"})).eval(&scope, "n"), Ok(true));
    }
}
