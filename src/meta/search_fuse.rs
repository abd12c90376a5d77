//! Several embedding models in one `tool_search` (`search.embeddings` a list): each model's
//! cosines weighted by the share of the query's letters it reads, then summed into the one
//! semantic signal `search_blend` fuses with the lexical scores.
//!
//! A model reads CJK letters `cjk` well and the others `latin` well (0 to 1), so a Chinese query
//! leans on USE-m3 and an English one on MiniLM, and a mixed one ("在GitHub上创建分支") on both
//! by their shares. An English model asked a Chinese request reads its English gloss instead
//! (`glossed_for`), alone or beside others: its CJK letters then count at `Options::gloss`. With
//! one model and no gloss this is `Blend::weight_for` exactly. A doc lacking the vector
//! of a model that counts for this query has no fused cosine (NaN): it is lent one by its
//! lexical rank, as any doc without a vector.

use super::search_cjk::is_cjk;
use crate::embed::{Coverage, QueryVector, Semantic};
use crate::embed::store::Key;

/// One model's part: its cosines (NaN: no vector) and its weight for this query.
pub struct Part<'a> {
    pub cosines: &'a [f32],
    pub weight: f32,
}

/// A model's weight for `query`: `weight` scaled by the share of the query's letters and digits
/// it reads (`cjk` for a letter of another script than Latin: CJK, kana, Hangul, Cyrillic,
/// Arabic...; `latin` for a Latin letter or a digit); `weight * latin` for a query with none.
/// So a query is routed by what it is written in: all-MiniLM-L6-v2 reads English, USE-m3 the
/// rest, a mixed one ("在GitHub上创建分支") goes to both by their shares (routing the whole query
/// by its main script did worse on the tune half: docs/benchmarks-history.md "Two local models:
/// USE-m3 beside MiniLM (issue 41)", "Routing: the alternatives tried").
pub fn weight_for(query: &str, weight: f32, cjk: f32, latin: f32) -> f32 {
    let (mut all, mut han) = (0u32, 0u32);
    for c in query.chars().filter(|c| c.is_alphanumeric()) {
        all += 1;
        han += (is_cjk(c) || !is_latin(c)) as u32;
    }
    if all == 0 {
        return weight * latin;
    }
    weight * (latin * (all - han) as f32 + cjk * han as f32) / all as f32
}

/// What model `m` reads of `query`: the English gloss of its Chinese words (Latin words kept
/// in place) for a model that reads no CJK but their gloss (`Options::gloss`), when the gloss
/// has words for it; `None`: the query as written.
pub fn glossed_for(query: &str, m: &Semantic) -> Option<String> {
    // A model that reads CJK itself (`cjk` above 0) reads the request as written.
    if m.gloss() <= 0.0 || m.cjk() > 0.0 || !query.chars().any(is_cjk) {
        return None;
    }
    super::search_gloss::english_of(query)
}

/// `m`'s weight for `query` (`weight_for`), its CJK letters counted at `Options::gloss` when
/// it reads their gloss.
pub fn model_weight(query: &str, m: &Semantic) -> f32 {
    let cjk = if glossed_for(query, m).is_some() { m.gloss() } else { m.cjk() };
    weight_for(query, m.weight(), cjk, m.latin())
}

/// Whether a search for `query` goes through `fused` rather than one model's plain blend:
/// several models, or one that reads this query's gloss.
pub fn is_fused(s: &Semantic, query: &str) -> bool {
    s.models().len() > 1 || glossed_for(query, s).is_some()
}

/// A digit or a letter of the Latin script (ASCII, Latin-1, Latin Extended, fullwidth Latin).
fn is_latin(c: char) -> bool {
    c.is_ascii() || c.is_numeric() || matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF | 0xFF10..=0xFF19 | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A)
}

/// Each model's vector of `query`, in `Semantic::models` order, asked at once; with several
/// models, only of those that read some of its letters (`weight_for` above 0): an English
/// query is not embedded by USE-m3, so it costs one model's time, not two on the same cores. A
/// model that reads the gloss is asked the gloss. A model not asked has an `Err` saying so.
pub async fn query_vectors(s: &Semantic, query: &str) -> Vec<Result<QueryVector, String>> {
    if !is_fused(s, query) {
        return s.query_all(query).await;
    }
    let ask = s.models().into_iter().map(|m| async move {
        if model_weight(query, m) > 0.0 {
            m.query(glossed_for(query, m).as_deref().unwrap_or(query)).await
        } else {
            Err(NOT_ASKED.to_string())
        }
    });
    futures::future::join_all(ask).await
}

/// Why a model has no vector of a query in a fused search: it reads none of its letters.
pub const NOT_ASKED: &str = "not asked: the model reads none of the query's letters";

/// The weighted sum of the parts' cosines, doc by doc; NaN where a part that counts has none.
pub fn fuse(parts: &[Part<'_>], n_docs: usize) -> Vec<f32> {
    (0..n_docs)
        .map(|d| {
            parts.iter().filter(|p| p.weight > 0.0).fold(0f32, |acc, p| acc + p.weight * p.cosines.get(d).copied().unwrap_or(f32::NAN))
        })
        .collect()
}

/// The semantic signal of a fused search: the weighted cosines (to blend at weight 1, every
/// letter read) and the coverage, the first model's with the others' in `also`. `vectors` are
/// each model's query vector, in `Semantic::models` order.
pub fn fused(s: &Semantic, keys: &[Key], query: &str, vectors: Option<Vec<Result<QueryVector, String>>>) -> (Option<Vec<f32>>, Coverage) {
    let models = s.models();
    let mut covs = Vec::with_capacity(models.len());
    let mut cosines: Vec<Option<Vec<f32>>> = Vec::with_capacity(models.len());
    let mut vectors = vectors.map(|v| v.into_iter().map(Some).collect::<Vec<_>>());
    for (i, m) in models.iter().enumerate() {
        let q = vectors.as_mut().and_then(|v| v.get_mut(i)).and_then(Option::take);
        let (c, cov) = match q {
            Some(Ok(q)) => {
                let (c, cov) = m.cosines(keys, &q);
                (cov.used.then_some(c), cov)
            }
            Some(Err(why)) => (None, m.coverage(keys, Some(why))),
            None => (None, m.coverage(keys, None)),
        };
        cosines.push(c);
        covs.push(cov);
    }
    let parts: Vec<Part<'_>> = models
        .iter()
        .zip(&cosines)
        .filter_map(|(m, c)| c.as_deref().map(|cosines| Part { cosines, weight: model_weight(query, m) }))
        .collect();
    // A model that failed gives way to the others (their weights as they are); none left: lexical.
    let out = (!parts.is_empty()).then(|| fuse(&parts, keys.len()));
    let mut lead = covs.remove(0);
    lead.used = out.is_some();
    lead.also = covs;
    (out, lead)
}

#[cfg(test)]
#[path = "search_fuse_tests.rs"]
mod tests;
