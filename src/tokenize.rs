//! Real token counts (tiktoken-rs).
//!
//! The encoding follows the model id: OpenAI models get their own encoding and the count is
//! exact; every other model (Claude, Gemini, local ones) has no public tokenizer, so
//! `o200k_base` stands in and the count is reported as a proxy. An encoding is built only when
//! a model needs it (`bpe::Bpe`: tiktoken's vocabulary kept once, ~8 MiB instead of tiktoken-rs's
//! ~40 MiB); building one takes ~200 ms, so the server preloads the default one off the request
//! path, and counts are cached by definition content so a plan over thousands of tools stays
//! fast (keyed by a 128-bit digest of the text, at most `COUNT_CACHE_ENTRIES` counts).

mod bpe;
pub mod split;

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

    /// The tokens of `text`'s pieces that start before byte `end`: of `text[..end]` when a
    /// piece starts at `end` (`split`).
    pub fn count_until(self, text: &str, end: usize) -> usize {
        self.bpe().count_until(text, end)
    }

    /// Where each token of `text` ends, in bytes (`bpe::Bpe::token_ends`).
    pub fn token_ends(self, text: &str) -> Vec<usize> {
        self.bpe().token_ends(text)
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

/// The most counts `CountCache::global` keeps (~50 bytes each with the map and the order: at
/// most ~12 MiB; 2,422 tools in every rendering take ~10,000).
pub const COUNT_CACHE_ENTRIES: usize = 1 << 18;

/// What a count is kept under: the first 128 bits of the text's SHA-256, and the encoding.
type Key = ([u8; 16], Encoding);

/// Counts keyed by the text's content: a definition registered again with the same content (an
/// idempotent MCP sync, a host re-registering) or a section rendered again is never counted
/// twice.
///
/// Invariants: the key is a 128-bit digest of the text, not the text (which would keep a copy
/// of every definition counted, ~3.5 MB for 2,422 tools): two texts share a count only if their
/// SHA-256 prefixes collide, which for 128 bits is ~2^-64 even after 2^32 texts, astronomically
/// less likely than a bit flipped in memory. At most `capacity` counts are kept, the oldest
/// going first.
pub struct CountCache {
    inner: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    map: HashMap<Key, u32>,
    /// Insertion order, for eviction: each key in `map` once (a key is only ever added while absent).
    order: VecDeque<Key>,
    capacity: usize,
}

impl CountCache {
    pub fn new(capacity: usize) -> CountCache {
        CountCache { inner: Mutex::new(Counts { capacity, ..Counts::default() }) }
    }

    pub fn global() -> &'static CountCache {
        static CACHE: OnceLock<CountCache> = OnceLock::new();
        CACHE.get_or_init(|| CountCache::new(COUNT_CACHE_ENTRIES))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every count (benchmarks measure a first plan with it).
    pub fn clear(&self) {
        let mut c = self.lock();
        let capacity = c.capacity;
        *c = Counts { capacity, ..Counts::default() };
    }

    /// The counts kept now.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `text`'s count in `enc`, counted once per content.
    pub fn get_or_count(&self, enc: Encoding, text: &str) -> u32 {
        let key = (digest(text), enc);
        if let Some(n) = self.lock().map.get(&key) {
            return *n;
        }
        let n = u32::try_from(enc.count(text)).unwrap_or(u32::MAX);
        self.lock().insert(key, n);
        n
    }
}

fn digest(text: &str) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let full = Sha256::digest(text.as_bytes());
    let mut key = [0; 16];
    key.copy_from_slice(&full[..16]);
    key
}

impl Counts {
    fn insert(&mut self, key: Key, n: u32) {
        if self.capacity == 0 || self.map.contains_key(&key) {
            return; // another thread counted the same text meanwhile
        }
        self.map.insert(key, n);
        self.order.push_back(key);
        while self.map.len() > self.capacity {
            let Some(oldest) = self.order.pop_front() else { break };
            self.map.remove(&oldest);
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
    fn cached_counts_are_the_counts() {
        let cache = CountCache::new(1 << 10);
        let texts = ["hello world", "a b c d e f", "hello world ", "", "{\"name\":\"x\",\"description\":\"Émoji 🎉 and digits 12345\"}"];
        for _ in 0..2 {
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                for t in texts {
                    assert_eq!(cache.get_or_count(enc, t), enc.count(t) as u32, "{t:?} in {}", enc.name());
                }
            }
        }
        // One count per text and encoding, none kept twice.
        assert_eq!(cache.len(), 2 * texts.len());
        // The cache answers from its key: a count planted under a text's key is returned.
        cache.lock().map.insert((digest("hello world"), Encoding::O200kBase), 99);
        assert_eq!(cache.get_or_count(Encoding::O200kBase, "hello world"), 99);
        assert_eq!(cache.get_or_count(Encoding::Cl100kBase, "hello world"), 2);
    }

    #[test]
    fn the_bound_evicts_the_oldest() {
        let cache = CountCache::new(2);
        for text in ["one two three", "four five six", "seven eight"] {
            cache.get_or_count(Encoding::O200kBase, text);
        }
        assert_eq!(cache.len(), 2);
        let c = cache.lock();
        let kept = |t: &str| c.map.contains_key(&(digest(t), Encoding::O200kBase));
        assert!(!kept("one two three") && kept("four five six") && kept("seven eight"));
        drop(c);
        // Nothing kept at all: still counted.
        let none = CountCache::new(0);
        assert_eq!(none.get_or_count(Encoding::O200kBase, "hello world"), 2);
        assert!(none.is_empty());
    }
}
