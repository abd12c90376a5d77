//! What a server's configuration says about its tools' safety: whether a changed tool is held
//! (`Trust`, enforced by `pins.rs`), which calls wait for the user (`ApprovalPolicy`), and the
//! annotations such a decision may rest on (`ApprovalHints`). Wire types, embedded in
//! `ServerConfig` and `catalog/pins`; a leaf, so `config.rs` and `pins.rs` both read it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tool::McpTool;

/// `pinned`: changed and new tools are held until approved (the default). `auto`: every list
/// is approved as it comes.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    #[default]
    Pinned,
    Auto,
}

/// `listed` (default): only `approvalTools` ask. `destructive`: every tool asks unless it
/// declares `readOnlyHint: true` (by the MCP spec a tool without annotations is destructive and
/// open-world). `always`: every tool asks. `approvalTools` ask under every policy.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalPolicy {
    #[default]
    Listed,
    Destructive,
    Always,
}

impl ApprovalPolicy {
    /// Whether a call to `tool` waits for the user. `annotations`: the tool's as its server lists
    /// it now; a tool the list no longer has counts as unannotated (destructive).
    pub fn asks(self, approval_tools: &[String], tool: &str, annotations: Option<&Value>) -> bool {
        if !self.reads_hints(approval_tools, tool) {
            return self == ApprovalPolicy::Always || approval_tools.iter().any(|t| crate::invisible::names(t, tool));
        }
        // Annotations are hints: only an explicit read-only one spares a tool the question.
        ApprovalHints::from_annotations(annotations).read_only_hint != Some(true)
    }

    /// Whether `asks` for `tool` depends on its `ApprovalHints`: then the hints are part of what
    /// the user approved, and a change that would spare the tool the question holds it
    /// (`pins.rs`). `asks` reads them exactly in this case.
    pub fn reads_hints(self, approval_tools: &[String], tool: &str) -> bool {
        self == ApprovalPolicy::Destructive && !approval_tools.iter().any(|t| crate::invisible::names(t, tool))
    }
}

/// The annotations an approval decision may rest on, as a tool declares them (MCP
/// `ToolAnnotations`); a value that is not a boolean counts as absent. Absent `readOnlyHint`
/// means false and absent `destructiveHint` means true (MCP spec).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
}

impl ApprovalHints {
    pub fn from_annotations(annotations: Option<&Value>) -> Self {
        let hint = |name: &str| annotations.and_then(|a| a.get(name)).and_then(Value::as_bool);
        ApprovalHints { read_only_hint: hint("readOnlyHint"), destructive_hint: hint("destructiveHint") }
    }

    pub fn of(tool: &McpTool) -> Self {
        Self::from_annotations(tool.annotations.as_ref())
    }

    /// Whether going from `self` to `after` makes the tool look safer, and so could spare it a
    /// question: `readOnlyHint` from not-true to true, or `destructiveHint` from not-false to
    /// false. Both hints count, whatever a policy reads today: pinning more than a decision uses
    /// fails closed. The other direction only adds questions.
    pub fn relaxed_by(self, after: ApprovalHints) -> bool {
        (self.read_only_hint != Some(true) && after.read_only_hint == Some(true))
            || (self.destructive_hint != Some(false) && after.destructive_hint == Some(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value a hint can take: absent, true, false, and not a boolean.
    fn all_hints() -> Vec<Option<Value>> {
        let values = [None, Some(Value::Bool(true)), Some(Value::Bool(false)), Some(Value::from("yes"))];
        let mut out = vec![None];
        for r in &values {
            for d in &values {
                let mut a = serde_json::Map::new();
                a.extend(r.clone().map(|v| ("readOnlyHint".to_owned(), v)));
                a.extend(d.clone().map(|v| ("destructiveHint".to_owned(), v)));
                a.insert("title".into(), "T".into());
                out.push(Some(Value::Object(a)));
            }
        }
        out
    }

    #[test]
    fn hints_bear_exactly_where_asks_reads_them_and_every_spared_question_is_a_relaxation() {
        let listed = vec!["gated".to_string()];
        for policy in [ApprovalPolicy::Listed, ApprovalPolicy::Destructive, ApprovalPolicy::Always] {
            for tool in ["gated", "other"] {
                for before in all_hints() {
                    for after in all_hints() {
                        let (b, a) = (before.as_ref(), after.as_ref());
                        let (asked, asks) = (policy.asks(&listed, tool, b), policy.asks(&listed, tool, a));
                        if !policy.reads_hints(&listed, tool) {
                            assert_eq!(asked, asks, "{policy:?} {tool}: hints must not matter");
                        }
                        if asked && !asks {
                            let (hb, ha) = (ApprovalHints::from_annotations(b), ApprovalHints::from_annotations(a));
                            assert!(hb.relaxed_by(ha), "{policy:?} {tool}: {b:?} -> {a:?} spares a question");
                        }
                    }
                }
            }
        }
        assert!(ApprovalPolicy::Destructive.asks(&listed, "gated", Some(&serde_json::json!({"readOnlyHint": true}))));
        assert!(!ApprovalPolicy::Destructive.asks(&listed, "other", Some(&serde_json::json!({"readOnlyHint": true}))));
        assert!(ApprovalPolicy::Destructive.asks(&listed, "other", Some(&serde_json::json!({"readOnlyHint": "true"}))));
        let h = |r: Option<bool>, d: Option<bool>| ApprovalHints { read_only_hint: r, destructive_hint: d };
        // Relaxations: towards read-only, towards non-destructive (absent means destructive).
        assert!(h(None, None).relaxed_by(h(Some(true), None)));
        assert!(h(Some(false), None).relaxed_by(h(Some(true), None)));
        assert!(h(None, None).relaxed_by(h(None, Some(false))));
        assert!(h(None, Some(true)).relaxed_by(h(None, Some(false))));
        // Tightenings and no-ops: a hint dropped, readOnlyHint turning false, destructiveHint true.
        assert!(!h(Some(true), Some(false)).relaxed_by(h(None, None)));
        assert!(!h(Some(true), None).relaxed_by(h(Some(false), None)));
        assert!(!h(None, Some(false)).relaxed_by(h(None, Some(true))));
        assert!(!h(Some(true), Some(false)).relaxed_by(h(Some(true), Some(false))));
    }
}
