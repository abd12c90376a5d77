//! `Book`: the process's copy of the usage counts, and their record in the state directory's
//! store (`crate::store`, kind `usage`), which every process over that directory adds to.
//!
//! Invariants:
//! - The stored counts change only by operations on what is stored now: a flush replays the
//!   calls this process counted since its last flush (`pending`) onto the stored record in one
//!   `update`, a reset forgets keys of it. No process writes its copy over another's, so calls
//!   made in three processes at once add up.
//! - The copy (`usage`) is the stored record as last read plus `pending`: plans see their own
//!   calls at once. It is read again when the kind's revision moved (another process flushed),
//!   checked when a plan takes tallies and when `usage/list` answers.
//! - One record for every key (`RECORD`, under ~300 KiB by `Usage`'s bounds): the bounds span
//!   keys (the least recently used key goes first), so they hold in one transaction.
//! - No waiting on the async threads for the store's opening: the sidecar learns its directory
//!   at `initialize`, on its main loop, and opens it on a blocking thread (`begin`, then
//!   `load`). Until then a plan gets no usage-driven tools (`tallies` is empty) and calls are
//!   pending; `usage/list` and `usage/reset` wait (`wait_loaded`). Flushes run on tokio's
//!   blocking pool (`count`), coalesced: calls made before one ran are in it.
//! - `usage.json` (before issue 63) is imported once per store and left in place; a corrupt,
//!   foreign or oversized one imports nothing (usage starts afresh).

use super::{Tally, Usage, Via};
use crate::store::{Store, StoreError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Where counts were kept before issue 63: imported once, never written.
pub const FILE: &str = "usage.json";
/// A file larger than this is not ours: the bounds keep ours under ~300 KiB.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
const KIND: &str = "usage";
/// The one record of every key's counts.
const RECORD: &str = "counts";
const IMPORT: &str = "import usage.json";
/// Calls kept for the next flush: beyond this many (a store failing for a long while) the
/// oldest are dropped, so memory stays bounded.
const MAX_PENDING: usize = 4096;

/// A call counted and not yet flushed: (key, tool, how, when).
type Call = (String, String, Via, i64);

#[derive(Default)]
pub struct Book {
    state: Mutex<State>,
    /// Told when `load` ends.
    loaded: Condvar,
    dir: OnceLock<PathBuf>,
    store: OnceLock<Arc<dyn Store>>,
    save_due: AtomicBool,
    /// Held by a flush, a reset and a re-read: each replaces the copy with the stored record
    /// plus `pending`, which one of them alone may change.
    writing: Mutex<()>,
    /// Seconds added to the clock: the replay benchmark's days pass in seconds
    /// (`debug/usageClock`, a test hook).
    offset: AtomicI64,
}

#[derive(Default)]
struct State {
    usage: Usage,
    /// Between `begin` and the end of `load`.
    loading: bool,
    /// Counted since the last flush (only with a directory).
    pending: Vec<Call>,
    /// The store's revision of the kind that `usage` reflects.
    seen: u64,
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Ends the read however `load` ends (a panic too), so that no `wait_loaded` waits forever.
struct Loading<'a>(&'a Book);

impl Drop for Loading<'_> {
    fn drop(&mut self) {
        self.0.lock().loading = false;
        self.0.loaded.notify_all();
    }
}

fn replay(usage: &mut Usage, calls: &[Call]) {
    for (key, tool, via, at) in calls {
        usage.record(key, tool, *via, *at);
    }
}

/// The copy: `usage` as stored, with the calls not yet flushed.
fn adopt(s: &mut State, usage: Usage) {
    s.usage = usage;
    let pending = std::mem::take(&mut s.pending);
    replay(&mut s.usage, &pending);
    s.pending = pending;
}

fn stored(bytes: Option<&[u8]>) -> Usage {
    bytes.and_then(Usage::from_bytes).unwrap_or_default()
}

/// Reads `usage.json` into the store, once per store; the file stays.
fn import(store: &dyn Store, dir: &Path) {
    let path = dir.join(FILE);
    let ran = store.once(IMPORT, &mut |tx| {
        let old = match crate::catalog::cache::read_bounded(&path, MAX_FILE_BYTES) {
            Ok(bytes) => Usage::from_bytes(&bytes).or_else(|| {
                tracing::warn!(path = %path.display(), "the old usage file is unreadable: nothing imported");
                None
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "the old usage file not read: nothing imported");
                None
            }
        };
        match old {
            Some(u) if tx.get(KIND, RECORD)?.is_none() => tx.put(KIND, RECORD, &u.to_bytes()),
            _ => Ok(()),
        }
    });
    if let Err(e) = ran {
        tracing::warn!(error = %e, "the old usage file not imported: tried again at the next start");
    }
}

impl Book {
    fn now(&self) -> i64 {
        now().saturating_add(self.offset.load(Ordering::Relaxed))
    }

    /// Moves this book's clock forward (a test hook: simulated days).
    pub fn advance_clock(&self, secs: i64) {
        self.offset.fetch_add(secs, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn writing(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writing.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Persists in `dir` from now on; true when the caller should run `load` (blocking) next.
    /// Once per process.
    pub fn begin(&self, dir: &Path) -> bool {
        if self.dir.set(dir.to_path_buf()).is_err() {
            return false;
        }
        self.lock().loading = true;
        true
    }

    /// `begin` and `load` in one: for a caller already off the async threads.
    pub fn open(&self, dir: &Path) {
        if self.begin(dir) {
            self.load();
        }
    }

    /// Opens the dir's store (importing the old file), reads the counts, then flushes the calls
    /// counted meanwhile. Blocking.
    pub fn load(&self) {
        let Some(dir) = self.dir.get() else { return };
        let done = Loading(self);
        let store = crate::store::shared(dir);
        import(&*store, dir);
        let _ = self.store.set(store);
        self.reread();
        drop(done);
        self.flush();
    }

    /// Until `load` ended, if it runs. Blocking: for `usage/list` and `usage/reset`, which
    /// answer with (or change) the stored counts.
    pub fn wait_loaded(&self) {
        let s = self.lock();
        drop(self.loaded.wait_while(s, |s| s.loading).unwrap_or_else(|e| e.into_inner()));
    }

    /// Counts one call; true when the caller should run `flush` (persisting, none due yet).
    #[must_use]
    pub fn record(&self, key: &str, tool: &str, via: Via) -> bool {
        let now = self.now();
        let mut s = self.lock();
        s.usage.record(key, tool, via, now);
        if self.dir.get().is_none() {
            return false;
        }
        if s.pending.len() >= MAX_PENDING {
            s.pending.remove(0);
        }
        s.pending.push((key.to_string(), tool.to_string(), via, now));
        let loading = s.loading;
        drop(s);
        // While loading, `load` flushes what is pending when it ends.
        !loading && !self.save_due.swap(true, Ordering::AcqRel)
    }

    /// `record`, and the flush it makes due on tokio's blocking pool (inline without a runtime).
    pub fn count(self: &Arc<Self>, key: &str, tool: &str, via: Via) {
        if self.record(key, tool, via) {
            let book = self.clone();
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => drop(rt.spawn_blocking(move || book.flush())),
                Err(_) => book.flush(),
            }
        }
    }

    /// Adds the pending calls to the stored counts, in one operation on what is stored now.
    /// Blocking: run it off the async threads (and at exit, when a flush queued on the blocking
    /// pool may never start). A flush that fails keeps its calls for the next one.
    pub fn flush(&self) {
        let Some(store) = self.store.get() else { return };
        let _writing = self.writing();
        self.save_due.store(false, Ordering::Release);
        if self.lock().pending.is_empty() {
            return;
        }
        if let Err(e) = self.commit(&**store, &mut |_| {}) {
            tracing::warn!(error = %e, "usage counts not stored: kept for the next try");
        }
    }

    /// Forgets `key` or everything, pending calls too, stored and here; returns the keys
    /// forgotten. Blocking; call it after `wait_loaded`.
    pub fn reset(&self, key: Option<&str>) -> Vec<String> {
        let Some(store) = self.store.get() else { return self.lock().usage.reset(key) };
        let _writing = self.writing();
        let mut gone = Vec::new();
        match self.commit(&**store, &mut |u| gone = u.reset(key)) {
            Ok(()) => gone,
            Err(e) => {
                tracing::warn!(error = %e, "usage counts not reset");
                Vec::new()
            }
        }
    }

    /// Under `writing`: replays the pending calls onto the stored record and applies `then`, in
    /// one `update`; the copy becomes the result plus the calls counted meanwhile.
    fn commit(&self, store: &dyn Store, then: &mut dyn FnMut(&mut Usage)) -> Result<(), StoreError> {
        let calls = self.lock().pending.clone();
        let mut result = Usage::default();
        let before = store.revision(KIND).ok();
        store.update(KIND, RECORD, &mut |old| {
            result = stored(old);
            replay(&mut result, &calls);
            then(&mut result);
            Ok(Some(result.to_bytes()))
        })?;
        let after = store.revision(KIND).ok();
        let mut s = self.lock();
        let flushed = calls.len().min(s.pending.len());
        s.pending.drain(..flushed);
        // The result holds every commit up to ours only when ours was the one in between.
        if let (Some(b), Some(a)) = (before, after) {
            if a == b + 1 {
                s.seen = a;
            }
        }
        adopt(&mut s, result);
        Ok(())
    }

    /// Reads the stored counts when another process changed them. `wait`: false on the async
    /// threads, where a flush under way (it brings the copy up to date) is not waited for.
    fn refresh(&self, wait: bool) {
        let Some(store) = self.store.get() else { return };
        let Some(_writing) = (if wait { Some(self.writing()) } else { self.writing.try_lock().ok() }) else { return };
        match store.revision(KIND) {
            Ok(rev) if rev == self.lock().seen => {}
            Ok(_) => self.reread(),
            Err(e) => tracing::warn!(error = %e, "usage counts not read: this process's copy is used"),
        }
    }

    /// The copy becomes the stored record plus the pending calls. Under `writing` (or loading).
    fn reread(&self) {
        let Some(store) = self.store.get() else { return };
        match (store.revision(KIND), store.get(KIND, RECORD)) {
            (Ok(rev), Ok(record)) => {
                let mut s = self.lock();
                s.seen = rev;
                adopt(&mut s, stored(record.as_deref()));
            }
            (Err(e), _) | (_, Err(e)) => tracing::warn!(error = %e, "usage counts not read: this process's copy is used"),
        }
    }

    /// `key`'s tools as of now; none while the store opens (see the module's doc).
    pub fn tallies(&self, key: &str) -> Vec<Tally> {
        if self.lock().loading {
            return Vec::new();
        }
        self.refresh(false);
        let now = self.now();
        self.lock().usage.tallies(key, now)
    }

    /// Every key with its tallies, or the one asked for (empty when unknown). Blocking.
    pub fn list(&self, key: Option<&str>) -> Vec<(String, Vec<Tally>)> {
        self.refresh(true);
        let t = self.now();
        let s = self.lock();
        let u = &s.usage;
        match key {
            Some(k) => vec![(k.to_string(), u.tallies(k, t))],
            None => u.keys().map(|k| (k.to_string(), u.tallies(k, t))).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(book: &Book, key: &str) -> u32 {
        book.list(Some(key))[0].1.first().map_or(0, |t| t.calls_in_window)
    }

    #[test]
    fn books_over_one_directory_add_up_and_survive() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (Book::default(), Book::default());
        a.open(dir.path());
        b.open(dir.path());
        assert!(a.record("k", "t", Via::Direct), "the first call schedules a flush");
        assert!(!a.record("k", "t", Via::Direct), "the second joins it");
        let _ = b.record("k", "t", Via::Search);
        assert_eq!((calls(&a, "k"), calls(&b, "k")), (2, 1), "each sees its own calls at once");
        a.flush();
        b.flush();
        assert_eq!((calls(&a, "k"), calls(&b, "k")), (3, 3), "a flush elsewhere is read again");
        let again = Book::default();
        again.open(dir.path());
        assert_eq!(again.tallies("k")[0].searched_in_window, 1);
        assert!(!dir.path().join(FILE).exists(), "the old file is never written");
    }

    #[test]
    fn the_old_file_is_imported_once_and_a_corrupt_one_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let mut old = Usage::new();
        old.record("k", "t", Via::Direct, now());
        std::fs::write(dir.path().join(FILE), old.to_bytes()).unwrap();
        let book = Book::default();
        book.open(dir.path());
        assert_eq!(calls(&book, "k"), 1);
        assert_eq!(book.reset(None), ["k"]);
        let again = Book::default();
        again.open(dir.path());
        assert!(again.list(None).is_empty(), "imported once: the reset holds");
        assert_eq!(std::fs::read(dir.path().join(FILE)).unwrap(), old.to_bytes(), "left in place");

        let bad = tempfile::tempdir().unwrap();
        std::fs::write(bad.path().join(FILE), b"\0garbage").unwrap();
        let fresh = Book::default();
        fresh.open(bad.path());
        assert!(fresh.list(None).is_empty());
    }

    #[test]
    fn calls_made_while_the_store_opens_join_its_counts() {
        let dir = tempfile::tempdir().unwrap();
        let first = Book::default();
        first.open(dir.path());
        let _ = first.record("k", "a", Via::Direct);
        first.flush();
        let book = Book::default();
        assert!(book.begin(dir.path()));
        assert!(!book.begin(dir.path()), "once per process");
        assert!(!book.record("k", "a", Via::Search), "no flush before the store is read");
        assert!(book.tallies("k").is_empty(), "a plan meanwhile gets no usage-driven tools");
        book.load();
        book.wait_loaded();
        let t = &book.tallies("k")[0];
        assert_eq!((t.calls_in_window, t.searched_in_window), (2, 1), "the stored call and the early one");
        assert_eq!(calls(&first, "k"), 2, "the early call was flushed");
    }

    #[test]
    fn a_reset_forgets_its_key_and_keeps_the_others_pending_calls() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (Book::default(), Book::default());
        a.open(dir.path());
        b.open(dir.path());
        let _ = b.record("gone", "t", Via::Direct);
        b.flush();
        let _ = a.record("gone", "t", Via::Direct);
        let _ = a.record("kept", "t", Via::Direct);
        assert_eq!(a.reset(Some("gone")), ["gone"]);
        assert_eq!((calls(&a, "gone"), calls(&a, "kept"), calls(&b, "gone"), calls(&b, "kept")), (0, 1, 0, 1));
    }

    #[test]
    fn without_a_dir_nothing_is_kept_for_a_flush() {
        let book = Book::default();
        assert!(!book.record("k", "a", Via::Direct));
        assert_eq!(book.tallies("k").len(), 1);
        assert_eq!(book.reset(None), ["k"]);
    }
}
