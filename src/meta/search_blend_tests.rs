//! The fusion rules (scaling, weight, missing vectors, tiers, the filter) and the text a model
//! embeds for a tool.

use super::*;

/// Fused hits of docs with these lexical `scores` (0: no word matched) and `tiers`.
fn fuse(scores: &[f32], cosines: &[f32], weight: f32, tiers: &[(u32, u8)], keep: impl Fn(usize) -> bool) -> Vec<(usize, f64)> {
    let touched: Vec<u32> = (0..scores.len() as u32).filter(|&d| scores[d as usize] > 0.0).collect();
    let mut top = Top::new(10);
    offer_blended(&mut top, Blend { cosines, weight }, scores.len(), &touched, scores, tiers, keep);
    top.into_hits().iter().map(|h| (h.doc, h.score)).collect()
}

#[test]
fn the_lexical_score_is_scaled_to_the_best_and_the_cosine_added_at_its_weight() {
    let hits = fuse(&[4.0, 2.0, 0.0], &[0.0, 0.5, 0.25], 2.0, &[], |_| true);
    assert_eq!(hits, vec![(1, 0.5 + 1.0), (0, 1.0), (2, 0.5)]);
}

#[test]
fn a_doc_without_a_vector_ranks_on_its_words_alone() {
    // NaN: not embedded yet; past the end of `cosines`: the same.
    let hits = fuse(&[4.0, 2.0, 1.0, 0.0], &[f32::NAN, 0.5], 1.0, &[], |_| true);
    assert_eq!(hits, vec![(0, 1.0), (1, 1.0), (2, 0.25)], "ties by doc");
    // No vector anywhere: the lexical order, and no doc the words missed.
    let hits = fuse(&[1.0, 3.0, 0.0], &[f32::NAN; 3], 1.0, &[], |_| true);
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 0]);
}

#[test]
fn a_doc_with_nothing_for_it_is_left_out_unless_a_tier_names_it() {
    let hits = fuse(&[0.0, 0.0], &[-0.5, -0.5], 1.0, &[(1, 2)], |_| true);
    assert_eq!(hits, vec![(1, 2.0 * TIER_SCORE)], "a negative fused score counts as 0 under a tier");
}

#[test]
fn the_best_lexical_score_is_taken_among_the_docs_the_filter_keeps() {
    let hits = fuse(&[8.0, 2.0], &[0.0, 0.0], 1.0, &[], |d| d == 1);
    assert_eq!(hits, vec![(1, 1.0)]);
}

#[test]
fn the_embedding_text_says_namespace_name_words_and_a_cut_description() {
    let mut d = SearchDoc::mcp("github", "createBranch", "  Create a new branch.  ");
    d.namespace_label = "mcp:GitHub".into();
    assert_eq!(d.embedding_text(), "mcp:GitHub create branch: Create a new branch.");
    // Cut at EMBED_CHARS bytes, back to a character boundary ("é" is two bytes).
    d.description = format!("a{}", "é".repeat(EMBED_CHARS));
    let text = d.embedding_text();
    let desc = text.split_once(": ").unwrap().1;
    assert_eq!(desc.len(), EMBED_CHARS - 1);
    assert!(desc.ends_with('é'));
}
