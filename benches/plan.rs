//! Exposition plans in-process over the real fixture catalogs (2,422 MCP tools).
//!
//! `cargo bench --bench plan`. "cold" counts every definition's tokens (fresh entries, empty
//! count cache: what the first plan after a sync pays); "warm" is every later plan.

use divan::Bencher;
use std::sync::Arc;
use toolreg::exposition::{plan, PlanInput};
use toolreg::registry::{Registered, Registry};
use toolreg::tokenize::{CountCache, Encoding};

#[path = "../tests/support/catalogs.rs"]
mod catalogs;
use catalogs::{catalog_tools, mcp_entry};

fn main() {
    divan::main();
}

fn fixture_registry(n: usize) -> Registry {
    let mut reg = Registry::default();
    for (server, t) in catalog_tools() {
        if reg.len() == n {
            break;
        }
        let wire = reg.mcp_wire_name(&server, &server, t["name"].as_str().unwrap());
        reg.insert(mcp_entry(&server, &t, wire));
    }
    reg
}

fn active(reg: &Registry) -> Vec<Arc<Registered>> {
    reg.select_active(&serde_json::json!({})).0
}

#[divan::bench(args = [100, 1000, 2422], sample_count = 10, sample_size = 1)]
fn plan_cold(bencher: Bencher, n: usize) {
    let reg = fixture_registry(n);
    bencher
        .with_inputs(|| {
            CountCache::global().clear();
            // Fresh entries: no per-entry cached counts.
            reg.iter().map(|r| Arc::new(Registered::new(r.entry.clone()))).collect::<Vec<_>>()
        })
        .bench_local_values(|entries| {
            plan(&PlanInput { active: &entries, context_window: Some(128_000), model: Some("gpt-4o"), client_tools: &[], usage: None, views: false, query: None })
        });
}

#[divan::bench(args = [100, 1000, 2422])]
fn plan_warm(bencher: Bencher, n: usize) {
    let reg = fixture_registry(n);
    let entries = active(&reg);
    let input = PlanInput { active: &entries, context_window: Some(128_000), model: Some("gpt-4o"), client_tools: &[], usage: None, views: false, query: None };
    plan(&input);
    bencher.bench_local(|| plan(&input));
}

/// Counting one definition (the median fixture tool), without any cache.
#[divan::bench]
fn count_one_tool(bencher: Bencher) {
    let reg = fixture_registry(2422);
    let mut texts: Vec<String> = reg
        .iter()
        .map(|r| serde_json::to_string(&serde_json::json!({"name": r.entry.name, "description": r.entry.description, "inputSchema": r.entry.input_schema})).unwrap())
        .collect();
    texts.sort_by_key(|t| t.len());
    let median = texts[texts.len() / 2].clone();
    Encoding::O200kBase.count("warm up");
    bencher.bench_local(|| Encoding::O200kBase.count(divan::black_box(&median)));
}
