//! `tool_search`'s semantic signal as a face's `search` settings ask for it: the same sources,
//! checks and defaults for `initialize` and a `toolreg mcp` config.

use crate::embed::{self, onnx, use_m3, Embedder, Semantic};
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
    let Some(embeddings) = &search.embeddings else { return Ok(None) };
    check(search)?;
    let query_timeout = search.query_timeout_ms.map(|ms| Duration::from_millis(ms.min(MAX_QUERY_TIMEOUT_MS)));
    let sources = embeddings.sources();
    let fused = sources.len() > 1;
    let mut models: Vec<(Arc<dyn Embedder>, embed::Options)> = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        // `semanticWeight` and `semanticCjk` are the first source's; the others keep their defaults.
        let (weight, cjk) = if i == 0 { (search.semantic_weight, search.semantic_cjk) } else { (None, None) };
        let settings = |kind| embed::Settings { weight, cjk, query_timeout, kind };
        let opts = |kind| embed::options(settings(kind), cache_dir.clone()).map_err(|(field, why)| (field.to_string(), why));
        match source {
            EmbeddingSource::Host => {
                let h = host.clone().ok_or_else(|| ("embeddings".to_string(), "kind \"host\" needs a host that answers host/embed".to_string()))?;
                models.push((h, opts(embed::Kind::Host)?));
            }
            EmbeddingSource::Onnx { model, tokenizer, runtime } => {
                models.push((Arc::new(onnx::Onnx::start(onnx_paths(model, tokenizer, runtime.as_deref()), cache_dir.clone())), opts(embed::Kind::Onnx)?));
            }
            EmbeddingSource::Use { weights, tokenizer } => {
                let mut o = opts(embed::Kind::Use)?;
                if fused {
                    o.latin = embed::DEFAULT_LATIN_USE_FUSED;
                    o.weight = weight.unwrap_or(embed::DEFAULT_WEIGHT_USE_FUSED);
                }
                models.push((Arc::new(use_m3::UseM3::start(use_paths(weights, tokenizer), cache_dir.clone())), o));
            }
            EmbeddingSource::Auto => {
                for (j, (e, kind)) in embed::packaged_models(cache_dir.as_deref()).into_iter().enumerate() {
                    let mut o = opts(kind)?;
                    if kind == embed::Kind::Use && (j > 0 || !models.is_empty()) {
                        (o.weight, o.latin, o.cjk) = (embed::DEFAULT_WEIGHT_USE_FUSED, embed::DEFAULT_LATIN_USE_FUSED, embed::DEFAULT_CJK_USE);
                    }
                    models.push((e, o));
                }
            }
        }
    }
    Ok(Semantic::start_many(models))
}

/// Why `search` cannot be used, checked without starting anything: its values, and a local
/// model's paths (they must be files now). `kind: "host"` is the caller's to judge.
pub fn check(search: &SearchSettings) -> Result<(), Refused> {
    let sources = search.embeddings.as_ref().map_or(&[][..], |e| e.sources());
    let kind = match sources.first() {
        Some(EmbeddingSource::Host) => embed::Kind::Host,
        Some(EmbeddingSource::Use { .. }) => embed::Kind::Use,
        _ => embed::Kind::Onnx,
    };
    let values = embed::Settings { weight: search.semantic_weight, cjk: search.semantic_cjk, query_timeout: None, kind };
    embed::options(values, None).map_err(|(field, why)| (field.to_string(), why))?;
    if let Some(crate::settings::Embeddings::Many(v)) = &search.embeddings {
        if v.is_empty() {
            return Err(("embeddings".into(), "an empty list of sources: leave embeddings out for a lexical search".into()));
        }
    }
    let many = sources.len() > 1;
    for (i, source) in sources.iter().enumerate() {
        let at = |field: &str| if many { format!("embeddings[{i}].{field}") } else { format!("embeddings.{field}") };
        match source {
            EmbeddingSource::Onnx { model, tokenizer, runtime } => onnx_paths(model, tokenizer, runtime.as_deref()).check().map_err(|(field, why)| (at(field), why))?,
            EmbeddingSource::Use { weights, tokenizer } => use_paths(weights, tokenizer).check().map_err(|(field, why)| (at(field), why))?,
            _ => {}
        }
    }
    Ok(())
}

/// Where `kind: "auto"` finds the packaged model's file, or where it looked.
pub fn packaged_model_file() -> Result<PathBuf, String> {
    embed::packaged::find().map(|p| p.model)
}

/// Where `kind: "auto"` finds USE-m3's weights, beside the packaged MiniLM or alone.
pub fn packaged_use_file() -> Option<PathBuf> {
    embed::packaged::find_use().map(|p| p.weights)
}

/// The files of a local model as `search.embeddings` names them.
pub fn onnx_paths(model: &str, tokenizer: &str, runtime: Option<&str>) -> onnx::OnnxPaths {
    onnx::OnnxPaths { model: model.into(), tokenizer: tokenizer.into(), runtime: runtime.map(Into::into) }
}

/// USE-m3's files as `search.embeddings` names them.
pub fn use_paths(weights: &str, tokenizer: &str) -> use_m3::UsePaths {
    use_m3::UsePaths { weights: weights.into(), tokenizer: tokenizer.into() }
}

impl super::Service {
    /// The semantic signal a face's `search` settings ask for (`start`): `host` is the face's
    /// way to the host's embeddings, `cache_dir` where vectors are kept.
    pub fn start_semantic(search: &SearchSettings, host: Option<Arc<dyn Embedder>>, cache_dir: Option<PathBuf>) -> Result<Option<Arc<Semantic>>, Refused> {
        start(search, host, cache_dir)
    }

    /// Why `search` cannot be used (`check`), naming the field under `search`.
    pub fn check_search(search: &SearchSettings) -> Result<(), Refused> {
        check(search)
    }

    /// Where `kind: "auto"` finds the packaged model's file, or where it looked.
    pub fn packaged_model_file() -> Result<PathBuf, String> {
        packaged_model_file()
    }

    /// Where `kind: "auto"` finds USE-m3's weights.
    pub fn packaged_use_file() -> Option<PathBuf> {
        packaged_use_file()
    }
}
