//! Ranking of `tool_search`: a query's BM25F score per doc, three multipliers, and the top
//! `limit` kept best first.
//!
//! The model reads only the first few hits, so the top of the list is what matters. The
//! multipliers on the BM25F sum are all generic rather than tuned to particular queries:
//! - coverage `1 + 0.8 * matched/terms`: short queries are conjunctive in spirit, so a doc matching
//!   every word should beat one matching a single rare word many times;
//! - name coverage `1 + 0.5 * name_terms_matched/name_terms`: "cancel a subscription" is
//!   `cancel_subscription`, not `list_subscriptions`; a name the query fully explains wins;
//! - server prior `1 + 0.8 * server/best_server`: each namespace is also scored as one BM25
//!   document (`search_lexical`), so a query that says "Jira" or describes a service's domain
//!   lifts that server's tools even when the word is not in the individual tool.
//!
//! A query word with synonyms scores its best variant per doc, never their sum. Ties break by
//! doc index, so the same query over the same docs gives the same list.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::search::{Hit, SearchParams};
use super::search_lexical::{LexicalIndex, NAME_FLAG};
use super::search_query::QueryGroup;
use super::search_tiers::{tier_of, TIER_SCORE};

/// BM25F scores of every doc any query term reaches: `(touched docs, dense scores)`.
pub(super) fn score(index: &LexicalIndex, p: &SearchParams, groups: &[QueryGroup]) -> (Vec<u32>, Vec<f32>) {
    // Coverage counts the query's own terms; compounds only add evidence.
    let n_groups = groups.iter().filter(|g| !g.compound).count().max(1) as f32;
    let (coverage_bonus, name_bonus, server_prior) =
        (p.coverage_bonus, p.name_bonus, p.server_prior);

    let mut acc = vec![0f32; index.n_docs];
    let mut matched = vec![0u16; index.n_docs];
    let mut touched: Vec<u32> = Vec::new();
    // Name terms the query accounts for (synonyms count at their weight).
    let mut name_hit = vec![0f32; index.n_docs];
    let mut gbest = vec![0f32; index.n_docs];
    let mut gname = vec![0f32; index.n_docs];
    let mut gtouched: Vec<u32> = Vec::new();
    for g in groups {
        let counts = !g.implied as u16;
        let g = &g.terms;
        if g.len() == 1 {
            let (t, w) = g[0];
            let idf = index.idf[t as usize] * w;
            let (ds, ws) = index.postings(t);
            for (&raw, &pw) in ds.iter().zip(ws) {
                let d = (raw & !NAME_FLAG) as usize;
                if acc[d] == 0.0 && matched[d] == 0 {
                    touched.push(d as u32);
                }
                acc[d] += idf * pw;
                matched[d] += counts;
                if raw & NAME_FLAG != 0 {
                    name_hit[d] += w.min(1.0);
                }
            }
            continue;
        }
        for &(t, w) in g {
            let idf = index.idf[t as usize] * w;
            let (ds, ws) = index.postings(t);
            for (&raw, &pw) in ds.iter().zip(ws) {
                let d = (raw & !NAME_FLAG) as usize;
                let s = idf * pw;
                let slot = &mut gbest[d];
                if *slot == 0.0 {
                    gtouched.push(d as u32);
                }
                if s > *slot {
                    *slot = s;
                }
                if raw & NAME_FLAG != 0 && w > gname[d] {
                    gname[d] = w;
                }
            }
        }
        for &d in &gtouched {
            let d = d as usize;
            if acc[d] == 0.0 && matched[d] == 0 {
                touched.push(d as u32);
            }
            acc[d] += gbest[d];
            matched[d] += counts;
            name_hit[d] += gname[d];
            gbest[d] = 0.0;
            gname[d] = 0.0;
        }
        gtouched.clear();
    }

    // Server prior: score each namespace group as one document, best group = 1.
    let mut gscore = vec![0f32; index.n_groups];
    if server_prior > 0.0 {
        let mut gbest = vec![0f32; index.n_groups];
        for g in groups {
            for &(t, w) in &g.terms {
                let idf = index.gidf[t as usize] * w;
                let (gs, ws) = index.group_postings(t);
                for (&grp, &pw) in gs.iter().zip(ws) {
                    let slot = &mut gbest[grp as usize];
                    *slot = slot.max(idf * pw);
                }
            }
            for (s, b) in gscore.iter_mut().zip(gbest.iter_mut()) {
                *s += *b;
                *b = 0.0;
            }
        }
        let max = gscore.iter().copied().fold(0f32, f32::max);
        if max > 0.0 {
            for s in gscore.iter_mut() {
                *s = 1.0 + server_prior * *s / max;
            }
        } else {
            gscore.fill(1.0);
        }
    } else {
        gscore.fill(1.0);
    }

    for &d in &touched {
        let di = d as usize;
        let cov = (matched[di] as f32 / n_groups).min(1.0);
        let name_cov = (name_hit[di] / index.name_len[di].max(1) as f32).min(1.0);
        acc[di] *= (1.0 + coverage_bonus * cov)
            * (1.0 + name_bonus * name_cov)
            * gscore[index.doc_group[di] as usize];
    }
    (touched, acc)
}

/// A scored candidate ordered best-last: higher score, then lower doc index, is greater.
#[derive(Clone, Copy, PartialEq)]
struct Ranked(f64, u32);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// The best `limit` candidates offered, in a bounded min-heap (root = worst kept).
pub(super) struct Top {
    limit: usize,
    heap: BinaryHeap<Reverse<Ranked>>,
}

impl Top {
    pub(super) fn new(limit: usize) -> Top {
        Top {
            limit,
            heap: BinaryHeap::with_capacity(limit + 1),
        }
    }

    pub(super) fn offer(&mut self, score: f64, doc: u32) {
        let c = Ranked(score, doc);
        if self.heap.len() < self.limit {
            self.heap.push(Reverse(c));
        } else if self.heap.peek().is_some_and(|w| c > w.0) {
            self.heap.pop();
            self.heap.push(Reverse(c));
        }
    }

    /// The kept candidates, best first.
    pub(super) fn into_hits(self) -> Vec<Hit> {
        let mut out: Vec<Ranked> = self.heap.into_iter().map(|r| r.0).collect();
        out.sort_unstable_by(|a, b| b.cmp(a));
        out.into_iter()
            .map(|Ranked(score, d)| Hit {
                doc: d as usize,
                score,
            })
            .collect()
    }
}

/// Offers the lexical candidates: every doc a query term reached, at its score plus its tier,
/// and the docs a tier found that no query term reached, at their tier alone.
pub(super) fn offer_lexical(
    top: &mut Top,
    touched: &[u32],
    scores: &[f32],
    tiers: &[(u32, u8)],
    keep: impl Fn(usize) -> bool,
) {
    for &d in touched {
        if keep(d as usize) {
            top.offer(scores[d as usize] as f64 + tier_of(tiers, d) as f64 * TIER_SCORE, d);
        }
    }
    for &(d, tier) in tiers {
        if scores[d as usize] == 0.0 && keep(d as usize) {
            top.offer(tier as f64 * TIER_SCORE, d);
        }
    }
}

#[cfg(test)]
#[path = "search_rank_tests.rs"]
mod tests;
