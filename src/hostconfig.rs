//! A host's tool setup as one JSON file, for `toolreg plan`: the MCP servers with their last
//! cached tool lists, the host's own entries, the scope, and the model. It lets a person see
//! the plan a host would get without writing a host.

use crate::service::{Budget, Gate, Overrides, Plan, PlanAsk, Planned, Reason, Registry, Service, Snapshot, ToolEntry, Warning};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostConfig {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub context_window: Option<i64>,
    #[serde(default)]
    pub scope: Value,
    #[serde(default)]
    pub entries: Vec<ToolEntry>,
    #[serde(default)]
    pub servers: Vec<ServerSnapshot>,
    /// The same `search` as `toolreg mcp` takes: `toolreg plan` says what it would use.
    #[serde(default)]
    pub search: Option<crate::settings::SearchSettings>,
    /// The token budget of one tool result, as `initialize.results` takes it (`toolreg plan`
    /// shows it; `toolreg mcp` reads it here or in its `gateway` block).
    #[serde(default)]
    pub results: Option<crate::settings::ResultSettings>,
    /// The part of a gateway's `gateway` block that changes what the plan shows: its
    /// `overrides` (`toolreg plan` shows the overridden view).
    #[serde(default)]
    pub gateway: GatewayView,
}

/// `gateway.overrides`, as `toolreg plan` reads them.
#[derive(Debug, Default, Deserialize)]
pub struct GatewayView {
    #[serde(default)]
    pub overrides: Overrides,
}

/// A configured MCP server plus its cached tool list.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSnapshot {
    pub id: String,
    pub name: String,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub approval_tools: Vec<String>,
    #[serde(default)]
    pub approval: crate::catalog::ApprovalPolicy,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    #[serde(default)]
    /// The server's tools as its `tools/list` gave them.
    pub tools: Vec<crate::catalog::McpTool>,
}

fn yes() -> bool {
    true
}

impl HostConfig {
    /// The registry the file describes: its entries, and its servers' tools named and
    /// overridden as the gateway's sync names them (`Service::snapshot_registry`).
    pub fn registry(&self) -> Result<Registry, String> {
        let servers: Vec<Snapshot> = self
            .servers
            .iter()
            .map(|s| Snapshot {
                id: &s.id,
                name: &s.name,
                enabled: s.enabled,
                approval: s.approval,
                approval_tools: &s.approval_tools,
                disabled_tools: &s.disabled_tools,
                tools: &s.tools,
            })
            .collect();
        Service::snapshot_registry(self.entries.clone(), &servers, &self.gateway.overrides)
    }

    /// The plan a host would get for the file's scope (`Service::plan`, with the file's result
    /// budget: `tool_result_read` is offered when it is on).
    pub fn plan(&self, context_window: Option<i64>, model: Option<&str>) -> Result<(Plan, Vec<Warning>), String> {
        let reg = self.registry()?;
        let model = model.or(self.model.as_deref());
        let service = Service::new(Registry::default(), "plan-");
        service.set_budget(self.budget()?, model);
        let ask = PlanAsk {
            scope: &self.scope,
            context_window: context_window.or(self.context_window),
            model,
            client_tools: &[],
            usage: None,
            code: None,
            views: false,
            query: None,
        };
        let Planned { plan, warnings, .. } = service.plan(&reg, &ask);
        Ok((plan, warnings))
    }

    /// The result budget `results` sets (default 25,000 tokens), or why it is refused.
    pub fn budget(&self) -> Result<Budget, String> {
        match &self.results {
            Some(r) => r.budget().map_err(|(field, why)| format!("results.{field} {why}")),
            None => Ok(Budget::default()),
        }
    }
}

/// The result budget in words, for the line below the table.
pub fn budget_line(budget: Budget) -> String {
    if !budget.is_on() {
        return "tool results: no token budget (results.maxTokens 0): every result reaches the model whole".into();
    }
    format!(
        "tool results: at most {} tokens each reach the model (results.maxTokens); the rest of a longer one is kept ({} MiB at most, results.keepBytes) and read by page with tool_result_read",
        budget.max_tokens,
        budget.keep_bytes >> 20
    )
}

fn reason_text(r: Reason, plan: &Plan) -> String {
    match r {
        Reason::Auto => format!("auto: {}", gate_text(plan)),
        Reason::Client => "client tool".into(),
        Reason::Never => "defer: never".into(),
        Reason::Approval => "approval-gated".into(),
        Reason::Always => "defer: always".into(),
        Reason::Meta => "meta-tool".into(),
        Reason::Usage => "usage".into(),
        Reason::Query => "matches the query".into(),
        Reason::View => "has a view (MCP Apps)".into(),
    }
}

fn gate_text(plan: &Plan) -> &'static str {
    match plan.decision.gate {
        Gate::EmptyPool => "no auto pool",
        Gate::MinCount => "pool under 5 tools",
        Gate::Threshold => "pool under threshold",
        Gate::MetaOverhead => "pool cheaper than meta-tools",
        Gate::Passed => "all gates passed",
    }
}

/// The plan as a table a person can read: one row per namespace.
pub fn render_table(plan: &Plan, model: Option<&str>) -> String {
    let mut why: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for p in plan.placements.values() {
        if let Some(ns) = &p.namespace {
            why.entry(ns.as_str()).or_default().insert(reason_text(p.reason, plan));
        }
    }
    let t = &plan.tokens;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "model {}  encoding {} ({})  context window {}  threshold {} tokens\n",
        model.unwrap_or("(none)"),
        plan.encoding.name.name(),
        if plan.encoding.exact { "exact" } else { "proxy" },
        t.context_window,
        t.threshold
    );
    let _ = writeln!(out, "{:<24} {:>6} {:>9}  {:<20} DECIDED BY", "NAMESPACE", "TOOLS", "TOKENS", "PLACEMENT");
    for (ns, nt) in &t.per_namespace {
        let placement = match nt.deferred {
            0 => "inline".to_string(),
            d if d == nt.tools => "deferred".to_string(),
            d => format!("{d} of {} deferred", nt.tools),
        };
        let reasons: Vec<&str> = why.get(ns.as_str()).into_iter().flatten().map(String::as_str).collect();
        let _ = writeln!(out, "{:<24} {:>6} {:>9}  {:<20} {}", nt.label, nt.tools, nt.tokens, placement, reasons.join(", "));
    }
    let _ = writeln!(
        out,
        "\nauto pool {} tokens vs threshold {} and meta-tools + prompt section {}: {}",
        t.auto_pool,
        t.threshold,
        t.meta_overhead,
        gate_text(plan)
    );
    let _ = writeln!(
        out,
        "the request carries {} tool definitions ({} tokens); {} tools ({} tokens) wait behind tool_search",
        plan.tools.len(),
        t.inline,
        plan.deferred_names().count(),
        t.deferred
    );
    out
}
