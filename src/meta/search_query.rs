//! A `tool_search` query as groups of index terms, read against the index's vocabulary.
//!
//! Query and documents share one analyzer (`search_text`): identifiers split on separators,
//! camelCase and digit boundaries, English stop words dropped, Snowball stems. On the query side
//! only, all generic rather than tuned to particular queries:
//! - a small synonym table (remove ~ delete ~ uninstall, fetch ~ get ...) at weight 0.4, grouped
//!   with the word so that ranking scores the best variant per query word and synonyms never
//!   double count;
//! - unknown words are split into two known ones ("websocket" -> web socket, matching `WebSocket`);
//! - adjacent words whose concatenation is known join ("who am i" -> whoami), as evidence only;
//! - a CJK run is its character bigrams (`search_cjk`), each a term of its own, plus the English
//!   of its common intent words (`search_gloss`: 截图 -> screenshot); with
//!   `SearchParams::cjk_dead_grams` off, a bigram no tool contains is left out rather than
//!   counted against coverage.
//!
//! Long task descriptions ("Generate a deep report of bitcoin and save it in
//! /root/markdown/bitcoin.md") get two more rules:
//! - paths and URLs are read as what they are (`search_text::query_words`): a path's directory
//!   components are a location, not a topic, and are dropped ("/root/music" must not pull the
//!   music tools); its base name and extension are kept; and the query gains the implied term
//!   "file" (for a URL, "url") at weight 0.5, since "save it to /root/a.md" asks for a file tool
//!   without saying "file". Implied terms add evidence but do not count for coverage;
//! - from 8 content words on, the boilerplate of asking ("help me", "tell me", "give me",
//!   "provide") is dropped: in a request that long it names no tool, while in a short query
//!   every word may be the intent ("get help") and is kept.

use super::search::SearchParams;
use super::search_cjk::{cjk_grams, is_cjk_word};
use super::search_gloss::gloss_with;
use super::search_lexical::LexicalIndex;
use super::search_text::{is_request_boilerplate, is_stop_word, query_words, WordOrigin};

/// Distinct query terms considered (the rest of a very long query is ignored). This also bounds
/// a BM25F score well below `search_tiers::TIER_SCORE`.
const MAX_QUERY_TERMS: usize = 64;
/// Longer unknown query words are not split into two known ones.
const MAX_COMPOUND_LEN: usize = 40;

/// One query term: the index terms that stand for it, with weights (1 for the term itself).
#[derive(Debug)]
pub(super) struct QueryGroup {
    pub(super) terms: Vec<(u32, f32)>,
    /// Evidence only, not counted for coverage: a concatenation of adjacent query words, or a
    /// term implied by a path or URL in the query.
    pub(super) compound: bool,
    /// Implied by a path or URL: not counted as matched either.
    pub(super) implied: bool,
}

/// Query terms as groups of interchangeable index terms: each distinct stem with its
/// synonyms; out-of-vocabulary words split into two known words ("subaccount" -> sub +
/// account); and runs of 2-3 adjacent words whose concatenation is a known word
/// ("who am i" -> whoami, "node pool" -> nodepool).
pub(super) fn query_groups(index: &LexicalIndex, params: &SearchParams, query: &str) -> Vec<QueryGroup> {
    let analyzer = &index.analyzer;
    let mut words: Vec<String> = Vec::new();
    let (mut has_path, mut has_url) = (false, false);
    query_words(query, |w, origin| {
        has_path |= origin == WordOrigin::Path;
        has_url |= origin == WordOrigin::Url;
        words.push(w.to_string());
    });
    // Long requests: drop the boilerplate of asking ("help me", "tell me", "give me").
    let n_content = words.iter().filter(|w| !is_stop_word(w)).count();
    let drop_boilerplate = n_content >= params.boilerplate_min_terms;

    let mut seen: Vec<String> = Vec::new();
    let mut groups: Vec<QueryGroup> = Vec::new();
    let add =
        |stem: String, compound: bool, groups: &mut Vec<QueryGroup>, seen: &mut Vec<String>| {
            if seen.contains(&stem) || groups.len() >= MAX_QUERY_TERMS {
                return;
            }
            let mut terms = Vec::new();
            if let Some(id) = index.term(&stem) {
                terms.push((id, 1.0));
            }
            for syn in analyzer.synonyms_of(&stem) {
                if let Some(id) = index.term(syn) {
                    if !terms.iter().any(|(x, _)| *x == id) {
                        terms.push((id, params.synonym_weight));
                    }
                }
            }
            seen.push(stem);
            if !terms.is_empty() || !compound {
                groups.push(QueryGroup {
                    terms,
                    compound,
                    implied: false,
                });
            }
        };
    for w in &words {
        if drop_boilerplate && is_request_boilerplate(w) {
            continue;
        }
        if is_cjk_word(w) {
            // A CJK run: the English of its intent words (`search_gloss`), then its grams,
            // each a term of its own (`search_cjk`).
            let mut terms = Vec::new();
            // What the table left, by the dictionary: a term of its own for each word, any of
            // its senses the index knows matching, at a lower weight.
            let mut dict_groups: Vec<QueryGroup> = Vec::new();
            if params.gloss {
                let use_dict = params.dictionary_weight > 0.0;
                gloss_with(w, use_dict, |en| terms.extend(analyzer.stem_word(en)), |_, en| {
                    let mut ids: Vec<(u32, f32)> = Vec::new();
                    for id in en.split(' ').filter_map(|e| analyzer.stem_word(e).and_then(|s| index.term(&s))) {
                        if !ids.iter().any(|(x, _)| *x == id) {
                            ids.push((id, params.dictionary_weight));
                        }
                    }
                    if !ids.is_empty() {
                        dict_groups.push(QueryGroup { terms: ids, compound: false, implied: false });
                    }
                });
            }
            let room = MAX_QUERY_TERMS.saturating_sub(groups.len());
            groups.extend(dict_groups.into_iter().take(room));
            cjk_grams(w, |g| {
                if params.cjk_dead_grams || index.term(g).is_some() {
                    terms.push(g.to_string());
                }
            });
            for t in terms {
                add(t, false, &mut groups, &mut seen);
            }
            continue;
        }
        let Some(stem) = analyzer.stem_word(w) else {
            continue;
        };
        if index.term(&stem).is_none() && (6..=MAX_COMPOUND_LEN).contains(&w.len()) {
            // Decompound an unknown word into the split whose rarer half is most common
            // (each cut stems both halves: quadratic in the word, so only short words).
            let mut best: Option<(u32, String, String)> = None;
            for cut in 3..=w.len() - 3 {
                if !w.is_char_boundary(cut) {
                    continue;
                }
                let (a, b) = (&w[..cut], &w[cut..]);
                let (Some(sa), Some(sb)) = (analyzer.stem_word(a), analyzer.stem_word(b)) else {
                    continue;
                };
                if let (Some(ta), Some(tb)) = (index.term(&sa), index.term(&sb)) {
                    let df = index.df(ta).min(index.df(tb));
                    if best.as_ref().is_none_or(|x| df > x.0) {
                        best = Some((df, sa, sb));
                    }
                }
            }
            if let Some((_, sa, sb)) = best {
                add(sa, false, &mut groups, &mut seen);
                add(sb, false, &mut groups, &mut seen);
                continue;
            }
        }
        add(stem, false, &mut groups, &mut seen);
    }
    // A path means the request involves a file; a URL, a web address. Neither word is
    // usually written out ("save it to /root/a.md"), yet tools are named for it.
    if params.implied_weight > 0.0 {
        for (on, w) in [(has_path, "file"), (has_url, "url")] {
            if on {
                if let Some(stem) = analyzer.stem_word(w) {
                    let n = groups.len();
                    add(stem, true, &mut groups, &mut seen);
                    if groups.len() > n {
                        groups[n].implied = true;
                        for t in &mut groups[n].terms {
                            t.1 *= params.implied_weight;
                        }
                    }
                }
            }
        }
    }
    for len in 2..=3 {
        for win in words.windows(len) {
            if win.iter().any(|w| is_cjk_word(w)) {
                continue;
            }
            let joined: String = win.concat();
            if joined.len() < 5 {
                continue;
            }
            if let Some(stem) = analyzer.stem_word(&joined) {
                if index.term(&stem).is_some() {
                    add(stem, true, &mut groups, &mut seen);
                }
            }
        }
    }
    groups.retain(|g| !g.terms.is_empty() || !g.compound);
    groups
}

#[cfg(test)]
#[path = "search_query_tests.rs"]
mod tests;
