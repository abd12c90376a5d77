//! The deferred part of a native rendering, serialised once per pool and shared.
//!
//! A native plan sends every deferred definition (2,422 tools: 3.5 MB of JSON), and hosts ask
//! for a plan before every model request. The definitions depend only on the deferred pool
//! (each tool's name, namespace and definition), the rendering and, for the ledger, the
//! tokenizer: so they are rendered and serialised once for that key, kept as JSON text, and
//! every plan over the same pool splices the same text into its request.
//!
//! Invariants:
//! - The key covers everything the text and the token count depend on: the rendering, its
//!   programmatic callers, `strict`, the encoding, and each deferred entry's name, namespace,
//!   `content_hash` and approval (a gated entry is never marked), in pool order.
//! - The cache holds at most `MAX_BYTES` of text; the least recently used pool goes first. An
//!   entry larger than the bound is still returned, just not kept.
//! - `digest` (SHA-256 of the text) stands for the text in `planHash`, so an unchanged plan is
//!   hashed without reading 3.5 MB again.

use super::render::{Programmatic, Rendering};
use crate::registry::Registered;
use crate::tokenize::EncodingChoice;
use serde_json::value::RawValue;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// Text kept for all pools together (about nine catalogs of 2,422 tools).
pub const MAX_BYTES: usize = 32 << 20;

/// One pool's deferred tools as a provider expects them, each item already JSON.
pub struct RenderedPool {
    /// The `tools` items that carry the deferred definitions, in request order.
    pub items: Vec<Box<RawValue>>,
    /// Tokens the model sees up front for them (OpenAI's namespace headers; 0 for Anthropic).
    pub overhead: u64,
    /// SHA-256 of the items' text (hex, 32 characters), standing for them in `planHash`.
    pub digest: String,
    pub bytes: usize,
    /// Placement notes of the deferred tools (`strict`: why one is not strict).
    pub notes: Vec<(String, String)>,
}

/// What a build gives: the items, their up-front tokens, the placement notes.
pub type Built = (Vec<Box<RawValue>>, u64, Vec<(String, String)>);

type Key = (Rendering, Option<Programmatic>, u8, u64);

#[derive(Default)]
struct Cache {
    /// Most recently used last.
    entries: Vec<(Key, Arc<RenderedPool>)>,
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: std::sync::OnceLock<Mutex<Cache>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The key of a pool: its entries' names, namespaces, definition hashes and approval, in order.
fn pool_key(rendering: Rendering, programmatic: Option<Programmatic>, strict: bool, enc: EncodingChoice, pool: &[&Registered]) -> Key {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    strict.hash(&mut h);
    pool.len().hash(&mut h);
    for r in pool {
        r.entry.name.hash(&mut h);
        r.entry.namespace.hash(&mut h);
        r.content_hash.hash(&mut h);
        r.entry.approval.hash(&mut h);
    }
    (rendering, programmatic, enc.name as u8, h.finish())
}

/// The pool's rendered items: from the cache, else built by `build` (items and their
/// up-front tokens) and kept.
pub fn get_or_render(
    rendering: Rendering,
    programmatic: Option<Programmatic>,
    strict: bool,
    enc: EncodingChoice,
    pool: &[&Registered],
    build: impl FnOnce() -> Built,
) -> Arc<RenderedPool> {
    let key = pool_key(rendering, programmatic, strict, enc, pool);
    {
        let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = c.entries.iter().position(|(k, _)| *k == key) {
            let hit = c.entries.remove(i);
            let found = hit.1.clone();
            c.entries.push(hit);
            return found;
        }
    }
    // Built outside the lock: two plans racing on a new pool each build it once, at worst.
    let (items, overhead, notes) = build();
    let pool = Arc::new(RenderedPool::new(items, overhead, notes));
    let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
    if pool.bytes <= MAX_BYTES && !c.entries.iter().any(|(k, _)| *k == key) {
        c.bytes += pool.bytes;
        c.entries.push((key, pool.clone()));
        while c.bytes > MAX_BYTES {
            let (_, old) = c.entries.remove(0);
            c.bytes -= old.bytes;
        }
    }
    pool
}

impl RenderedPool {
    fn new(items: Vec<Box<RawValue>>, overhead: u64, notes: Vec<(String, String)>) -> RenderedPool {
        use sha2::{Digest, Sha256};
        let mut sha = Sha256::new();
        let mut bytes = 0;
        for item in &items {
            sha.update(item.get().as_bytes());
            sha.update(b",");
            bytes += item.get().len();
        }
        let digest = data_encoding::HEXLOWER.encode(&sha.finalize()[..16]);
        RenderedPool { items, overhead, digest, bytes, notes }
    }
}

/// The text kept for all pools (for tests and the memory figures).
pub fn cached_bytes() -> usize {
    cache().lock().unwrap_or_else(|e| e.into_inner()).bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ToolEntry;
    use serde_json::json;

    fn reg(name: &str, description: &str) -> Registered {
        let e: ToolEntry = serde_json::from_value(json!({"name": name, "namespace": "n", "description": description, "inputSchema": {"type": "object"}})).unwrap();
        Registered::new(e)
    }

    fn raw(v: serde_json::Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&v).unwrap()
    }

    #[test]
    fn one_pool_is_rendered_once_and_a_changed_definition_renders_again() {
        let enc = crate::tokenize::for_model(Some("gpt-4o"));
        let (a, b) = (reg("pool_test_a", "Does a."), reg("pool_test_b", "Does b."));
        let mut builds = 0;
        let mut get = |pool: &[&Registered]| {
            get_or_render(Rendering::Openai, None, false, enc, pool, || {
                builds += 1;
                (pool.iter().map(|r| raw(json!({"name": r.entry.name, "d": r.entry.description}))).collect(), 7, Vec::new())
            })
        };
        let first = get(&[&a, &b]);
        let again = get(&[&a, &b]);
        assert!(Arc::ptr_eq(&first, &again), "the second plan shares the first one's text");
        assert_eq!((first.items.len(), first.overhead, first.digest.len()), (2, 7, 32));
        let b2 = reg("pool_test_b", "Does b, differently.");
        let changed = get(&[&a, &b2]);
        assert_ne!(changed.digest, first.digest);
        assert_eq!(builds, 2);
        // Another rendering of the same pool is another text.
        let anthropic = get_or_render(Rendering::Anthropic, None, false, enc, &[&a, &b], || (vec![raw(json!(1))], 0, Vec::new()));
        assert_ne!(anthropic.digest, first.digest);
        // So is the same pool marked for programmatic callers.
        let marked = get_or_render(Rendering::Openai, Some(Programmatic::default()), false, enc, &[&a, &b], || (vec![raw(json!(2))], 0, Vec::new()));
        assert_ne!(marked.digest, first.digest);
    }

    #[test]
    fn the_cache_is_bounded_by_bytes() {
        let enc = crate::tokenize::for_model(Some("claude-sonnet-4-5"));
        let big = "x".repeat(MAX_BYTES / 4);
        for i in 0..8 {
            let r = reg(&format!("bound_test_{i}"), "Big.");
            get_or_render(Rendering::Anthropic, None, false, enc, &[&r], || (vec![raw(json!(big))], 0, Vec::new()));
            assert!(cached_bytes() <= MAX_BYTES, "{} bytes kept", cached_bytes());
        }
        let huge = reg("bound_test_huge", "Huge.");
        let p = get_or_render(Rendering::Anthropic, None, false, enc, &[&huge], || (vec![raw(json!("y".repeat(MAX_BYTES + 1)))], 0, Vec::new()));
        assert!(p.bytes > MAX_BYTES && cached_bytes() <= MAX_BYTES, "returned, not kept");
    }
}
