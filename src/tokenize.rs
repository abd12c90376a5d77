//! Real token counts (tiktoken-rs).
//!
//! The encoding follows the model id: OpenAI models get their own encoding and the count is
//! exact; every other model (Claude, Gemini, local ones) has no public tokenizer, so
//! `o200k_base` stands in and the count is reported as a proxy. Building an encoding takes
//! ~150 ms and ~45 MiB, so the server preloads the default one off the request path, and
//! counts are cached by definition content so a plan over thousands of tools stays fast.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use tiktoken_rs::tokenizer::{get_tokenizer, Tokenizer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Encoding {
    #[serde(rename = "o200k_base")]
    O200kBase = 0,
    #[serde(rename = "cl100k_base")]
    Cl100kBase = 1,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    pub fn count(self, text: &str) -> usize {
        match self {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton().count_ordinary(text),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton().count_ordinary(text),
        }
    }
}

/// Which encoding counted, and whether it is the model's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EncodingChoice {
    pub name: Encoding,
    pub exact: bool,
}

pub fn for_model(model: Option<&str>) -> EncodingChoice {
    let proxy = EncodingChoice { name: Encoding::O200kBase, exact: false };
    let Some(model) = model.map(str::trim).filter(|m| !m.is_empty()) else { return proxy };
    // Hosts often send provider-qualified ids ("openai/gpt-4o"); the model is the last part.
    let bare = model.rsplit('/').next().unwrap_or(model);
    match get_tokenizer(bare) {
        Some(Tokenizer::O200kBase) | Some(Tokenizer::O200kHarmony) => {
            EncodingChoice { name: Encoding::O200kBase, exact: true }
        }
        Some(Tokenizer::Cl100kBase) => EncodingChoice { name: Encoding::Cl100kBase, exact: true },
        _ => proxy,
    }
}

/// Builds the default encoding on a background thread, so the first plan rarely waits.
pub fn preload() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let _ = std::thread::Builder::new().name("tokenizer-load".into()).spawn(|| {
            let t = std::time::Instant::now();
            let _ = tiktoken_rs::o200k_base_singleton();
            tracing::debug!("o200k_base loaded in {:?}", t.elapsed());
        });
    });
}

/// Counts keyed by (content hash, encoding): a definition registered again with the same
/// content (an idempotent MCP sync, a host re-registering) is never counted twice.
pub struct CountCache {
    map: Mutex<HashMap<(u64, Encoding), u32>>,
}

impl CountCache {
    pub fn global() -> &'static CountCache {
        static CACHE: OnceLock<CountCache> = OnceLock::new();
        CACHE.get_or_init(|| CountCache { map: Mutex::new(HashMap::new()) })
    }

    /// Forgets every count (benchmarks measure a first plan with it).
    pub fn clear(&self) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub fn get_or_count(&self, hash: u64, enc: Encoding, text: impl FnOnce() -> String) -> u32 {
        if let Some(n) = self.map.lock().unwrap_or_else(|e| e.into_inner()).get(&(hash, enc)) {
            return *n;
        }
        let n = u32::try_from(enc.count(&text())).unwrap_or(u32::MAX);
        self.map.lock().unwrap_or_else(|e| e.into_inner()).insert((hash, enc), n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_choose_encodings() {
        assert_eq!(for_model(Some("gpt-4o")), EncodingChoice { name: Encoding::O200kBase, exact: true });
        assert_eq!(for_model(Some("openai/gpt-4.1-mini")), EncodingChoice { name: Encoding::O200kBase, exact: true });
        assert_eq!(for_model(Some("gpt-4")), EncodingChoice { name: Encoding::Cl100kBase, exact: true });
        assert_eq!(for_model(Some("gpt-3.5-turbo")), EncodingChoice { name: Encoding::Cl100kBase, exact: true });
        assert_eq!(for_model(Some("claude-sonnet-4")), EncodingChoice { name: Encoding::O200kBase, exact: false });
        assert_eq!(for_model(None), EncodingChoice { name: Encoding::O200kBase, exact: false });
    }

    #[test]
    fn counts_are_real() {
        // "hello world" is two tokens in both encodings.
        assert_eq!(Encoding::O200kBase.count("hello world"), 2);
        assert_eq!(Encoding::Cl100kBase.count("hello world"), 2);
        let cache = CountCache { map: Mutex::new(HashMap::new()) };
        assert_eq!(cache.get_or_count(7, Encoding::O200kBase, || "hello world".into()), 2);
        // A cached count is not recomputed: the text closure would give another answer.
        assert_eq!(cache.get_or_count(7, Encoding::O200kBase, || "a b c d e f".into()), 2);
    }
}
