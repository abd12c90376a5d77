//! The user's message in one planning pass: the matches are asked of the pool the plan defers,
//! once, after usage took its tools.

use super::*;
use crate::registry::ToolEntry;
use serde_json::json;
use sessions::Promote;
use std::cell::RefCell;

fn reg(name: &str) -> Arc<Registered> {
    let description = format!("{name} does one thing with many words. ").repeat(40);
    let e: ToolEntry = serde_json::from_value(json!({"name": name, "namespace": "q", "description": description, "inputSchema": {"type": "object"}})).unwrap();
    Arc::new(Registered::new(e))
}

fn promote(names: &[&str], why: &str) -> Vec<Promote> {
    names.iter().map(|n| Promote { name: n.to_string(), note: format!("{why} {n}") }).collect()
}

fn input<'a>(active: &'a [Arc<Registered>], window: i64, usage: &'a [Promote], query: Option<QueryPick<'a>>) -> PlanInput<'a> {
    let usage = Some(UsagePick { ranked: usage, max_tools: Some(1), budget_tokens: Some(100_000) });
    PlanInput { active, context_window: Some(window), model: Some("gpt-4o"), client_tools: &[], usage, views: false, query }
}

#[test]
fn the_matches_are_asked_once_of_the_pool_left_deferred() {
    let active: Vec<_> = (0..10).map(|i| reg(&format!("q_tool_{i}"))).collect();
    let used = promote(&["q_tool_3"], "used");
    let asked = RefCell::new(Vec::new());
    let matches = |pool: &[String]| {
        asked.borrow_mut().push(pool.to_vec());
        promote(&["q_tool_3", "q_tool_7", "q_tool_1"], "match")
    };
    let plan = plan(&input(&active, 20_000, &used, Some(QueryPick { matches: &matches, max_tools: 2 })));
    let asked = asked.into_inner();
    assert_eq!(asked.len(), 1, "one search per plan: {asked:?}");
    let pool: Vec<String> = (0..10).filter(|i| *i != 3).map(|i| format!("q_tool_{i}")).collect();
    assert_eq!(asked[0], pool, "the pool after usage took q_tool_3");
    let placed = |n: &str| plan.placements[n].clone();
    assert_eq!((placed("q_tool_3").reason, placed("q_tool_3").note.as_deref()), (Reason::Usage, Some("used q_tool_3")));
    for n in ["q_tool_7", "q_tool_1"] {
        let p = placed(n);
        assert_eq!((p.reason, p.deferred, p.note), (Reason::Query, false, Some(format!("match {n}"))));
    }
    assert!(plan.decision.deferred);
    let deferred: Vec<&str> = plan.deferred_names().collect();
    assert_eq!(deferred.len(), 7, "{deferred:?}");
    assert!(!deferred.contains(&"q_tool_7") && !deferred.contains(&"q_tool_3"));
    // The same plan as the one made from a fixed list of the same matches.
    let fixed = |_: &[String]| promote(&["q_tool_3", "q_tool_7", "q_tool_1"], "match");
    assert_eq!(plan, super::plan(&input(&active, 20_000, &used, Some(QueryPick { matches: &fixed, max_tools: 2 }))));
}

#[test]
fn no_search_when_nothing_is_deferred_or_nothing_may_move() {
    let active: Vec<_> = (0..10).map(|i| reg(&format!("q_none_{i}"))).collect();
    let asked = RefCell::new(0);
    let matches = |_: &[String]| {
        *asked.borrow_mut() += 1;
        promote(&["q_none_1"], "match")
    };
    // A window so large the pool stays inline.
    let inline = plan(&input(&active, 100_000_000, &[], Some(QueryPick { matches: &matches, max_tools: 2 })));
    assert_eq!((inline.decision.gate, *asked.borrow()), (Gate::Threshold, 0));
    assert_eq!(inline, plan(&input(&active, 100_000_000, &[], None)));
    // No tool may move.
    let none = plan(&input(&active, 20_000, &[], Some(QueryPick { matches: &matches, max_tools: 0 })));
    assert_eq!((none.decision.gate, *asked.borrow()), (Gate::Passed, 0));
    assert_eq!(none, plan(&input(&active, 20_000, &[], None)));
}
