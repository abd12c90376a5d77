//! Real token counts (tiktoken-rs).
//!
//! The encoding follows the model id: OpenAI models get their own encoding and the count is
//! exact; every other model (Claude, Gemini, local ones) has no public tokenizer, so
//! `o200k_base` stands in and the count is reported as a proxy. An encoding is built only when
//! a model needs it (`bpe::Bpe`: tiktoken's vocabulary kept once, ~8 MiB instead of tiktoken-rs's
//! ~40 MiB); building one takes ~200 ms, so the server preloads the default one off the request
//! path, and counts are cached by definition content so a plan over thousands of tools stays
//! fast (the text is compared on a hit, and the cache holds at most `COUNT_CACHE_BYTES` of it).

mod bpe;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};
use bpe::Bpe;
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
        self.bpe().count(text)
    }

    /// The encoding, built on first use.
    fn bpe(self) -> &'static Bpe {
        static BUILT: [OnceLock<Bpe>; 2] = [OnceLock::new(), OnceLock::new()];
        BUILT[self as usize].get_or_init(|| match self {
            Encoding::O200kBase => Bpe::from_core(tiktoken_rs::o200k_base().expect("o200k_base loads"), tiktoken_rs::O200K_BASE_PAT_STR),
            Encoding::Cl100kBase => Bpe::from_core(tiktoken_rs::cl100k_base().expect("cl100k_base loads"), bpe::CL100K_BASE_PAT_STR),
        })
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
            let _ = Encoding::O200kBase.bpe();
            tracing::debug!("o200k_base loaded in {:?}", t.elapsed());
        });
    });
}

/// The most text `CountCache::global` keeps (a count is cached with the text it counts).
pub const COUNT_CACHE_BYTES: usize = 32 << 20;

/// Counts keyed by (content hash, encoding): a definition registered again with the same
/// content (an idempotent MCP sync, a host re-registering) is never counted twice.
///
/// Invariants: a hit compares the text itself, so two texts under one hash never share a count
/// (the newer one replaces the older); the texts kept total at most `budget` bytes, the oldest
/// going first; a text larger than the budget is counted and not kept.
pub struct CountCache {
    inner: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    /// The text counted, its count, and its insertion number.
    map: HashMap<(u64, Encoding), (Box<str>, u32, u64)>,
    /// Insertion order, for eviction; a listing whose number is no longer its key's is stale.
    order: VecDeque<((u64, Encoding), u64)>,
    seq: u64,
    bytes: usize,
    budget: usize,
}

impl CountCache {
    pub fn new(budget: usize) -> CountCache {
        CountCache { inner: Mutex::new(Counts { budget, ..Counts::default() }) }
    }

    pub fn global() -> &'static CountCache {
        static CACHE: OnceLock<CountCache> = OnceLock::new();
        CACHE.get_or_init(|| CountCache::new(COUNT_CACHE_BYTES))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every count (benchmarks measure a first plan with it).
    pub fn clear(&self) {
        let mut c = self.lock();
        let budget = c.budget;
        *c = Counts { budget, ..Counts::default() };
    }

    /// The bytes of text kept now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// `text`'s count in `enc`; `hash` is the caller's key for it (a hash of the text or of what
    /// it is made from).
    pub fn get_or_count(&self, hash: u64, enc: Encoding, text: &str) -> u32 {
        if let Some((kept, n, _)) = self.lock().map.get(&(hash, enc)) {
            if **kept == *text {
                return *n;
            }
        }
        let n = u32::try_from(enc.count(text)).unwrap_or(u32::MAX);
        self.lock().insert((hash, enc), text, n);
        n
    }
}

impl Counts {
    fn insert(&mut self, key: (u64, Encoding), text: &str, n: u32) {
        if text.len() > self.budget {
            return;
        }
        self.seq += 1;
        if let Some((old, _, _)) = self.map.insert(key, (text.into(), n, self.seq)) {
            self.bytes -= old.len();
        }
        self.bytes += text.len();
        self.order.push_back((key, self.seq));
        while self.bytes > self.budget {
            let Some((oldest, seq)) = self.order.pop_front() else { break };
            if self.map.get(&oldest).is_some_and(|e| e.2 == seq) {
                if let Some((old, _, _)) = self.map.remove(&oldest) {
                    self.bytes -= old.len();
                }
            }
        }
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
    }

    #[test]
    fn two_texts_under_one_key_keep_their_own_counts() {
        let cache = CountCache::new(1 << 20);
        assert_eq!(cache.get_or_count(7, Encoding::O200kBase, "hello world"), 2);
        // A forced collision: the same key, another text. It is counted, not given the first's.
        assert_eq!(cache.get_or_count(7, Encoding::O200kBase, "a b c d e f"), 6);
        assert_eq!(cache.get_or_count(7, Encoding::O200kBase, "hello world"), 2);
        assert_eq!(cache.bytes(), "hello world".len());
    }

    #[test]
    fn the_byte_bound_evicts_the_oldest() {
        let cache = CountCache::new(30);
        for (key, text) in [(1, "one two three"), (2, "four five six"), (3, "seven eight")] {
            cache.get_or_count(key, Encoding::O200kBase, text);
        }
        // 13 + 13 + 11 > 30: the first went.
        assert_eq!(cache.bytes(), 24);
        let c = cache.lock();
        assert!(!c.map.contains_key(&(1, Encoding::O200kBase)) && c.map.contains_key(&(3, Encoding::O200kBase)));
        drop(c);
        // Larger than the whole budget: counted, not kept.
        let big = "word ".repeat(10);
        assert_eq!(cache.get_or_count(4, Encoding::O200kBase, &big), Encoding::O200kBase.count(&big) as u32);
        assert_eq!(cache.bytes(), 24);
    }
}
