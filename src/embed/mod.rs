//! Sentence embeddings for `tool_search`'s semantic signal, from the host (`host/embed`) or a
//! local ONNX model (`onnx.rs`). Knows no JSON-RPC and no search: texts in, vectors out.
//!
//! `Semantic` never makes a search wait for the catalog: documents are embedded by one
//! background task, in batches, and kept by content (`store.rs`, on disk in `cacheDir`). A
//! search asks only for its query's vector, bounded by a timeout; whatever fails or is slow
//! leaves the search lexical, with a log line.

mod file_digest;
mod load_turn;
mod npz;
pub mod onnx;
mod onnx_optimised;
pub mod packaged;
pub mod store;
pub mod use_m3;
mod use_m3_net;
mod use_m3_table;
mod use_m3_table_file;
mod use_m3_tokens;
pub mod worker;

use futures::future::BoxFuture;
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store::{Key, Vectors};
use tokio::sync::Notify;

/// What a text is embedded for: some models (and some hosts' APIs) embed the two differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    Query,
    Document,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Query => "query",
            Purpose::Document => "document",
        }
    }
}

/// Vectors for some texts, one per text, and the model that made them.
#[derive(Clone, Debug)]
pub struct Embedded {
    pub vectors: Vec<Vec<f32>>,
    pub model: String,
}

/// A source of embeddings: the host, or a local model. Errors are readable sentences.
pub trait Embedder: Send + Sync + 'static {
    fn embed(&self, texts: Vec<String>, purpose: Purpose) -> BoxFuture<'static, Result<Embedded, String>>;
    /// Documents per request.
    fn batch(&self) -> usize;
    /// Which cache file this source keeps ("host", "onnx").
    fn kind(&self) -> &'static str;
}

/// Tuning that a host may set (`initialize` `search`).
#[derive(Clone, Debug)]
pub struct Options {
    /// Where the vectors are kept across restarts; none: memory only.
    pub cache_dir: Option<PathBuf>,
    /// How long a search waits for its query's vector before it answers lexically.
    pub query_timeout: Duration,
    /// How long one batch of documents may take.
    pub document_timeout: Duration,
    /// Weight of the cosine beside the lexical score scaled to 1 (see `meta::search`).
    pub weight: f32,
    /// How well the model reads CJK text, 0 to 1 (`meta::search::Blend::cjk`).
    pub cjk: f32,
    /// How well it reads other letters, 0 to 1: 1 but for a model fused with a better reader
    /// of them (USE-m3 beside MiniLM, `DEFAULT_LATIN_USE_FUSED`).
    pub latin: f32,
    /// How much a query's CJK letters count when the model reads their English gloss
    /// (`meta::search::gloss_english_of`) in their place; 0: it reads the query as written. For
    /// an English model (MiniLM) asked a Chinese request (docs/benchmarks-history.md "Two local
    /// models: USE-m3 beside MiniLM (issue 41)").
    pub gloss: f32,
}

/// The weight chosen on the dev set's tune half (docs/benchmarks-history.md "The weight chosen
/// again, on the development set's tune half, and read by script (issue 26)").
pub const DEFAULT_WEIGHT: f32 = 4.0;
/// How well a local ONNX model reads CJK by default: the packaged all-MiniLM-L6-v2 is English.
pub const DEFAULT_CJK_LOCAL: f32 = 0.0;
/// ... and the host's embeddings (a provider's, multilingual as a rule).
pub const DEFAULT_CJK_HOST: f32 = 1.0;
/// USE-m3 reads Chinese as well as English.
pub const DEFAULT_CJK_USE: f32 = 1.0;
/// USE-m3's weight and how much of a query's Latin letters it reads when it is fused with an
/// English model (MiniLM reads those better): chosen on the dev set's tune half
/// (docs/benchmarks-history.md "Two local models: USE-m3 beside MiniLM (issue 41)").
pub const DEFAULT_WEIGHT_USE_FUSED: f32 = 1.5;
pub const DEFAULT_LATIN_USE_FUSED: f32 = 0.0;
/// How much a Chinese request's letters count for the packaged English model reading their
/// gloss: chosen with USE-m3's weight on the dev set's tune half (docs/benchmarks-history.md "Two
/// local models: USE-m3 beside MiniLM (issue 41)", "The gloss for MiniLM, first sentences for
/// USE-m3").
pub const DEFAULT_GLOSS_LOCAL: f32 = 0.75;

impl Default for Options {
    fn default() -> Self {
        Options { cache_dir: None, query_timeout: Duration::from_millis(1000), document_timeout: Duration::from_secs(60), weight: DEFAULT_WEIGHT, cjk: DEFAULT_CJK_LOCAL, latin: 1.0, gloss: DEFAULT_GLOSS_LOCAL }
    }
}

/// The settings a host or a config file gives the semantic signal (`search` less its source).
#[derive(Clone, Copy, Debug, Default)]
pub struct Settings {
    pub weight: Option<f32>,
    pub cjk: Option<f32>,
    pub query_timeout: Option<Duration>,
    /// Where the vectors come from (the default `cjk` follows).
    pub kind: Kind,
}

/// A source of vectors, as far as its defaults go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// The host's embeddings (`DEFAULT_CJK_HOST`).
    Host,
    /// A local ONNX model (`DEFAULT_CJK_LOCAL`).
    #[default]
    Onnx,
    /// USE-m3 (`DEFAULT_CJK_USE`).
    Use,
}

/// Options from a host's or a config file's settings; a refused value as (field, why).
pub fn options(s: Settings, cache_dir: Option<PathBuf>) -> Result<Options, (&'static str, String)> {
    let weight = s.weight.unwrap_or(DEFAULT_WEIGHT);
    if !weight.is_finite() || weight < 0.0 {
        return Err(("semanticWeight", format!("semanticWeight must be a number >= 0, not {weight}")));
    }
    let cjk = s.cjk.unwrap_or(match s.kind {
        Kind::Host => DEFAULT_CJK_HOST,
        Kind::Onnx => DEFAULT_CJK_LOCAL,
        Kind::Use => DEFAULT_CJK_USE,
    });
    if !(0.0..=1.0).contains(&cjk) {
        return Err(("semanticCjk", format!("semanticCjk must be a number from 0 to 1, not {cjk}")));
    }
    // Only the packaged English model reads a gloss: a host's model, USE-m3, or a model the
    // host says reads CJK, read the request as written.
    let gloss = if s.kind == Kind::Onnx && s.cjk.is_none() { DEFAULT_GLOSS_LOCAL } else { 0.0 };
    let defaults = Options::default();
    Ok(Options { cache_dir, query_timeout: s.query_timeout.unwrap_or(defaults.query_timeout), weight, cjk, gloss, ..defaults })
}

/// The packaged local models (`packaged::find`, `packaged::find_use`), started: MiniLM, then
/// USE-m3, each when its files are there (USE-m3 alone for a host without ONNX Runtime). None
/// found is no error: the search stays lexical, and this says so in the log (once: it runs once
/// per process). Each keeps what it derives from its files in `cache_dir` when there is one
/// (`onnx::Onnx::start`, `use_m3::UseM3::start`).
pub fn packaged_models(cache_dir: Option<&std::path::Path>) -> Vec<(Arc<dyn Embedder>, Kind)> {
    let mut out: Vec<(Arc<dyn Embedder>, Kind)> = Vec::new();
    let use_m3 = packaged::find_use();
    match packaged::find() {
        Ok(p) => {
            tracing::info!(model = %p.model.display(), tokenizer = %p.tokenizer.display(), runtime = ?p.runtime, "packaged embedding model found");
            out.push((Arc::new(onnx::Onnx::start(p, cache_dir.map(PathBuf::from))), Kind::Onnx));
        }
        Err(why) if use_m3.is_none() => tracing::warn!("tool_search stays lexical: {why}"),
        Err(_) => tracing::info!("no packaged MiniLM: USE-m3 alone"),
    }
    if let Some(p) = use_m3 {
        tracing::info!(weights = %p.weights.display(), tokenizer = %p.tokenizer.display(), "packaged USE-m3 found");
        out.push((Arc::new(use_m3::UseM3::start(p, cache_dir.map(PathBuf::from))), Kind::Use));
    }
    out
}

/// A query's vector, with the model that made it: it is compared only with that model's.
#[derive(Clone)]
pub struct QueryVector {
    pub model: String,
    pub vector: Vec<f32>,
}

/// How much of a pool has vectors, and whether the query's vector took part.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub model: Option<String>,
    pub embedded: usize,
    pub pool: usize,
    pub used: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The models fused with this one, each its own coverage.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Coverage>,
}

/// Back-off after a failed batch: doubles from the first to the last.
const RETRY_FIRST: Duration = Duration::from_secs(5);
const RETRY_LAST: Duration = Duration::from_secs(600);
/// Texts waiting to be embedded; beyond this the oldest wait for the next sync.
const MAX_QUEUED: usize = 50_000;
/// The store is written after this many new vectors, and when a round ends.
const SAVE_EVERY: usize = 512;

#[derive(Default)]
struct Queue {
    texts: VecDeque<(Key, String)>,
    queued: HashSet<Key>,
}

pub struct Semantic {
    /// Further models fused with this one (each with its own vectors and background task).
    others: Vec<Arc<Semantic>>,
    source: Arc<dyn Embedder>,
    opts: Options,
    vectors: Mutex<Vectors>,
    queue: Mutex<Queue>,
    wake: Arc<Notify>,
    /// The last failure, until a batch succeeds (answered in `Coverage::reason`).
    failing: Mutex<Option<String>>,
}

impl Semantic {
    /// Starts the background task (on the current runtime), which first loads the store.
    pub fn start(source: Arc<dyn Embedder>, opts: Options) -> Arc<Semantic> {
        Self::start_with(source, opts, Vec::new())
    }

    /// Several models, fused by `tool_search` (`meta::search_fuse`): the first one's settings
    /// and coverage lead, each embeds the catalog on its own thread.
    pub fn start_many(mut models: Vec<(Arc<dyn Embedder>, Options)>) -> Option<Arc<Semantic>> {
        if models.is_empty() {
            return None;
        }
        let (source, opts) = models.remove(0);
        let others = models.into_iter().map(|(s, o)| Self::start_with(s, o, Vec::new())).collect();
        Some(Self::start_with(source, opts, others))
    }

    fn start_with(source: Arc<dyn Embedder>, opts: Options, others: Vec<Arc<Semantic>>) -> Arc<Semantic> {
        let s = Arc::new(Semantic {
            others,
            source,
            opts,
            vectors: Mutex::new(Vectors::default()),
            queue: Mutex::new(Queue::default()),
            wake: Arc::new(Notify::new()),
            failing: Mutex::new(None),
        });
        tokio::spawn(background(Arc::downgrade(&s), s.wake.clone()));
        s
    }

    pub fn weight(&self) -> f32 {
        self.opts.weight
    }

    /// How well the model reads CJK text (`Options::cjk`).
    pub fn cjk(&self) -> f32 {
        self.opts.cjk
    }

    /// How much CJK letters count read through their gloss (`Options::gloss`).
    pub fn gloss(&self) -> f32 {
        self.opts.gloss
    }

    /// How well it reads other letters (`Options::latin`).
    pub fn latin(&self) -> f32 {
        self.opts.latin
    }

    /// This model and those fused with it, this one first.
    pub fn models(&self) -> Vec<&Semantic> {
        std::iter::once(self).chain(self.others.iter().map(|o| o.as_ref())).collect()
    }

    /// Each model's vector of the query, asked at once, in `models` order.
    pub async fn query_all(&self, text: &str) -> Vec<Result<QueryVector, String>> {
        futures::future::join_all(self.models().into_iter().map(|m| m.query(text))).await
    }

    fn vectors(&self) -> std::sync::MutexGuard<'_, Vectors> {
        self.vectors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for vectors of these documents, of every model; returns at once. Known ones are
    /// skipped.
    pub fn want(&self, texts: impl IntoIterator<Item = String>) {
        if self.others.is_empty() {
            return self.want_one(texts);
        }
        let texts: Vec<String> = texts.into_iter().collect();
        for o in &self.others {
            o.want_one(texts.iter().cloned());
        }
        self.want_one(texts);
    }

    fn want_one(&self, texts: impl IntoIterator<Item = String>) {
        let mut fresh = 0;
        {
            let known = self.vectors();
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            for t in texts {
                let k = store::key(&t);
                if known.get(&k).is_some() || q.queued.contains(&k) {
                    continue;
                }
                if q.texts.len() >= MAX_QUEUED {
                    break;
                }
                q.queued.insert(k);
                q.texts.push_back((k, t));
                fresh += 1;
            }
        }
        if fresh > 0 {
            self.wake.notify_one();
        }
    }

    /// The query's vector, or why there is none (timeout, failure): then the search is lexical.
    pub async fn query(&self, text: &str) -> Result<QueryVector, String> {
        let asked = self.source.embed(vec![text.to_string()], Purpose::Query);
        let got = match tokio::time::timeout(self.opts.query_timeout, asked).await {
            Err(_) => Err(format!("the query's embedding took over {} ms", self.opts.query_timeout.as_millis())),
            Ok(r) => r.and_then(|e| one_vector(e, 1).map(|(m, mut v)| (m, v.remove(0)))),
        };
        match got {
            Ok((model, vector)) => Ok(QueryVector { model, vector }),
            Err(e) => {
                tracing::warn!(error = %e, "tool_search answers lexically: no query embedding");
                Err(e)
            }
        }
    }

    /// Whether any document has a vector, of any model (otherwise a query's vector is of no use).
    pub fn any(&self) -> bool {
        !self.vectors().is_empty() || self.others.iter().any(|o| o.any())
    }

    /// Cosine of the query with each key's vector (NaN where there is none yet), and coverage.
    pub fn cosines(&self, keys: &[Key], q: &QueryVector) -> (Vec<f32>, Coverage) {
        let v = self.vectors();
        let mut out = vec![f32::NAN; keys.len()];
        let mut embedded = 0;
        let same_model = v.model() == Some(q.model.as_str()) && v.dim() == Some(q.vector.len());
        for (i, k) in keys.iter().enumerate() {
            if let Some(d) = v.get(k) {
                embedded += 1;
                if same_model {
                    out[i] = store::dot(d, &q.vector);
                }
            }
        }
        let reason = (!same_model).then(|| format!("the query was embedded by {:?}, the tools by {:?}", q.model, v.model().unwrap_or("none")));
        let cov = Coverage { model: v.model().map(str::to_string), embedded, pool: keys.len(), used: same_model && embedded > 0, reason, also: Vec::new() };
        (out, cov)
    }

    /// Coverage when no query vector was made.
    pub fn coverage(&self, keys: &[Key], reason: Option<String>) -> Coverage {
        let v = self.vectors();
        let embedded = keys.iter().filter(|k| v.get(k).is_some()).count();
        let reason = reason.or_else(|| self.failing.lock().unwrap_or_else(|e| e.into_inner()).clone());
        Coverage { model: v.model().map(str::to_string), embedded, pool: keys.len(), used: false, reason, also: Vec::new() }
    }

    fn cache_file(&self) -> Option<PathBuf> {
        self.opts.cache_dir.as_ref().map(|d| d.join(format!("embeddings-{}.bin", self.source.kind())))
    }

    async fn save(&self) {
        let (Some(dir), Some(path)) = (self.opts.cache_dir.clone(), self.cache_file()) else { return };
        let bytes = self.vectors().encode();
        let wrote = tokio::task::spawn_blocking(move || crate::catalog::cache::write_atomic(&dir, &path, &bytes)).await;
        if let Ok(Err(e)) = wrote {
            tracing::warn!(error = %e, "cannot save the embedding cache");
        }
    }

    /// One batch: `Ok(n)` vectors stored, `Err` why not (the texts go back to the queue).
    async fn embed_batch(&self, batch: Vec<(Key, String)>) -> Result<usize, String> {
        let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let asked = self.source.embed(texts, Purpose::Document);
        let got = match tokio::time::timeout(self.opts.document_timeout, asked).await {
            Err(_) => Err(format!("a batch of {} documents took over {} s", batch.len(), self.opts.document_timeout.as_secs())),
            Ok(r) => r.and_then(|e| one_vector(e, batch.len())),
        };
        let (model, vectors) = match got {
            Ok(x) => x,
            Err(e) => {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                for item in batch.into_iter().rev() {
                    q.texts.push_front(item);
                }
                return Err(e);
            }
        };
        let mut v = self.vectors();
        if v.model() != Some(model.as_str()) || v.dim() != vectors.first().map(Vec::len) {
            if !v.is_empty() {
                tracing::info!(from = ?v.model(), to = %model, "embedding model changed: earlier vectors dropped");
            }
            v.reset(&model, vectors[0].len());
        }
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let n = batch.len();
        for ((k, _), vec) in batch.into_iter().zip(vectors) {
            q.queued.remove(&k);
            v.insert(k, vec);
        }
        Ok(n)
    }

    fn take_batch(&self) -> Vec<(Key, String)> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let known = self.vectors();
        let mut out = Vec::new();
        while out.len() < self.source.batch().max(1) {
            let Some((k, t)) = q.texts.pop_front() else { break };
            if known.get(&k).is_some() {
                q.queued.remove(&k);
                continue;
            }
            out.push((k, t));
        }
        out
    }
}

/// Checks an answer: `n` vectors of one non-zero dimension, finite; normalised here.
fn one_vector(e: Embedded, n: usize) -> Result<(String, Vec<Vec<f32>>), String> {
    if e.vectors.len() != n {
        return Err(format!("asked for {n} vectors, got {}", e.vectors.len()));
    }
    let dim = e.vectors.first().map_or(0, Vec::len);
    if dim == 0 || e.vectors.iter().any(|v| v.len() != dim) {
        return Err("the vectors are empty or of different lengths".into());
    }
    if e.vectors.iter().flatten().any(|x| !x.is_finite()) {
        return Err("a vector has a non-finite number".into());
    }
    let model = if e.model.trim().is_empty() { "unnamed".to_string() } else { e.model };
    Ok((model, e.vectors.into_iter().map(store::normalised).collect()))
}

/// The background task: load the store, then embed whatever is wanted, batch by batch, with
/// back-off while the source fails. Ends when the `Semantic` is dropped.
async fn background(me: std::sync::Weak<Semantic>, wake: Arc<Notify>) {
    if let Some(s) = me.upgrade() {
        if let Some(path) = s.cache_file() {
            let loaded = tokio::task::spawn_blocking(move || store::load(&path)).await.ok().flatten();
            if let Some(v) = loaded {
                tracing::info!(vectors = v.len(), model = ?v.model(), "embedding cache loaded");
                let mut mine = s.vectors();
                if mine.is_empty() {
                    *mine = v;
                }
            }
        }
    }
    let mut retry = RETRY_FIRST;
    loop {
        let Some(s) = me.upgrade() else { return };
        let batch = s.take_batch();
        if batch.is_empty() {
            s.save_if_dirty().await;
            let woken = wake.notified();
            drop(s);
            // Re-check now and then: `me` may be gone, and nothing would wake us.
            let _ = tokio::time::timeout(Duration::from_secs(30), woken).await;
            continue;
        }
        let started = Instant::now();
        match s.embed_batch(batch).await {
            Ok(n) => {
                retry = RETRY_FIRST;
                *s.failing.lock().unwrap_or_else(|e| e.into_inner()) = None;
                tracing::debug!(documents = n, ms = started.elapsed().as_millis() as u64, "embedded");
                if s.vectors().unsaved() >= SAVE_EVERY {
                    s.save_if_dirty().await;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_s = retry.as_secs(), "document embedding failed; tool_search stays lexical for those tools");
                *s.failing.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                drop(s);
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_LAST);
            }
        }
    }
}

impl Semantic {
    async fn save_if_dirty(&self) {
        if self.vectors().unsaved() > 0 {
            self.vectors().mark_saved();
            self.save().await;
        }
    }
}

/// Texts by key: what `want` needs to look up a pool's vectors later (see `meta::PlanIndex`).
pub fn keys(texts: &[String]) -> Vec<Key> {
    texts.iter().map(|t| store::key(t)).collect()
}
