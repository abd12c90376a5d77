//! Hybrid `tool_search` (BM25F + sentence embeddings) with the real model (all-MiniLM-L6-v2 int8
//! in ONNX, fetched by `scripts/embedding-model.sh`), through the product's `Semantic`:
//!
//! - `cargo bench --bench semantic`: latency of one search at 2,422 tools (the fixture catalogs)
//!   and at 9,688 (the catalogs 4x, server ids suffixed -2, -3, -4), p50 and p99 over the dev
//!   set's and LiveMCPBench's queries, each run 5 times: the whole path (embed the query, cosine
//!   with every tool, BM25F, blend), and its parts. The copies reuse the originals' vectors
//!   (their texts differ only in the namespace): the cosine costs the same.
//! - `cargo bench --bench semantic -- embed`: embed the whole catalog from nothing, as the
//!   sidecar does after a sync (one background thread, one text per run): wall and CPU time,
//!   peak memory while the model loads and then while it embeds, and the size of the cache file.
//! - `USE_M3=1 cargo bench --bench semantic -- embed`: the same with both local models fused
//!   (MiniLM and USE-m3, each on its own thread, as `search.embeddings: [onnx, use]` runs them).
//!   What the models keep in a `cacheDir` (MiniLM as ONNX Runtime optimised it, USE-m3's piece
//!   table) is kept in `target/embedding/bench-cache/`: the first run makes it (said in the
//!   output), later runs load it, as a sidecar does at its second start.
//! - `cargo bench --bench semantic -- fused`: one search at 2,422 tools with both models: both
//!   query vectors (asked at once), both models' cosines, their fusion, BM25F and the blend.
//! - `cargo bench --bench semantic -- memory`: what each part of USE-m3 keeps resident (its
//!   tokenizer alone, then the whole model once it has embedded a text, its piece table in
//!   memory, then read from its file in a cache dir), freed heap trimmed.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

#[path = "../tests/support/embedding.rs"]
mod embedding;
#[path = "../tests/support/search_eval.rs"]
mod search_eval;
#[path = "common/process.rs"]
mod process;

use std::sync::Arc;
use std::time::{Duration, Instant};

use search_eval::{fixtures, load_catalog, read_json};
use toolreg::embed::store::{self, Vectors};
use toolreg::embed::{Options, Semantic};
use toolreg::meta::search::{Blend, SearchDoc, SearchIndex};

const RUNS: usize = 5;
/// Queries of fewer tokens than this (with [CLS] and [SEP]) are reported apart: the target for
/// the few words a model usually sends is a p50 under 5 ms.
const SHORT: usize = 16;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if std::env::args().any(|a| a == "embed") {
        rt.block_on(embed_catalog());
    } else if std::env::args().any(|a| a == "fused") {
        fused_latency(&rt);
    } else if std::env::args().any(|a| a == "memory") {
        use_memory();
    } else {
        // The originals' vectors, made outside the runtime (the model blocks).
        let base = load_catalog(&fixtures().join("mcp-catalogs"));
        let texts: Vec<String> = base.iter().map(SearchDoc::embedding_text).collect();
        let onnx = embedding::model();
        let vecs = embedding::embed_cached(&onnx, "eval-mcp-catalogs", &texts);
        let mut vectors = Vectors::default();
        vectors.reset(&onnx.embed_blocking(vec!["x".into()]).unwrap().model, vecs[0].len());
        for (t, v) in texts.iter().zip(vecs) {
            vectors.insert(store::key(t), v);
        }
        rt.block_on(latency(base, texts, vectors));
    }
}

fn queries() -> Vec<String> {
    let mut out = Vec::new();
    let dev = read_json(&fixtures().join("tool-search-dev.json"));
    let live = read_json(&fixtures().join("livemcpbench/queries.json"));
    for set in [&dev, &live] {
        for i in set["items"].as_array().unwrap() {
            out.push(i["query"].as_str().unwrap().to_string());
        }
    }
    out
}

/// A `Semantic` over the local model whose store already holds a vector for every doc.
async fn loaded(docs: &[SearchDoc], base: &Vectors, base_texts: &[String], dir: &std::path::Path) -> Arc<Semantic> {
    let mut v = Vectors::default();
    v.reset(base.model().unwrap(), base.dim().unwrap());
    for (i, d) in docs.iter().enumerate() {
        let from = store::key(&base_texts[i % base_texts.len()]);
        v.insert(store::key(&d.embedding_text()), base.get(&from).unwrap().to_vec());
    }
    std::fs::write(dir.join("embeddings-onnx.bin"), v.encode()).unwrap();
    let s = Semantic::start(Arc::new(embedding::model()), Options { cache_dir: Some(dir.to_path_buf()), ..Options::default() });
    while !s.any() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    wait_for_model(&s).await;
    s
}

/// The first query waits for the model to load, which may outlast the query timeout (1 s) on a
/// loaded machine: ask until it answers, so that no timed query includes the load.
async fn wait_for_model(s: &Semantic) {
    let loading = Instant::now();
    for m in s.models() {
        while let Err(e) = m.query("load the model").await {
            assert!(loading.elapsed() < Duration::from_secs(120), "the model does not load: {e}");
        }
    }
}

/// `-- fused`: the whole search with both models over 2,422 tools, their stores preloaded.
fn fused_latency(rt: &tokio::runtime::Runtime) {
    use toolreg::meta::search::{fuse, model_weight, Part};
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    let texts: Vec<String> = docs.iter().map(SearchDoc::embedding_text).collect();
    let dir = tempfile::tempdir().unwrap();
    let minilm = embedding::model();
    let usem3 = embedding::use_model();
    let m = embedding::embed_cached(&minilm, "eval-mcp-catalogs", &texts);
    let u = embedding::embed_cached_with(&|t| usem3.embed_blocking(t), "eval-use-mcp-catalogs", &texts);
    for (file, vecs, model) in [("embeddings-onnx.bin", m, minilm.embed_blocking(vec!["x".into()]).unwrap().model), ("embeddings-use.bin", u, usem3.embed_blocking(vec!["x".into()]).unwrap().model)] {
        let mut v = Vectors::default();
        v.reset(&model, vecs[0].len());
        for (t, x) in texts.iter().zip(vecs) {
            v.insert(store::key(t), x);
        }
        std::fs::write(dir.path().join(file), v.encode()).unwrap();
    }
    drop((minilm, usem3));
    let index = SearchIndex::build(&docs);
    let keys = toolreg::embed::keys(&texts);
    let qs = queries();
    rt.block_on(async {
        let opts = Options { cache_dir: Some(dir.path().to_path_buf()), ..Options::default() };
        let use_opts = Options { cjk: 1.0, gloss: 0.0, latin: toolreg::embed::DEFAULT_LATIN_USE_FUSED, weight: toolreg::embed::DEFAULT_WEIGHT_USE_FUSED, ..opts.clone() };
        let s = Semantic::start_many(vec![(Arc::new(embedding::model()), opts), (Arc::new(embedding::use_model()), use_opts)]).unwrap();
        while s.models().iter().any(|m| m.coverage(&keys, None).embedded < docs.len()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        wait_for_model(&s).await;
        let (mut whole, mut embed) = (vec![], vec![]);
        for _ in 0..RUNS {
            for q in &qs {
                let t0 = Instant::now();
                let vs = toolreg::meta::search::query_vectors(&s, q).await;
                let t1 = Instant::now();
                let models = s.models();
                // A model not asked (it reads none of the query's letters) counts at weight 0.
                let cos: Vec<Vec<f32>> = models.iter().zip(vs).map(|(m, v)| v.map_or_else(|_| vec![0.0; docs.len()], |v| m.cosines(&keys, &v).0)).collect();
                let parts: Vec<Part<'_>> = models.iter().zip(&cos).map(|(m, c)| Part { cosines: c, weight: model_weight(q, m) }).collect();
                let fused = fuse(&parts, docs.len());
                let hits = index.search_blended(q, None, 5, Some(Blend { cosines: &fused, weight: 1.0, cjk: 1.0 }));
                whole.push(t0.elapsed());
                embed.push(t1 - t0);
                assert!(!hits.is_empty());
            }
        }
        let cell = |v: &Vec<Duration>| format!("{} / {}", ms(pct(v.clone(), 0.5)), ms(pct(v.clone(), 0.99)));
        println!("{} queries x {RUNS} runs, 2,422 tools, both models; p50 / p99", qs.len());
        println!("whole fused search {}; the query vectors (of the models that read its letters, at once) {}", cell(&whole), cell(&embed));
    });
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn latency(base: Vec<SearchDoc>, base_texts: Vec<String>, base_store: Vectors) {
    let qs = queries();
    let mut tokenizer = tokenizers::Tokenizer::from_file(embedding::dir().join("tokenizer.json")).expect("the model's tokenizer");
    // The file pads every text to 128 tokens; the length wanted is the text's own.
    tokenizer.with_padding(None);
    let lengths: Vec<usize> = qs.iter().map(|q| tokenizer.encode(q.as_str(), true).map_or(usize::MAX, |e| e.len())).collect();
    let mut short_line = String::new();
    println!("{} queries x {RUNS} runs; p50 / p99 per search\n", qs.len());
    println!("{:>6}  {:>22}  {:>22}  {:>22}  {:>22}  {:>22}", "tools", "whole hybrid search", "embed the query", "cosine with each tool", "BM25F + blend", "lexical alone");
    for docs in [base.clone(), search_eval::replicate(&base, 4)] {
        let dir = tempfile::tempdir().unwrap();
        let s = loaded(&docs, &base_store, &base_texts, dir.path()).await;
        let index = SearchIndex::build(&docs);
        let keys = toolreg::embed::keys(&docs.iter().map(SearchDoc::embedding_text).collect::<Vec<_>>());
        let (mut whole, mut embed, mut cosine, mut blend, mut lexical) = (vec![], vec![], vec![], vec![], vec![]);
        let mut short = vec![];
        for _ in 0..RUNS {
            for (q, &tokens) in qs.iter().zip(&lengths) {
                let t0 = Instant::now();
                let qv = s.query(q).await.expect("the query embeds");
                let t1 = Instant::now();
                let (cos, cov) = s.cosines(&keys, &qv);
                let tc = Instant::now();
                let hits = index.search_blended(q, None, 5, Some(Blend { cosines: &cos, weight: s.weight(), cjk: s.cjk() }));
                let t2 = Instant::now();
                assert!(cov.used && cov.embedded == docs.len() && !hits.is_empty());
                let t3 = Instant::now();
                std::hint::black_box(index.search(q, None, 5));
                lexical.push(t3.elapsed());
                whole.push(t2 - t0);
                embed.push(t1 - t0);
                if tokens < SHORT {
                    short.push(t1 - t0);
                }
                cosine.push(tc - t1);
                blend.push(t2 - tc);
            }
        }
        let cell = |v: &Vec<Duration>| format!("{} / {}", ms(pct(v.clone(), 0.5)), ms(pct(v.clone(), 0.99)));
        println!("{:>6}  {:>22}  {:>22}  {:>22}  {:>22}  {:>22}", docs.len(), cell(&whole), cell(&embed), cell(&cosine), cell(&blend), cell(&lexical));
        if short_line.is_empty() {
            short_line = format!("embed the query, the {} queries under {SHORT} tokens (2,422 tools): {}", short.len() / RUNS, cell(&short));
        }
    }
    println!("\n{short_line}");
}

/// Peak resident memory (VmHWM) and current (VmRSS) of this process, in MiB.
fn memory() -> (f64, f64) {
    let field = |name: &str| process::status_kib("self", name) as f64 / 1024.0;
    (field("VmHWM:"), field("VmRSS:"))
}

fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointer it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) };
    let u = unsafe { u.assume_init() };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

async fn embed_catalog() {
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    let texts: Vec<String> = docs.iter().map(SearchDoc::embedding_text).collect();
    let keys = toolreg::embed::keys(&texts);
    let dir = tempfile::tempdir().unwrap();
    let both = std::env::var_os("USE_M3").is_some();
    let opts = Options { cache_dir: Some(dir.path().to_path_buf()), ..Options::default() };
    let kept = embedding::dir().join("bench-cache");
    let made = |name: &str| if kept.join(name).exists() { "loaded from an earlier run's" } else { "made this run" };
    println!("MiniLM optimised: {} ({})", made("onnx-optimised"), kept.display());
    let minilm = Arc::new(embedding::model_cached(&kept));
    let s = if both {
        let use_opts = Options { cjk: 1.0, latin: 0.0, ..opts.clone() };
        println!("both local models: MiniLM and USE-m3 (its piece table {})", made("use-m3-pieces.bin"));
        Semantic::start_many(vec![(minilm, opts), (Arc::new(embedding::use_model_cached(&kept)), use_opts)]).unwrap()
    } else {
        Semantic::start(minilm, opts)
    };
    wait_for_model(&s).await;
    let (load_peak, rss_before) = memory();
    println!("memory once loaded: {}", resident_parts());
    // From here VmHWM is the peak while embedding (Linux: 5 resets it to the resident size).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    s.want(texts.clone());
    let mut use_done = None;
    loop {
        let head = s.coverage(&keys, None).embedded;
        let others: Vec<usize> = s.models()[1..].iter().map(|m| m.coverage(&keys, None).embedded).collect();
        if use_done.is_none() && !others.is_empty() && others.iter().all(|&n| n == texts.len()) {
            use_done = Some(t0.elapsed());
        }
        if head == texts.len() && others.iter().all(|&n| n == texts.len()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (wall, cpu) = (t0.elapsed(), cpu_seconds() - cpu0);
    if let Some(u) = use_done {
        println!("USE-m3 had every tool after {:.1} s", u.as_secs_f64());
    }
    let file = dir.path().join("embeddings-onnx.bin");
    // The store is saved every 512 vectors and when the queue drains, just after the last one.
    while store::load(&file).map_or(0, |v| v.len()) < texts.len() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (peak, _) = memory();
    println!("embedded {} tools in {:.1} s wall ({:.1} ms a tool), {:.1} s CPU", texts.len(), wall.as_secs_f64(), wall.as_secs_f64() * 1e3 / texts.len() as f64, cpu);
    println!("memory: {rss_before:.0} MiB resident before (catalog, model loaded; peak while loading {load_peak:.0} MiB)");
    if reset {
        println!("memory: peak while embedding {peak:.0} MiB");
    } else {
        println!("memory: peak {peak:.0} MiB (loading included: this system cannot reset the peak)");
    }
    println!("cache file: {} bytes", std::fs::metadata(&file).unwrap().len());
    println!("memory now: {}", resident_parts());
}

/// Resident memory now by kind (heap and other anonymous memory, mapped files) and what each
/// mapped model file holds of it, in MiB (Linux).
fn resident_parts() -> String {
    let status = |name: &str| process::status_kib("self", name) as f64 / 1024.0;
    let mut files: Vec<(String, f64)> = Vec::new();
    let mut current: Option<String> = None;
    for line in std::fs::read_to_string("/proc/self/smaps").unwrap_or_default().lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if first.contains('-') && first.chars().next().is_some_and(|c| c.is_ascii_hexdigit()) {
            current = line.split_whitespace().nth(5).filter(|p| p.ends_with(".bin") || p.ends_with(".so")).map(|p| p.rsplit('/').next().unwrap_or(p).to_string());
        } else if first == "Rss:" {
            if let (Some(name), Some(kib)) = (&current, words.next().and_then(|w| w.parse::<f64>().ok())) {
                match files.iter_mut().find(|(n, _)| n == name) {
                    Some(f) => f.1 += kib / 1024.0,
                    None => files.push((name.clone(), kib / 1024.0)),
                }
            }
        }
    }
    let mapped: Vec<String> = files.iter().filter(|f| f.1 >= 1.0).map(|(n, m)| format!("{n} {m:.0}")).collect();
    format!("anonymous {:.0} MiB, files {:.0} MiB (of them: {})", status("RssAnon:"), status("RssFile:"), mapped.join(", "))
}

/// Resident memory of this process in MiB (Linux).
fn rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok()).unwrap_or(0.0) / 1024.0
}

/// What each part of USE-m3 keeps resident: its tokenizer alone, then the model (its own
/// tokenizer and net) once it has embedded one text.
fn use_memory() {
    // SAFETY: malloc_trim only returns free heap pages to the system.
    let trim = || unsafe { libc::malloc_trim(0) };
    let r0 = rss_mib();
    let tokenizer = toolreg::embed::use_m3::UseTokenizer::load(&embedding::use_paths().tokenizer).expect("tokenizer.json loads");
    trim();
    let r1 = rss_mib();
    let m = embedding::use_model();
    m.embed_blocking(vec!["hello".into()]).expect("embeds");
    trim();
    let r2 = rss_mib();
    println!("USE-m3, resident: tokenizer alone {:.1} MiB; the model (its own tokenizer and net) {:.1} MiB", r1 - r0, r2 - r1);
    // A model's thread drops it once told to stop: give it a moment.
    let gone = |m| {
        drop(m);
        std::thread::sleep(std::time::Duration::from_millis(500));
        trim();
    };
    gone(m);
    let dir = tempfile::tempdir().unwrap();
    let first = embedding::use_model_cached(dir.path());
    first.embed_blocking(vec!["hello".into()]).expect("embeds");
    gone(first);
    let r3 = rss_mib();
    let m = embedding::use_model_cached(dir.path());
    m.embed_blocking(vec!["hello".into()]).expect("embeds");
    trim();
    println!("the model with its piece table read from its file (built by an earlier start): {:.1} MiB", rss_mib() - r3);
    drop(tokenizer);
}
