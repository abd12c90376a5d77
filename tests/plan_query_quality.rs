//! How often a plan made with the user's message already holds the tool they asked for (issue
//! 41 §2), in process over the fixture catalogs (2,422 tools) and LiveMCPBench's (527 tools):
//! the share of the development set's intent queries (English and Chinese, both halves) and of
//! LiveMCPBench's tasks (any gold tool) whose gold tool is inline with no `tool_search` call,
//! at N = 3, 5, 8 (`queryTools`) and two context windows, by the same `Service::plan` the
//! sidecar's `exposition/plan` runs, with the lexical search as shipped (no model).
//! `cargo test --release --test plan_query_quality -- --nocapture` prints the table
//! (BENCHMARKS.md "Query-aware plans"); floors sit a query's worth below what it measured.
mod support;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use toolreg::registry::Registry;
use toolreg::service::{PlanAsk, PlanQuery, Service};

/// A registry of every tool of these catalog files, and each tool's wire name by server/tool.
fn registry_of(files: &Path) -> (Registry, HashMap<(String, String), String>) {
    let mut paths: Vec<_> = std::fs::read_dir(files).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let (mut reg, mut wire) = (Registry::default(), HashMap::new());
    for p in paths {
        let cat: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let server = cat["server"].as_str().unwrap();
        for t in cat["tools"].as_array().unwrap() {
            let tool = t["name"].as_str().unwrap();
            let name = reg.mcp_wire_name(server, server, tool);
            wire.insert((server.to_string(), tool.to_string()), name.clone());
            reg.insert(support::catalogs::mcp_entry(server, t, name));
        }
    }
    (reg, wire)
}

struct Case {
    query: String,
    gold: Vec<String>,
    row: String,
}

fn cases(items: &Value, wire: &HashMap<(String, String), String>, row: impl Fn(&Value) -> Option<String>) -> Vec<Case> {
    let mut out = Vec::new();
    for item in items["items"].as_array().unwrap() {
        let Some(row) = row(item) else { continue };
        let gold: Vec<String> = item["gold"].as_array().unwrap().iter().filter_map(|g| wire.get(&(g["server"].as_str().unwrap().to_string(), g["tool"].as_str().unwrap().to_string())).cloned()).collect();
        if !gold.is_empty() {
            out.push(Case { query: item["query"].as_str().unwrap().to_string(), gold, row });
        }
    }
    out
}

/// Share of cases with a gold tool inline, by row, for each N.
fn measure(reg: &Registry, cases: &[Case], window: i64, ns: &[usize]) -> BTreeMap<(String, usize), (usize, usize)> {
    let service = Service::new(Registry::default(), "q-");
    let scope = json!({});
    let mut out: BTreeMap<(String, usize), (usize, usize)> = BTreeMap::new();
    for c in cases {
        for &n in ns {
            let q = PlanQuery { text: c.query.clone(), max_tools: n, vector: None };
            let ask = PlanAsk { scope: &scope, context_window: Some(window), model: Some("gpt-4o"), client_tools: &[], usage: None, code: None, views: false, query: Some(&q) };
            let plan = service.plan(reg, &ask).plan;
            assert!(plan.decision.deferred, "the pool is deferred at {window}");
            let hit = plan.tools.iter().any(|t| c.gold.contains(&t.name));
            let moved = plan.placements.values().filter(|p| p.reason == toolreg::exposition::Reason::Query).count();
            assert!(moved <= n, "{moved} > {n}");
            let e = out.entry((c.row.clone(), n)).or_default();
            e.0 += hit as usize;
            e.1 += 1;
        }
    }
    out
}

fn print(title: &str, m: &BTreeMap<(String, usize), (usize, usize)>, ns: &[usize]) {
    eprintln!("== {title}: gold tool inline with no tool_search call ==");
    let rows: std::collections::BTreeSet<&String> = m.keys().map(|(r, _)| r).collect();
    for r in rows {
        let cells: Vec<String> = ns.iter().map(|n| { let (h, t) = m[&(r.clone(), *n)]; format!("N={n} {:.3} ({h}/{t})", h as f64 / t as f64) }).collect();
        eprintln!("  {r:<28} {}", cells.join("   "));
    }
}

fn share(m: &BTreeMap<(String, usize), (usize, usize)>, row: &str, n: usize) -> f64 {
    let (h, t) = m[&(row.to_string(), n)];
    h as f64 / t as f64
}

const NS: [usize; 3] = [3, 5, 8];

#[test]
fn the_gold_tool_is_inline_for_most_intent_queries_of_the_dev_set() {
    let (reg, wire) = registry_of(&support::fixtures().join("mcp-catalogs"));
    assert_eq!(reg.len(), 2422);
    let dev: Value = serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/search/dev-queries.json")).unwrap()).unwrap();
    let cases = cases(&dev, &wire, |q| (q["kind"] == "intent").then(|| format!("{} {} intent", q["split"].as_str().unwrap(), q["lang"].as_str().unwrap())));
    assert!(cases.len() >= 120, "{} intent queries", cases.len());
    let mut floors = Vec::new();
    for window in [128_000, 32_000] {
        let m = measure(&reg, &cases, window, &NS);
        print(&format!("dev set, 2,422 tools, context window {window}"), &m, &NS);
        floors.push(m);
    }
    // At 128k (a 6,400-token budget) and N = 5, lexical: measured 2026-12-03 holdout en .743,
    // tune en .667, holdout zh .947, tune zh .963 (BENCHMARKS.md), floors a query below.
    let m = &floors[0];
    for (row, floor) in [("holdout en intent", 0.71), ("tune en intent", 0.64), ("holdout zh intent", 0.89), ("tune zh intent", 0.92)] {
        let got = share(m, row, 5);
        assert!(got >= floor, "{row} at N = 5: {got:.3} < {floor}");
    }
    // More tools inline never finds fewer.
    for row in ["holdout en intent", "holdout zh intent"] {
        assert!(share(m, row, 3) <= share(m, row, 5) && share(m, row, 5) <= share(m, row, 8), "{row}");
    }
}

#[test]
fn livemcpbench_tasks_find_a_gold_tool_inline() {
    let (reg, wire) = registry_of(&support::fixtures().join("livemcpbench/servers"));
    let tasks: Value = serde_json::from_str(&std::fs::read_to_string(support::fixtures().join("livemcpbench/queries.json")).unwrap()).unwrap();
    let cases = cases(&tasks, &wire, |_| Some("LiveMCPBench any gold".into()));
    assert!(cases.len() >= 90, "{} tasks", cases.len());
    let m = measure(&reg, &cases, 128_000, &NS);
    print("LiveMCPBench, 527 tools, context window 128000", &m, &NS);
    let got = share(&m, "LiveMCPBench any gold", 5);
    // Measured 2026-12-03: .660 (62 of 94), lexical; a task below.
    assert!(got >= 0.64, "LiveMCPBench at N = 5: {got:.3}");
}
