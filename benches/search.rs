//! `tool_search` engine: index build and one query, at the fixture size (97 servers, 2,422 tools)
//! and at ~10k tools (the catalogs replicated 4x, server ids suffixed -2, -3, -4).
//!
//! Also `tool_inspect`'s signature (what verbose search and invalid-argument answers print
//! too) for schemas that used to take quadratic time: an enum of N values (N = 1k, 100k).
//!
//! Run: `cargo bench --bench search`

#[path = "../tests/support/search_eval.rs"]
mod search_eval;
#[path = "common/process.rs"]
mod process;

use std::sync::OnceLock;

use divan::{black_box, Bencher};
use serde_json::Value;
use toolreg::meta::inspect::signature;
use toolreg::meta::search::{SearchDoc, SearchIndex};

fn main() {
    first_chinese_query();
    divan::main();
}

/// The first Chinese query parses the gloss's dictionary (`search_dict.tsv`): its one-time cost
/// in time and resident memory, printed before the timed benches.
fn first_chinese_query() {
    let idx = index(1);
    let rss = || process::status_kib("self", "VmRSS:") as f64 / 1024.0;
    let (before, t) = (rss(), std::time::Instant::now());
    idx.search(CHINESE, None, 10);
    let first = t.elapsed();
    let t = std::time::Instant::now();
    idx.search(CHINESE, None, 10);
    eprintln!(
        "first Chinese query (parses the dictionary): {:.1} ms, resident +{:.1} MiB; the same query again: {:.3} ms",
        first.as_secs_f64() * 1e3,
        rss() - before,
        t.elapsed().as_secs_f64() * 1e3
    );
}

/// A Chinese request with words the gloss's table lacks (字段: the dictionary's).
const CHINESE: &str = "这张表都有哪些字段，帮我列出来";

/// The catalog at `copies` x size: copy i > 1 has every server id suffixed `-i`.
fn corpus(copies: usize) -> &'static [SearchDoc] {
    static ONE: OnceLock<Vec<SearchDoc>> = OnceLock::new();
    static FOUR: OnceLock<Vec<SearchDoc>> = OnceLock::new();
    let base = ONE.get_or_init(|| search_eval::load_catalog(&search_eval::fixtures().join("mcp-catalogs")));
    if copies == 1 {
        return base;
    }
    assert_eq!(copies, 4);
    FOUR.get_or_init(|| search_eval::replicate(base, 4))
}

fn index(copies: usize) -> &'static SearchIndex {
    static ONE: OnceLock<SearchIndex> = OnceLock::new();
    static FOUR: OnceLock<SearchIndex> = OnceLock::new();
    let cell = if copies == 1 { &ONE } else { &FOUR };
    cell.get_or_init(|| SearchIndex::build(corpus(copies)))
}

const SIZES: [usize; 2] = [1, 4];

#[divan::bench(args = SIZES, sample_count = 20)]
fn build(bencher: Bencher, copies: usize) {
    let docs = corpus(copies);
    bencher.bench(|| SearchIndex::build(black_box(docs)));
}

/// A Chinese request: bigrams, the gloss's table and its dictionary.
#[divan::bench(args = SIZES)]
fn query_chinese(bencher: Bencher, copies: usize) {
    let idx = index(copies);
    bencher.bench(|| idx.search(black_box(CHINESE), None, 10));
}

/// A typical intent query (several terms, synonym expansion).
#[divan::bench(args = SIZES)]
fn query_intent(bencher: Bencher, copies: usize) {
    let idx = index(copies);
    bencher.bench(|| {
        idx.search(
            black_box("remove a helm release from the cluster"),
            None,
            10,
        )
    });
}

/// A short keyword query.
#[divan::bench(args = SIZES)]
fn query_keyword(bencher: Bencher, copies: usize) {
    let idx = index(copies);
    bencher.bench(|| idx.search(black_box("gitlab group wiki"), None, 10));
}

/// An exact tool name (exact-tier lookup plus BM25 over its words).
#[divan::bench(args = SIZES)]
fn query_exact(bencher: Bencher, copies: usize) {
    let idx = index(copies);
    bencher.bench(|| idx.search(black_box("list_loki_label_names"), None, 10));
}

/// A long multi-step task description (sentences, a path, request boilerplate).
#[divan::bench(args = SIZES)]
fn query_task(bencher: Bencher, copies: usize) {
    let idx = index(copies);
    bencher.bench(|| {
        idx.search(
            black_box(
                "Please help me find the open pull requests in the toolreg repository, summarize \
                 the review comments on each, and save the summary as Markdown to \
                 /root/markdown/reviews.md. Then tell me which ones are failing CI.",
            ),
            None,
            10,
        )
    });
}

/// `{"properties": {"x": {"enum": [0..N]}}}` as a signature (abbreviated to 20 values).
#[divan::bench(args = [1_000, 100_000], sample_count = 20)]
fn signature_enum(bencher: Bencher, n: usize) {
    let schema = serde_json::json!({"properties": {"x": {"enum": (0..n).collect::<Vec<_>>()}}});
    bencher.bench(|| signature("t", "", black_box(&schema)));
}

/// A wide object: 2,000 properties, all required (a required-list lookup per property).
#[divan::bench(sample_count = 20)]
fn signature_wide_object(bencher: Bencher) {
    let props: serde_json::Map<String, Value> =
        (0..2000).map(|i| (format!("p{i}"), serde_json::json!({"type": "string", "description": "A field."}))).collect();
    let required: Vec<String> = (0..2000).map(|i| format!("p{i}")).collect();
    let schema = serde_json::json!({"type": "object", "properties": props, "required": required});
    bencher.bench(|| signature("t", "", black_box(&schema)));
}
