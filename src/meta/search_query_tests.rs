//! How a query becomes groups of index terms: synonyms, decompounding, joined words, implied
//! terms, request boilerplate and the term cap.

use super::*;
use crate::meta::search::{SearchDoc, SearchParams};

fn index() -> LexicalIndex {
    LexicalIndex::build(
        &[
            SearchDoc::mcp("fs", "delete_file", "Delete a file"),
            SearchDoc::mcp("net", "open_web_socket", "Open a WebSocket to a url"),
            SearchDoc::mcp("sys", "whoami", "The current user. Get help on it"),
            SearchDoc::mcp("weather", "forecast", "Weather forecast for a city"),
        ],
        &SearchParams::default(),
    )
}

fn term(index: &LexicalIndex, word: &str) -> u32 {
    index.term(&index.analyzer.stem_word(word).unwrap()).unwrap()
}

fn groups(index: &LexicalIndex, q: &str) -> Vec<QueryGroup> {
    query_groups(index, &SearchParams::default(), q)
}

#[test]
fn a_synonym_joins_the_word_s_group_at_its_weight() {
    let index = index();
    let g = groups(&index, "remove");
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].terms, vec![(term(&index, "delete"), 0.4)], "remove itself is not indexed");
    let g = groups(&index, "delete");
    assert_eq!(g[0].terms[0], (term(&index, "delete"), 1.0));
}

#[test]
fn an_unknown_word_splits_into_two_known_ones() {
    let index = index();
    let g = groups(&index, "websocket");
    let terms: Vec<_> = g.iter().map(|g| (g.terms[0].0, g.compound)).collect();
    assert_eq!(terms, vec![(term(&index, "web"), false), (term(&index, "socket"), false)]);
}

#[test]
fn adjacent_words_that_join_into_a_known_one_are_evidence_only() {
    let index = index();
    let g = groups(&index, "who am i");
    // "who", "am" and "i" are stop words: only the joined word is left, and it is a compound.
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].terms, vec![(term(&index, "whoami"), 1.0)]);
    assert!(g[0].compound && !g[0].implied);
}

#[test]
fn a_path_implies_a_file_at_half_weight_that_counts_for_no_coverage() {
    let index = index();
    let g = groups(&index, "remove /root/notes/a.md");
    let implied: Vec<_> = g.iter().filter(|g| g.implied).collect();
    assert_eq!(implied.len(), 1);
    assert_eq!(implied[0].terms, vec![(term(&index, "file"), 0.5)]);
    assert!(implied[0].compound);
    // The directories are a location, not words of the query: remove, md, and the file.
    assert_eq!(g.len(), 3, "{g:?}");
    assert!(groups(&index, "remove notes").iter().all(|g| !g.implied));
    // A URL implies "url".
    let g = groups(&index, "open https://example.com/chat");
    assert!(g.iter().any(|g| g.implied && g.terms == vec![(term(&index, "url"), 0.5)]));
}

#[test]
fn request_boilerplate_is_dropped_from_long_queries_only() {
    let index = index();
    let help = term(&index, "help");
    let has_help = |q: &str| groups(&index, q).iter().any(|g| g.terms.iter().any(|t| t.0 == help));
    assert!(has_help("get help"));
    assert!(!has_help("help me find the weather forecast for tomorrow morning in paris city"));
}

#[test]
fn a_long_query_keeps_its_first_distinct_terms() {
    let index = index();
    let q: Vec<String> = (0..100u8).map(|i| format!("zq{}{}", (b'a' + i / 26) as char, (b'a' + i % 26) as char)).collect();
    assert_eq!(groups(&index, &q.join(" ")).len(), MAX_QUERY_TERMS);
    // A repeated word is one group.
    assert_eq!(groups(&index, "delete delete deleting").len(), 1);
}
