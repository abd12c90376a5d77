//! Where `toolreg mcp`, `toolreg mcp --check` and `toolreg auth` keep upstream servers' OAuth
//! records (tokens, the client they registered): the state directory's store (`crate::store`),
//! kind `secret`, key the catalog's secret key (`toolreg/oauth/<server id>`). Every gateway of
//! the directory reads and writes the same record, and refreshes it one process at a time
//! (`refresh_lock`, a lock across processes): an authorization server may take each refresh
//! token once (`catalog/tokens.rs`).
//!
//! Invariants:
//! - The store is the owner's alone (0600) and records are written in transactions: a reader
//!   sees the old record or the new one. Values are `Secret`s: never printed; errors name
//!   files and causes only.
//! - Records of earlier versions (`secrets/oauth-<digest of the key>.json`, one file each) are
//!   imported the first time a key is read in a store, once per key (`Store::once`), so a
//!   later sign-out is not undone by the old file; the files are left for a downgrade. A name
//!   is a digest, so the import goes by key, not by listing the directory.

use crate::catalog::AuthHost;
use crate::secret::Secret;
use crate::store::Store;
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The store kind of the records.
pub const KIND: &str = "secret";
/// Old record files larger than this are not imported (a record is a few KiB).
const MAX_BYTES: u64 = 1 << 20;

/// The OAuth records of one state directory.
#[derive(Clone)]
pub struct Tokens {
    store: Arc<dyn Store>,
    /// Where earlier versions kept them (`secrets/`).
    legacy: PathBuf,
    /// Keys whose old file this process already handed to `Store::once`.
    imported: Arc<Mutex<HashSet<String>>>,
}

impl Tokens {
    /// The records of `state_dir`'s store (the process's one store for it).
    pub fn open(state_dir: &Path) -> Tokens {
        Tokens { store: crate::store::shared(state_dir), legacy: state_dir.join("secrets"), imported: Arc::default() }
    }

    pub fn get(&self, key: &str) -> Result<Option<Secret>, String> {
        self.import(key)?;
        let bytes = self.store.get(KIND, key).map_err(|e| e.to_string())?;
        // Records are JSON text; anything else is not shown (it could be a token).
        bytes.map(|b| String::from_utf8(b).map(Secret::new).map_err(|_| format!("the record {key} in {} is not text", self.store.location()))).transpose()
    }

    pub fn set(&self, key: &str, value: &Secret) -> Result<(), String> {
        self.import(key)?;
        self.store.put(KIND, key, value.expose().as_bytes()).map_err(|e| e.to_string())
    }

    pub fn delete(&self, key: &str) -> Result<(), String> {
        self.import(key)?;
        self.store.delete(KIND, key).map(drop).map_err(|e| e.to_string())
    }

    /// Held against every process's refresh of `key`'s tokens until dropped. Blocks.
    pub fn refresh_lock(&self, key: &str) -> Result<crate::store::Exclusive, String> {
        self.store.exclusive(&format!("oauth-refresh/{key}")).map_err(|e| e.to_string())
    }

    pub fn revision(&self) -> Option<u64> {
        self.store.revision(KIND).ok()
    }

    /// `key`'s old file into the store, the first time any process of this store gets here,
    /// unless the store already has a record for it.
    fn import(&self, key: &str) -> Result<(), String> {
        if super::lock(&self.imported).contains(key) {
            return Ok(());
        }
        let old = self.legacy_record(key)?;
        self.store
            .once(&format!("oauth-file/{key}"), &mut |tx| match &old {
                Some(value) if tx.get(KIND, key)?.is_none() => tx.put(KIND, key, value.as_bytes()),
                _ => Ok(()),
            })
            .map_err(|e| e.to_string())?;
        super::lock(&self.imported).insert(key.to_owned());
        Ok(())
    }

    /// Earlier versions' file name: a digest of the key, so a server id never became a path.
    fn legacy_path(&self, key: &str) -> PathBuf {
        let digest = data_encoding::HEXLOWER.encode(&Sha256::digest(key.as_bytes()));
        self.legacy.join(format!("oauth-{}.json", &digest[..32]))
    }

    fn legacy_record(&self, key: &str) -> Result<Option<String>, String> {
        let path = self.legacy_path(key);
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            Ok(m) if m.len() > MAX_BYTES => return Err(format!("{} is larger than {MAX_BYTES} bytes", path.display())),
            Ok(_) => {}
        }
        std::fs::read_to_string(&path).map(Some).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }
}

/// The half of `AuthHost` that reaches the person (a client's elicitation, a terminal).
pub trait Opener: Send + Sync {
    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// False when no one can be asked (`--check`): a server that needs a sign-in says so.
    fn can_open(&self) -> bool {
        true
    }
}

/// An `AuthHost` whose secrets are the store's records (none without a state directory:
/// tokens then live for the run only) and whose pages go through `opener`, which can be
/// tried whenever it `can_open`: one that cannot reach the person fails the flow with what to
/// do instead.
pub struct StoreAuth<O> {
    pub opener: O,
    pub tokens: Option<Tokens>,
}

impl<O: Opener> StoreAuth<O> {
    /// One store operation off the reactor (a write fsyncs, a lock waits); `none` without a
    /// store.
    fn off_thread<T: Send + 'static>(&self, none: T, op: impl FnOnce(&Tokens) -> Result<T, String> + Send + 'static) -> BoxFuture<'static, Result<T, String>> {
        let tokens = self.tokens.clone();
        Box::pin(async move {
            let Some(tokens) = tokens else { return Ok(none) };
            tokio::task::spawn_blocking(move || op(&tokens)).await.map_err(|e| e.to_string())?
        })
    }
}

impl<O: Opener> AuthHost for StoreAuth<O> {
    fn can_open_url(&self) -> bool {
        self.opener.can_open()
    }

    fn has_secrets(&self) -> bool {
        self.tokens.is_some()
    }

    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.opener.open_url(url, server_id, reason)
    }

    fn secret_get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Secret>, String>> {
        let key = key.to_owned();
        self.off_thread(None, move |t| t.get(&key))
    }

    fn secret_set<'a>(&'a self, key: &'a str, value: Secret) -> BoxFuture<'a, Result<(), String>> {
        let key = key.to_owned();
        self.off_thread((), move |t| t.set(&key, &value))
    }

    fn secret_delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        let key = key.to_owned();
        self.off_thread((), move |t| t.delete(&key))
    }

    fn refresh_lock<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Box<dyn Send>>, String>> {
        let key = key.to_owned();
        self.off_thread(None, move |t| t.refresh_lock(&key).map(|held| Some(Box::new(held) as Box<dyn Send>)))
    }

    fn secrets_revision(&self) -> BoxFuture<'_, Option<u64>> {
        let read = self.off_thread(None, |t| Ok(t.revision()));
        Box::pin(async move { read.await.ok().flatten() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_file_is_imported_once_and_a_later_delete_holds() {
        let dir = tempfile::tempdir().unwrap();
        let key = "toolreg/oauth/../web";
        let tokens = Tokens::open(dir.path());
        let old = tokens.legacy_path(key);
        assert_eq!(old.parent().unwrap(), dir.path().join("secrets"), "the key never becomes a path");
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::write(&old, "{\"a\":1}").unwrap();
        assert_eq!(tokens.get(key).unwrap().unwrap().expose(), "{\"a\":1}");
        tokens.set(key, &Secret::new("{\"a\":2}")).unwrap();
        assert_eq!(tokens.get(key).unwrap().unwrap().expose(), "{\"a\":2}");
        tokens.delete(key).unwrap();
        // Another process of the same directory (a fresh `imported`): the old file stays
        // imported, not brought back.
        let other = Tokens { imported: Arc::default(), ..tokens.clone() };
        assert!(other.get(key).unwrap().is_none());
        assert!(old.exists(), "the old file is left for a downgrade");
        assert!(other.get("toolreg/oauth/none").unwrap().is_none());
    }

    #[test]
    fn a_refresh_lock_is_held_against_another_holder() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::open(dir.path());
        let held = tokens.refresh_lock("toolreg/oauth/web").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let other = tokens.clone();
        let waiter = std::thread::spawn(move || {
            let _g = other.refresh_lock("toolreg/oauth/web").unwrap();
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(std::time::Duration::from_millis(200)).is_err(), "taken while held");
        drop(held);
        rx.recv_timeout(std::time::Duration::from_secs(5)).expect("taken once released");
        waiter.join().unwrap();
    }
}
