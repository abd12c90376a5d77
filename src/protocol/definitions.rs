//! `exposition/definitions` (issue 55): a plan's deferred definitions, for a host whose own
//! loop defers tools and loads what a search finds (the AI SDK's `toolSearch`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::exposition::definitions::{Definition, Definitions};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionsParams {
    /// The plan whose deferred tools are asked for (as `exposition/plan` answered it).
    pub plan_id: String,
    /// Only these tools (absent: every deferred tool of the plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// Include each `inputSchema` (default true); false: names and descriptions only, for a
    /// host that asks for the schemas of the tools it loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schemas: Option<bool>,
}
