//! A host's tool setup as one JSON file, for `toolreg plan`: the MCP servers with their last
//! cached tool lists, the host's own entries, the scope, and the model. It lets a person see
//! the plan a host would get without writing a host.

use crate::exposition::{self, Plan, PlanInput, Reason};
use crate::registry::mcp::ToolId;
use crate::registry::{Registry, Warning};
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
    pub entries: Vec<crate::registry::ToolEntry>,
    #[serde(default)]
    pub servers: Vec<ServerSnapshot>,
    /// The same `search` as `toolreg mcp` takes: `toolreg plan` says what it would use.
    #[serde(default)]
    pub search: Option<crate::settings::SearchSettings>,
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
    pub fn registry(&self) -> Result<Registry, String> {
        let mut reg = Registry::with_builtins();
        reg.register(self.entries.clone()).map_err(|e| e.to_string())?;
        // Named all at once, as `registry/syncMcp` names them.
        let tools: Vec<(&ServerSnapshot, &crate::catalog::McpTool)> = self
            .servers
            .iter()
            .filter(|s| s.enabled)
            .flat_map(|s| s.tools.iter().filter(|t| !s.disabled_tools.iter().any(|d| crate::registry::hidden::names(d, &t.name))).map(move |t| (s, t)))
            .collect();
        let ids: Vec<ToolId> =
            tools.iter().map(|(s, t)| ToolId { server_id: &s.id, server_name: &s.name, tool_name: &t.name }).collect();
        let names = reg.mcp_wire_names(&ids);
        for ((s, t), wire) in tools.into_iter().zip(names) {
            let approval = s.approval.asks(&s.approval_tools, &t.name, t.annotations.as_ref());
            reg.insert(crate::sync::mcp_entry(&s.id, &s.name, approval, t, wire));
        }
        Ok(reg)
    }

    pub fn plan(&self, context_window: Option<i64>, model: Option<&str>) -> Result<(Plan, Vec<Warning>), String> {
        let reg = self.registry()?;
        let (active, warnings) = reg.select_active(&self.scope);
        let plan = exposition::plan(&PlanInput {
            active: &active,
            context_window: context_window.or(self.context_window),
            model: model.or(self.model.as_deref()),
            client_tools: &[],
            usage: None,
            views: false,
            query: None,
        });
        Ok((plan, warnings))
    }
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
    use exposition::Gate::*;
    match plan.decision.gate {
        EmptyPool => "no auto pool",
        MinCount => "pool under 5 tools",
        Threshold => "pool under threshold",
        MetaOverhead => "pool cheaper than meta-tools",
        Passed => "all gates passed",
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
