//! The meta-tools: `tool_search`, `tool_inspect`, `tool_invoke`, run inside the sidecar.
//!
//! Each call is scoped to a plan (its deferred pool and inspect ledger, shared by the steps of
//! one request). They refuse what the plan does not allow, never run an approval-gated tool
//! ("call it directly"), and answer bad params with the tool's signature so the model can
//! retry. Inspection gates nothing: the ledger only records what the model was shown.
//!
//! `route` calls in here; `tool_invoke` reaches execution only through the `Execute` port,
//! never back through the router. Search and signatures are CPU work (an index over thousands
//! of tools, schemas of any size), so they run on the blocking pool (`off_reactor`).

pub mod inspect;
pub mod search;
mod search_blend;
mod search_cjk;
mod search_fuse;
mod search_gloss;
mod search_lexical;
mod search_query;
mod search_rank;
pub mod search_text;
mod search_tiers;

use crate::exposition::meta_defs::{INSPECT, INVOKE, SEARCH};
use crate::exposition::plans::PlanScope;
use crate::exposition::render::{self, Rendering};
use crate::invoke::{self, off_reactor, Execute, InvokeError, Invoked, Prepared};
use crate::registry::{Registered, Registry, Source, ToolEntry};
use crate::embed::{QueryVector, Semantic};
use search::{Blend, SearchDoc, SearchIndex};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};

pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 50;

pub fn is_meta(name: &str) -> bool {
    matches!(name, SEARCH | INSPECT | INVOKE)
}

/// The search index over a plan's deferred pool.
pub struct PlanIndex {
    pub names: Vec<String>,
    pub index: SearchIndex,
    /// Each doc's embedding text's key (`embed::store::key`), to find its vector.
    pub keys: Vec<crate::embed::store::Key>,
    /// An estimate of its memory, for the cache's byte bound (`index_bytes`).
    pub bytes: usize,
}

impl std::fmt::Debug for PlanIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlanIndex({} tools)", self.names.len())
    }
}

/// Plans whose index is remembered (the plans in use; an older one finds its index by content).
const PLAN_MEMO: usize = 64;
/// Indexes kept by content: consecutive requests usually defer the same pool, so they share one
/// index instead of building it again (~60 ms at 2,422 tools).
const INDEX_CACHE: usize = 8;
/// The most index memory (by `index_bytes`) the two lists keep together; the newest index is
/// kept whatever its size (the plan that asked for it uses it next).
const INDEX_CACHE_BYTES: usize = 128 << 20;

/// Indexes by plan (the index a plan's first search used, so later searches of the same
/// request see the same tools) and by content (the entries indexed, compared exactly), bounded
/// by count each and by bytes together.
#[derive(Default)]
struct IndexCache {
    by_plan: VecDeque<(Weak<PlanScope>, Arc<PlanIndex>)>,
    by_content: VecDeque<(Vec<Arc<Registered>>, Arc<PlanIndex>)>,
}

static CACHE: Mutex<IndexCache> = Mutex::new(IndexCache { by_plan: VecDeque::new(), by_content: VecDeque::new() });

impl IndexCache {
    /// The memory of the distinct indexes kept (one index may be in both lists).
    fn bytes(&self) -> usize {
        let mut seen: Vec<*const PlanIndex> = Vec::new();
        let all = self.by_content.iter().map(|(_, i)| i).chain(self.by_plan.iter().map(|(_, i)| i));
        all.filter(|i| {
            let new = !seen.contains(&Arc::as_ptr(i));
            seen.push(Arc::as_ptr(i));
            new
        })
        .map(|i| i.bytes)
        .sum()
    }

    /// Drops the oldest entries, by content first, until the kept indexes fit `budget`; the
    /// newest entry of each list stays.
    fn fit(&mut self, budget: usize) {
        self.by_plan.retain(|(p, _)| p.strong_count() > 0);
        while self.bytes() > budget && self.by_content.len() > 1 {
            self.by_content.pop_front();
        }
        while self.bytes() > budget && self.by_plan.len() > 1 {
            self.by_plan.pop_front();
        }
    }
}

/// A rough measure of an index's memory: its postings and name maps grow with the text indexed
/// (names ~4 times over: wire, raw, qualified, squashed), plus a fixed cost per doc.
fn index_bytes(docs: &[SearchDoc]) -> usize {
    docs.iter()
        .map(|d| {
            let names = d.name.len() + d.raw_name.as_ref().map_or(0, String::len) + d.namespace.len() + d.namespace_label.len() + d.server.as_ref().map_or(0, String::len);
            let schema = serde_json::to_string(&d.input_schema).map_or(0, |s| s.len());
            256 + 4 * names + 2 * (d.description.len() + schema)
        })
        .sum()
}

fn cache() -> std::sync::MutexGuard<'static, IndexCache> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Same entries, same index. Registry entries are immutable and kept when unchanged, so the
/// pointer check almost always decides; otherwise the entries are compared in full.
fn same_entries(a: &[Arc<Registered>], b: &[Arc<Registered>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y) || (x.content_hash == y.content_hash && x.entry == y.entry))
}

fn search_doc(r: &Registered) -> SearchDoc {
    let e = &r.entry;
    let (server, raw) = match &e.source {
        // The server's own name is searched (and embedded) cleaned, like the rest of the entry.
        Source::Mcp { server_id, tool_name } => (Some(server_id.clone()), Some(crate::registry::hidden::cleaned(tool_name))),
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
}

/// What a sentence-embedding model reads for each entry (`SearchDoc::embedding_text`).
pub fn embedding_texts<'a>(entries: impl IntoIterator<Item = &'a Arc<Registered>>) -> Vec<String> {
    entries.into_iter().map(|r| search_doc(r).embedding_text()).collect()
}

fn build_index(entries: &[Arc<Registered>]) -> PlanIndex {
    let docs: Vec<SearchDoc> = entries.iter().map(|r| search_doc(r)).collect();
    let keys = docs.iter().map(|d| crate::embed::store::key(&d.embedding_text())).collect();
    let index = PlanIndex { names: entries.iter().map(|r| r.entry.name.clone()).collect(), index: SearchIndex::build(&docs), keys, bytes: index_bytes(&docs) };
    if index.bytes >= crate::os::TRIM_AFTER_BYTES {
        // The docs (copies of every schema) and the build's temporaries are freed now.
        crate::os::release_freed_memory_soon();
    }
    index
}

/// The plan's search index: the one its earlier searches used, one over the same entries, or
/// built now. CPU work: call it off the reactor.
pub fn plan_index(plan: &Arc<PlanScope>, registry: &Registry) -> Arc<PlanIndex> {
    let memo = |c: &IndexCache| c.by_plan.iter().find(|(p, _)| p.as_ptr() == Arc::as_ptr(plan)).map(|(_, i)| i.clone());
    if let Some(index) = memo(&cache()) {
        return index;
    }
    let index = index_of(plan.deferred.iter().filter_map(|n| registry.get(n)).cloned().collect());
    let mut c = cache();
    // Two searches of one plan may race to here: the first one's index stays the plan's.
    if let Some(index) = memo(&c) {
        return index;
    }
    c.by_plan.retain(|(p, _)| p.strong_count() > 0);
    c.by_plan.push_back((Arc::downgrade(plan), index.clone()));
    if c.by_plan.len() > PLAN_MEMO {
        c.by_plan.pop_front();
    }
    c.fit(INDEX_CACHE_BYTES);
    index
}

/// The index over `entries`: one built over the same entries before, or built now.
fn index_of(entries: Vec<Arc<Registered>>) -> Arc<PlanIndex> {
    if let Some(known) = cache().by_content.iter().find(|(k, _)| same_entries(k, &entries)).map(|(_, i)| i.clone()) {
        return known;
    }
    let index = Arc::new(build_index(&entries));
    let mut c = cache();
    c.by_content.push_back((entries, index.clone()));
    if c.by_content.len() > INDEX_CACHE {
        c.by_content.pop_front();
    }
    c.fit(INDEX_CACHE_BYTES);
    index
}

/// The deferred tools among `names` that best match `query` (the user's message), best first,
/// at most `limit`: what a `tool_search` of it would find, by the same index and blend. CPU
/// work: call it off the reactor.
pub fn best_matches(registry: &Registry, names: &[String], query: &str, limit: usize, semantic: Option<SemanticQuery<'_>>) -> Vec<String> {
    let query = query.trim();
    if query.is_empty() || limit == 0 {
        return Vec::new();
    }
    let idx = index_of(names.iter().filter_map(|n| registry.get(n)).cloned().collect());
    let (hits, _) = ranked(&idx, query, None, limit, semantic);
    hits.iter().map(|h| idx.names[h.doc].clone()).collect()
}

/// `query`'s hits in `idx`, fused with the semantic signal where it has a vector, and what
/// that signal covered (`None`: no semantic source).
fn ranked(idx: &PlanIndex, query: &str, namespace: Option<&str>, limit: usize, semantic: Option<SemanticQuery<'_>>) -> (Vec<search::Hit>, Option<crate::embed::Coverage>) {
    let (mut weight, mut cjk) = semantic.as_ref().map_or((0.0, 0.0), |(s, _)| (s.weight(), s.cjk()));
    let fused = semantic.as_ref().is_some_and(|(s, _)| search_fuse::is_fused(s, query));
    let semantic = semantic.map(|(s, all)| if fused { (s, None, all) } else { (s, all.and_then(|mut v| (!v.is_empty()).then(|| v.swap_remove(0))), None) });
    let (cosines, coverage) = match semantic {
        Some((s, _, all)) if fused => {
            // Several models, or one reading the gloss: cosines already weighted (`search_fuse`).
            (weight, cjk) = (1.0, 1.0);
            let (c, cov) = search_fuse::fused(s, &idx.keys, query, all);
            (c, Some(cov))
        }
        Some((s, Some(Ok(q)), _)) => {
            let (c, cov) = s.cosines(&idx.keys, &q);
            (cov.used.then_some(c), Some(cov))
        }
        Some((s, Some(Err(why)), _)) => (None, Some(s.coverage(&idx.keys, Some(why)))),
        Some((s, None, _)) => (None, Some(s.coverage(&idx.keys, None))),
        None => (None, None),
    };
    let blend = cosines.as_deref().map(|cosines| Blend { cosines, weight, cjk });
    (idx.index.search_blended(query, namespace, limit, blend), coverage)
}

/// One meta-tool call, owned, so that its CPU work can move to the blocking pool.
pub struct MetaCall {
    /// `tool_search`, `tool_inspect` or `tool_invoke`.
    pub name: String,
    pub arguments: Value,
    pub call_id: String,
    pub plan: Arc<PlanScope>,
    pub registry: Arc<Registry>,
    /// Enabled MCP servers whose tools are not listed yet (search says so when it finds little).
    pub cold_servers: Vec<String>,
    /// The semantic signal, when the host configured embeddings.
    pub semantic: Option<Arc<Semantic>>,
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

pub async fn run(call: MetaCall, exec: &impl Execute) -> Result<Invoked, InvokeError> {
    let args = if call.arguments.is_null() { json!({}) } else { call.arguments };
    let MetaCall { plan, registry, cold_servers, semantic, .. } = call;
    match call.name.as_str() {
        SEARCH => match serde_json::from_value::<SearchArgs>(args) {
            Ok(a) => {
                let call_id = call.call_id.clone();
                // The query's vector first, off the blocking pool: asking the host is I/O.
                let query = a.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
                let vector = match (&semantic, query) {
                    (Some(s), Some(q)) if s.any() => Some(search_fuse::query_vectors(s, q).await),
                    _ => None,
                };
                off_reactor(exec.cancel(), move || {
                    let sem = semantic.as_deref().map(|s| (s, vector));
                    let (mut done, hits) = search(&registry, &plan, a, &cold_servers, sem);
                    plan.found.lock().unwrap_or_else(|e| e.into_inner()).extend(hits.iter().cloned());
                    done.provider_output = provider_output(&registry, &plan, &call_id, &hits, &done);
                    done
                })
                .await
            }
            Err(e) => Ok(bad_args(SEARCH, e)),
        },
        INSPECT => match serde_json::from_value::<NameArgs>(args) {
            Ok(a) => off_reactor(exec.cancel(), move || inspect_tool(&registry, &plan, &a.name)).await,
            Err(e) => Ok(bad_args(INSPECT, e)),
        },
        _ => match serde_json::from_value::<NameArgs>(args) {
            Ok(a) => invoke_tool(exec, registry, plan, a, &call.call_id).await,
            Err(e) => Ok(bad_args(INVOKE, e)),
        },
    }
}

fn cold_note(cold: &[String]) -> String {
    if cold.is_empty() {
        String::new()
    } else {
        format!(" Some MCP servers have not reported their tools yet ({}); their tools may appear in a later request.", cold.join(", "))
    }
}

/// What a natively rendered plan's search answers beside its text (see `render::search_output`).
fn provider_output(registry: &Registry, plan: &PlanScope, call_id: &str, hits: &[String], done: &Invoked) -> Option<Value> {
    if !plan.render.defers_natively() {
        return None;
    }
    let pool: Vec<&ToolEntry> = if plan.render == Rendering::Openai { plan.deferred.iter().filter_map(|n| registry.get(n)).map(|r| &r.entry).collect() } else { Vec::new() };
    let found: Vec<&ToolEntry> = hits.iter().filter_map(|n| registry.get(n)).map(|r| &r.entry).collect();
    let text = match &done.output {
        crate::output::ModelOutput::Text(t) => t.as_str(),
        _ => "",
    };
    render::search_output(plan.render, plan.programmatic.as_ref(), plan.strict, call_id, &pool, &found, text)
}

/// The semantic source and the query's vectors, one per model in `Semantic::models` order
/// (or why there is none).
pub type SemanticQuery<'a> = (&'a Semantic, Option<Vec<Result<QueryVector, String>>>);

/// The answer and the names found, best first.
fn search(registry: &Registry, plan: &Arc<PlanScope>, a: SearchArgs, cold: &[String], semantic: Option<SemanticQuery<'_>>) -> (Invoked, Vec<String>) {
    let idx = plan_index(plan, registry);
    let query = a.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let Some(query) = query else {
        return browse(registry, &idx, a.namespace.as_deref(), cold);
    };
    let limit = a.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let (hits, coverage) = ranked(&idx, query, a.namespace.as_deref(), limit, semantic);
    let with_coverage = |mut raw: Value| {
        if let Some(c) = &coverage {
            raw["semantic"] = json!(c);
        }
        raw
    };
    if hits.is_empty() {
        let scope = a.namespace.as_deref().map(|n| format!(" in namespace {n}")).unwrap_or_default();
        let text = format!(
            "No deferred tool matches {query:?}{scope}. Try fewer or other words, or call tool_search without a query to browse the namespaces.{}",
            cold_note(cold)
        );
        return (Invoked::text(text, Some(with_coverage(json!({"hits": [], "coldServers": cold})))), Vec::new());
    }
    let mut text = String::new();
    let mut raw_hits = Vec::new();
    let mut found = Vec::new();
    let mut ledger = plan.ledger.lock().unwrap_or_else(|e| e.into_inner());
    for h in &hits {
        let Some(r) = registry.get(&idx.names[h.doc]) else { continue };
        let e = &r.entry;
        text.push_str(&format!("- {} ({}): {}\n", e.name, e.namespace_label(), e.summary()));
        if a.verbose {
            text.push_str(&inspect::signature(&e.name, &e.description, &e.input_schema));
            text.push_str("\n\n");
            ledger.insert(e.name.clone());
        }
        raw_hits.push(json!({"name": e.name, "namespace": e.namespace, "score": h.score}));
        found.push(e.name.clone());
    }

    if plan.render.defers_natively() {
        text.push_str("\nThese tools are loaded: call them directly.");
    } else if !a.verbose {
        text.push_str("\nRead a tool's parameters with tool_inspect, then call it with tool_invoke.");
    }
    (Invoked::text(text.trim_end().to_string(), Some(with_coverage(json!({"hits": raw_hits})))), found)
}

/// No query: namespaces with counts, or one namespace's tools.
fn browse(registry: &Registry, idx: &PlanIndex, namespace: Option<&str>, cold: &[String]) -> (Invoked, Vec<String>) {
    let entries: Vec<_> = idx.names.iter().filter_map(|n| registry.get(n)).map(|r| &r.entry).collect();
    if let Some(ns) = namespace {
        let ns_l = ns.to_lowercase();
        let tools: Vec<_> = entries
            .iter()
            .filter(|e| e.namespace.to_lowercase() == ns_l || e.namespace_label().to_lowercase() == ns_l)
            .collect();
        if tools.is_empty() {
            return (Invoked::text(format!("No deferred tools in namespace {ns:?}.{}", cold_note(cold)), Some(json!({"hits": []}))), Vec::new());
        }
        let mut text = format!("{} tools in {ns}:\n", tools.len());
        for e in &tools {
            text.push_str(&format!("- {}: {}\n", e.name, e.summary()));
        }
        let hits: Vec<Value> = tools.iter().map(|e| json!({"name": e.name, "namespace": e.namespace, "score": 0.0})).collect();
        // A native rendering loads what was listed, up to the search limit.
        let found = tools.iter().take(MAX_LIMIT).map(|e| e.name.clone()).collect();
        return (Invoked::text(text.trim_end().to_string(), Some(json!({"hits": hits}))), found);
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
    (Invoked::text(format!("{}{}", text.trim_end(), cold_note(cold)), Some(json!({"hits": [], "namespaces": raw}))), Vec::new())
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

/// What the model reads when a tool's arguments are invalid and could not be repaired: the
/// errors and the signature, so it can retry. CPU work for big schemas: call it off the reactor.
pub fn invalid_arguments(entry: &crate::registry::ToolEntry, errors: &[String]) -> Invoked {
    let sig = inspect::signature(&entry.name, &entry.description, &entry.input_schema);
    Invoked::error(format!("Invalid arguments for {}; it was not run.\n{}\nExpected:\n{sig}", entry.name, errors.join("\n")))
}

/// The tool `tool_invoke` may run now, or the result that says why not. Whether it was
/// inspected gates nothing: a client may open a new process for every call, so only the
/// arguments' validation (and approval, pins, repair) decide.
fn invoke_gate(registry: &Registry, plan: &PlanScope, name: &str) -> Result<Arc<Registered>, Invoked> {
    match refusal(registry, plan, name) {
        Some(why) => Err(Invoked::error(why)),
        None => Ok(registry.get(name).expect("checked by refusal").clone()),
    }
}

/// What `tool_invoke` answers for params that do not validate: what was wrong and the
/// signature, inspected before or not (the model may have lost it, or never seen it).
fn invalid_params(e: &ToolEntry, errors: &[String]) -> Invoked {
    let sig = inspect::signature(&e.name, &e.description, &e.input_schema);
    Invoked::error(format!("Invalid params for {}; it was not run.\n{}\nSignature:\n{sig}", e.name, errors.join("\n")))
}

async fn invoke_tool(exec: &impl Execute, registry: Arc<Registry>, plan: Arc<PlanScope>, a: NameArgs, outer_call_id: &str) -> Result<Invoked, InvokeError> {
    let name = a.name.clone();
    let tool = match off_reactor(exec.cancel(), move || invoke_gate(&registry, &plan, &name)).await? {
        Ok(tool) => tool,
        Err(answer) => return Ok(answer),
    };
    // The plan may predate a change of the server's approval rules: decided now, as directly.
    if exec.asks_approval(&tool.entry) {
        return Ok(Invoked::error(format!("{} needs the user's approval: call it directly, not through the meta-tools.", tool.entry.name)));
    }
    // Invalid params are answered here, with the signature, rather than deep in the call; valid
    // (or repaired) ones run as prepared, so a host repair is asked for at most once.
    let (arguments, repaired) = match exec.prepare(&tool, a.params).await? {
        Prepared::Ready { arguments, repaired } => (arguments, repaired),
        Prepared::BadSchema { error } => return Ok(invoke::bad_schema(&tool.entry, &error)),
        Prepared::Invalid { errors } => return off_reactor(exec.cancel(), move || invalid_params(&tool.entry, &errors)).await,
    };
    // Nested calls carry a derived id so the host can tell them apart.
    let call_id = format!("{outer_call_id}::{}", a.name);
    exec.run_prepared(&tool, arguments, repaired, &call_id, crate::audit::Reached::ToolInvoke).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exposition::plans::PlanStore;

    fn index(bytes: usize) -> Arc<PlanIndex> {
        Arc::new(PlanIndex { bytes, ..build_index(&[]) })
    }

    #[test]
    fn the_index_caches_are_bounded_by_bytes() {
        let mut c = IndexCache::default();
        for n in [40, 30, 20] {
            c.by_content.push_back((Vec::new(), index(n)));
            c.fit(60);
        }
        // 40 + 30 > 60: the oldest went; 30 + 20 fits.
        assert_eq!(c.by_content.iter().map(|(_, i)| i.bytes).collect::<Vec<_>>(), [30, 20]);
        // A live plan's index that is also kept by content counts once.
        let plans = PlanStore::default();
        let (p1, p2) = (plans.create(Default::default(), Default::default()), plans.create(Default::default(), Default::default()));
        c.by_plan.push_back((Arc::downgrade(&p1), c.by_content[1].1.clone()));
        c.fit(60);
        assert_eq!((c.bytes(), c.by_content.len(), c.by_plan.len()), (50, 2, 1));
        // A large new index: the content list keeps its newest only, the plan list too.
        c.by_content.push_back((Vec::new(), index(50)));
        c.by_plan.push_back((Arc::downgrade(&p2), index(45)));
        c.fit(60);
        assert_eq!(c.by_content.iter().map(|(_, i)| i.bytes).collect::<Vec<_>>(), [50]);
        assert_eq!(c.by_plan.iter().map(|(_, i)| i.bytes).collect::<Vec<_>>(), [45]);
        // A plan that is gone (the store held it too) frees its entry.
        drop((p1, p2, plans));
        c.fit(60);
        assert!(c.by_plan.is_empty());
    }

    #[test]
    fn index_bytes_grow_with_the_text_indexed() {
        let doc = |desc: &str| SearchDoc {
            name: "t".into(),
            namespace: "ns".into(),
            namespace_label: "ns".into(),
            raw_name: None,
            server: None,
            description: desc.into(),
            input_schema: json!({"type": "object"}),
        };
        let (small, large) = (index_bytes(&[doc("a")]), index_bytes(&[doc(&"a".repeat(10_000))]));
        assert!(large >= small + 19_000, "{small} {large}");
    }
}
