//! The semantic half of a hybrid `tool_search`: what a sentence-embedding model reads for a
//! tool, and how a query's cosines fuse with the lexical scores.
//!
//! Fusion: the lexical score scaled by the best one of the query (so 1 at the top, 0 where no
//! word matched) plus `weight * cosine`. Scaling keeps one weight meaningful across queries
//! whose BM25F scores differ by orders of magnitude. A doc the words miss can rank on meaning
//! alone; exact names keep their tiers above everything.
//!
//! A doc without a vector yet (its cosine NaN, or past the end of `cosines`: during the first
//! embedding pass and after every sync) keeps its lexical standing: it is lent the cosine found
//! at its own lexical rank, so the k-th best doc by words gets the k-th best cosine of the
//! query among the docs that have one. Scored as cosine 0 instead, it would sink below every
//! embedded doc as soon as one had a vector. Lending by rank (a per-doc fallback) leaves the
//! fusion of embedded docs exactly as it was, tuned and measured; rank fusion (RRF) would
//! change it for everyone and still need a rank for the missing half. docs/benchmarks-history.md
//! "tool_search: Chinese queries, more development data, fusion while embedding (issue 26)" has
//! the figures with part of the catalog embedded ("Fusion while the catalog is being embedded").

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
    /// How well the model reads CJK text, against Latin text (0: not at all, 1: as well).
    /// all-MiniLM-L6-v2 is an English model: its cosines for a Chinese request are noise,
    /// while it reads the Latin words in one (GitHub, Slack).
    pub cjk: f32,
}

impl Blend<'_> {
    /// The weight for `query`: `weight` scaled by the share of its letters and digits the
    /// model reads (`cjk` for a CJK one, 1 for any other); `weight` for a query with none.
    pub fn weight_for(&self, query: &str) -> f32 {
        let (mut all, mut cjk) = (0u32, 0u32);
        for c in query.chars().filter(|c| c.is_alphanumeric()) {
            all += 1;
            cjk += super::search_cjk::is_cjk(c) as u32;
        }
        if all == 0 {
            return self.weight;
        }
        self.weight * ((all - cjk) as f32 + self.cjk * cjk as f32) / all as f32
    }
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
    let cosine = |d: usize| b.cosines.get(d).copied().filter(|c| c.is_finite());
    let lent = lent_cosines(&b, n_docs, touched, scores, &keep, cosine);
    for d in 0..n_docs {
        if !keep(d) {
            continue;
        }
        let cos = cosine(d).or_else(|| lent.binary_search_by_key(&(d as u32), |l| l.0).ok().map(|i| lent[i].1)).unwrap_or(0.0);
        let s = lexical(d) + (b.weight * cos) as f64;
        let tier = tier_of(tiers, d as u32);
        if s > 0.0 || tier > 0 {
            top.offer(s.max(0.0) + tier as f64 * TIER_SCORE, d as u32);
        }
    }
}

/// The cosines lent to the kept docs that words matched but that have no vector: each the
/// query's cosine at that doc's lexical rank among the kept docs with a vector (none when no
/// kept doc has one), or the lowest of them past their count. As (doc, cosine) by doc.
fn lent_cosines(
    b: &Blend<'_>,
    n_docs: usize,
    touched: &[u32],
    scores: &[f32],
    keep: &impl Fn(usize) -> bool,
    cosine: impl Fn(usize) -> Option<f32>,
) -> Vec<(u32, f32)> {
    let mut matched: Vec<u32> = touched.iter().copied().filter(|&d| keep(d as usize) && scores[d as usize] > 0.0).collect();
    if matched.iter().all(|&d| cosine(d as usize).is_some()) {
        return Vec::new();
    }
    // Lexical order, ties by doc (as `Top` breaks them); only ranks up to the last doc
    // without a vector are needed.
    matched.sort_unstable_by(|&x, &y| scores[y as usize].total_cmp(&scores[x as usize]).then(x.cmp(&y)));
    let deepest = matched.iter().rposition(|&d| cosine(d as usize).is_none()).unwrap_or(0) + 1;
    let mut known: Vec<f32> = (0..n_docs.min(b.cosines.len())).filter(|&d| keep(d)).filter_map(&cosine).collect();
    if known.is_empty() {
        return Vec::new();
    }
    let k = deepest.min(known.len());
    if k < known.len() {
        known.select_nth_unstable_by(k - 1, |x, y| y.total_cmp(x));
        known.truncate(k);
    }
    known.sort_unstable_by(|x, y| y.total_cmp(x));
    let mut lent: Vec<(u32, f32)> = matched[..deepest]
        .iter()
        .enumerate()
        .filter(|(_, &d)| cosine(d as usize).is_none())
        .map(|(rank, &d)| (d, known[rank.min(known.len() - 1)]))
        .collect();
    lent.sort_unstable_by_key(|l| l.0);
    lent
}

#[cfg(test)]
#[path = "search_blend_tests.rs"]
mod tests;
