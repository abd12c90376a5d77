//! The fusion rules (scaling, weight, missing vectors, tiers, the filter) and the text a model
//! embeds for a tool.

use super::*;

/// Fused hits of docs with these lexical `scores` (0: no word matched) and `tiers`.
fn fuse(scores: &[f32], cosines: &[f32], weight: f32, tiers: &[(u32, u8)], keep: impl Fn(usize) -> bool) -> Vec<(usize, f64)> {
    let touched: Vec<u32> = (0..scores.len() as u32).filter(|&d| scores[d as usize] > 0.0).collect();
    let mut top = Top::new(10);
    offer_blended(&mut top, Blend { cosines, weight, cjk: 0.0 }, scores.len(), &touched, scores, tiers, keep);
    top.into_hits().iter().map(|h| (h.doc, h.score)).collect()
}

#[test]
fn the_lexical_score_is_scaled_to_the_best_and_the_cosine_added_at_its_weight() {
    let hits = fuse(&[4.0, 2.0, 0.0], &[0.0, 0.5, 0.25], 2.0, &[], |_| true);
    assert_eq!(hits, vec![(1, 0.5 + 1.0), (0, 1.0), (2, 0.5)]);
}

#[test]
fn a_doc_without_a_vector_is_lent_the_cosine_at_its_lexical_rank() {
    // NaN: not embedded yet; past the end of `cosines`: the same. Doc 0 is first by words, so
    // it is lent the best cosine (0.5); doc 2 is third, past the one doc with a vector, so it
    // is lent the lowest known (0.5 again).
    let hits = fuse(&[4.0, 2.0, 1.0, 0.0], &[f32::NAN, 0.5], 1.0, &[], |_| true);
    assert_eq!(hits, vec![(0, 1.5), (1, 1.0), (2, 0.75)]);
    let hits = fuse(&[4.0, 2.0, 1.0, 0.0], &[0.25, 0.5, f32::NAN, 0.75], 1.0, &[], |_| true);
    assert_eq!(hits, vec![(0, 1.25), (1, 1.0), (3, 0.75), (2, 0.25 + 0.25)], "third by words: the third best cosine");
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

#[test]
fn an_unembedded_doc_the_words_match_best_stays_first_while_others_are_embedded() {
    // Doc 0 matches the query best by words; the others match less and, once embedded, have
    // high cosines. Scored as cosine 0 (before), doc 0 fell behind every embedded doc.
    let scores = [10.0, 6.0, 5.0, 4.0, 0.0];
    let mut cosines = [f32::NAN; 5];
    for embedded in 1..5 {
        cosines[embedded] = 0.9 - 0.1 * embedded as f32;
        let hits = fuse(&scores, &cosines, 1.0, &[], |_| true);
        assert_eq!(hits[0].0, 0, "with {embedded} docs embedded: {hits:?}");
        // The docs with vectors keep the order the fusion gives them.
        let zero = cosines.map(|c| if c.is_nan() { 0.0 } else { c });
        let before = fuse(&scores, &zero, 1.0, &[], |_| true);
        assert_ne!(before[0].0, 0, "cosine 0 sinks it (the bug this fixes)");
    }
    // Once it has its own vector, its own cosine counts, whatever it is.
    cosines[0] = -0.5;
    assert_ne!(fuse(&scores, &cosines, 1.0, &[], |_| true)[0].0, 0);
}

#[test]
fn a_query_weighs_the_cosine_by_the_share_of_it_the_model_reads() {
    let b = |cjk: f32| Blend { cosines: &[], weight: 4.0, cjk };
    // An English model (cjk 0): a Latin query keeps the weight, a Chinese one none, a mixed one
    // its Latin share (github: 6 of 11 letters).
    assert_eq!(b(0.0).weight_for("create a branch"), 4.0);
    assert_eq!(b(0.0).weight_for("给这个网页截个图"), 0.0);
    assert!((b(0.0).weight_for("在github上建分支") - 4.0 * 6.0 / 11.0).abs() < 1e-6);
    // A model that reads CJK half as well; one that reads it as well; no letters at all.
    assert_eq!(b(0.5).weight_for("截图"), 2.0);
    assert_eq!(b(1.0).weight_for("给这个网页截个图"), 4.0);
    assert_eq!(b(0.0).weight_for("?! ..."), 4.0);
}
