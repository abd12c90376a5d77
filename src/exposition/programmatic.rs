//! Programmatic tool calling (issue 27): which of a plan's tools code the provider runs may call
//! (Anthropic's code execution tool, OpenAI's programmatic tool calling), and that tool itself.
//! `render` marks them (`allowed_callers`); approval-gated tools, the host's client tools and
//! the meta-tools are never marked: code the provider runs would call a gated tool out of the
//! user's sight.

use super::render::Rendering;
use super::{Plan, Reason, ToolDefinition};
use crate::registry::Registered;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// `exposition/plan`'s `programmatic`: the plan's tools may also be called by code the provider
/// runs (Anthropic's code execution tool, OpenAI's programmatic tool calling). Approval-gated
/// tools, the host's client tools and the meta-tools are never marked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Programmatic {
    /// Anthropic: the code execution tool whose code calls the tools; the rendering adds it
    /// (default `code_execution_20250825`). OpenAI has one caller, `programmatic`, and one tool,
    /// `programmatic_tool_calling`: this field does not apply there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_execution: Option<CodeExecution>,
    /// Whether the model may still call the marked tools directly (default true). Anthropic
    /// advises one caller per tool: `false` leaves them to code alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
}

/// An Anthropic code execution tool that can call client tools (`allowed_callers`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum CodeExecution {
    #[default]
    #[serde(rename = "code_execution_20250825")]
    V20250825,
    /// Adds REPL state that persists across requests reusing the container.
    #[serde(rename = "code_execution_20260120")]
    V20260120,
    #[serde(rename = "code_execution_20260521")]
    V20260521,
}

impl CodeExecution {
    pub fn tool_type(self) -> &'static str {
        match self {
            CodeExecution::V20250825 => "code_execution_20250825",
            CodeExecution::V20260120 => "code_execution_20260120",
            CodeExecution::V20260521 => "code_execution_20260521",
        }
    }
}

/// The name of Anthropic's code execution tool (every version).
pub const ANTHROPIC_CODE_EXECUTION: &str = "code_execution";

impl Programmatic {
    /// `allowed_callers` of a marked tool in `rendering`.
    pub fn callers(&self, rendering: Rendering) -> Vec<&'static str> {
        let code = match rendering {
            Rendering::Anthropic => self.code_execution.unwrap_or_default().tool_type(),
            _ => "programmatic",
        };
        if self.direct.unwrap_or(true) { vec!["direct", code] } else { vec![code] }
    }

    /// The provider's tool that runs the code, for `tools`.
    pub(super) fn tool(&self, rendering: Rendering) -> Value {
        match rendering {
            Rendering::Anthropic => json!({"type": self.code_execution.unwrap_or_default().tool_type(), "name": ANTHROPIC_CODE_EXECUTION}),
            _ => json!({"type": "programmatic_tool_calling"}),
        }
    }
}

/// What `render` marks for the provider's programmatic callers.
pub struct Marking<'a> {
    pub programmatic: Programmatic,
    /// Whether a listed registered tool asks the user's approval now (its entry, or its MCP
    /// server's current rules): such a tool is never marked. Deferred tools are never gated
    /// (the policy keeps gated ones inline); their entries' `approval` is checked all the same.
    pub gated: &'a dyn Fn(&Registered) -> bool,
}

/// The inline tools code may call: registered ones (not the host's client tools, not the
/// meta-tools) that no approval gates.
pub(super) fn marked_inline<'a>(plan: &Plan, active: &'a [Arc<Registered>], inline: &[ToolDefinition], m: &Marking) -> BTreeSet<&'a str> {
    let registered = |reason: Reason| matches!(reason, Reason::Never | Reason::Always | Reason::Auto | Reason::Usage | Reason::Query | Reason::View);
    let listed: BTreeSet<&str> = inline
        .iter()
        .filter(|d| plan.placements.get(&d.name).is_some_and(|p| registered(p.reason)))
        .map(|d| d.name.as_str())
        .collect();
    active
        .iter()
        .filter(|r| listed.contains(r.entry.name.as_str()) && !r.entry.approval && !(m.gated)(&***r))
        .map(|r| r.entry.name.as_str())
        .collect()
}
