//! The embedded backend: `state.db` in the state directory, SQLite in WAL mode (the bundled
//! library, the same on every platform).
//!
//! Why SQLite rather than JSON files under file locks: every operation becomes a transaction
//! without a merge written per kind; readers never see a torn state (WAL: a reader's snapshot
//! is a committed one); a process killed mid-write leaves its transaction uncommitted, and the
//! next open rolls the journal back. Locking is SQLite's own (POSIX locks, `LockFileEx` on
//! Windows), so it holds on one machine's filesystem, not on a network one.
//!
//! Invariants:
//! - `synchronous = NORMAL` in WAL: a commit survives the process being killed at any point; a
//!   power loss may roll back the last commits but never corrupts the file.
//! - Writes take the write lock when they begin (`BEGIN IMMEDIATE`), so a read-modify-write
//!   never fails on upgrading a read lock; another writer waits (`busy_timeout`), it is not
//!   refused.
//! - The file is the owner's alone (0600, created so before SQLite opens it; SQLite gives its
//!   `-wal` and `-shm` files the same mode): it holds OAuth tokens.
//! - The schema has a version (`PRAGMA user_version`): a newer one than this binary knows is
//!   refused with `StoreError::Newer`, never written. A file that is not a database is moved
//!   aside (`state.db.corrupt-<unix seconds>`) and a new one started, with the `store/recovered`
//!   record saying so (pins read it to fail closed rather than trust anew).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use super::{lock, Exclusive, Store, StoreError, Tx};

pub const FILE: &str = "state.db";
/// The schema this binary writes.
const SCHEMA: i64 = 1;
/// How long a transaction waits for another process's write lock.
const BUSY: Duration = Duration::from_secs(15);

pub struct SqliteStore {
    dir: PathBuf,
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteStore {
    pub fn open(dir: &Path) -> Result<SqliteStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let path = dir.join(FILE);
        match Self::open_file(dir, &path) {
            Err(StoreError::Database { cause, .. }) if cause.starts_with(NOT_A_DATABASE) => {
                let aside = dir.join(format!("{FILE}.corrupt-{}", super::now_secs()));
                tracing::error!(path = %path.display(), aside = %aside.display(), "the state database is damaged: kept aside, starting a new one");
                std::fs::rename(&path, &aside).map_err(|e| io(&path, e))?;
                for suffix in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(dir.join(format!("{FILE}{suffix}")));
                }
                let store = Self::open_file(dir, &path)?;
                store.put("store", "recovered", aside.to_string_lossy().as_bytes())?;
                Ok(store)
            }
            other => other,
        }
    }

    fn open_file(dir: &Path, path: &Path) -> Result<SqliteStore, StoreError> {
        create_private(path).map_err(|e| io(path, e))?;
        let db = |e: rusqlite::Error| database(path, e);
        let conn = Connection::open(path).map_err(db)?;
        conn.busy_timeout(BUSY).map_err(db)?;
        // journal_mode answers with the mode in force; another process may be setting it too.
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(db)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Database { path: path.display().to_string(), cause: format!("cannot use write-ahead logging (journal mode {mode})") });
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL;").map_err(db)?;
        let store = SqliteStore { dir: dir.to_path_buf(), path: path.to_path_buf(), conn: Mutex::new(conn) };
        store.migrate()?;
        Ok(store)
    }

    /// Creates or upgrades the schema, under the write lock (two processes may start at once).
    fn migrate(&self) -> Result<(), StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| self.db(e))?;
        let found: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.db(e))?;
        if found > SCHEMA {
            return Err(StoreError::Newer { path: self.path.display().to_string(), found, known: SCHEMA });
        }
        if found < 1 {
            tx.execute_batch(
                "CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS revisions (kind TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
                 PRAGMA user_version = 1;",
            )
            .map_err(|e| self.db(e))?;
        }
        tx.commit().map_err(|e| self.db(e))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn db(&self, e: rusqlite::Error) -> StoreError {
        database(&self.path, e)
    }
}

const NOT_A_DATABASE: &str = "not a database";

fn database(path: &Path, e: rusqlite::Error) -> StoreError {
    let cause = match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => format!("{NOT_A_DATABASE}: {e}"),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => format!("another process held it longer than {} s: {e}", BUSY.as_secs()),
        _ => e.to_string(),
    };
    StoreError::Database { path: path.display().to_string(), cause }
}

fn io(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Io { path: path.display().to_string(), cause: e.to_string() }
}

/// The database file, created owner-only when missing (a mode given at creation, never a
/// moment readable by others).
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path).map(drop)
}

struct SqliteTx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    path: &'a Path,
    touched: BTreeSet<String>,
}

impl SqliteTx<'_> {
    fn db(&self, e: rusqlite::Error) -> StoreError {
        database(self.path, e)
    }
}

impl Tx for SqliteTx<'_> {
    fn get(&mut self, kind: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let mut stmt = self.tx.prepare_cached("SELECT value FROM records WHERE kind = ?1 AND key = ?2").map_err(|e| self.db(e))?;
        stmt.query_row(params![kind, key], |r| r.get(0)).optional().map_err(|e| self.db(e))
    }

    fn list(&mut self, kind: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut stmt = self.tx.prepare_cached("SELECT key, value FROM records WHERE kind = ?1 ORDER BY key").map_err(|e| self.db(e))?;
        let rows = stmt.query_map(params![kind], |r| Ok((r.get(0)?, r.get(1)?))).map_err(|e| self.db(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
    }

    fn put(&mut self, kind: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let mut stmt = self
            .tx
            .prepare_cached("INSERT INTO records (kind, key, value) VALUES (?1, ?2, ?3) ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value")
            .map_err(|e| self.db(e))?;
        stmt.execute(params![kind, key, value]).map_err(|e| self.db(e))?;
        self.touched.insert(kind.to_owned());
        Ok(())
    }

    fn delete(&mut self, kind: &str, key: &str) -> Result<bool, StoreError> {
        let mut stmt = self.tx.prepare_cached("DELETE FROM records WHERE kind = ?1 AND key = ?2").map_err(|e| self.db(e))?;
        let n = stmt.execute(params![kind, key]).map_err(|e| self.db(e))?;
        if n > 0 {
            self.touched.insert(kind.to_owned());
        }
        Ok(n > 0)
    }
}

impl Store for SqliteStore {
    fn transact(&self, work: &mut dyn FnMut(&mut dyn Tx) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| self.db(e))?;
        let touched = {
            let mut t = SqliteTx { tx: &tx, path: &self.path, touched: BTreeSet::new() };
            work(&mut t)?; // dropping `tx` rolls back
            t.touched
        };
        for kind in &touched {
            tx.execute("INSERT INTO revisions (kind, n) VALUES (?1, 1) ON CONFLICT (kind) DO UPDATE SET n = n + 1", params![kind]).map_err(|e| self.db(e))?;
        }
        tx.commit().map_err(|e| self.db(e))
    }

    fn revision(&self, kind: &str) -> Result<u64, StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached("SELECT n FROM revisions WHERE kind = ?1").map_err(|e| self.db(e))?;
        let n: Option<i64> = stmt.query_row(params![kind], |r| r.get(0)).optional().map_err(|e| self.db(e))?;
        Ok(n.unwrap_or(0) as u64)
    }

    fn get(&self, kind: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        // A plain read: no write lock (WAL readers see the last commit).
        let conn = self.lock();
        let mut stmt = conn.prepare_cached("SELECT value FROM records WHERE kind = ?1 AND key = ?2").map_err(|e| self.db(e))?;
        stmt.query_row(params![kind, key], |r| r.get(0)).optional().map_err(|e| self.db(e))
    }

    fn list(&self, kind: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached("SELECT key, value FROM records WHERE kind = ?1 ORDER BY key").map_err(|e| self.db(e))?;
        let rows = stmt.query_map(params![kind], |r| Ok((r.get(0)?, r.get(1)?))).map_err(|e| self.db(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
    }

    fn exclusive(&self, name: &str) -> Result<Exclusive, StoreError> {
        lock::exclusive_file(&self.dir, name).map_err(|e| io(&self.dir, e))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}
