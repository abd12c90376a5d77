//! Ranked `tool_search` over deferred tool definitions.
//!
//! Why this shape: the model calls `tool_search` with a handful of words (an intent paraphrase, a
//! few keywords, a service plus a verb, or a name it already saw) and reads only the first few
//! hits, so the top of the list is what matters and an exact name must never be outranked. Catalogs
//! reach thousands of tools and the search runs on every call, so everything that can be is done at
//! build time: words are stemmed once each and interned to `u32`, and every (term, doc) posting
//! already holds its saturated BM25F weight; a query is a few posting-list walks into a dense array.
//!
//! Scoring is BM25F (k1 = 1.4) over six fields, each with a weight and a length normalisation b:
//!
//! | field            | content                                                  | weight | b    |
//! |------------------|----------------------------------------------------------|--------|------|
//! | name             | raw MCP name (else wire name) + wire-name words it lacks | 6.0    | 0.2  |
//! | namespace        | words of namespace, label and server id (minus "mcp")    | 2.0    | 0.3  |
//! | description      | the whole description (capped at 3,000 words)            | 1.0    | 0.75 |
//! | parameter names  | property names, nested up to depth 4 (`$defs` included)  | 0.5    | 0.5  |
//! | parameter text   | property descriptions, titles, enum values               | 0.2    | 0.3  |
//! | description lead | the description's first sentence (<= 40 words), again   | 0.6    | 0.3  |
//!
//! The name dominates because tool names are dense, curated summaries; descriptions are long and
//! full of usage notes; parameters mostly repeat the same few words (`id`, `name`, `limit`) and
//! would otherwise pull in every tool that takes a `query`. Three multipliers follow, all
//! generic rather than tuned to particular queries:
//! - coverage `1 + 0.8 * matched/terms`: short queries are conjunctive in spirit, so a doc matching
//!   every word should beat one matching a single rare word many times;
//! - name coverage `1 + 0.5 * name_terms_matched/name_terms`: "cancel a subscription" is
//!   `cancel_subscription`, not `list_subscriptions`; a name the query fully explains wins;
//! - server prior `1 + 0.8 * server/best_server`: each namespace is also scored as one BM25
//!   document (namespace words x2, all tool names x0.75, all descriptions x0.2), so a query that
//!   says "Jira" or describes a service's domain lifts that server's tools even when the word is
//!   not in the individual tool.
//!
//! Query and documents share one analyzer (`super::search_text`): identifiers split on
//! separators, camelCase and digit boundaries, English stop words dropped, Snowball stems. On the
//! query side only: a small generic synonym table (remove ~ delete ~ uninstall, fetch ~ get ...)
//! at weight 0.4, scored as the best variant per query word so synonyms never double count;
//! unknown words are split into two known ones ("websocket" -> web socket, matching `WebSocket`);
//! and adjacent words whose concatenation is known join ("who am i" -> whoami).
//!
//! Long task descriptions ("Generate a deep report of bitcoin and save it in
//! /root/markdown/bitcoin.md") get two more query-side rules, both generic:
//! - paths and URLs are read as what they are (`search_text::query_words`): a path's directory
//!   components are a location, not a topic, and are dropped ("/root/music" must not pull the
//!   music tools); its base name and extension are kept; and the query gains the implied term
//!   "file" (for a URL, "url") at weight 0.5, since "save it to /root/a.md" asks for a file tool
//!   without saying "file". Implied terms add evidence but do not count for coverage;
//! - from 8 content words on, the boilerplate of asking ("help me", "tell me", "give me",
//!   "provide") is dropped: in a request that long it names no tool, while in a short query
//!   every word may be the intent ("get help") and is kept.
//!
//! Exact names sort in tiers above every BM25F score (the tier adds 10^6 per level to `score`):
//! 4 = server-qualified exact name (`github create_branch`, `github/create_branch`,
//! `github__create_branch`, `mcp:github create_branch`), 3 = exact wire or raw name,
//! 2 and 1 = the same with case and separators ignored (`git clone` ~ `git_clone`). All
//! comparisons are case-insensitive.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use serde_json::Value;

/// The identifier splitter shared by index and query, re-exported for callers and tests.
pub use super::search_text::split_words;
use super::search_text::{
    is_request_boilerplate, is_stop_word, lead, norm_literal, query_words, squash, walk_schema,
    Analyzer, FxHashMap, WordOrigin,
};

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

/// The semantic half of a hybrid search: each doc's cosine with the query (NaN: no vector
/// yet, so that doc is ranked lexically only) and its weight beside the lexical score.
#[derive(Clone, Copy, Debug)]
pub struct Blend<'a> {
    pub cosines: &'a [f32],
    pub weight: f32,
}

/// One ranked result: `doc` indexes the docs given to [`SearchIndex::build`]. `score` is only
/// comparable within one query; an exact-name match adds `tier * 10^6` (tiers 1-4) to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f64,
}

const FIELDS: usize = 6;
const F_NAME: usize = 0;
const F_NS: usize = 1;
const F_DESC: usize = 2;
const F_PNAME: usize = 3;
const F_PDESC: usize = 4;
const F_LEAD: usize = 5;
/// The description's lead (first sentence, at most this many words) is indexed again as a field.
const LEAD_WORDS: usize = 40;

/// Ranking knobs; [`Default`] holds the tuned values documented at the top of this module.
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
        }
    }
}

/// Schema recursion bound and description cap (in words) so a 38k-character tool stays cheap.
const MAX_SCHEMA_DEPTH: usize = 4;
const MAX_FIELD_WORDS: usize = 3000;
/// Distinct query terms considered (the rest of a very long query is ignored). This also bounds
/// a BM25F score well below `TIER_SCORE`.
const MAX_QUERY_TERMS: usize = 64;
/// Name and namespace fields keep at most this many words (a real name has a handful; a
/// server may send anything).
const MAX_NAME_WORDS: usize = 64;
/// Longer unknown query words are not split into two known ones.
const MAX_COMPOUND_LEN: usize = 40;
/// High bit of a posting's doc id: the term occurs in that doc's name.
const NAME_FLAG: u32 = 1 << 31;
/// Score added per exact-name tier; far above any BM25F score.
const TIER_SCORE: f64 = 1.0e6;

/// Precomputed index over a fixed set of docs; cheap to query, rebuild on catalog change.
pub struct SearchIndex {
    params: SearchParams,
    analyzer: Analyzer,
    n_docs: usize,
    vocab: FxHashMap<String, u32>,
    /// CSR postings: term t's docs are `post_doc[post_start[t]..post_start[t+1]]`.
    post_start: Vec<u32>,
    /// Doc id, with `NAME_FLAG` set when the term occurs in the doc's name field.
    post_doc: Vec<u32>,
    /// Distinct terms in each doc's name field.
    name_len: Vec<u16>,
    /// Saturated BM25F term weight `tf~ / (k1 + tf~)` for the matching `post_doc` entry.
    post_w: Vec<f32>,
    idf: Vec<f32>,
    /// Lowercased wire and raw names -> docs (tier 3).
    exact_name: FxHashMap<String, Vec<u32>>,
    /// `"{qualifier}\u{1}{raw name}"`, lowercased, -> docs (tier 4). Qualifiers: namespace,
    /// label, server, and namespace/label without a `mcp:` prefix.
    exact_qual: FxHashMap<String, Vec<u32>>,
    /// Squashed (see `squash`) names -> (doc, tier): 2 qualified, 1 bare name.
    exact_sq: FxHashMap<String, Vec<(u32, u8)>>,
    /// Namespace group (server) of each doc, and the group-level postings (CSR by term).
    doc_group: Vec<u32>,
    n_groups: usize,
    gpost_start: Vec<u32>,
    gpost_group: Vec<u32>,
    gpost_w: Vec<f32>,
    gidf: Vec<f32>,
    /// Lowercased namespace, label and server, for the namespace filter.
    ns_keys: Vec<[String; 3]>,
}

type GroupPostings = (Vec<u32>, Vec<u32>, Vec<f32>, Vec<f32>);

/// Postings of the server documents: each namespace group is one BM25 document made of its
/// namespace words, all its tool names and (lightly) all its descriptions.
fn group_postings(
    params: &SearchParams,
    n_terms: usize,
    n_groups: usize,
    doc_group: &[u32],
    tf_start: &[usize],
    tf_flat: &[(u32, [u16; FIELDS])],
) -> GroupPostings {
    let [w_ns, w_name, w_desc] = params.server_field_weight;
    // Walk docs group by group, accumulating term weights in a dense scratch array.
    let mut order: Vec<u32> = (0..doc_group.len() as u32).collect();
    order.sort_by_key(|&d| doc_group[d as usize]);
    let mut acc = vec![0f32; n_terms];
    let mut ns_done = vec![u32::MAX; n_terms]; // group that already counted the term as namespace
    let mut touched: Vec<u32> = Vec::new();
    let mut entries: Vec<(u32, u32, f32)> = Vec::new(); // (term, group, tf)
    let mut glen = vec![0f32; n_groups];
    let mut i = 0;
    while i < order.len() {
        let g = doc_group[order[i] as usize];
        while i < order.len() && doc_group[order[i] as usize] == g {
            let d = order[i] as usize;
            for (t, tf) in &tf_flat[tf_start[d]..tf_start[d + 1]] {
                let t = *t as usize;
                let mut x = w_name * tf[F_NAME] as f32 + w_desc * tf[F_DESC] as f32;
                // The namespace words repeat on every tool: count them once per group.
                if tf[F_NS] > 0 && ns_done[t] != g {
                    ns_done[t] = g;
                    x += w_ns;
                }
                if x > 0.0 {
                    if acc[t] == 0.0 {
                        touched.push(t as u32);
                    }
                    acc[t] += x;
                }
            }
            i += 1;
        }
        for &t in &touched {
            entries.push((t, g, acc[t as usize]));
            glen[g as usize] += acc[t as usize];
            acc[t as usize] = 0.0;
        }
        touched.clear();
    }
    let avg = (glen.iter().sum::<f32>() / n_groups.max(1) as f32).max(1.0);
    entries.sort_unstable_by_key(|e| (e.0, e.1));
    let mut start = vec![0u32; n_terms + 1];
    for (t, _, _) in &entries {
        start[*t as usize + 1] += 1;
    }
    for t in 0..n_terms {
        start[t + 1] += start[t];
    }
    let (k1, b) = (params.k1, 0.75);
    let groups = entries.iter().map(|e| e.1).collect();
    let weights = entries
        .iter()
        .map(|&(_, g, tf)| {
            let tt = tf / (1.0 - b + b * glen[g as usize] / avg);
            tt / (k1 + tt)
        })
        .collect();
    let nf = n_groups as f32;
    let idf = (0..n_terms)
        .map(|t| {
            let df = (start[t + 1] - start[t]) as f32;
            (1.0 + (nf - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    (start, groups, weights, idf)
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

/// One query term: the index terms that stand for it, with weights (1 for the term itself).
struct QueryGroup {
    terms: Vec<(u32, f32)>,
    /// Evidence only, not counted for coverage: a concatenation of adjacent query words, or a
    /// term implied by a path or URL in the query.
    compound: bool,
    /// Implied by a path or URL: not counted as matched either.
    implied: bool,
}

/// Build-time term interning with a per-word cache, so each distinct word is stop-checked and
/// stemmed once however often the catalog repeats it.
#[derive(Default)]
struct Interner {
    analyzer: Analyzer,
    vocab: FxHashMap<String, u32>,
    /// Lowercase word -> term id, or `u32::MAX` for a stop word.
    words: FxHashMap<String, u32>,
}

impl Interner {
    /// Records one word in `field`; returns 1 if it counted (not a stop word), else 0.
    fn add_word(&mut self, w: &str, field: usize, out: &mut Vec<(u32, u8)>) -> u32 {
        let id = match self.words.get(w) {
            Some(&id) => id,
            None => {
                let id = match self.analyzer.stem_word(w) {
                    None => u32::MAX,
                    Some(stem) => {
                        let next = self.vocab.len() as u32;
                        *self.vocab.entry(stem).or_insert(next)
                    }
                };
                self.words.insert(w.to_string(), id);
                id
            }
        };
        if id == u32::MAX {
            return 0;
        }
        out.push((id, field as u8));
        1
    }

    /// Records the words of `text` in `field` (at most `MAX_FIELD_WORDS`); returns how many.
    fn add_text(&mut self, text: &str, field: usize, out: &mut Vec<(u32, u8)>) -> u32 {
        let mut count = 0u32;
        split_words(text, |w| {
            if (count as usize) < MAX_FIELD_WORDS {
                count += self.add_word(w, field, out);
            }
        });
        count
    }
}

impl SearchIndex {
    pub fn build(docs: &[SearchDoc]) -> SearchIndex {
        Self::build_with(docs, SearchParams::default())
    }

    pub fn build_with(docs: &[SearchDoc], params: SearchParams) -> SearchIndex {
        let n = docs.len();
        let mut tok = Interner::default();
        // Per doc: sorted (term, per-field tf), stored flat; and per-field lengths.
        let mut tf_flat: Vec<(u32, [u16; FIELDS])> = Vec::new();
        let mut tf_start: Vec<usize> = Vec::with_capacity(n + 1);
        let mut doc_len: Vec<[u32; FIELDS]> = Vec::with_capacity(n);
        let mut exact_name: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let mut exact_qual: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let mut exact_sq: FxHashMap<String, Vec<(u32, u8)>> = FxHashMap::default();
        let mut ns_keys = Vec::with_capacity(n);
        let mut group_ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut doc_group: Vec<u32> = Vec::with_capacity(n);
        let mut entries: Vec<(u32, u8)> = Vec::new();
        let (mut names, mut text) = (String::new(), String::new());
        let (mut ns_words, mut name_words) = (Vec::<String>::new(), Vec::<String>::new());

        for (i, d) in docs.iter().enumerate() {
            entries.clear();
            let mut lens = [0u32; FIELDS];

            // Namespace field: the distinct words of namespace, label and server ("mcp" is noise).
            ns_words.clear();
            for s in [
                Some(&d.namespace),
                Some(&d.namespace_label),
                d.server.as_ref(),
            ]
            .into_iter()
            .flatten()
            {
                split_words(s, |w| {
                    // Deduped by scan, so capped: the scan is quadratic in the word count.
                    if w != "mcp" && ns_words.len() < MAX_NAME_WORDS && !ns_words.iter().any(|x| x == w) {
                        ns_words.push(w.to_string());
                    }
                });
            }
            for w in &ns_words {
                lens[F_NS] += tok.add_word(w, F_NS, &mut entries);
            }

            // Name field: the raw name, plus wire-name words it lacks (transliterations etc.).
            name_words.clear();
            split_words(d.raw_name.as_deref().unwrap_or(&d.name), |w| {
                if name_words.len() < MAX_NAME_WORDS {
                    name_words.push(w.to_string())
                }
            });
            if d.raw_name.is_some() {
                let base = name_words.len();
                split_words(&d.name, |w| {
                    if w != "mcp"
                        && !name_words[..base].iter().any(|x| x == w)
                        && !ns_words.iter().any(|x| x == w)
                    {
                        name_words.push(w.to_string());
                    }
                });
            }
            for w in &name_words {
                lens[F_NAME] += tok.add_word(w, F_NAME, &mut entries);
            }

            lens[F_DESC] = tok.add_text(&d.description, F_DESC, &mut entries);
            lens[F_LEAD] = tok.add_text(lead(&d.description, LEAD_WORDS), F_LEAD, &mut entries);
            names.clear();
            text.clear();
            walk_schema(&d.input_schema, 0, MAX_SCHEMA_DEPTH, &mut names, &mut text);
            lens[F_PNAME] = tok.add_text(&names, F_PNAME, &mut entries);
            lens[F_PDESC] = tok.add_text(&text, F_PDESC, &mut entries);

            entries.sort_unstable();
            tf_start.push(tf_flat.len());
            let doc_start = tf_flat.len();
            for &(t, f) in &entries {
                let same = tf_flat.len() > doc_start && tf_flat[tf_flat.len() - 1].0 == t;
                match tf_flat.last_mut() {
                    Some(last) if same => last.1[f as usize] = last.1[f as usize].saturating_add(1),
                    _ => {
                        let mut tf = [0u16; FIELDS];
                        tf[f as usize] = 1;
                        tf_flat.push((t, tf));
                    }
                }
            }
            doc_len.push(lens);

            // Exact-name keys.
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
            let next = group_ids.len() as u32;
            doc_group.push(*group_ids.entry(d.namespace.to_lowercase()).or_insert(next));
            ns_keys.push([
                d.namespace.to_lowercase(),
                d.namespace_label.to_lowercase(),
                d.server.as_deref().unwrap_or("").to_lowercase(),
            ]);
        }
        tf_start.push(tf_flat.len());

        // Average field lengths.
        let mut avg = [0f32; FIELDS];
        for l in &doc_len {
            for f in 0..FIELDS {
                avg[f] += l[f] as f32;
            }
        }
        for a in avg.iter_mut() {
            *a = (*a / n.max(1) as f32).max(1.0);
        }

        // Postings (CSR), doc ids ascending within each term.
        let n_terms = tok.vocab.len();
        let mut df = vec![0u32; n_terms];
        for (t, _) in &tf_flat {
            df[*t as usize] += 1;
        }
        let mut post_start = vec![0u32; n_terms + 1];
        for t in 0..n_terms {
            post_start[t + 1] = post_start[t] + df[t];
        }
        let total = post_start[n_terms] as usize;
        let mut post_doc = vec![0u32; total];
        let mut post_w = vec![0f32; total];
        let mut fill: Vec<u32> = post_start[..n_terms].to_vec();
        let mut name_len = vec![0u16; n];
        let (w, b, k1) = (params.field_weight, params.field_b, params.k1);
        for d in 0..n {
            let mut norm = [0f32; FIELDS];
            for f in 0..FIELDS {
                norm[f] = w[f] / (1.0 - b[f] + b[f] * doc_len[d][f] as f32 / avg[f]);
            }
            for (t, tf) in &tf_flat[tf_start[d]..tf_start[d + 1]] {
                let mut tt = 0f32;
                for f in 0..FIELDS {
                    tt += tf[f] as f32 * norm[f];
                }
                let slot = &mut fill[*t as usize];
                let in_name = tf[F_NAME] > 0;
                name_len[d] += in_name as u16;
                post_doc[*slot as usize] = d as u32 | if in_name { NAME_FLAG } else { 0 };
                post_w[*slot as usize] = tt / (k1 + tt);
                *slot += 1;
            }
        }
        let (gpost_start, gpost_group, gpost_w, gidf) = group_postings(
            &params,
            n_terms,
            group_ids.len(),
            &doc_group,
            &tf_start,
            &tf_flat,
        );
        let nf = n as f32;
        let idf = df
            .iter()
            .map(|&d| (1.0 + (nf - d as f32 + 0.5) / (d as f32 + 0.5)).ln())
            .collect();

        SearchIndex {
            params,
            analyzer: tok.analyzer,
            n_docs: n,
            vocab: tok.vocab,
            post_start,
            post_doc,
            name_len,
            post_w,
            idf,
            exact_name,
            exact_qual,
            exact_sq,
            doc_group,
            n_groups: group_ids.len(),
            gpost_start,
            gpost_group,
            gpost_w,
            gidf,
            ns_keys,
        }
    }

    pub fn len(&self) -> usize {
        self.n_docs
    }

    pub fn is_empty(&self) -> bool {
        self.n_docs == 0
    }

    fn term(&self, stem: &str) -> Option<u32> {
        self.vocab.get(stem).copied()
    }

    /// Query terms as groups of interchangeable index terms: each distinct stem with its
    /// synonyms; out-of-vocabulary words split into two known words ("subaccount" -> sub +
    /// account); and runs of 2-3 adjacent words whose concatenation is a known word
    /// ("who am i" -> whoami, "node pool" -> nodepool).
    fn query_groups(&self, query: &str) -> Vec<QueryGroup> {
        let mut words: Vec<String> = Vec::new();
        let (mut has_path, mut has_url) = (false, false);
        query_words(query, |w, origin| {
            has_path |= origin == WordOrigin::Path;
            has_url |= origin == WordOrigin::Url;
            words.push(w.to_string());
        });
        // Long requests: drop the boilerplate of asking ("help me", "tell me", "give me").
        let n_content = words.iter().filter(|w| !is_stop_word(w)).count();
        let drop_boilerplate = n_content >= self.params.boilerplate_min_terms;

        let mut seen: Vec<String> = Vec::new();
        let mut groups: Vec<QueryGroup> = Vec::new();
        let add =
            |stem: String, compound: bool, groups: &mut Vec<QueryGroup>, seen: &mut Vec<String>| {
                if seen.contains(&stem) || groups.len() >= MAX_QUERY_TERMS {
                    return;
                }
                let mut terms = Vec::new();
                if let Some(id) = self.term(&stem) {
                    terms.push((id, 1.0));
                }
                for syn in self.analyzer.synonyms_of(&stem) {
                    if let Some(id) = self.term(syn) {
                        if !terms.iter().any(|(x, _)| *x == id) {
                            terms.push((id, self.params.synonym_weight));
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
            let Some(stem) = self.analyzer.stem_word(w) else {
                continue;
            };
            if self.term(&stem).is_none() && (6..=MAX_COMPOUND_LEN).contains(&w.len()) {
                // Decompound an unknown word into the split whose rarer half is most common
                // (each cut stems both halves: quadratic in the word, so only short words).
                let mut best: Option<(u32, String, String)> = None;
                for cut in 3..=w.len() - 3 {
                    if !w.is_char_boundary(cut) {
                        continue;
                    }
                    let (a, b) = (&w[..cut], &w[cut..]);
                    let (Some(sa), Some(sb)) =
                        (self.analyzer.stem_word(a), self.analyzer.stem_word(b))
                    else {
                        continue;
                    };
                    if let (Some(ta), Some(tb)) = (self.term(&sa), self.term(&sb)) {
                        let df = self.df(ta).min(self.df(tb));
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
        if self.params.implied_weight > 0.0 {
            for (on, w) in [(has_path, "file"), (has_url, "url")] {
                if on {
                    if let Some(stem) = self.analyzer.stem_word(w) {
                        let n = groups.len();
                        add(stem, true, &mut groups, &mut seen);
                        if groups.len() > n {
                            groups[n].implied = true;
                            for t in &mut groups[n].terms {
                                t.1 *= self.params.implied_weight;
                            }
                        }
                    }
                }
            }
        }
        for len in 2..=3 {
            for win in words.windows(len) {
                let joined: String = win.concat();
                if joined.len() < 5 {
                    continue;
                }
                if let Some(stem) = self.analyzer.stem_word(&joined) {
                    if self.term(&stem).is_some() {
                        add(stem, true, &mut groups, &mut seen);
                    }
                }
            }
        }
        groups.retain(|g| !g.terms.is_empty() || !g.compound);
        groups
    }

    fn df(&self, t: u32) -> u32 {
        self.post_start[t as usize + 1] - self.post_start[t as usize]
    }

    fn postings(&self, t: u32) -> (&[u32], &[f32]) {
        let (a, b) = (
            self.post_start[t as usize] as usize,
            self.post_start[t as usize + 1] as usize,
        );
        (&self.post_doc[a..b], &self.post_w[a..b])
    }

    fn in_namespace(&self, doc: usize, ns: &str) -> bool {
        self.ns_keys[doc].iter().any(|k| !k.is_empty() && k == ns)
    }

    /// BM25F scores of every doc any query term reaches: `(touched docs, dense scores)`.
    fn score(&self, groups: &[QueryGroup]) -> (Vec<u32>, Vec<f32>) {
        // Coverage counts the query's own terms; compounds only add evidence.
        let n_groups = groups.iter().filter(|g| !g.compound).count().max(1) as f32;
        let p = &self.params;
        let (coverage_bonus, name_bonus, server_prior) =
            (p.coverage_bonus, p.name_bonus, p.server_prior);

        let mut acc = vec![0f32; self.n_docs];
        let mut matched = vec![0u16; self.n_docs];
        let mut touched: Vec<u32> = Vec::new();
        // Name terms the query accounts for (synonyms count at their weight).
        let mut name_hit = vec![0f32; self.n_docs];
        let mut gbest = vec![0f32; self.n_docs];
        let mut gname = vec![0f32; self.n_docs];
        let mut gtouched: Vec<u32> = Vec::new();
        for g in groups {
            let counts = !g.implied as u16;
            let g = &g.terms;
            if g.len() == 1 {
                let (t, w) = g[0];
                let idf = self.idf[t as usize] * w;
                let (ds, ws) = self.postings(t);
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
                let idf = self.idf[t as usize] * w;
                let (ds, ws) = self.postings(t);
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
        let mut gscore = vec![0f32; self.n_groups];
        if server_prior > 0.0 {
            let mut gbest = vec![0f32; self.n_groups];
            for g in groups {
                for &(t, w) in &g.terms {
                    let (a, b) = (
                        self.gpost_start[t as usize] as usize,
                        self.gpost_start[t as usize + 1] as usize,
                    );
                    let idf = self.gidf[t as usize] * w;
                    for (&grp, &pw) in self.gpost_group[a..b].iter().zip(&self.gpost_w[a..b]) {
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
            let name_cov = (name_hit[di] / self.name_len[di].max(1) as f32).min(1.0);
            acc[di] *= (1.0 + coverage_bonus * cov)
                * (1.0 + name_bonus * name_cov)
                * gscore[self.doc_group[di] as usize];
        }
        (touched, acc)
    }

    /// Exact-name tiers of `query`: (doc, tier 1-4).
    fn exact_tiers(&self, query: &str) -> Vec<(u32, u8)> {
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

    /// Ranked hits, best first, at most `limit`. `namespace` filters to docs whose namespace or
    /// namespace_label equals it (case-insensitive) or whose server equals it. Ties break by doc
    /// index. An empty or whitespace query gives no hits.
    pub fn search(&self, query: &str, namespace: Option<&str>, limit: usize) -> Vec<Hit> {
        self.search_blended(query, namespace, limit, None)
    }

    /// As `search`, fused with a semantic score when `blend` is given: the lexical score scaled
    /// by the best one of the query (so 1 at the top) plus `weight * cosine`. A doc the words
    /// miss can rank on meaning alone; exact names keep their tiers above everything.
    pub fn search_blended(&self, query: &str, namespace: Option<&str>, limit: usize, blend: Option<Blend<'_>>) -> Vec<Hit> {
        if query.trim().is_empty() || limit == 0 || self.n_docs == 0 {
            return Vec::new();
        }
        let ns = namespace
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_lowercase);
        let keep = |d: usize| ns.as_ref().is_none_or(|ns| self.in_namespace(d, ns));

        let groups = self.query_groups(query);
        let tiers = self.exact_tiers(query);
        let (touched, scores) = self.score(&groups);
        let tier_of = |d: u32| if tiers.is_empty() { 0 } else { tiers.iter().find(|(x, _)| *x == d).map_or(0, |t| t.1) };

        // Keep the best `limit` in a bounded min-heap (root = worst kept).
        let mut top: BinaryHeap<Reverse<Ranked>> = BinaryHeap::with_capacity(limit + 1);
        let mut offer = |c: Ranked| {
            if top.len() < limit {
                top.push(Reverse(c));
            } else if top.peek().is_some_and(|w| c > w.0) {
                top.pop();
                top.push(Reverse(c));
            }
        };
        match blend {
            None => {
                for &d in &touched {
                    if keep(d as usize) {
                        offer(Ranked(scores[d as usize] as f64 + tier_of(d) as f64 * TIER_SCORE, d));
                    }
                }
                for &(d, tier) in &tiers {
                    if scores[d as usize] == 0.0 && keep(d as usize) {
                        offer(Ranked(tier as f64 * TIER_SCORE, d));
                    }
                }
            }
            Some(b) => {
                let best = touched.iter().filter(|&&d| keep(d as usize)).map(|&d| scores[d as usize]).fold(0f32, f32::max);
                let lexical = |d: usize| if best > 0.0 { (scores[d] / best) as f64 } else { 0.0 };
                for d in 0..self.n_docs {
                    if !keep(d) {
                        continue;
                    }
                    let cos = b.cosines.get(d).copied().filter(|c| c.is_finite()).unwrap_or(0.0);
                    let s = lexical(d) + (b.weight * cos) as f64;
                    let tier = tier_of(d as u32);
                    if s > 0.0 || tier > 0 {
                        offer(Ranked(s.max(0.0) + tier as f64 * TIER_SCORE, d as u32));
                    }
                }
            }
        }
        let mut out: Vec<Ranked> = top.into_iter().map(|r| r.0).collect();
        out.sort_unstable_by(|a, b| b.cmp(a));
        out.into_iter()
            .map(|Ranked(score, d)| Hit {
                doc: d as usize,
                score,
            })
            .collect()
    }
}
