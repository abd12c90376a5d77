//! Exact-name tiers of `tool_search`: a query that names a tool finds it first, whatever the
//! BM25F scores, because the model often searches for a name it already saw.
//!
//! A tier adds `TIER_SCORE` (10^6) per level to a hit's score, far above any BM25F score:
//! 4 = server-qualified exact name (`github create_branch`, `github/create_branch`,
//! `github__create_branch`, `mcp:github create_branch`), 3 = exact wire or raw name,
//! 2 and 1 = the same with case and separators ignored (`git clone` ~ `git_clone`). All
//! comparisons are case-insensitive.

use super::search::SearchDoc;
use super::search_text::{norm_literal, squash, FxHashMap};

/// Score added per exact-name tier; far above any BM25F score.
pub(super) const TIER_SCORE: f64 = 1.0e6;

/// The exact-name keys of a fixed set of docs.
pub(super) struct ExactNames {
    /// Lowercased wire and raw names -> docs (tier 3).
    exact_name: FxHashMap<String, Vec<u32>>,
    /// `"{qualifier}\u{1}{raw name}"`, lowercased, -> docs (tier 4). Qualifiers: namespace,
    /// label, server, and namespace/label without a `mcp:` prefix.
    exact_qual: FxHashMap<String, Vec<u32>>,
    /// Squashed (see `squash`) names -> (doc, tier): 2 qualified, 1 bare name.
    exact_sq: FxHashMap<String, Vec<(u32, u8)>>,
}

impl ExactNames {
    pub(super) fn build(docs: &[SearchDoc]) -> ExactNames {
        let mut exact_name: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let mut exact_qual: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let mut exact_sq: FxHashMap<String, Vec<(u32, u8)>> = FxHashMap::default();
        for (i, d) in docs.iter().enumerate() {
            let di = i as u32;
            let push = |map: &mut FxHashMap<String, Vec<u32>>, k: String| {
                let v = map.entry(k).or_default();
                if v.last() != Some(&di) {
                    v.push(di);
                }
            };
            push(&mut exact_name, d.name.to_lowercase());
            let mut sq: Vec<(String, u8)> = vec![(squash(&d.name), 1)];
            if let Some(raw) = &d.raw_name {
                let rl = raw.to_lowercase();
                push(&mut exact_name, rl.clone());
                sq.push((squash(raw), 1));
                let mut quals = vec![d.namespace.to_lowercase(), d.namespace_label.to_lowercase()];
                quals.extend(d.server.as_deref().map(str::to_lowercase));
                for j in 0..2 {
                    if let Some(rest) = quals[j].strip_prefix("mcp:") {
                        quals.push(rest.to_string());
                    }
                }
                quals.retain(|q| !q.is_empty());
                quals.sort();
                quals.dedup();
                for q in &quals {
                    push(&mut exact_qual, format!("{q}\u{1}{rl}"));
                    sq.push((format!("{}{}", squash(q), squash(raw)), 2));
                }
            }
            for (k, tier) in sq {
                if k.is_empty() {
                    continue;
                }
                let v = exact_sq.entry(k).or_default();
                match v.iter_mut().find(|(x, _)| *x == di) {
                    Some(e) => e.1 = e.1.max(tier),
                    None => v.push((di, tier)),
                }
            }
        }
        ExactNames {
            exact_name,
            exact_qual,
            exact_sq,
        }
    }

    /// Exact-name tiers of `query`: (doc, tier 1-4), a doc's best tier only.
    pub(super) fn tiers(&self, query: &str) -> Vec<(u32, u8)> {
        let mut tiers: Vec<(u32, u8)> = Vec::new();
        let mut add_tier = |d: u32, tier: u8| match tiers.iter_mut().find(|(x, _)| *x == d) {
            Some(e) => e.1 = e.1.max(tier),
            None => tiers.push((d, tier)),
        };
        let lit = norm_literal(query);
        for &d in self
            .exact_name
            .get(lit.as_str())
            .map_or(&[][..], |v| v.as_slice())
        {
            add_tier(d, 3);
        }
        for sep in [" ", "/", "__", ":", "."] {
            for (pos, _) in lit.match_indices(sep) {
                let key = format!("{}\u{1}{}", &lit[..pos], &lit[pos + sep.len()..]);
                for &d in self
                    .exact_qual
                    .get(key.as_str())
                    .map_or(&[][..], |v| v.as_slice())
                {
                    add_tier(d, 4);
                }
            }
        }
        for &(d, tier) in self
            .exact_sq
            .get(squash(query).as_str())
            .map_or(&[][..], |v| v.as_slice())
        {
            add_tier(d, tier);
        }
        tiers
    }
}

/// The tier of `doc` among `tiers`, 0 for none.
pub(super) fn tier_of(tiers: &[(u32, u8)], doc: u32) -> u8 {
    if tiers.is_empty() {
        0
    } else {
        tiers.iter().find(|(x, _)| *x == doc).map_or(0, |t| t.1)
    }
}

#[cfg(test)]
#[path = "search_tiers_tests.rs"]
mod tests;
