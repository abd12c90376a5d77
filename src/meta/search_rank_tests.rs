//! The ranking rules: field weights seen in the score, the three multipliers, and the top list.

use super::*;
use crate::meta::search::SearchDoc;
use crate::meta::search_query::query_groups;

/// Every doc's score for `q` (0 where no term reached it).
fn scores(docs: &[SearchDoc], params: SearchParams, q: &str) -> Vec<f32> {
    let index = LexicalIndex::build(docs, &params);
    let (_, s) = score(&index, &params, &query_groups(&index, &params, q));
    s
}

#[test]
fn a_name_match_outranks_a_description_match() {
    let docs = [
        SearchDoc::mcp("a", "ship_code", "Deploy the app to production"),
        SearchDoc::mcp("a", "deploy_app", "Ships the code to production"),
    ];
    let s = scores(&docs, SearchParams::default(), "deploy");
    assert!(s[1] > s[0], "{s:?}");
    // With the field weights swapped, the description wins: the weight is what decides.
    let mut p = SearchParams::default();
    p.field_weight[0] = 0.1;
    let s = scores(&docs, p, "deploy");
    assert!(s[0] > s[1], "{s:?}");
}

/// Each doc's score with a rule on over its score with the rule turned `off`.
fn ratios(docs: &[SearchDoc], off: impl Fn(&mut SearchParams), q: &str) -> Vec<f32> {
    let mut p = SearchParams::default();
    off(&mut p);
    let on = scores(docs, SearchParams::default(), q);
    on.iter().zip(&scores(docs, p, q)).map(|(a, b)| a / b).collect()
}

fn near(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-5
}

#[test]
fn coverage_multiplies_by_one_plus_the_share_of_query_words_matched() {
    let docs = [
        SearchDoc::mcp("a", "tool_one", "Send an email to a contact"),
        SearchDoc::mcp("a", "tool_two", "Send an email email email email"),
        SearchDoc::mcp("a", "tool_three", "Read a file"),
    ];
    let r = ratios(&docs, |p| p.coverage_bonus = 0.0, "email contact");
    assert!(near(r[0], 1.8) && near(r[1], 1.4), "{r:?}");
    // The "file" a path implies is evidence, not a query word: read of read, x, txt.
    let r = ratios(&docs, |p| p.coverage_bonus = 0.0, "read /tmp/x.txt");
    assert!(near(r[2], 1.0 + 0.8 / 3.0), "{r:?}");
}

#[test]
fn a_name_the_query_explains_fully_gets_the_whole_name_bonus() {
    let docs = [
        SearchDoc::mcp("billing", "list_subscriptions", "Subscriptions of a customer"),
        SearchDoc::mcp("billing", "subscriptions", "Subscriptions of a customer"),
        SearchDoc::mcp("billing", "refund", "Refund the subscription of a customer"),
    ];
    let r = ratios(&docs, |p| p.name_bonus = 0.0, "subscription");
    // Half the name, all of it, none of it.
    assert!(near(r[0], 1.25) && near(r[1], 1.5) && near(r[2], 1.0), "{r:?}");
}

#[test]
fn the_best_server_multiplies_its_tools_by_one_plus_the_prior() {
    let docs = [
        SearchDoc::mcp("jira", "create_issue", "Create an issue in a project"),
        SearchDoc::mcp("linear", "create_issue", "Create an issue in a project"),
    ];
    let r = ratios(&docs, |p| p.server_prior = 0.0, "jira issue");
    assert!(near(r[0], 1.8) && r[1] < 1.8 && r[1] >= 1.0, "{r:?}");
}

#[test]
fn a_synonym_counts_once_at_its_best_variant() {
    let docs = [
        SearchDoc::mcp("a", "delete_item", "Remove an item"),
        SearchDoc::mcp("a", "list_items", "Items"),
    ];
    // "remove" reaches doc 0 as itself and as "delete": it scores the better one, never both
    // (the ratio left is the name bonus "delete" earns at its weight, 1 + 0.5 * 0.4 / 2).
    let r = ratios(&docs, |p| p.synonym_weight = 0.0, "remove");
    assert!(near(r[0], 1.1), "{r:?}");
}

#[test]
fn the_top_keeps_the_best_limit_best_first_ties_by_doc() {
    let mut top = Top::new(3);
    for (s, d) in [(1.0, 0), (5.0, 1), (3.0, 2), (5.0, 3), (0.5, 4), (3.0, 5)] {
        top.offer(s, d);
    }
    let hits: Vec<(usize, f64)> = top.into_hits().iter().map(|h| (h.doc, h.score)).collect();
    assert_eq!(hits, vec![(1, 5.0), (3, 5.0), (2, 3.0)]);
    assert!(Top::new(0).into_hits().is_empty());
}

#[test]
fn a_tier_lifts_a_scored_doc_and_brings_in_an_unscored_one() {
    let mut top = Top::new(10);
    // Docs 0 and 1 scored; doc 1 and doc 3 named exactly; doc 2 filtered out.
    offer_lexical(&mut top, &[0, 1, 2], &[2.0, 1.0, 9.0, 0.0], &[(1, 3), (3, 1)], |d| d != 2);
    let hits: Vec<(usize, f64)> = top.into_hits().iter().map(|h| (h.doc, h.score)).collect();
    assert_eq!(hits, vec![(1, 3.0 * TIER_SCORE + 1.0), (3, TIER_SCORE), (0, 2.0)]);
}
