//! `Book`: the process's one `Usage` behind a lock, and its file in `cacheDir` (`usage.json`).
//!
//! The file is read once when the cache dir is known and written whole, atomically (temp file,
//! fsync, rename: `catalog::cache::write_atomic`), so a crash leaves the old file or the new
//! one. A corrupt, foreign or oversized file is ignored (usage starts afresh) and replaced at
//! the next write. Writes are coalesced: `record` says when one is due and the caller runs
//! `save` off the async threads; calls that land before it ran are in the same write.

use super::{Tally, Usage, Via};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};

pub const FILE: &str = "usage.json";
/// A file larger than this is not ours: the bounds keep ours under ~300 KiB.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

#[derive(Default)]
pub struct Book {
    usage: Mutex<Usage>,
    dir: OnceLock<PathBuf>,
    save_due: AtomicBool,
    /// Seconds added to the clock: the replay benchmark's days pass in seconds
    /// (`debug/usageClock`, a test hook).
    offset: AtomicI64,
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

impl Book {
    fn now(&self) -> i64 {
        now().saturating_add(self.offset.load(Ordering::Relaxed))
    }

    /// Moves this book's clock forward (a test hook: simulated days).
    pub fn advance_clock(&self, secs: i64) {
        self.offset.fetch_add(secs, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Usage> {
        self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads `dir`'s usage file and persists there from now on. Once per process.
    pub fn open(&self, dir: &Path) {
        if self.dir.set(dir.to_path_buf()).is_err() {
            return;
        }
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
        if let Some(u) = loaded {
            *self.lock() = u;
        }
    }

    /// Counts one call; true when the caller should run `save` (persisting, none pending).
    #[must_use]
    pub fn record(&self, key: &str, tool: &str, via: Via) -> bool {
        self.lock().record(key, tool, via, self.now());
        self.save_due()
    }

    /// Forgets `key` or everything; true when the caller should run `save`.
    #[must_use]
    pub fn reset(&self, key: Option<&str>) -> (Vec<String>, bool) {
        let gone = self.lock().reset(key);
        (gone, self.save_due())
    }

    fn save_due(&self) -> bool {
        self.dir.get().is_some() && !self.save_due.swap(true, Ordering::AcqRel)
    }

    /// Writes the file as the counts are now. Blocking: run it off the async threads.
    pub fn save(&self) {
        let Some(dir) = self.dir.get() else { return };
        self.save_due.store(false, Ordering::Release);
        let bytes = self.lock().to_bytes();
        if let Err(e) = crate::catalog::cache::write_atomic(dir, &dir.join(FILE), &bytes) {
            tracing::warn!(dir = %dir.display(), error = %e, "usage file not written");
        }
    }

    pub fn tallies(&self, key: &str) -> Vec<Tally> {
        self.lock().tallies(key, self.now())
    }

    /// Every key with its tallies, or the one asked for (empty when unknown).
    pub fn list(&self, key: Option<&str>) -> Vec<(String, Vec<Tally>)> {
        let t = self.now();
        let u = self.lock();
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
    fn without_a_dir_nothing_is_written() {
        let book = Book::default();
        assert!(!book.record("k", "a", Via::Direct));
        assert_eq!(book.tallies("k").len(), 1);
    }
}
