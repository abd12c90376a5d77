//! What the `tool_search` quality tests share: the fixture catalogs and query sets, and the
//! metrics (R@k, MRR; for LiveMCPBench also the fraction of a task's gold tools).
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolreg::meta::search::{SearchDoc, SearchIndex};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures")
}

pub fn read_json(p: &Path) -> Value {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("parse {}: {e}", p.display()))
}

/// Every tool of every catalog file in `dir`, sorted by file name for a stable doc order.
pub fn load_catalog(dir: &Path) -> Vec<SearchDoc> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for f in files {
        let v = read_json(&f);
        let server = v["server"].as_str().expect("server").to_string();
        for t in v["tools"].as_array().expect("tools") {
            let tool = t["name"].as_str().expect("tool name").to_string();
            docs.push(SearchDoc {
                name: format!("mcp__{server}__{tool}"),
                namespace: format!("mcp:{server}"),
                namespace_label: format!("mcp:{server}"),
                raw_name: Some(tool),
                server: Some(server.clone()),
                description: t["description"].as_str().unwrap_or("").to_string(),
                input_schema: t.get("inputSchema").cloned().unwrap_or(Value::Null),
            });
        }
    }
    docs
}

/// The catalog `copies` times (for benchmarks at ~10k tools): copy i > 1 has every server id
/// suffixed `-i`.
pub fn replicate(base: &[SearchDoc], copies: usize) -> Vec<SearchDoc> {
    let mut out = base.to_vec();
    for i in 2..=copies {
        for d in base {
            let server = format!("{}-{i}", d.server.as_deref().unwrap());
            out.push(SearchDoc {
                name: format!("mcp__{server}__{}", d.raw_name.as_deref().unwrap()),
                namespace: format!("mcp:{server}"),
                namespace_label: format!("mcp:{server}"),
                server: Some(server),
                ..d.clone()
            });
        }
    }
    out
}

pub fn gold_set(item: &Value) -> HashSet<(String, String)> {
    item["gold"]
        .as_array()
        .expect("gold")
        .iter()
        .map(|g| {
            (
                g["server"].as_str().unwrap().to_string(),
                g["tool"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn key(d: &SearchDoc) -> (String, String) {
    (d.server.clone().unwrap(), d.raw_name.clone().unwrap())
}

#[derive(Default, Clone, Copy)]
pub struct Agg {
    pub n: usize,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr: f64,
}

impl Agg {
    pub fn add(&mut self, r1: f64, r5: f64, r10: f64, mrr: f64) {
        self.n += 1;
        self.r1 += r1;
        self.r5 += r5;
        self.r10 += r10;
        self.mrr += mrr;
    }
    pub fn mean(&self) -> [f64; 4] {
        let n = self.n.max(1) as f64;
        [self.r1 / n, self.r5 / n, self.r10 / n, self.mrr / n]
    }
}

pub fn print_row(label: &str, a: &Agg) {
    let [r1, r5, r10, mrr] = a.mean();
    eprintln!(
        "{label:<24} n={:<3} R@1 {r1:.3}  R@5 {r5:.3}  R@10 {r10:.3}  MRR {mrr:.3}",
        a.n
    );
}

pub fn check_floor(what: &str, got: f64, floor: f64) {
    assert!(
        got >= floor,
        "{what} regressed: {got:.3} < floor {floor:.3}"
    );
}

/// One query of the project's development set (`tests/search/dev-queries.json`).
pub struct DevQuery {
    pub query: String,
    pub kind: String,
    pub lang: String,
    /// "tune" or "holdout", fixed by [`split_of`] the query.
    pub split: &'static str,
    pub gold: HashSet<(String, String)>,
}

/// The split of a query, decided once by its text: FNV-1a 64 of the UTF-8 bytes, even is
/// "tune", odd is "holdout". Nothing is tuned on "holdout"; it is only reported.
pub fn split_of(query: &str) -> &'static str {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in query.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    if h % 2 == 0 { "tune" } else { "holdout" }
}

/// The development set, each item's recorded split checked against [`split_of`] and each gold
/// tool checked to exist in `docs`.
/// `SEARCH_EVAL_DEV` names another file of the same shape (a transformed copy, as for the
/// segmenter comparison in docs/benchmarks-history.md "tool_search: Chinese queries, more
/// development data, fusion while embedding (issue 26)"); an item's `splitOf` then keeps the
/// original query's split.
pub fn dev_queries(docs: &[SearchDoc]) -> Vec<DevQuery> {
    let path = std::env::var_os("SEARCH_EVAL_DEV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/search/dev-queries.json"));
    queries_from(&path, docs)
}

/// A query file of the development set's shape (`tests/search/*.json`), checked the same way.
pub fn queries_from(path: &Path, docs: &[SearchDoc]) -> Vec<DevQuery> {
    let have: HashSet<(String, String)> = docs.iter().map(key).collect();
    read_json(path)["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let query = item["query"].as_str().expect("query").to_string();
            let split = split_of(item["splitOf"].as_str().unwrap_or(&query));
            assert_eq!(item["split"].as_str(), Some(split), "the split of {query:?} is its hash's");
            let gold = gold_set(item);
            assert!(!gold.is_empty() && gold.is_subset(&have), "gold of {query:?} not in the catalog");
            DevQuery { kind: item["kind"].as_str().unwrap().into(), lang: item["lang"].as_str().unwrap().into(), split, gold, query }
        })
        .collect()
}

/// The rank (1-based, within the top 10) of each query's first gold tool. With
/// `SEARCH_EVAL_VERBOSE`, the queries `show` picks that miss rank 1 are printed with their top 3.
pub fn gold_ranks(index: &SearchIndex, docs: &[SearchDoc], qs: &[DevQuery], label: &str, show: impl Fn(&DevQuery) -> bool) -> Vec<Option<usize>> {
    let verbose = std::env::var_os("SEARCH_EVAL_VERBOSE").is_some();
    qs.iter()
        .map(|q| {
            let hits = index.search(&q.query, None, 10);
            let rank = hits.iter().position(|h| q.gold.contains(&key(&docs[h.doc]))).map(|p| p + 1);
            if verbose && rank != Some(1) && show(q) {
                let top: Vec<&str> = hits.iter().take(3).map(|h| docs[h.doc].name.as_str()).collect();
                eprintln!("  [{label}: {} {}] {:?} rank={rank:?} top={top:?}", q.lang, q.kind, q.query);
            }
            rank
        })
        .collect()
}

/// R@1/5/10 and MRR of one ranking, from the rank of the first gold hit (1-based).
pub fn score_rank(rank: Option<usize>) -> [f64; 4] {
    let at = |k: usize| if rank.is_some_and(|r| r <= k) { 1.0 } else { 0.0 };
    [at(1), at(5), at(10), rank.map_or(0.0, |r| 1.0 / r as f64)]
}

/// Figures by split, then by language and kind, as rows "split lang kind" (with "all" rows).
pub fn dev_report(label: &str, qs: &[DevQuery], ranks: &[Option<usize>]) -> std::collections::BTreeMap<String, Agg> {
    let rows = dev_rows(qs, ranks);
    eprintln!("-- dev-queries.json ({} queries), {label}", qs.len());
    for (k, a) in &rows {
        print_row(k, a);
    }
    rows
}

/// The rows of [`dev_report`], unprinted.
pub fn dev_rows(qs: &[DevQuery], ranks: &[Option<usize>]) -> std::collections::BTreeMap<String, Agg> {
    let mut rows: std::collections::BTreeMap<String, Agg> = Default::default();
    for (q, r) in qs.iter().zip(ranks) {
        let [a, b, c, m] = score_rank(*r);
        for split in [q.split, "both"] {
            for lang in [q.lang.as_str(), "all"] {
                for kind in [q.kind.as_str(), "all"] {
                    rows.entry(format!("{split} {lang} {kind}")).or_default().add(a, b, c, m);
                }
            }
        }
    }
    rows
}
