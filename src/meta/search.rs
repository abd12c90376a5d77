//! Ranked `tool_search` over deferred tool definitions.
//!
//! Why this shape: the model calls `tool_search` with a handful of words (an intent paraphrase, a
//! few keywords, a service plus a verb, or a name it already saw) and reads only the first few
//! hits, so the top of the list is what matters and an exact name must never be outranked. Catalogs
//! reach thousands of tools and the search runs on every call, so everything that can be is done at
//! build time: words are stemmed once each and interned to `u32`, and every (term, doc) posting
//! already holds its saturated BM25F weight; a query is a few posting-list walks into a dense array.
//!
//! This module is the face the crate uses (`SearchIndex`, `SearchDoc`, `Hit`, `Blend`); the
//! rules live beside it, each with its numbers and the reasons for them:
//! - `search_text`: the analyzer both sides share (identifier splitting, stop words, stems);
//! - `search_cjk`: runs of Chinese or Japanese, cut into character bigrams on both sides;
//! - `search_gloss`: the English of a Chinese query's common intent words (query side only);
//! - `search_lexical`: the BM25F index, its six fields and their weights, the server documents;
//! - `search_query`: a query as groups of index terms (synonyms, decompounding, implied terms);
//! - `search_rank`: BM25F scores, the coverage, name and server multipliers, the top `limit`;
//! - `search_tiers`: exact names above every score (tiers 1-4, `10^6` each);
//! - `search_blend`: a hybrid search's cosines fused with the lexical scores, and the text a
//!   sentence-embedding model reads for a tool.

use serde_json::Value;

/// The identifier splitter shared by index and query, re-exported for callers and tests.
pub use super::search_text::split_words;
pub use super::search_blend::Blend;
/// Several models fused: each one's weight for a query, and the weighted cosines (`search_fuse`).
pub use super::search_fuse::{fuse, model_weight, query_vectors, weight_for as model_weight_for, Part};
/// The English words the Chinese gloss can add (tests check the catalogs use them).
pub use super::search_gloss::english_words as gloss_english_words;
pub use super::search_gloss::english_of as gloss_english_of;
pub use super::search_cjk::is_cjk;
use super::search_blend::offer_blended;
use super::search_lexical::{LexicalIndex, FIELDS};
use super::search_query::query_groups;
use super::search_rank::{offer_lexical, score, Top};
use super::search_tiers::ExactNames;

/// One tool definition as the search sees it.
#[derive(Debug, Clone)]
pub struct SearchDoc {
    /// Wire name, e.g. "mcp__github__createBranch" or "web_search".
    pub name: String,
    /// e.g. "mcp:github", "web".
    pub namespace: String,
    /// What search shows, e.g. "mcp:GitHub" (may equal namespace).
    pub namespace_label: String,
    /// The MCP tool's own name, e.g. "create_branch" (None for non-MCP).
    pub raw_name: Option<String>,
    /// MCP server id, e.g. "github".
    pub server: Option<String>,
    /// Full description.
    pub description: String,
    /// JSON Schema of the input.
    pub input_schema: Value,
}

/// One ranked result: `doc` indexes the docs given to [`SearchIndex::build`]. `score` is only
/// comparable within one query; an exact-name match adds `tier * 10^6` (tiers 1-4) to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f64,
}

/// Ranking knobs; [`Default`] holds the tuned values documented in `search_lexical`,
/// `search_query` and `search_rank`.
#[derive(Debug, Clone, Copy)]
pub struct SearchParams {
    pub k1: f32,
    /// Per field: name, namespace, description, parameter names, parameter text, description lead.
    pub field_weight: [f32; FIELDS],
    pub field_b: [f32; FIELDS],
    /// Weight of a synonym relative to the query's own term.
    pub synonym_weight: f32,
    /// Score multiplier is `1 + coverage_bonus * matched_terms / query_terms`.
    pub coverage_bonus: f32,
    /// Score multiplier is `1 + name_bonus * matched_name_terms / name_terms`: how much of the
    /// tool's own name the query accounts for.
    pub name_bonus: f32,
    /// Score multiplier is `1 + server_prior * server_score / best_server_score`, where a
    /// server (namespace) is scored as one BM25 document of all its tools.
    pub server_prior: f32,
    /// Field weights of that server document: namespace, tool names, descriptions.
    pub server_field_weight: [f32; 3],
    /// Weight of the term a path ("file") or URL ("url") in the query implies.
    pub implied_weight: f32,
    /// From this many query terms on, the boilerplate of a request ("help", "tell", "give") is
    /// dropped: in a long task description it names no tool.
    pub boilerplate_min_terms: usize,
    /// Whether a CJK run in the query also gets the English of its intent words (`search_gloss`).
    pub gloss: bool,
    /// Whether a CJK bigram that no tool contains still counts as a query term. Counted, the
    /// bigrams of fillers and of names no catalog holds (帮我, 北京) dilute the coverage of a
    /// Chinese query; not counted, coverage is over what can match.
    pub cjk_dead_grams: bool,
    /// Weight of a word the gloss's table lacks and the dictionary (CC-CEDICT) glosses; 0 turns
    /// the dictionary off. Its senses are many and general, so less than the table's 1.
    pub dictionary_weight: f32,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            k1: 1.4,
            field_weight: [6.0, 2.0, 1.0, 0.5, 0.2, 0.6],
            field_b: [0.2, 0.3, 0.75, 0.5, 0.3, 0.3],
            synonym_weight: 0.4,
            coverage_bonus: 0.8,
            name_bonus: 0.5,
            server_prior: 0.8,
            server_field_weight: [2.0, 0.75, 0.2],
            implied_weight: 0.5,
            boilerplate_min_terms: 8,
            gloss: true,
            cjk_dead_grams: false,
            dictionary_weight: 0.4,
        }
    }
}

/// Precomputed index over a fixed set of docs; cheap to query, rebuild on catalog change.
pub struct SearchIndex {
    params: SearchParams,
    lexical: LexicalIndex,
    names: ExactNames,
    /// Lowercased namespace, label and server, for the namespace filter.
    ns_keys: Vec<[String; 3]>,
}

impl SearchIndex {
    pub fn build(docs: &[SearchDoc]) -> SearchIndex {
        Self::build_with(docs, SearchParams::default())
    }

    pub fn build_with(docs: &[SearchDoc], params: SearchParams) -> SearchIndex {
        let ns_keys = docs
            .iter()
            .map(|d| {
                [
                    d.namespace.to_lowercase(),
                    d.namespace_label.to_lowercase(),
                    d.server.as_deref().unwrap_or("").to_lowercase(),
                ]
            })
            .collect();
        SearchIndex {
            lexical: LexicalIndex::build(docs, &params),
            names: ExactNames::build(docs),
            ns_keys,
            params,
        }
    }

    pub fn len(&self) -> usize {
        self.lexical.n_docs
    }

    pub fn is_empty(&self) -> bool {
        self.lexical.n_docs == 0
    }

    fn in_namespace(&self, doc: usize, ns: &str) -> bool {
        self.ns_keys[doc].iter().any(|k| !k.is_empty() && k == ns)
    }

    /// Ranked hits, best first, at most `limit`. `namespace` filters to docs whose namespace or
    /// namespace_label equals it (case-insensitive) or whose server equals it. Ties break by doc
    /// index. An empty or whitespace query gives no hits.
    pub fn search(&self, query: &str, namespace: Option<&str>, limit: usize) -> Vec<Hit> {
        self.search_blended(query, namespace, limit, None)
    }

    /// As `search`, fused with a semantic score when `blend` is given (`search_blend`): a doc
    /// the words miss can rank on meaning alone; exact names keep their tiers above everything.
    pub fn search_blended(&self, query: &str, namespace: Option<&str>, limit: usize, blend: Option<Blend<'_>>) -> Vec<Hit> {
        if query.trim().is_empty() || limit == 0 || self.is_empty() {
            return Vec::new();
        }
        let ns = namespace
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_lowercase);
        let keep = |d: usize| ns.as_ref().is_none_or(|ns| self.in_namespace(d, ns));

        let groups = query_groups(&self.lexical, &self.params, query);
        let tiers = self.names.tiers(query);
        let (touched, scores) = score(&self.lexical, &self.params, &groups);
        let mut top = Top::new(limit);
        let blend = blend.map(|b| Blend { weight: b.weight_for(query), ..b });
        match blend {
            None => offer_lexical(&mut top, &touched, &scores, &tiers, keep),
            Some(b) => offer_blended(&mut top, b, self.len(), &touched, &scores, &tiers, keep),
        }
        top.into_hits()
    }
}

#[cfg(test)]
impl SearchDoc {
    /// An MCP tool of `server` for the unit tests beside the search modules, with no parameters.
    pub(super) fn mcp(server: &str, raw: &str, description: &str) -> SearchDoc {
        SearchDoc {
            name: format!("mcp__{server}__{raw}"),
            namespace: format!("mcp:{server}"),
            namespace_label: format!("mcp:{server}"),
            raw_name: Some(raw.to_string()),
            server: Some(server.to_string()),
            description: description.to_string(),
            input_schema: Value::Null,
        }
    }
}
