//! The meta-tools: `tool_search`, `tool_inspect`, `tool_invoke`, run inside the sidecar.
//!
//! Each call is scoped to a plan (its deferred pool and inspect ledger, shared by the steps of
//! one request). They refuse what the plan does not allow, never run an approval-gated tool
//! ("call it directly"), and answer an uninspected tool or bad params with its signature so
//! the model can retry.

pub mod inspect;
pub mod search;
pub mod search_text;

use crate::exposition::meta_defs::{INSPECT, INVOKE, SEARCH};
use crate::exposition::plans::PlanScope;
use crate::invoke::{Call, HostPort, InvokeError, Invoked, Invoker, McpPort, Prepared};
use crate::registry::{Registry, Source};
use search::{SearchDoc, SearchIndex};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 50;

pub fn is_meta(name: &str) -> bool {
    matches!(name, SEARCH | INSPECT | INVOKE)
}

/// The search index over a plan's deferred pool, built on first use and kept with the plan.
pub struct PlanIndex {
    pub names: Vec<String>,
    pub index: SearchIndex,
}

impl std::fmt::Debug for PlanIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlanIndex({} tools)", self.names.len())
    }
}

/// Indexes by content: consecutive requests usually defer the same pool, so they share one
/// index instead of building it again (~60 ms at 2,422 tools). A few are kept.
const INDEX_CACHE: usize = 8;

fn build_index(entries: &[&Arc<crate::registry::Registered>]) -> PlanIndex {
    let docs: Vec<SearchDoc> = entries
        .iter()
        .map(|r| {
            let e = &r.entry;
            let (server, raw) = match &e.source {
                Source::Mcp { server_id, tool_name } => (Some(server_id.clone()), Some(tool_name.clone())),
                _ => (None, None),
            };
            SearchDoc {
                name: e.name.clone(),
                namespace: e.namespace.clone(),
                namespace_label: e.namespace_label().to_string(),
                raw_name: raw,
                server,
                description: e.description.clone(),
                input_schema: e.input_schema.clone(),
            }
        })
        .collect();
    PlanIndex { names: entries.iter().map(|r| r.entry.name.clone()).collect(), index: SearchIndex::build(&docs) }
}

/// The plan's search index: from the content-keyed cache, or built now.
pub fn plan_index(plan: &PlanScope, registry: &Registry) -> Arc<PlanIndex> {
    static CACHE: std::sync::Mutex<Vec<(u64, Arc<PlanIndex>)>> = std::sync::Mutex::new(Vec::new());
    plan.index
        .get_or_init(|| {
            let entries: Vec<_> = plan.deferred.iter().filter_map(|n| registry.get(n)).collect();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            for r in &entries {
                std::hash::Hash::hash(&r.entry.name, &mut h);
                std::hash::Hash::hash(&r.content_hash, &mut h);
                std::hash::Hash::hash(r.entry.namespace_label(), &mut h);
            }
            let key = std::hash::Hasher::finish(&h);
            let cached = CACHE.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| *k == key).map(|(_, i)| i.clone());
            if let Some(index) = cached {
                return index;
            }
            let index = Arc::new(build_index(&entries));
            let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            cache.push((key, index.clone()));
            if cache.len() > INDEX_CACHE {
                cache.remove(0);
            }
            index
        })
        .clone()
}

#[derive(Deserialize, Default)]
struct SearchArgs {
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    limit: Option<usize>,
}

#[derive(Deserialize)]
struct NameArgs {
    name: String,
    #[serde(default)]
    params: Value,
}

fn bad_args(tool: &str, e: serde_json::Error) -> Invoked {
    Invoked::error(format!("Invalid arguments for {tool}: {e}"))
}

pub async fn run<H: HostPort, M: McpPort>(inv: &Invoker<'_, H, M>, call: Call) -> Result<Invoked, InvokeError> {
    let plan_id = call.plan_id.clone().ok_or_else(|| InvokeError::PlanRequired(call.name.clone()))?;
    let plan = inv.plans.get(&plan_id).ok_or(InvokeError::UnknownPlan(plan_id))?;
    let args = if call.arguments.is_null() { json!({}) } else { call.arguments.clone() };
    match call.name.as_str() {
        SEARCH => Ok(match serde_json::from_value::<SearchArgs>(args) {
            Ok(a) => search(inv, &plan, a),
            Err(e) => bad_args(SEARCH, e),
        }),
        INSPECT => Ok(match serde_json::from_value::<NameArgs>(args) {
            Ok(a) => inspect_tool(inv.registry, &plan, &a.name),
            Err(e) => bad_args(INSPECT, e),
        }),
        _ => match serde_json::from_value::<NameArgs>(args) {
            Ok(a) => invoke_tool(inv, &plan, a, &call.call_id).await,
            Err(e) => Ok(bad_args(INVOKE, e)),
        },
    }
}

fn cold_note<M: McpPort>(mcp: &M) -> String {
    let cold = mcp.cold_servers();
    if cold.is_empty() {
        String::new()
    } else {
        format!(" Some MCP servers have not reported their tools yet ({}); their tools may appear in a later request.", cold.join(", "))
    }
}

fn search<H: HostPort, M: McpPort>(inv: &Invoker<'_, H, M>, plan: &PlanScope, a: SearchArgs) -> Invoked {
    let idx = plan_index(plan, inv.registry);
    let query = a.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let Some(query) = query else {
        return browse(inv, &idx, a.namespace.as_deref());
    };
    let limit = a.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let hits = idx.index.search(query, a.namespace.as_deref(), limit);
    if hits.is_empty() {
        let scope = a.namespace.as_deref().map(|n| format!(" in namespace {n}")).unwrap_or_default();
        return Invoked::text(
            format!(
                "No deferred tool matches {query:?}{scope}. Try fewer or other words, or call tool_search without a query to browse the namespaces.{}",
                cold_note(inv.mcp)
            ),
            Some(json!({"hits": [], "coldServers": inv.mcp.cold_servers()})),
        );
    }
    let mut text = String::new();
    let mut raw_hits = Vec::new();
    let mut ledger = plan.ledger.lock().unwrap_or_else(|e| e.into_inner());
    for h in &hits {
        let Some(r) = inv.registry.get(&idx.names[h.doc]) else { continue };
        let e = &r.entry;
        text.push_str(&format!("- {} ({}): {}\n", e.name, e.namespace_label(), e.summary()));
        if a.verbose {
            text.push_str(&inspect::signature(&e.name, &e.description, &e.input_schema));
            text.push_str("\n\n");
            ledger.insert(e.name.clone());
        }
        raw_hits.push(json!({"name": e.name, "namespace": e.namespace, "score": h.score}));
    }
    if !a.verbose {
        text.push_str("\nInspect a tool with tool_inspect before calling it with tool_invoke.");
    }
    Invoked::text(text.trim_end().to_string(), Some(json!({"hits": raw_hits})))
}

/// No query: namespaces with counts, or one namespace's tools.
fn browse<H: HostPort, M: McpPort>(inv: &Invoker<'_, H, M>, idx: &PlanIndex, namespace: Option<&str>) -> Invoked {
    let entries: Vec<_> = idx.names.iter().filter_map(|n| inv.registry.get(n)).map(|r| &r.entry).collect();
    if let Some(ns) = namespace {
        let ns_l = ns.to_lowercase();
        let tools: Vec<_> = entries
            .iter()
            .filter(|e| e.namespace.to_lowercase() == ns_l || e.namespace_label().to_lowercase() == ns_l)
            .collect();
        if tools.is_empty() {
            return Invoked::text(format!("No deferred tools in namespace {ns:?}.{}", cold_note(inv.mcp)), Some(json!({"hits": []})));
        }
        let mut text = format!("{} tools in {ns}:\n", tools.len());
        for e in &tools {
            text.push_str(&format!("- {}: {}\n", e.name, e.summary()));
        }
        let hits: Vec<Value> = tools.iter().map(|e| json!({"name": e.name, "namespace": e.namespace, "score": 0.0})).collect();
        return Invoked::text(text.trim_end().to_string(), Some(json!({"hits": hits})));
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        *counts.entry(e.namespace_label()).or_default() += 1;
    }
    let mut text = String::from("Deferred namespaces (tool count). Search with a query, or pass a namespace to list its tools:\n");
    for (ns, n) in &counts {
        text.push_str(&format!("- {ns} ({n})\n"));
    }
    let raw: Vec<Value> = counts.iter().map(|(ns, n)| json!({"namespace": ns, "count": n})).collect();
    Invoked::text(format!("{}{}", text.trim_end(), cold_note(inv.mcp)), Some(json!({"hits": [], "namespaces": raw})))
}

/// Why `name` cannot be reached through the meta-tools of this plan, if it cannot.
fn refusal(registry: &Registry, plan: &PlanScope, name: &str) -> Option<String> {
    let Some(r) = registry.get(name) else {
        return Some(format!("Tool {name:?} not found. Use tool_search to find the exact name."));
    };
    if r.entry.approval {
        return Some(format!("{name} needs the user's approval: call it directly, not through the meta-tools."));
    }
    if plan.inline.contains(name) {
        return Some(format!("{name} is in your tool list: call it directly."));
    }
    if !plan.deferred.contains(name) {
        return Some(format!("{name} is not available in this request."));
    }
    None
}

fn inspect_tool(registry: &Registry, plan: &PlanScope, name: &str) -> Invoked {
    if let Some(why) = refusal(registry, plan, name) {
        return Invoked::error(why);
    }
    let e = &registry.get(name).expect("checked by refusal").entry;
    plan.ledger.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_string());
    Invoked::text(inspect::signature(&e.name, &e.description, &e.input_schema), None)
}

async fn invoke_tool<H: HostPort, M: McpPort>(
    inv: &Invoker<'_, H, M>,
    plan: &PlanScope,
    a: NameArgs,
    outer_call_id: &str,
) -> Result<Invoked, InvokeError> {
    if let Some(why) = refusal(inv.registry, plan, &a.name) {
        return Ok(Invoked::error(why));
    }
    let entry = &inv.registry.get(&a.name).expect("checked by refusal").entry;
    let sig = || inspect::signature(&entry.name, &entry.description, &entry.input_schema);
    let first_time = plan.ledger.lock().unwrap_or_else(|e| e.into_inner()).insert(a.name.clone());
    if first_time {
        return Ok(Invoked::error(format!(
            "{} has not been inspected in this conversation, so it was not run. Its signature:\n{}\nCall tool_invoke again with params that match it.",
            a.name,
            sig()
        )));
    }
    // Invalid params are answered here, with the signature, rather than deep in the call; valid
    // (or repaired) ones run as prepared, so a host repair is asked for at most once.
    let (arguments, repaired) = match inv.prepare(entry, a.params).await {
        Prepared::Ready { arguments, repaired } => (arguments, repaired),
        Prepared::Invalid { errors } => {
            return Ok(Invoked::error(format!(
                "Invalid params for {}; it was not run.\n{}\nSignature:\n{}",
                a.name,
                errors.join("\n"),
                sig()
            )));
        }
    };
    // Nested calls carry a derived id so the host can tell them apart.
    let call_id = format!("{outer_call_id}::{}", a.name);
    inv.run_prepared(entry, arguments, repaired, &call_id).await
}
