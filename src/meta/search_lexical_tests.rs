//! The lexical index's own rules: field weights, length normalisation, the name flag, the
//! field cap, and the server documents.

use super::*;
use crate::meta::search::{SearchDoc, SearchParams};

fn build(docs: &[SearchDoc]) -> LexicalIndex {
    LexicalIndex::build(docs, &SearchParams::default())
}

/// The (doc, in name, weight) postings of `word` after analysis.
fn postings_of(index: &LexicalIndex, word: &str) -> Vec<(u32, bool, f32)> {
    let stem = index.analyzer.stem_word(word).expect("not a stop word");
    let t = index.term(&stem).unwrap_or_else(|| panic!("{word} not indexed"));
    let (ds, ws) = index.postings(t);
    ds.iter().zip(ws).map(|(&d, &w)| (d & !NAME_FLAG, d & NAME_FLAG != 0, w)).collect()
}

fn known(index: &LexicalIndex, word: &str) -> bool {
    index.term(&index.analyzer.stem_word(word).unwrap()).is_some()
}

#[test]
fn a_word_in_the_name_weighs_more_than_the_same_word_in_the_description() {
    let index = build(&[
        SearchDoc::mcp("a", "deploy_app", "Ships the code to production"),
        SearchDoc::mcp("a", "ship_code", "Deploy the app to production"),
    ]);
    let p = postings_of(&index, "deploy");
    assert_eq!(p.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(), vec![(0, true), (1, false)]);
    assert!(p[0].2 > p[1].2, "name {} vs description {}", p[0].2, p[1].2);
    // Both docs hold it: the same idf for both, so the posting weight alone decides.
    assert_eq!(index.df(index.term(&index.analyzer.stem_word("deploy").unwrap()).unwrap()), 2);
}

#[test]
fn a_short_description_weighs_a_word_more_than_a_long_one() {
    let long = format!("Sends a message. {}", "Lorem ipsum dolor sit amet. ".repeat(40));
    let index = build(&[
        SearchDoc::mcp("a", "one", "Sends a message"),
        SearchDoc::mcp("a", "two", &long),
    ]);
    let p = postings_of(&index, "message");
    assert_eq!(p.len(), 2);
    assert!(p[0].2 > p[1].2, "short {} vs long {}", p[0].2, p[1].2);
}

#[test]
fn stop_words_are_not_indexed_and_name_length_counts_distinct_name_terms() {
    let index = build(&[SearchDoc::mcp("a", "get_the_user_user", "the user")]);
    assert!(index.analyzer.stem_word("the").is_none());
    assert_eq!(index.name_len, vec![2], "get, user");
}

#[test]
fn a_description_is_indexed_up_to_its_word_cap() {
    let desc = format!("{} zebra", "word ".repeat(MAX_FIELD_WORDS));
    let index = build(&[SearchDoc::mcp("a", "tool", &desc)]);
    assert!(known(&index, "word"));
    assert!(!known(&index, "zebra"));
}

#[test]
fn each_namespace_is_one_server_document_that_holds_its_namespace_words() {
    let mut docs = vec![
        SearchDoc::mcp("jira", "create_issue", "Create an issue"),
        SearchDoc::mcp("jira", "list_issues", "List issues"),
        SearchDoc::mcp("linear", "create_issue", "Create an issue"),
    ];
    docs[1].namespace = "MCP:Jira".into();
    let index = build(&docs);
    assert_eq!(index.n_groups, 2, "namespaces compare case-insensitively");
    assert_eq!(index.doc_group, vec![0, 0, 1]);
    // No tool name says "jira", yet its server document does.
    let t = index.term(&index.analyzer.stem_word("jira").unwrap()).unwrap();
    let (groups, _) = index.group_postings(t);
    assert_eq!(groups, &[0]);
    // "issue" is in both servers; the one whose two names say it weighs it more.
    let t = index.term(&index.analyzer.stem_word("issue").unwrap()).unwrap();
    let (groups, weights) = index.group_postings(t);
    assert_eq!(groups, &[0, 1]);
    assert!(weights[0] > weights[1], "{weights:?}");
}
