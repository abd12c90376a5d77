//! The semantic half of a hybrid `tool_search`: what a sentence-embedding model reads for a
//! tool, and how a query's cosines fuse with the lexical scores.
//!
//! Fusion: the lexical score scaled by the best one of the query (so 1 at the top, 0 where no
//! word matched) plus `weight * cosine`. Scaling keeps one weight meaningful across queries
//! whose BM25F scores differ by orders of magnitude. A doc the words miss can rank on meaning
//! alone; exact names keep their tiers above everything. A doc without a vector (its cosine NaN,
//! or past the end of `cosines`) ranks on its words alone: no search waits for embeddings.

use super::search::SearchDoc;
use super::search_rank::Top;
use super::search_text::split_words;
use super::search_tiers::{tier_of, TIER_SCORE};

/// The semantic half of a hybrid search: each doc's cosine with the query (NaN: no vector
/// yet, so that doc is ranked lexically only) and its weight beside the lexical score.
#[derive(Clone, Copy, Debug)]
pub struct Blend<'a> {
    pub cosines: &'a [f32],
    pub weight: f32,
}

/// A description is cut here before it is embedded: the model reads 256 tokens at most.
const EMBED_CHARS: usize = 1500;

impl SearchDoc {
    /// What a sentence-embedding model reads for this tool: its namespace, its own name in
    /// words, and its description ("mcp:GitHub create branch: Create a new branch ...").
    pub fn embedding_text(&self) -> String {
        let mut name = String::new();
        split_words(self.raw_name.as_deref().unwrap_or(&self.name), |w| {
            if !name.is_empty() {
                name.push(' ');
            }
            name.push_str(w);
        });
        let mut desc = self.description.trim();
        if desc.len() > EMBED_CHARS {
            let mut cut = EMBED_CHARS;
            while !desc.is_char_boundary(cut) {
                cut -= 1;
            }
            desc = &desc[..cut];
        }
        format!("{} {name}: {desc}", self.namespace_label)
    }
}

/// Offers every kept doc of `n_docs` at its fused score plus its tier; a doc with neither a
/// positive fused score nor a tier is left out.
pub(super) fn offer_blended(
    top: &mut Top,
    b: Blend<'_>,
    n_docs: usize,
    touched: &[u32],
    scores: &[f32],
    tiers: &[(u32, u8)],
    keep: impl Fn(usize) -> bool,
) {
    let best = touched.iter().filter(|&&d| keep(d as usize)).map(|&d| scores[d as usize]).fold(0f32, f32::max);
    let lexical = |d: usize| if best > 0.0 { (scores[d] / best) as f64 } else { 0.0 };
    for d in 0..n_docs {
        if !keep(d) {
            continue;
        }
        let cos = b.cosines.get(d).copied().filter(|c| c.is_finite()).unwrap_or(0.0);
        let s = lexical(d) + (b.weight * cos) as f64;
        let tier = tier_of(tiers, d as u32);
        if s > 0.0 || tier > 0 {
            top.offer(s.max(0.0) + tier as f64 * TIER_SCORE, d as u32);
        }
    }
}

#[cfg(test)]
#[path = "search_blend_tests.rs"]
mod tests;
