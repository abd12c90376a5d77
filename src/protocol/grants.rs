//! `approval/grants` and `approval/revoke`: the approvals the user asked to remember
//! (`approval/respond`'s `remember`; issue 54).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::approval::{Grant, Lasts, Remember};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantsResult {
    /// The session grants of this run, then the lasting ones (`cacheDir`'s store, shared by its processes).
    pub grants: Vec<Grant>,
}

/// `approval/revoke`: one tool's grants (every session's and the lasting one), or all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokeParams {
    /// The tool's name as calls name it (as `approval/grants` lists it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokeResult {
    /// How many grants were revoked.
    pub revoked: u64,
}
