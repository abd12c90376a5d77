//! A `toolreg mcp` config's `search`: tool_search's semantic signal, in the shape `initialize`
//! takes, less `host` (an MCP client answers no `host/embed`). Checked when the file is read;
//! started once, with the gateway: a change waits for the next start.

use crate::service::{Semantic, Service};
use crate::settings::{EmbeddingSource, SearchSettings};
use std::sync::Arc;

/// Why `search` cannot be used, naming the field; paths must be files now.
pub(crate) fn check(search: &SearchSettings) -> Result<(), String> {
    if search.embeddings.as_ref().is_some_and(|e| e.has_host()) {
        return Err("search.embeddings: kind \"host\" needs a host that answers host/embed; toolreg mcp has none (use \"onnx\" with paths, or \"auto\")".into());
    }
    Service::check_search(search).map_err(|(field, msg)| format!("search.{field}: {msg}"))
}

/// The semantic signal the config asks for, its vectors kept in the state directory; none when
/// it asks for none, or `auto` found no model (said once in the log). `check` refused the rest
/// when the file was read.
pub(crate) fn start(search: Option<&SearchSettings>, state_dir: Option<std::path::PathBuf>) -> Option<Arc<Semantic>> {
    Service::start_semantic(search?, None, state_dir).ok().flatten()
}

/// What `toolreg plan` says of a config's `search`: how its tool_search would rank (the
/// packaged model is looked for now), or why `search` is refused.
pub fn describe(search: Option<&SearchSettings>) -> Result<String, String> {
    const LEXICAL: &str = "tool_search: lexical (BM25F)";
    let Some(search) = search else { return Ok(format!("{LEXICAL}; \"search\": {{\"embeddings\": {{\"kind\": \"auto\"}}}} adds the local model")) };
    if !search.embeddings.as_ref().is_some_and(|e| e.has_host()) {
        check(search)?;
    }
    let Some(embeddings) = &search.embeddings else {
        return Ok(format!("{LEXICAL}; \"search\": {{\"embeddings\": {{\"kind\": \"auto\"}}}} adds the local model"));
    };
    let models: Vec<String> = embeddings.sources().iter().map(describe_source).collect();
    if let [one] = &models[..] {
        if let Some(why) = one.strip_prefix("lexical: ") {
            return Ok(format!("{LEXICAL}: {why}"));
        }
    }
    Ok(format!("tool_search: BM25F + {}", models.join(" + ")))
}

fn describe_source(source: &EmbeddingSource) -> String {
    match source {
        EmbeddingSource::Host => "the host's embeddings (host/embed: toolreg serve only)".into(),
        EmbeddingSource::Onnx { model, .. } => format!("the local model {model}"),
        EmbeddingSource::Use { weights, .. } => format!("USE-m3 {weights}"),
        EmbeddingSource::Auto => match (Service::packaged_model_file(), Service::packaged_use_file()) {
            (Ok(model), Some(weights)) => format!("the packaged model {} + USE-m3 {}", model.display(), weights.display()),
            (Ok(model), None) => format!("the packaged model {}", model.display()),
            (Err(_), Some(weights)) => format!("the packaged USE-m3 {}", weights.display()),
            (Err(why), None) => format!("lexical: {why}"),
        },
    }
}
