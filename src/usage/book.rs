//! `Book`: the process's one `Usage` behind a lock, and its file in `cacheDir` (`usage.json`).
//!
//! The file is read once when the cache dir is known, on a blocking thread (`begin`, then
//! `load`), never on the async threads: the sidecar learns the dir at `initialize`, on its main
//! loop. Until the read ends nothing waits for it: a plan gets no usage-driven tools
//! (`tallies` is empty), calls are counted and kept aside, then replayed onto the file's
//! counts; only `usage/list` and `usage/reset` wait (`wait_loaded`), since their answer is
//! the file's. A corrupt, foreign or oversized file is ignored (usage starts afresh) and
//! replaced at the next write. Writes are whole and atomic (temp file, fsync, rename:
//! `catalog::cache::write_atomic`), so a crash leaves the old file or the new one, and
//! coalesced: `record` says when one is due and `count` runs `save` off the async threads;
//! calls that land before it ran are in the same write. No write before the read ended: it
//! would replace the file's counts with the few made meanwhile.

use super::{Tally, Usage, Via};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

pub const FILE: &str = "usage.json";
/// A file larger than this is not ours: the bounds keep ours under ~300 KiB.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// Calls kept aside while the file is read (milliseconds): beyond this many, the file's
/// counts are read without them (a bound, never reached by a host).
const MAX_EARLY: usize = 4096;

#[derive(Default)]
pub struct Book {
    state: Mutex<State>,
    /// Told when `load` ends.
    loaded: Condvar,
    dir: OnceLock<PathBuf>,
    save_due: AtomicBool,
    /// Held from a write's snapshot to its rename: two writes on the blocking pool could
    /// otherwise finish out of order, the older counts replacing the newer on disk.
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
    /// Calls counted meanwhile, replayed onto the file's counts: (key, tool, how, when).
    early: Vec<(String, String, Via, i64)>,
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

    /// Reads the dir's usage file, then replays the calls counted meanwhile onto it. Blocking.
    pub fn load(&self) {
        let Some(dir) = self.dir.get() else { return };
        let done = Loading(self);
        let path = dir.join(FILE);
        let loaded = match crate::catalog::cache::read_bounded(&path, MAX_FILE_BYTES) {
            Ok(bytes) => Usage::from_bytes(&bytes).or_else(|| {
                tracing::warn!(path = %path.display(), "usage file unreadable: usage starts afresh");
                None
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "usage file not read: usage starts afresh");
                None
            }
        };
        let replayed = {
            let mut s = self.lock();
            let mut usage = loaded.unwrap_or_default();
            let early = std::mem::take(&mut s.early);
            for (key, tool, via, at) in &early {
                usage.record(key, tool, *via, *at);
            }
            s.usage = usage;
            s.loading = false;
            !early.is_empty()
        };
        drop(done);
        if replayed {
            self.save();
        }
    }

    /// Until `load` ended, if it runs. Blocking: for `usage/list` and `usage/reset`, which
    /// answer with (or change) the file's counts.
    pub fn wait_loaded(&self) {
        let s = self.lock();
        drop(self.loaded.wait_while(s, |s| s.loading).unwrap_or_else(|e| e.into_inner()));
    }

    /// Counts one call; true when the caller should run `save` (persisting, read, none pending).
    #[must_use]
    pub fn record(&self, key: &str, tool: &str, via: Via) -> bool {
        let now = self.now();
        let mut s = self.lock();
        s.usage.record(key, tool, via, now);
        if s.loading {
            if s.early.len() < MAX_EARLY {
                s.early.push((key.to_string(), tool.to_string(), via, now));
            }
            return false;
        }
        drop(s);
        self.save_due()
    }

    /// `record`, and the write it makes due on tokio's blocking pool (inline without a runtime).
    pub fn count(self: &Arc<Self>, key: &str, tool: &str, via: Via) {
        if self.record(key, tool, via) {
            self.save_soon();
        }
    }

    fn save_soon(self: &Arc<Self>) {
        let book = self.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(move || book.save())),
            Err(_) => book.save(),
        }
    }

    /// Forgets `key` or everything; true when the caller should run `save`. Call it after
    /// `wait_loaded`, or the file's counts come back when the read ends.
    #[must_use]
    pub fn reset(&self, key: Option<&str>) -> (Vec<String>, bool) {
        let gone = self.lock().usage.reset(key);
        (gone, self.save_due())
    }

    fn save_due(&self) -> bool {
        self.dir.get().is_some() && !self.save_due.swap(true, Ordering::AcqRel)
    }

    /// Writes the file as the counts are now. Blocking: run it off the async threads.
    pub fn save(&self) {
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        self.write(false);
    }

    /// The write itself, under `writing`; `only_if_due`: skip it when no write is due.
    fn write(&self, only_if_due: bool) {
        let Some(dir) = self.dir.get() else { return };
        if only_if_due && (!self.save_due.load(Ordering::Acquire) || self.lock().loading) {
            return;
        }
        self.save_due.store(false, Ordering::Release);
        let bytes = self.lock().usage.to_bytes();
        if let Err(e) = crate::catalog::cache::write_atomic(dir, &dir.join(FILE), &bytes) {
            tracing::warn!(dir = %dir.display(), error = %e, "usage file not written");
        }
    }

    /// `save`, if a write is due and not yet run: at exit, when a write queued on the blocking
    /// pool may never start. Blocking.
    pub fn flush(&self) {
        // After a write under way (it may hold older counts), then the one still due.
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        self.write(true);
    }

    /// `key`'s tools as of now; none while the file is being read (see the module's doc).
    pub fn tallies(&self, key: &str) -> Vec<Tally> {
        let now = self.now();
        let s = self.lock();
        if s.loading {
            return Vec::new();
        }
        s.usage.tallies(key, now)
    }

    /// Every key with its tallies, or the one asked for (empty when unknown).
    pub fn list(&self, key: Option<&str>) -> Vec<(String, Vec<Tally>)> {
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

    #[test]
    fn counts_survive_a_new_book_and_a_corrupt_file_is_ignored() {
        let dir = std::env::temp_dir().join(format!("toolreg-usage-book-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let book = Book::default();
        book.open(&dir);
        assert!(book.record("k", "a", Via::Direct), "the first call schedules a write");
        assert!(!book.record("k", "a", Via::Direct), "the second joins it");
        book.save();
        let again = Book::default();
        again.open(&dir);
        assert_eq!(again.tallies("k")[0].calls_in_window, 2);
        std::fs::write(dir.join(FILE), b"\0garbage").unwrap();
        let fresh = Book::default();
        fresh.open(&dir);
        assert!(fresh.tallies("k").is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn calls_made_while_the_file_is_read_join_its_counts() {
        let dir = std::env::temp_dir().join(format!("toolreg-usage-early-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = Book::default();
        first.open(&dir);
        let _ = first.record("k", "a", Via::Direct);
        first.save();
        let book = Book::default();
        assert!(book.begin(&dir));
        assert!(!book.begin(&dir), "once per process");
        assert!(!book.record("k", "a", Via::Search), "no write before the read ended");
        assert!(book.tallies("k").is_empty(), "a plan meanwhile gets no usage-driven tools");
        book.load();
        book.wait_loaded();
        let t = &book.tallies("k")[0];
        assert_eq!((t.calls_in_window, t.searched_in_window), (2, 1), "the file's call and the early one");
        let again = Book::default();
        again.open(&dir);
        assert_eq!(again.tallies("k")[0].calls_in_window, 2, "the replay was written");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_a_dir_nothing_is_written() {
        let book = Book::default();
        assert!(!book.record("k", "a", Via::Direct));
        assert_eq!(book.tallies("k").len(), 1);
    }
}
