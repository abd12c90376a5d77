//! Exposition planning: which active tools go inline and which wait behind the meta-tools.
//!
//! Policy (SPEC 4, from the seed with two gates): `never` and approval-gated entries stay
//! inline; `always` is deferred; the `auto` pool is deferred all together when it has at least
//! `MIN_AUTO_DEFER_COUNT` entries AND costs more than the threshold (10% of the context window)
//! AND more than the meta-tools themselves (their definitions plus the prompt section, counted
//! with the same tokenizer). Host client tools without an entry are never deferred.
//! Usage (issue 28): given `PlanInput::usage`, the most used deferred `auto` tools go inline,
//! most used first, up to a count and a token budget, each with its reason (`Reason::Usage`,
//! `Placement::note`). Approval-gated tools are inline anyway; `defer: always` stays deferred.
//! The user's message (issue 41): given `PlanInput::query`, the deferred `auto` tools that best
//! match it go inline too (`Reason::Query`), up to their own count, in what usage left of the
//! same budget. Models that never call `tool_search` still find the
//! tool the user asked for.
//! The output is a pure function of the input: same input, same bytes (bar the plan id).

pub mod definitions;
pub mod meta_defs;
pub mod native_media;
pub mod plans;
pub mod programmatic;
pub mod render;
pub mod render_gemini;
pub mod rendered_pool;
pub mod sessions;
pub mod strict;

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
/// Usage-driven tools: at most this many by default (Anthropic's guidance keeps three to five
/// of the most used tools non-deferred)...
pub const USAGE_MAX_TOOLS: usize = 5;
/// ...within this share of the context window by default (1,600 tokens at 32,000).
pub const USAGE_BUDGET_PERCENT: i64 = 5;

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
    /// In the deferred pool, but called often enough to stay inline (`note` says how often).
    Usage,
    /// Its results have a view the host renders (MCP Apps): the host must see the call.
    View,
    /// In the deferred pool, but among the best matches of the user's message (`query`).
    Query,
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
    /// Every tool's count; only with `include: ["perTool"]` (O(all tools)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_tool: Option<BTreeMap<String, u32>>,
    pub per_namespace: BTreeMap<String, NamespaceTokens>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Whether anything is deferred (and so the meta-tools are present).
    pub deferred: bool,
    pub gate: Gate,
}

/// Which tools a model request carries inline, which are deferred, and the figures behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub tools: Vec<ToolDefinition>,
    /// Every deferred tool; only with `include: ["deferred"]` (O(all tools)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Vec<DeferredRef>>,
    pub system_prompt: Option<String>,
    pub encoding: EncodingChoice,
    pub tokens: Tokens,
    pub decision: Decision,
    /// Where each tool went and why, by name: the tools the request carries, and the deferred
    /// ones too with `include: ["deferred"]`.
    pub placements: BTreeMap<String, Placement>,
}

/// The parts of a plan that grow with the whole pool, returned only on request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Include {
    /// `tokens.perTool`: every tool's count.
    PerTool,
    /// `deferred`, and the deferred tools' `placements`.
    Deferred,
}

impl Plan {
    /// The deferred tools' names (the full plan, before `lean`).
    pub fn deferred_names(&self) -> impl Iterator<Item = &str> {
        self.deferred.iter().flatten().map(|d| d.name.as_str())
    }

    /// Drops what `include` does not ask for, so the result is O(inline tools + namespaces).
    pub fn lean(&mut self, include: &[Include]) {
        if !include.contains(&Include::PerTool) {
            self.tokens.per_tool = None;
        }
        if !include.contains(&Include::Deferred) {
            self.deferred = None;
            self.placements.retain(|_, p| !p.deferred);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The entry's namespace; absent for client tools and meta-tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub reason: Reason,
    pub deferred: bool,
    /// Why, in words, where the reason alone does not say (`usage`: "called 14 times in 7 days").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// An MCP tool's view (MCP Apps): the host renders `resourceUri` for its results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<crate::apps::ToolUi>,
}

pub struct PlanInput<'a> {
    /// Active entries in registry order.
    pub active: &'a [Arc<Registered>],
    pub context_window: Option<i64>,
    pub model: Option<&'a str>,
    pub client_tools: &'a [ToolDefinition],
    /// Tools to place inline for their usage, most used first; `None`: usage plays no part.
    pub usage: Option<UsagePick<'a>>,
    /// The host renders MCP Apps views: tools with a view stay inline.
    pub views: bool,
    /// Deferred tools matching the user's message, best first; `None`: no query.
    pub query: Option<QueryPick<'a>>,
}

/// The query-driven part of a plan's input: how to find the deferred pool's matches.
pub struct QueryPick<'a> {
    /// The best matches among the pool's names, best first. Asked once, while planning, of the
    /// pool left deferred after usage took its tools (and only when the pool is deferred), so
    /// the policy runs once.
    pub matches: &'a dyn Fn(&[String]) -> Vec<sessions::Promote>,
    /// How many may go inline (the budget is usage's: `UsagePick::budget_tokens`, else
    /// `USAGE_BUDGET_PERCENT` of the context window).
    pub max_tools: usize,
}

/// The usage-driven part of a plan's input.
pub struct UsagePick<'a> {
    pub ranked: &'a [sessions::Promote],
    /// Default `USAGE_MAX_TOOLS`.
    pub max_tools: Option<usize>,
    /// Default `USAGE_BUDGET_PERCENT` of the context window.
    pub budget_tokens: Option<u64>,
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
        CountCache::global().get_or_count(enc.name, &definition(r).counted_text())
    })
}

/// Tokens of `text`, cached by content: prompt sections and rendered definitions are the same
/// for the same pool, request after request.
pub fn count_cached(enc: EncodingChoice, text: &str) -> u32 {
    CountCache::global().get_or_count(enc.name, text)
}

fn meta_overhead(enc: EncodingChoice, namespaces: &BTreeMap<&str, usize>) -> (u64, String) {
    static DEFS: [std::sync::OnceLock<u64>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    let defs = *DEFS[enc.name as usize].get_or_init(|| {
        meta_defs::definitions().iter().map(|d| enc.name.count(&d.counted_text()) as u64).sum()
    });
    let prompt = meta_defs::prompt_section(namespaces, meta_defs::Intro::Portable, enc);
    (defs + count_cached(enc, &prompt) as u64, prompt)
}

/// One active entry while planning.
struct Slot<'a> {
    r: &'a Registered,
    tokens: u32,
    reason: Reason,
    deferred: bool,
    note: Option<String>,
}

/// Counts per namespace label. Entries come in name order, so a server's tools are mostly
/// adjacent: runs are counted first and the map is touched once per run.
fn label_counts<'a>(slots: impl Iterator<Item = &'a Slot<'a>>) -> BTreeMap<&'a str, usize> {
    let mut m = BTreeMap::new();
    let mut run: Option<(&str, usize)> = None;
    for s in slots {
        let label = s.r.entry.namespace_label();
        match &mut run {
            Some((l, n)) if *l == label => *n += 1,
            _ => {
                if let Some((l, n)) = run.replace((label, 1)) {
                    *m.entry(l).or_insert(0usize) += n;
                }
            }
        }
    }
    if let Some((l, n)) = run {
        *m.entry(l).or_insert(0usize) += n;
    }
    m
}

/// Counts per namespace label of some entries (for a rendering's prompt section).
fn label_counts_of<'a>(entries: &[&'a crate::registry::ToolEntry]) -> BTreeMap<&'a str, usize> {
    let mut m = BTreeMap::new();
    for e in entries {
        *m.entry(e.namespace_label()).or_insert(0usize) += 1;
    }
    m
}

pub fn plan(input: &PlanInput) -> Plan {
    let enc = tokenize::for_model(input.model);
    let context_window = match input.context_window {
        Some(n) if n > 0 => n,
        _ => DEFAULT_CONTEXT_WINDOW,
    };
    // Any i64 the host sends: widened, so `i64::MAX` gives a threshold, not an overflow.
    let threshold = (i128::from(context_window) * i128::from(THRESHOLD_PERCENT) / 100) as u64;

    // Client tools shadow entries of the same name: the host said what it sends.
    let shadowed = |name: &str| input.client_tools.iter().any(|t| t.name == name);
    let mut slots: Vec<Slot> = input
        .active
        .iter()
        .filter(|r| input.client_tools.is_empty() || !shadowed(&r.entry.name))
        // A tool only its view may call is never the model's (MCP Apps visibility).
        .filter(|r| crate::apps::model_may_call(r.entry.ui.as_ref()))
        .map(|r| {
            let e = &r.entry;
            let view = input.views && crate::apps::has_view(e.ui.as_ref());
            let reason = match (e.approval, e.defer) {
                (true, _) => Reason::Approval,
                (false, _) if view => Reason::View,
                (false, Defer::Never) => Reason::Never,
                (false, Defer::Always) => Reason::Always,
                (false, Defer::Auto) => Reason::Auto,
            };
            Slot { r, tokens: entry_tokens(r, enc), reason, deferred: reason == Reason::Always, note: None }
        })
        .collect();

    let (pool_len, pool_cost) = slots
        .iter()
        .filter(|s| s.reason == Reason::Auto)
        .fold((0usize, 0u64), |(n, c), s| (n + 1, c + s.tokens as u64));
    let candidate = label_counts(slots.iter().filter(|s| matches!(s.reason, Reason::Always | Reason::Auto)));
    let (candidate_overhead, candidate_prompt) = meta_overhead(enc, &candidate);
    let gate = if pool_len == 0 {
        Gate::EmptyPool
    } else if pool_len < MIN_AUTO_DEFER_COUNT {
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
        for s in slots.iter_mut().filter(|s| s.reason == Reason::Auto) {
            s.deferred = true;
        }
    }
    let promoted = if passed { promote_all(&mut slots, input, context_window) } else { 0 };
    let any_deferred = slots.iter().any(|s| s.deferred);

    let client_tokens: Vec<u32> = input.client_tools.iter().map(|t| u32::try_from(enc.name.count(&t.counted_text())).unwrap_or(u32::MAX)).collect();
    let mut tools: Vec<ToolDefinition> = input.client_tools.to_vec();
    tools.extend(slots.iter().filter(|s| !s.deferred).map(|s| definition(s.r)));
    let (meta_cost, system_prompt) = if !any_deferred {
        (0, None)
    } else {
        // When the pool passed, the deferred set is the candidate set: reuse its count.
        let (cost, prompt) = if passed && promoted == 0 {
            (candidate_overhead, candidate_prompt)
        } else {
            meta_overhead(enc, &label_counts(slots.iter().filter(|s| s.deferred)))
        };
        tools.extend(meta_defs::definitions());
        (cost, Some(prompt))
    };

    // Outputs. Slots are in byte order of the name, so the maps are built from sorted input.
    let mut per_namespace: BTreeMap<String, NamespaceTokens> = BTreeMap::new();
    let mut last: Option<(&str, NamespaceTokens)> = None;
    let flush = |(k, v): (&str, NamespaceTokens), out: &mut BTreeMap<String, NamespaceTokens>| match out.get_mut(k) {
        Some(t) => {
            t.tools += v.tools;
            t.tokens += v.tokens;
            t.deferred += v.deferred;
        }
        None => {
            out.insert(k.to_string(), v);
        }
    };
    for s in &slots {
        let ns = s.r.entry.namespace.as_str();
        if last.as_ref().is_none_or(|(k, _)| *k != ns) {
            let fresh = NamespaceTokens { label: s.r.entry.namespace_label().to_string(), tools: 0, tokens: 0, deferred: 0 };
            if let Some(done) = last.replace((ns, fresh)) {
                flush(done, &mut per_namespace);
            }
        }
        let (_, t) = last.as_mut().expect("set above");
        t.tools += 1;
        t.tokens += s.tokens as u64;
        t.deferred += s.deferred as usize;
    }
    if let Some(done) = last {
        flush(done, &mut per_namespace);
    }

    let mut per_tool: BTreeMap<String, u32> = slots.iter().map(|s| (s.r.entry.name.clone(), s.tokens)).collect();
    let mut placements: BTreeMap<String, Placement> = slots
        .iter()
        .map(|s| {
            let (namespace, note, ui) = (Some(s.r.entry.namespace.clone()), s.note.clone(), s.r.entry.ui.clone());
            let p = Placement { namespace, reason: s.reason, deferred: s.deferred, note, ui };
            (s.r.entry.name.clone(), p)
        })
        .collect();
    for (t, n) in input.client_tools.iter().zip(&client_tokens) {
        per_tool.insert(t.name.clone(), *n);
        placements.insert(t.name.clone(), Placement { namespace: None, reason: Reason::Client, deferred: false, note: None, ui: None });
    }
    if any_deferred {
        for name in [meta_defs::SEARCH, meta_defs::INSPECT, meta_defs::INVOKE] {
            placements.insert(name.to_string(), Placement { namespace: None, reason: Reason::Meta, deferred: false, note: None, ui: None });
        }
    }

    let deferred_cost: u64 = slots.iter().filter(|s| s.deferred).map(|s| s.tokens as u64).sum();
    let all_cost: u64 = slots.iter().map(|s| s.tokens as u64).sum::<u64>() + client_tokens.iter().map(|n| *n as u64).sum::<u64>();
    Plan {
        tools,
        deferred: Some(
            slots
                .iter()
                .filter(|s| s.deferred)
                .map(|s| DeferredRef { name: s.r.entry.name.clone(), namespace: s.r.entry.namespace.clone() })
                .collect(),
        ),
        system_prompt,
        encoding: enc,
        tokens: Tokens {
            inline: all_cost - deferred_cost + meta_cost,
            deferred: deferred_cost,
            threshold,
            meta_overhead: if any_deferred { meta_cost } else { candidate_overhead },
            auto_pool: pool_cost,
            context_window,
            per_tool: Some(per_tool),
            per_namespace,
        },
        decision: Decision { deferred: any_deferred, gate },
        placements,
    }
}

/// The most used tools, then the query's matches, back inline, within one token budget: usage
/// first, so a session's usage-driven tools are the same whatever its messages ask. Returns
/// how many moved.
fn promote_all(slots: &mut [Slot<'_>], input: &PlanInput<'_>, context_window: i64) -> usize {
    let default = (i128::from(context_window) * i128::from(USAGE_BUDGET_PERCENT) / 100) as u64;
    // A session's fixed picks carry no budget (`u64::MAX`): the query's is the default then.
    let budget = match input.usage.as_ref().and_then(|u| u.budget_tokens) {
        Some(b) if b != u64::MAX => b,
        _ => default,
    };
    let mut moved = 0;
    let mut spent = 0u64;
    if let Some(u) = &input.usage {
        let mut left = u.budget_tokens.unwrap_or(default);
        let before = left;
        moved += promote(slots, u.ranked, u.max_tools.unwrap_or(USAGE_MAX_TOOLS), &mut left, Reason::Usage);
        spent = before - left;
    }
    if let Some(q) = input.query.as_ref().filter(|q| q.max_tools > 0) {
        let pool: Vec<String> = slots.iter().filter(|s| s.deferred).map(|s| s.r.entry.name.clone()).collect();
        if !pool.is_empty() {
            let ranked = (q.matches)(&pool);
            let mut left = budget.saturating_sub(spent);
            moved += promote(slots, &ranked, q.max_tools, &mut left, Reason::Query);
        }
    }
    moved
}

/// Moves the deferred `auto` tools `ranked` names back inline, in its order, while they fit
/// the count and what is `left` of the budget (a tool too large for it is skipped, the next
/// may fit). Returns how many moved.
fn promote(slots: &mut [Slot<'_>], ranked: &[sessions::Promote], max: usize, left: &mut u64, reason: Reason) -> usize {
    let rank: std::collections::HashMap<&str, usize> = ranked.iter().enumerate().map(|(i, p)| (p.name.as_str(), i)).collect();
    let mut found: Vec<(usize, usize)> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.deferred && s.reason == Reason::Auto)
        .filter_map(|(i, s)| rank.get(s.r.entry.name.as_str()).map(|r| (*r, i)))
        .collect();
    found.sort_unstable();
    let mut moved = 0usize;
    for (r, i) in found {
        if moved >= max {
            break;
        }
        let s = &mut slots[i];
        let cost = u64::from(s.tokens);
        if cost > *left {
            continue;
        }
        *left -= cost;
        moved += 1;
        s.deferred = false;
        s.reason = reason;
        s.note = Some(ranked[r].note.clone());
    }
    moved
}

#[cfg(test)]
#[path = "query_tests.rs"]
mod query_tests;
