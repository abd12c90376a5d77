//! The lexical index of `tool_search`: BM25F postings over six fields of each tool, and each
//! server's tools as one more BM25 document (the server prior's evidence).
//!
//! Everything that can be is done here, at build time, because the index is queried on every
//! `tool_search` and rebuilt only when the catalog changes: words are stemmed once each and
//! interned to `u32`, and every (term, doc) posting already holds its saturated BM25F weight
//! `tf~ / (k1 + tf~)`, so a query is a few posting-list walks (`search_rank`).
//!
//! BM25F (k1 = 1.4), each field with a weight and a length normalisation b:
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
//! would otherwise pull in every tool that takes a `query`.
//!
//! The server document of a namespace group: its namespace words x2 (counted once, not once per
//! tool), all its tool names x0.75, all its descriptions x0.2, with b = 0.75.

use super::search::{SearchDoc, SearchParams};
use super::search_cjk::{cjk_grams, is_cjk_word};
use super::search_text::{lead, split_words, walk_schema, Analyzer, FxHashMap};

pub(super) const FIELDS: usize = 6;
pub(super) const F_NAME: usize = 0;
const F_NS: usize = 1;
const F_DESC: usize = 2;
const F_PNAME: usize = 3;
const F_PDESC: usize = 4;
const F_LEAD: usize = 5;
/// The description's lead (first sentence, at most this many words) is indexed again as a field.
const LEAD_WORDS: usize = 40;
/// Schema recursion bound and description cap (in words) so a 38k-character tool stays cheap.
const MAX_SCHEMA_DEPTH: usize = 4;
const MAX_FIELD_WORDS: usize = 3000;
/// Name and namespace fields keep at most this many words (a real name has a handful; a
/// server may send anything).
const MAX_NAME_WORDS: usize = 64;
/// High bit of a posting's doc id: the term occurs in that doc's name.
pub(super) const NAME_FLAG: u32 = 1 << 31;

/// Postings and statistics over a fixed set of docs; rebuilt on catalog change.
pub(super) struct LexicalIndex {
    pub(super) analyzer: Analyzer,
    pub(super) n_docs: usize,
    vocab: FxHashMap<String, u32>,
    /// CSR postings: term t's docs are `post_doc[post_start[t]..post_start[t+1]]`.
    post_start: Vec<u32>,
    /// Doc id, with `NAME_FLAG` set when the term occurs in the doc's name field.
    post_doc: Vec<u32>,
    /// Distinct terms in each doc's name field.
    pub(super) name_len: Vec<u16>,
    /// Saturated BM25F term weight `tf~ / (k1 + tf~)` for the matching `post_doc` entry.
    post_w: Vec<f32>,
    pub(super) idf: Vec<f32>,
    /// Namespace group (server) of each doc, and the group-level postings (CSR by term).
    pub(super) doc_group: Vec<u32>,
    pub(super) n_groups: usize,
    gpost_start: Vec<u32>,
    gpost_group: Vec<u32>,
    gpost_w: Vec<f32>,
    pub(super) gidf: Vec<f32>,
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
    /// Records one word in `field`; returns how many terms it counted for (0: a stop word; a
    /// CJK run counts one per gram).
    fn add_word(&mut self, w: &str, field: usize, out: &mut Vec<(u32, u8)>) -> u32 {
        if is_cjk_word(w) {
            let mut count = 0;
            cjk_grams(w, |g| {
                let id = match self.vocab.get(g) {
                    Some(&id) => id,
                    None => {
                        let id = self.vocab.len() as u32;
                        self.vocab.insert(g.to_string(), id);
                        id
                    }
                };
                out.push((id, field as u8));
                count += 1;
            });
            return count;
        }
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

impl LexicalIndex {
    pub(super) fn build(docs: &[SearchDoc], params: &SearchParams) -> LexicalIndex {
        let n = docs.len();
        let mut tok = Interner::default();
        // Per doc: sorted (term, per-field tf), stored flat; and per-field lengths.
        let mut tf_flat: Vec<(u32, [u16; FIELDS])> = Vec::new();
        let mut tf_start: Vec<usize> = Vec::with_capacity(n + 1);
        let mut doc_len: Vec<[u32; FIELDS]> = Vec::with_capacity(n);
        let mut group_ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut doc_group: Vec<u32> = Vec::with_capacity(n);
        let mut entries: Vec<(u32, u8)> = Vec::new();
        let (mut names, mut text) = (String::new(), String::new());
        let (mut ns_words, mut name_words) = (Vec::<String>::new(), Vec::<String>::new());

        for d in docs {
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

            let next = group_ids.len() as u32;
            doc_group.push(*group_ids.entry(d.namespace.to_lowercase()).or_insert(next));
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
            params,
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

        LexicalIndex {
            analyzer: tok.analyzer,
            n_docs: n,
            vocab: tok.vocab,
            post_start,
            post_doc,
            name_len,
            post_w,
            idf,
            doc_group,
            n_groups: group_ids.len(),
            gpost_start,
            gpost_group,
            gpost_w,
            gidf,
        }
    }

    /// The term id of an analysed (stemmed) word, if any doc has it.
    pub(super) fn term(&self, stem: &str) -> Option<u32> {
        self.vocab.get(stem).copied()
    }

    /// How many docs hold term `t`.
    pub(super) fn df(&self, t: u32) -> u32 {
        self.post_start[t as usize + 1] - self.post_start[t as usize]
    }

    /// Term `t`'s docs (ascending, `NAME_FLAG` set where it is in the name) and their weights.
    pub(super) fn postings(&self, t: u32) -> (&[u32], &[f32]) {
        let (a, b) = (
            self.post_start[t as usize] as usize,
            self.post_start[t as usize + 1] as usize,
        );
        (&self.post_doc[a..b], &self.post_w[a..b])
    }

    /// Term `t`'s server documents (namespace groups) and their weights.
    pub(super) fn group_postings(&self, t: u32) -> (&[u32], &[f32]) {
        let (a, b) = (
            self.gpost_start[t as usize] as usize,
            self.gpost_start[t as usize + 1] as usize,
        );
        (&self.gpost_group[a..b], &self.gpost_w[a..b])
    }
}

#[cfg(test)]
#[path = "search_lexical_tests.rs"]
mod tests;
