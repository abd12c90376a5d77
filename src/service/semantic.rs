//! `tool_search`'s semantic signal as a face's `search` settings ask for it: the same sources,
//! checks and defaults for `initialize` and a `toolreg mcp` config.

use crate::embed::{self, onnx, Embedder, Semantic};
use crate::settings::{EmbeddingSource, SearchSettings};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// An hour: past that a search is not waiting for its query's vector, it is stuck.
const MAX_QUERY_TIMEOUT_MS: u64 = 3_600_000;

/// A refused setting: the field under `search` (`semanticWeight`, `embeddings.model`) and why.
pub type Refused = (String, String);

/// The semantic signal `search` asks for, its vectors kept in `cache_dir`. `host` is the face's
/// way to the host's embeddings (`None`: it has none, and `kind: "host"` is refused). Values
/// and paths are checked now; a model that then fails to load, or `auto` finding none, only
/// leaves the search lexical (`Ok(None)`, said once in the log).
pub fn start(search: &SearchSettings, host: Option<Arc<dyn Embedder>>, cache_dir: Option<PathBuf>) -> Result<Option<Arc<Semantic>>, Refused> {
    let Some(source) = &search.embeddings else { return Ok(None) };
    let query_timeout = search.query_timeout_ms.map(|ms| Duration::from_millis(ms.min(MAX_QUERY_TIMEOUT_MS)));
    let settings = embed::Settings { weight: search.semantic_weight, cjk: search.semantic_cjk, query_timeout, host: matches!(source, EmbeddingSource::Host) };
    let opts = embed::options(settings, cache_dir).map_err(|(field, why)| (field.to_string(), why))?;
    let embedder: Arc<dyn Embedder> = match source {
        EmbeddingSource::Host => host.ok_or_else(|| ("embeddings".to_string(), "kind \"host\" needs a host that answers host/embed".to_string()))?,
        EmbeddingSource::Onnx { model, tokenizer, runtime } => {
            let paths = onnx_paths(model, tokenizer, runtime.as_deref());
            paths.check().map_err(|(field, why)| (format!("embeddings.{field}"), why))?;
            Arc::new(onnx::Onnx::start(paths))
        }
        EmbeddingSource::Auto => match embed::packaged_model() {
            Some(e) => e,
            None => return Ok(None),
        },
    };
    Ok(Some(Semantic::start(embedder, opts)))
}

/// Why `search` cannot be used, checked without starting anything: its values, and a local
/// model's paths (they must be files now). `kind: "host"` is the caller's to judge.
pub fn check(search: &SearchSettings) -> Result<(), Refused> {
    let host = matches!(search.embeddings, Some(EmbeddingSource::Host));
    let values = embed::Settings { weight: search.semantic_weight, cjk: search.semantic_cjk, query_timeout: None, host };
    embed::options(values, None).map_err(|(field, why)| (field.to_string(), why))?;
    match &search.embeddings {
        Some(EmbeddingSource::Onnx { model, tokenizer, runtime }) => {
            onnx_paths(model, tokenizer, runtime.as_deref()).check().map_err(|(field, why)| (format!("embeddings.{field}"), why))
        }
        _ => Ok(()),
    }
}

/// Where `kind: "auto"` finds the packaged model's file, or where it looked.
pub fn packaged_model_file() -> Result<PathBuf, String> {
    embed::packaged::find().map(|p| p.model)
}

/// The files of a local model as `search.embeddings` names them.
pub fn onnx_paths(model: &str, tokenizer: &str, runtime: Option<&str>) -> onnx::OnnxPaths {
    onnx::OnnxPaths { model: model.into(), tokenizer: tokenizer.into(), runtime: runtime.map(Into::into) }
}
