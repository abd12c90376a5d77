//! A plan's deferred definitions for a host whose own loop defers tools (issue 55): the AI
//! SDK's `toolSearch` needs every deferred tool in `tools` from the start, to load the ones its
//! search finds on the next step. The search itself stays toolreg's (`tool_search` under the
//! plan); this only hands over what the plan deferred.
//!
//! A pool of thousands of tools stays cheap: `schemas: false` gives names and descriptions only
//! (what must be there up front), and the host asks for the schemas of the few it loads.

use super::meta_defs::{self, Intro, SEARCH};
use super::plans::PlanScope;
use crate::registry::Registry;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One deferred tool as a portable plan would carry it; `inputSchema` absent when not asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
}

/// `exposition/definitions`' answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Definitions {
    /// The plan's deferred tools (all, or the ones named), in name order.
    pub tools: Vec<Definition>,
    /// Without `names`: the `<DEFERRED_TOOLS>` section for a search that loads what it finds
    /// (the model calls found tools directly; `tool_search` is the search tool's name); null
    /// when nothing is deferred or names were given.
    pub system_prompt: Option<String>,
    /// Names asked for that are not deferred tools of the plan (or no longer registered).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// The deferred tools of `plan` found in `registry`: all of them, or those in `names`.
pub fn definitions(plan: &PlanScope, registry: &Registry, names: Option<&[String]>, schemas: bool) -> Definitions {
    let mut out = Definitions::default();
    let wanted: Vec<&str> = match names {
        Some(names) => {
            let mut n: Vec<&str> = names.iter().map(String::as_str).collect();
            n.sort_unstable();
            n.dedup();
            n
        }
        None => plan.deferred.iter().map(String::as_str).collect(),
    };
    let mut labels: BTreeMap<&str, usize> = BTreeMap::new();
    for name in wanted {
        match registry.get(name).filter(|_| plan.deferred.contains(name)) {
            Some(r) => {
                if names.is_none() {
                    *labels.entry(r.entry.namespace_label()).or_insert(0) += 1;
                }
                let input_schema = schemas.then(|| r.entry.input_schema.clone());
                out.tools.push(Definition { name: name.to_string(), description: r.entry.description.clone(), input_schema });
            }
            None => out.missing.push(name.to_string()),
        }
    }
    if names.is_none() && !labels.is_empty() {
        out.system_prompt = Some(meta_defs::prompt_section(&labels, Intro::Native(SEARCH), plan.encoding));
    }
    out
}
