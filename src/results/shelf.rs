//! Whole results kept for `tool_result_read`: in memory only (gone at shutdown), bounded in
//! bytes, the least recently read going first, each under a random ref and its owner's name.
//!
//! The owner is who may read a result: on the sidecar the session of the plan the call ran
//! under (`session:<id>`), else that plan (`plan:<id>`), else the host (`host`, a call made
//! under no plan, which any plan of the host reads); on the gateway its MCP session. A ref
//! read by anyone else is answered as unknown, the same words as an expired one, so a ref
//! tells nothing to whom it was not made for.

use super::Doc;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The owner of calls made under no plan on the sidecar.
pub const HOST: &str = "host";

#[derive(Default)]
pub struct Shelf {
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    items: HashMap<String, Item>,
    bytes: usize,
    tick: u64,
}

struct Item {
    owner: String,
    tool: String,
    doc: Arc<Doc>,
    used: u64,
}

/// A kept result as a reader gets it.
pub struct Found {
    pub tool: String,
    pub doc: Arc<Doc>,
}

pub fn new_ref() -> String {
    let mut bytes = [0u8; 12];
    // Without randomness the ref is still unique (the clock); it is the owner check that guards.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        bytes.copy_from_slice(&nanos.to_le_bytes()[..12]);
    }
    format!("r-{}", data_encoding::HEXLOWER.encode(&bytes))
}

impl Shelf {
    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes an entry costs beyond its document (owner, tool name, ref, map slot), at most.
    pub const OVERHEAD: usize = 512;

    /// Keeps `doc` for `owner` within `max_bytes` (older results go first; one larger than
    /// the bound alone is not kept) and returns its ref.
    pub fn keep(&self, owner: &str, tool: &str, doc: Doc, max_bytes: usize) -> Option<String> {
        let reference = new_ref();
        self.keep_as(&reference, owner, tool, doc, max_bytes).then_some(reference)
    }

    /// `keep` under a ref chosen before (the note that names it is written first).
    pub fn keep_as(&self, reference: &str, owner: &str, tool: &str, doc: Doc, max_bytes: usize) -> bool {
        let size = doc.bytes() + owner.len() + tool.len();
        if size > max_bytes || doc.bytes() + Self::OVERHEAD > max_bytes {
            return false;
        }
        let reference = reference.to_string();
        let mut k = self.lock();
        while k.bytes + size > max_bytes {
            let Some(oldest) = k.items.iter().min_by_key(|(_, i)| i.used).map(|(r, _)| r.clone()) else { break };
            if let Some(gone) = k.items.remove(&oldest) {
                k.bytes -= gone.doc.bytes() + gone.owner.len() + gone.tool.len();
            }
        }
        k.tick += 1;
        let used = k.tick;
        k.bytes += size;
        k.items.insert(reference, Item { owner: owner.to_string(), tool: tool.to_string(), doc: Arc::new(doc), used });
        true
    }

    /// The result kept under `reference`, if one of `readers` owns it (marked as read now).
    pub fn get(&self, reference: &str, readers: &[&str]) -> Option<Found> {
        let mut k = self.lock();
        k.tick += 1;
        let tick = k.tick;
        let item = k.items.get_mut(reference).filter(|i| readers.contains(&i.owner.as_str()))?;
        item.used = tick;
        Some(Found { tool: item.tool.clone(), doc: item.doc.clone() })
    }

    /// Forgets every result of `owner` (a gateway session that ended).
    pub fn forget(&self, owner: &str) {
        let mut k = self.lock();
        let gone: Vec<String> = k.items.iter().filter(|(_, i)| i.owner == owner).map(|(r, _)| r.clone()).collect();
        for r in gone {
            if let Some(i) = k.items.remove(&r) {
                k.bytes -= i.doc.bytes() + i.owner.len() + i.tool.len();
            }
        }
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Results held now.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
