//! A `toolreg mcp` config's `search`: tool_search's semantic signal, in the shape `initialize`
//! takes, less `host` (an MCP client answers no `host/embed`). Checked when the file is read;
//! started once, with the gateway: a change waits for the next start.

use crate::service::semantic;
use crate::service::Semantic;
use crate::settings::{EmbeddingSource, SearchSettings};
use std::sync::Arc;

/// Why `search` cannot be used, naming the field; paths must be files now.
pub(crate) fn check(search: &SearchSettings) -> Result<(), String> {
    if search.embeddings == Some(EmbeddingSource::Host) {
        return Err("search.embeddings: kind \"host\" needs a host that answers host/embed; toolreg mcp has none (use \"onnx\" with paths, or \"auto\")".into());
    }
    semantic::check(search).map_err(|(field, msg)| format!("search.{field}: {msg}"))
}

/// The semantic signal the config asks for, its vectors kept in the state directory; none when
/// it asks for none, or `auto` found no model (said once in the log). `check` refused the rest
/// when the file was read.
pub(crate) fn start(search: Option<&SearchSettings>, state_dir: Option<std::path::PathBuf>) -> Option<Arc<Semantic>> {
    semantic::start(search?, None, state_dir).ok().flatten()
}

/// What `toolreg plan` says of a config's `search`: how its tool_search would rank (the
/// packaged model is looked for now), or why `search` is refused.
pub fn describe(search: Option<&SearchSettings>) -> Result<String, String> {
    const LEXICAL: &str = "tool_search: lexical (BM25F)";
    let Some(search) = search else { return Ok(format!("{LEXICAL}; \"search\": {{\"embeddings\": {{\"kind\": \"auto\"}}}} adds the local model")) };
    if search.embeddings != Some(EmbeddingSource::Host) {
        check(search)?;
    }
    Ok(match &search.embeddings {
        None => format!("{LEXICAL}; \"search\": {{\"embeddings\": {{\"kind\": \"auto\"}}}} adds the local model"),
        Some(EmbeddingSource::Host) => "tool_search: BM25F + the host's embeddings (host/embed: toolreg serve only)".into(),
        Some(EmbeddingSource::Onnx { model, .. }) => format!("tool_search: BM25F + the local model {model}"),
        Some(EmbeddingSource::Auto) => match semantic::packaged_model_file() {
            Ok(model) => format!("tool_search: BM25F + the packaged model {}", model.display()),
            Err(why) => format!("{LEXICAL}: {why}"),
        },
    })
}
