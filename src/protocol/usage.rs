//! `usage/list`, `usage/reset`, and `exposition/plan`'s `usage` (issue 28; SPEC 10).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `usage/list` and `usage/reset`: one usage key, or (absent) every key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageKeyParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_key: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageListResult {
    /// A call's weight halves in this many days.
    pub half_life_days: u32,
    /// `callsInWindow` counts the last this many days.
    pub window_days: u32,
    pub keys: Vec<UsageKeyListing>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageKeyListing {
    pub usage_key: String,
    /// Most used first.
    pub tools: Vec<ToolUsage>,
}

/// One tool's usage: its name and counts, nothing of its calls' arguments or results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolUsage {
    pub name: String,
    /// Calls, each weighted by its age (half-life `halfLifeDays`).
    pub count: f64,
    /// RFC 3339, UTC.
    pub last_used: String,
    pub calls_in_window: u32,
    /// Of those, calls of a deferred tool that `tool_search` had returned.
    pub searched_in_window: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageResetResult {
    /// The usage keys cleared.
    pub cleared: Vec<String>,
}

/// `debug/usageClock` (test hook): move usage's clock forward, so decay can be replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DebugUsageClockParams {
    pub advance_secs: i64,
}
