//! The per-user state that several toolreg processes share (issue 63): remembered approvals,
//! pins, usage counts and the gateways' OAuth records. A host's sidecar and one `toolreg mcp`
//! per MCP client run at once over one state directory; what one of them records must be seen
//! by the others and never undone by them.
//!
//! Invariants:
//! - State is records: `(kind, key) -> bytes`, the kind naming what a caller keeps ("grant",
//!   "pins", "usage", "secret", ...). The store knows no record's meaning and imports none of its
//!   callers (catalog, approvals, usage, gateway): they encode their own records.
//! - Every change is an operation applied to what is stored now, in one transaction
//!   (`Store::transact`): its reads and writes see no other writer in between, and all of its
//!   writes commit or none do. Never a process's whole snapshot written over another's.
//! - Each kind has a revision that every committed change of it bumps, so that a process learns
//!   cheaply that another one changed something (`revision`) and reads again only then.
//! - `exclusive(name)` is a lock across processes, held by its guard and released when the guard
//!   drops or its process dies (an OAuth refresh is made by one process at a time).
//! - Two backends behind the one trait: `sqlite` (a state directory: `state.db`, WAL) and
//!   `memory` (no directory: the process's run only). A server database can be a third.

mod lock;
mod memory;
mod sqlite;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;

pub use lock::Exclusive;
pub use memory::MemoryStore;
pub use sqlite::{SqliteStore, FILE};

/// What a store operation failed with. Texts name files and causes, never a record's value.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the state database {path} was written by a newer toolreg (schema {found}; this one knows {known}): upgrade toolreg, or move the file away to start afresh")]
    Newer { path: String, found: i64, known: i64 },
    #[error("the state database {path}: {cause}")]
    Database { path: String, cause: String },
    #[error("the state directory {path}: {cause}")]
    Io { path: String, cause: String },
    /// A caller's own refusal inside a transaction (nothing was written).
    #[error("{0}")]
    Refused(String),
}

/// The reads and writes of one transaction.
pub trait Tx {
    fn get(&mut self, kind: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Every record of `kind`, by key.
    fn list(&mut self, kind: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError>;
    fn put(&mut self, kind: &str, key: &str, value: &[u8]) -> Result<(), StoreError>;
    /// True when there was a record.
    fn delete(&mut self, kind: &str, key: &str) -> Result<bool, StoreError>;
}

/// The shared state, one interface whatever keeps it. Blocking: a call may wait for another
/// process's transaction (milliseconds), so async code calls it where a short block is fine or
/// on a blocking thread.
pub trait Store: Send + Sync {
    /// Runs `work` in one transaction, committed when it returns `Ok`, rolled back otherwise.
    /// `work` may run again when the backend retries a conflict: no side effects in it.
    fn transact(&self, work: &mut dyn FnMut(&mut dyn Tx) -> Result<(), StoreError>) -> Result<(), StoreError>;
    /// A count that grows with every committed change of `kind`, by any process.
    fn revision(&self, kind: &str) -> Result<u64, StoreError>;
    /// Holds `name` against every other holder, in any process, until the guard drops. Blocks.
    fn exclusive(&self, name: &str) -> Result<Exclusive, StoreError>;
    /// Where the state is kept, for messages ("memory" without a directory).
    fn location(&self) -> String;
    /// True when this store keeps nothing past the process (no state directory).
    fn ephemeral(&self) -> bool {
        false
    }

    fn get(&self, kind: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let mut out = None;
        self.transact(&mut |tx| {
            out = tx.get(kind, key)?;
            Ok(())
        })?;
        Ok(out)
    }

    fn list(&self, kind: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut out = Vec::new();
        self.transact(&mut |tx| {
            out = tx.list(kind)?;
            Ok(())
        })?;
        Ok(out)
    }

    fn put(&self, kind: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.transact(&mut |tx| tx.put(kind, key, value))
    }

    fn delete(&self, kind: &str, key: &str) -> Result<bool, StoreError> {
        let mut gone = false;
        self.transact(&mut |tx| {
            gone = tx.delete(kind, key)?;
            Ok(())
        })?;
        Ok(gone)
    }

    /// Reads the record, hands it to `change`, and writes what it returns (`None`: delete), in
    /// one transaction: a read-modify-write no other process can interleave with.
    fn update(&self, kind: &str, key: &str, change: &mut dyn FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>, StoreError>) -> Result<(), StoreError> {
        self.transact(&mut |tx| {
            let old = tx.get(kind, key)?;
            match change(old.as_deref())? {
                Some(new) if old.as_deref() != Some(new.as_slice()) => tx.put(kind, key, &new),
                Some(_) => Ok(()),
                None if old.is_some() => tx.delete(kind, key).map(drop),
                None => Ok(()),
            }
        })
    }

    /// Runs `work` once per store: the first process to get here runs it and records `name` in
    /// the same transaction, so that a migration of old files is done exactly once (a crash
    /// before the commit leaves it to the next start). True when it ran now.
    fn once(&self, name: &str, work: &mut dyn FnMut(&mut dyn Tx) -> Result<(), StoreError>) -> Result<bool, StoreError> {
        let mut ran = false;
        self.transact(&mut |tx| {
            ran = false;
            if tx.get(ONCE, name)?.is_some() {
                return Ok(());
            }
            work(tx)?;
            tx.put(ONCE, name, now_secs().to_string().as_bytes())?;
            ran = true;
            Ok(())
        })?;
        Ok(ran)
    }
}

/// The kind of the `once` markers.
const ONCE: &str = "once";

/// Opens the state directory's store (creating it), or a memory store without a directory.
pub fn open(dir: Option<&Path>) -> Result<Arc<dyn Store>, StoreError> {
    match dir {
        Some(dir) => Ok(Arc::new(SqliteStore::open(dir)?)),
        None => Ok(Arc::new(MemoryStore::default())),
    }
}

/// The process's one store for `dir`, opened at the first call: the approvals, the pins, the
/// usage book and the token records of a process share one connection (and its lock order).
/// A directory that cannot be opened gets a memory store, with the reason logged.
pub fn shared(dir: &Path) -> Arc<dyn Store> {
    static OPEN: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, Arc<dyn Store>>>> = std::sync::OnceLock::new();
    let key = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut open = OPEN.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    open.entry(key).or_insert_with(|| open_or_memory(Some(dir))).clone()
}

/// `open`, and a memory store with a logged reason when the directory's cannot be opened: the
/// process keeps working (asking again what it cannot remember) rather than failing to start.
pub fn open_or_memory(dir: Option<&Path>) -> Arc<dyn Store> {
    open(dir).unwrap_or_else(|e| {
        tracing::error!(error = %e, "the shared state cannot be opened: this process keeps its approvals, pins and counts in memory");
        Arc::new(MemoryStore::default())
    })
}

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
