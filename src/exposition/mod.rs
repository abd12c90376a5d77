//! Exposition planning: which active tools go inline and which wait behind the meta-tools.
//!
//! Policy (SPEC 4, from the seed with two gates): `never` and approval-gated entries stay
//! inline; `always` is deferred; the `auto` pool is deferred all together when it has at least
//! `MIN_AUTO_DEFER_COUNT` entries AND costs more than the threshold (10% of the context window)
//! AND more than the meta-tools themselves (their definitions plus the prompt section, counted
//! with the same tokenizer). Host client tools without an entry are never deferred.
//! The output is a pure function of the input: same input, same bytes (bar the plan id).

pub mod meta_defs;
pub mod plans;

use crate::registry::{Defer, Registered};
use crate::tokenize::{self, CountCache, EncodingChoice};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const MIN_AUTO_DEFER_COUNT: usize = 5;
pub const DEFAULT_CONTEXT_WINDOW: i64 = 32_000;
pub const THRESHOLD_PERCENT: i64 = 10;

/// What goes into the model request for one tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolDefinition {
    /// The text whose tokens are counted: the definition as JSON, as providers receive it.
    pub fn counted_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Which gate decided the `auto` pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Gate {
    /// No `auto` entries.
    EmptyPool,
    /// Fewer than `MIN_AUTO_DEFER_COUNT` entries: stays inline.
    MinCount,
    /// Costs no more than the threshold: stays inline.
    Threshold,
    /// Costs no more than the meta-tools would: stays inline.
    MetaOverhead,
    /// Passed every gate: deferred.
    Passed,
}

/// Why one tool sits where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Reason {
    /// A host client tool without an entry.
    Client,
    /// `defer: never`.
    Never,
    /// Approval-gated: the host's approval flow must see the call.
    Approval,
    /// `defer: always`.
    Always,
    /// In the `auto` pool; the plan's gate decided.
    Auto,
    /// One of the meta-tools, added because something is deferred.
    Meta,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeferredRef {
    pub name: String,
    pub namespace: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceTokens {
    pub label: String,
    pub tools: usize,
    pub tokens: u64,
    pub deferred: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    /// Everything the model request carries as definitions (inline tools + meta-tools) plus the
    /// prompt section.
    pub inline: u64,
    /// Definitions kept out of the request.
    pub deferred: u64,
    pub threshold: u64,
    /// Meta-tool definitions plus the prompt section for this deferred pool.
    pub meta_overhead: u64,
    /// The `auto` pool's cost, whatever was decided.
    pub auto_pool: u64,
    pub context_window: i64,
    pub per_tool: BTreeMap<String, u32>,
    pub per_namespace: BTreeMap<String, NamespaceTokens>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Whether anything is deferred (and so the meta-tools are present).
    pub deferred: bool,
    pub gate: Gate,
}

/// A plan without its id (the server assigns one when it stores the plan's scope).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub tools: Vec<ToolDefinition>,
    pub deferred: Vec<DeferredRef>,
    pub system_prompt: Option<String>,
    pub encoding: EncodingChoice,
    pub tokens: Tokens,
    pub decision: Decision,
    /// Where each tool went and why, by name.
    pub placements: BTreeMap<String, Placement>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The entry's namespace; absent for client tools and meta-tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub reason: Reason,
    pub deferred: bool,
}

pub struct PlanInput<'a> {
    /// Active entries in registry order.
    pub active: &'a [Arc<Registered>],
    pub context_window: Option<i64>,
    pub model: Option<&'a str>,
    pub client_tools: &'a [ToolDefinition],
}

fn definition(r: &Registered) -> ToolDefinition {
    ToolDefinition {
        name: r.entry.name.clone(),
        description: r.entry.description.clone(),
        input_schema: r.entry.input_schema.clone(),
    }
}

/// Token count of an entry's definition, cached on the entry and by content.
pub fn entry_tokens(r: &Registered, enc: EncodingChoice) -> u32 {
    *r.tokens[enc.name as usize].get_or_init(|| {
        CountCache::global().get_or_count(r.content_hash, enc.name, || definition(r).counted_text())
    })
}

fn meta_overhead(enc: EncodingChoice, namespaces: &BTreeMap<String, usize>) -> (u64, String) {
    static DEFS: [std::sync::OnceLock<u64>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    let defs = *DEFS[enc.name as usize].get_or_init(|| {
        meta_defs::definitions().iter().map(|d| enc.name.count(&d.counted_text()) as u64).sum()
    });
    let prompt = meta_defs::prompt_section(namespaces);
    (defs + enc.name.count(&prompt) as u64, prompt)
}

pub fn plan(input: &PlanInput) -> Plan {
    let enc = tokenize::for_model(input.model);
    let context_window = match input.context_window {
        Some(n) if n > 0 => n,
        _ => DEFAULT_CONTEXT_WINDOW,
    };
    let threshold = (context_window * THRESHOLD_PERCENT / 100) as u64;

    // Client tools shadow entries of the same name: the host said what it sends.
    let client_names: std::collections::HashSet<&str> =
        input.client_tools.iter().map(|t| t.name.as_str()).collect();
    let entries: Vec<&Arc<Registered>> =
        input.active.iter().filter(|r| !client_names.contains(r.entry.name.as_str())).collect();

    let mut reasons: BTreeMap<String, Reason> = BTreeMap::new();
    let mut per_tool = BTreeMap::new();
    let mut auto_pool = Vec::new();
    let mut defer_now = Vec::new();
    for r in &entries {
        let e = &r.entry;
        per_tool.insert(e.name.clone(), entry_tokens(r, enc));
        let reason = match (e.approval, e.defer) {
            (true, _) => Reason::Approval,
            (false, Defer::Never) => Reason::Never,
            (false, Defer::Always) => {
                defer_now.push(*r);
                Reason::Always
            }
            (false, Defer::Auto) => {
                auto_pool.push(*r);
                Reason::Auto
            }
        };
        reasons.insert(e.name.clone(), reason);
    }
    for t in input.client_tools {
        per_tool.insert(t.name.clone(), enc.name.count(&t.counted_text()) as u32);
        reasons.insert(t.name.clone(), Reason::Client);
    }

    let pool_cost: u64 = auto_pool.iter().map(|r| per_tool[&r.entry.name] as u64).sum();
    let count_namespaces = |rs: &[&Arc<Registered>]| {
        let mut m = BTreeMap::new();
        for r in rs {
            *m.entry(r.entry.namespace_label().to_string()).or_insert(0usize) += 1;
        }
        m
    };
    let candidate: Vec<&Arc<Registered>> = defer_now.iter().chain(auto_pool.iter()).copied().collect();
    let (candidate_overhead, candidate_prompt) = meta_overhead(enc, &count_namespaces(&candidate));
    let gate = if auto_pool.is_empty() {
        Gate::EmptyPool
    } else if auto_pool.len() < MIN_AUTO_DEFER_COUNT {
        Gate::MinCount
    } else if pool_cost <= threshold {
        Gate::Threshold
    } else if pool_cost <= candidate_overhead {
        Gate::MetaOverhead
    } else {
        Gate::Passed
    };
    let passed = gate == Gate::Passed;
    if passed {
        defer_now.extend(auto_pool.iter().copied());
    }
    defer_now.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));

    let deferred_names: std::collections::HashSet<&str> =
        defer_now.iter().map(|r| r.entry.name.as_str()).collect();
    let mut tools: Vec<ToolDefinition> = input.client_tools.to_vec();
    tools.extend(entries.iter().filter(|r| !deferred_names.contains(r.entry.name.as_str())).map(|r| definition(r)));

    let (meta_cost, system_prompt) = if defer_now.is_empty() {
        (0, None)
    } else {
        // When the pool passed, the deferred set is the candidate set: reuse its count.
        let (cost, prompt) = if passed {
            (candidate_overhead, candidate_prompt)
        } else {
            meta_overhead(enc, &count_namespaces(&defer_now))
        };
        for d in meta_defs::definitions() {
            reasons.insert(d.name.clone(), Reason::Meta);
            tools.push(d);
        }
        (cost, Some(prompt))
    };

    let mut per_namespace: BTreeMap<String, NamespaceTokens> = BTreeMap::new();
    for r in &entries {
        let ns = per_namespace.entry(r.entry.namespace.clone()).or_insert_with(|| NamespaceTokens {
            label: r.entry.namespace_label().to_string(),
            tools: 0,
            tokens: 0,
            deferred: 0,
        });
        ns.tools += 1;
        ns.tokens += per_tool[&r.entry.name] as u64;
        ns.deferred += deferred_names.contains(r.entry.name.as_str()) as usize;
    }

    let mut placements: BTreeMap<String, Placement> = BTreeMap::new();
    for r in &entries {
        let name = &r.entry.name;
        placements.insert(
            name.clone(),
            Placement {
                namespace: Some(r.entry.namespace.clone()),
                reason: reasons[name],
                deferred: deferred_names.contains(name.as_str()),
            },
        );
    }
    for (name, reason) in &reasons {
        if matches!(reason, Reason::Client | Reason::Meta) {
            placements.insert(name.clone(), Placement { namespace: None, reason: *reason, deferred: false });
        }
    }
    let deferred_cost: u64 = defer_now.iter().map(|r| per_tool[&r.entry.name] as u64).sum();
    let inline_cost: u64 = per_tool.values().map(|n| *n as u64).sum::<u64>() - deferred_cost + meta_cost;
    Plan {
        tools,
        deferred: defer_now
            .iter()
            .map(|r| DeferredRef { name: r.entry.name.clone(), namespace: r.entry.namespace.clone() })
            .collect(),
        system_prompt,
        encoding: enc,
        tokens: Tokens {
            inline: inline_cost,
            deferred: deferred_cost,
            threshold,
            meta_overhead: if defer_now.is_empty() { candidate_overhead } else { meta_cost },
            auto_pool: pool_cost,
            context_window,
            per_tool,
            per_namespace,
        },
        decision: Decision { deferred: !defer_now.is_empty(), gate },
        placements,
    }
}
