//! A local sentence-embedding model: ONNX Runtime (loaded at run time from the host's path,
//! `ort`'s `load-dynamic`) and the model's `tokenizer.json`, mean-pooled over the attention
//! mask and normalised, as sentence-transformers does for all-MiniLM-L6-v2.
//!
//! The model runs on a thread of its own (`worker.rs`). ONNX Runtime
//! splits each run over two threads (the second core), both at that priority: a second session
//! would cost the model's memory again (the int8 file is ~100 MiB of float32 weights once
//! loaded), one session with two threads costs none.

use super::onnx_optimised;
use super::worker::{LocalModel, Worker};
use super::{Embedded, Embedder, Purpose};
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Tokens per query: all-MiniLM-L6-v2's `max_seq_length`; a long task is read whole.
const QUERY_TOKENS: usize = 256;
/// Tokens per document (a tool): its name, namespace and first sentences carry what it is for.
/// Recall on the dev set and LiveMCPBench by cap, and the time it saves, are in
/// docs/benchmarks-history.md ("Embedding the catalog faster (issue 25 §2)").
const DOCUMENT_TOKENS: usize = 128;
/// ONNX Runtime threads per run: this machine's two cores.
const THREADS: usize = 2;
/// Documents per job: few, so that a query (put ahead of every waiting job) waits at most
/// for the job that is running, about 4 x 40 ms.
const BATCH: usize = 4;

/// Where the model is; checked when the host configures it, loaded on the model's thread.
#[derive(Clone, Debug)]
pub struct OnnxPaths {
    pub model: PathBuf,
    pub tokenizer: PathBuf,
    /// The ONNX Runtime shared library; none: `ORT_DYLIB_PATH`, else the system's.
    pub runtime: Option<PathBuf>,
}

impl OnnxPaths {
    /// The first path that is not a readable file, as (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let file = |field: &'static str, p: &Path| match std::fs::metadata(p) {
            Ok(m) if m.is_file() => Ok(()),
            Ok(_) => Err((field, format!("{} is not a file", p.display()))),
            Err(e) => Err((field, format!("cannot read {}: {e}", p.display()))),
        };
        file("model", &self.model)?;
        file("tokenizer", &self.tokenizer)?;
        match &self.runtime {
            Some(r) => file("runtime", r),
            None => Ok(()),
        }
    }
}

/// The model on its thread (`worker.rs`).
pub struct Onnx {
    worker: Worker,
}

impl Onnx {
    /// Starts the model's thread; the model loads there. A model that fails to load fails
    /// every request with the reason (the search stays lexical). With a `cache_dir`, the model
    /// as ONNX Runtime optimised it is kept there and loaded from there (`onnx_optimised.rs`).
    pub fn start(paths: OnnxPaths, cache_dir: Option<PathBuf>) -> Onnx {
        Onnx { worker: Worker::start("toolreg-embed", move || Model::load(&paths, cache_dir.as_deref())) }
    }

    /// Embeds now, blocking: for tests and benchmarks that use the model directly.
    pub fn embed_blocking(&self, texts: Vec<String>) -> Result<Embedded, String> {
        self.worker.embed_blocking(texts)
    }

    /// Embeds a query now, blocking: for tests and benchmarks that use the model directly.
    pub fn query_blocking(&self, text: String) -> Result<Embedded, String> {
        self.worker.query_blocking(text)
    }
}

impl Embedder for Onnx {
    fn embed(&self, texts: Vec<String>, purpose: Purpose) -> BoxFuture<'static, Result<Embedded, String>> {
        self.worker.embed(texts, purpose)
    }

    fn batch(&self) -> usize {
        BATCH
    }

    fn kind(&self) -> &'static str {
        "onnx"
    }
}

struct Model {
    session: ort::session::Session,
    tokenizer: tokenizers::Tokenizer,
    /// "onnx:" and a digest of the model and tokenizer files and of the document cap: vectors
    /// of another file, or of documents cut elsewhere, are not compared with these.
    id: String,
    takes_token_types: bool,
}

/// ONNX Runtime allows one environment per process: the first model's library is every model's.
static ENV: std::sync::OnceLock<Result<ort::environment::Environment, String>> = std::sync::OnceLock::new();

fn environment(runtime: &Path) -> Result<ort::environment::Environment, String> {
    ENV.get_or_init(|| {
        let builder = ort::init_from(runtime).map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", runtime.display()))?;
        builder.with_name("toolreg").build().map_err(|e| format!("cannot start ONNX Runtime: {e}"))
    })
    .clone()
}

impl LocalModel for Model {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&mut self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, String> {
        Model::embed(self, texts, purpose)
    }
}

/// The session's options, the same for the shipped model and the optimised one. Threads that
/// spin after a run would hold the second core while the sidecar needs it. No memory pattern:
/// it plans buffers per input shape, and every text length is a shape of its own (it held
/// ~5 MiB more while embedding, the vectors the same).
fn builder(env: &ort::environment::Environment) -> ort::Result<ort::session::builder::SessionBuilder> {
    Ok(ort::session::Session::builder(env)?.with_intra_threads(THREADS)?.with_intra_op_spinning(false)?.with_memory_pattern(false)?)
}

impl Model {
    fn load(p: &OnnxPaths, cache_dir: Option<&Path>) -> Result<Model, String> {
        let runtime = p.runtime.clone().unwrap_or_else(|| match std::env::var("ORT_DYLIB_PATH") {
            Ok(s) if !s.is_empty() => PathBuf::from(s),
            _ => PathBuf::from(format!("{}onnxruntime{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)),
        });
        let env = environment(&runtime)?;
        let mut h = Sha256::new();
        for f in [&p.model, &p.tokenizer] {
            super::file_digest::feed(f, &mut [&mut h])?;
        }
        h.update(format!("documents cut at {DOCUMENT_TOKENS} tokens"));
        let id = format!("onnx:{}", &data_encoding::HEXLOWER.encode(&h.finalize())[..16]);
        let mut tokenizer = tokenizers::Tokenizer::from_file(&p.tokenizer).map_err(|e| format!("bad tokenizer {}: {e}", p.tokenizer.display()))?;
        tokenizer.with_padding(None);
        let cannot = |e: ort::Error| format!("cannot load the model {}: {e}", p.model.display());
        let optimised = cache_dir.and_then(|dir| {
            onnx_optimised::path(dir, &format!("{id} {}", ort::info()), |to| {
                let made = (|| -> ort::Result<()> {
                    let mut optimiser = builder(&env)?
                        .with_optimized_model_path(to)?
                        .with_config_entry("session.optimized_model_external_initializers_file_name", onnx_optimised::WEIGHTS)?
                        // Every weight matrix in the file ONNX Runtime maps; the graph keeps the rest.
                        .with_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")?;
                    optimiser.commit_from_file(&p.model).map(drop)
                })();
                crate::os::release_freed_memory();
                made.map_err(cannot)
            })
        });
        let session = match &optimised {
            Some(o) => builder(&env).and_then(|mut b| b.commit_from_file(o)).or_else(|e| {
                tracing::warn!(model = %o.display(), error = %e, "the optimised embedding model did not load: the model is loaded as shipped");
                cache_dir.into_iter().for_each(onnx_optimised::forget);
                builder(&env).and_then(|mut b| b.commit_from_file(&p.model))
            }),
            None => builder(&env).and_then(|mut b| b.commit_from_file(&p.model)),
        }
        .map_err(cannot)?;
        // Folding the weights to float32 freed ~60 MiB of temporaries that glibc would keep.
        crate::os::release_freed_memory();
        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        if !names.contains(&"input_ids") || !names.contains(&"attention_mask") {
            return Err(format!("the model {} does not take input_ids and attention_mask (it takes {names:?})", p.model.display()));
        }
        let takes_token_types = names.contains(&"token_type_ids");
        Ok(Model { session, tokenizer, id, takes_token_types })
    }

    /// One run per text: padding a batch to its longest text cost 3.5x the time and 3x the
    /// memory of single runs (docs/benchmarks-history.md "Hybrid tool_search (issue 12)").
    fn embed(&mut self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, String> {
        let cap = match purpose {
            Purpose::Query => QUERY_TOKENS,
            Purpose::Document => DOCUMENT_TOKENS,
        };
        texts.iter().map(|t| self.embed_one(t, cap)).collect()
    }

    /// The mean of the last hidden state over the text's first `cap` tokens, normalised.
    fn embed_one(&mut self, text: &str, cap: usize) -> Result<Vec<f32>, String> {
        // The tokenizer cuts the text and then adds [CLS] and [SEP], as the model was trained.
        if self.tokenizer.get_truncation().map(|t| t.max_length) != Some(cap) {
            self.tokenizer
                .with_truncation(Some(tokenizers::TruncationParams { max_length: cap, ..Default::default() }))
                .map_err(|e| format!("cannot cut the text at {cap} tokens: {e}"))?;
        }
        let enc = self.tokenizer.encode(text, true).map_err(|e| format!("cannot tokenise: {e}"))?;
        let ids: Vec<i64> = enc.get_ids().iter().map(|&i| i64::from(i)).collect();
        let len = ids.len();
        if len == 0 {
            return Err("the tokenizer made no tokens".into());
        }
        let shape = [1, len as i64];
        let tensor = |v: Vec<i64>| ort::value::Tensor::from_array((shape, v)).map_err(|e| e.to_string());
        let mut inputs = ort::inputs! {
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(vec![1i64; len])?,
        };
        if self.takes_token_types {
            inputs.push(("token_type_ids".into(), tensor(vec![0i64; len])?.into()));
        }
        let out = self.session.run(inputs).map_err(|e| format!("the model failed: {e}"))?;
        let (oshape, hidden) = out[0].try_extract_tensor::<f32>().map_err(|e| format!("unexpected model output: {e}"))?;
        if oshape.len() != 3 || oshape[0] != 1 || oshape[1] as usize != len || oshape[2] <= 0 {
            return Err(format!("unexpected model output shape {oshape:?}"));
        }
        let dim = oshape[2] as usize;
        let mut acc = vec![0f32; dim];
        for token in hidden.chunks_exact(dim) {
            acc.iter_mut().zip(token).for_each(|(a, h)| *a += h);
        }
        acc.iter_mut().for_each(|a| *a /= len as f32);
        Ok(super::store::normalised(acc))
    }
}
