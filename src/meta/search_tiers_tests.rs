//! Which tier a query gives which doc: qualified 4, exact 3, squashed qualified 2, squashed 1.

use super::*;
use crate::meta::search::SearchDoc;

fn names() -> ExactNames {
    let mut web = SearchDoc::mcp("web", "search", "");
    (web.name, web.raw_name, web.server) = ("web_search".into(), None, None);
    ExactNames::build(&[
        SearchDoc::mcp("github", "create_branch", ""),
        SearchDoc::mcp("gitlab", "create_branch", ""),
        web,
    ])
}

fn sorted(mut t: Vec<(u32, u8)>) -> Vec<(u32, u8)> {
    t.sort();
    t
}

#[test]
fn a_server_qualified_name_is_tier_4_for_that_server_only() {
    let n = names();
    for q in ["github create_branch", "github/create_branch", "github__create_branch", "mcp:github create_branch", "GitHub  Create_Branch"] {
        assert_eq!(n.tiers(q), vec![(0, 4)], "{q}");
    }
}

#[test]
fn an_exact_raw_or_wire_name_is_tier_3() {
    let n = names();
    assert_eq!(sorted(n.tiers("create_branch")), vec![(0, 3), (1, 3)]);
    assert_eq!(n.tiers("mcp__gitlab__create_branch"), vec![(1, 3)]);
    assert_eq!(n.tiers("WEB_SEARCH"), vec![(2, 3)]);
}

#[test]
fn separators_ignored_give_tier_2_qualified_and_tier_1_bare() {
    let n = names();
    assert_eq!(n.tiers("github-create-branch"), vec![(0, 2)]);
    assert_eq!(sorted(n.tiers("create branch")), vec![(0, 1), (1, 1)]);
    assert_eq!(n.tiers("web search"), vec![(2, 1)]);
}

#[test]
fn a_query_that_names_no_tool_has_no_tier() {
    let n = names();
    assert!(n.tiers("create a branch").is_empty());
    assert!(n.tiers("bitbucket create_branch").is_empty());
    assert_eq!(tier_of(&[], 0), 0);
    assert_eq!(tier_of(&[(3, 2), (5, 4)], 5), 4);
    assert_eq!(tier_of(&[(3, 2)], 5), 0);
}
