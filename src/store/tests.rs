use super::*;
use std::sync::atomic::{AtomicBool, Ordering};

fn dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("toolreg-store-{name}-")).tempdir().unwrap()
}

fn stores(dir: &Path) -> Vec<Arc<dyn Store>> {
    vec![Arc::new(SqliteStore::open(dir).unwrap()), Arc::new(MemoryStore::default())]
}

#[test]
fn a_failed_transaction_writes_nothing_and_a_committed_one_bumps_its_kind() {
    let d = dir("tx");
    for store in stores(d.path()) {
        assert_eq!(store.revision("grant").unwrap(), 0);
        store.put("grant", "a", b"1").unwrap();
        assert_eq!(store.revision("grant").unwrap(), 1);
        assert_eq!(store.revision("usage").unwrap(), 0, "another kind is untouched");
        let err = store.transact(&mut |tx| {
            tx.put("grant", "b", b"2")?;
            tx.delete("grant", "a")?;
            Err(StoreError::Refused("no".into()))
        });
        assert!(matches!(err, Err(StoreError::Refused(_))));
        assert_eq!(store.list("grant").unwrap(), vec![("a".to_owned(), b"1".to_vec())], "{}", store.location());
        assert_eq!(store.revision("grant").unwrap(), 1);
        store.update("grant", "a", &mut |old| Ok(old.map(|v| [v, b"+"].concat()))).unwrap();
        assert_eq!(store.get("grant", "a").unwrap().as_deref(), Some(&b"1+"[..]));
        store.update("grant", "a", &mut |_| Ok(None)).unwrap();
        assert_eq!(store.get("grant", "a").unwrap(), None);
        assert_eq!(store.revision("grant").unwrap(), 3);
    }
}

#[test]
fn two_opens_of_one_directory_share_records_and_revisions() {
    let d = dir("share");
    let a = SqliteStore::open(d.path()).unwrap();
    let b = SqliteStore::open(d.path()).unwrap();
    a.put("pins", "s", b"x").unwrap();
    assert_eq!(b.get("pins", "s").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(b.revision("pins").unwrap(), 1);
    assert!(b.delete("pins", "s").unwrap());
    assert!(!a.delete("pins", "s").unwrap(), "already gone");
    assert_eq!(a.revision("pins").unwrap(), 2);
}

#[test]
fn concurrent_read_modify_writes_lose_nothing() {
    let d = dir("count");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let path = d.path().to_path_buf();
            std::thread::spawn(move || {
                // One connection per thread, as separate processes have.
                let store = SqliteStore::open(&path).unwrap();
                for _ in 0..50 {
                    store
                        .update("usage", "n", &mut |old| {
                            let n: u64 = old.map_or(0, |v| std::str::from_utf8(v).unwrap().parse().unwrap());
                            Ok(Some((n + 1).to_string().into_bytes()))
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let store = SqliteStore::open(d.path()).unwrap();
    assert_eq!(store.get("usage", "n").unwrap().as_deref(), Some(&b"200"[..]));
}

#[test]
fn once_runs_once_per_store() {
    let d = dir("once");
    let a = SqliteStore::open(d.path()).unwrap();
    let b = SqliteStore::open(d.path()).unwrap();
    assert!(a.once("import", &mut |tx| tx.put("grant", "g", b"1")).unwrap());
    assert!(!b.once("import", &mut |tx| tx.put("grant", "g2", b"1")).unwrap());
    assert_eq!(b.list("grant").unwrap().len(), 1);
    // A failed run is not recorded: the next start runs it again.
    assert!(a.once("other", &mut |_| Err(StoreError::Refused("disk".into()))).is_err());
    assert!(b.once("other", &mut |_| Ok(())).unwrap());
}

#[test]
fn a_newer_schema_is_refused_and_a_damaged_file_is_kept_aside() {
    let d = dir("schema");
    SqliteStore::open(d.path()).unwrap().put("grant", "g", b"1").unwrap();
    {
        let conn = rusqlite::Connection::open(d.path().join(FILE)).unwrap();
        conn.execute_batch("PRAGMA user_version = 9").unwrap();
    }
    let err = SqliteStore::open(d.path()).err().expect("a newer schema is refused");
    assert!(matches!(err, StoreError::Newer { found: 9, known: 1, .. }), "{err}");
    assert!(err.to_string().contains("newer toolreg"), "{err}");

    let d = dir("corrupt");
    std::fs::write(d.path().join(FILE), vec![0x5a; 8192]).unwrap();
    let store = SqliteStore::open(d.path()).unwrap();
    let aside = store.get("store", "recovered").unwrap().expect("the recovery is recorded");
    assert!(std::path::Path::new(std::str::from_utf8(&aside).unwrap()).is_file(), "the damaged file is kept");
    store.put("grant", "g", b"1").unwrap();
}

#[cfg(unix)]
#[test]
fn the_database_is_the_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir("mode");
    let store = SqliteStore::open(d.path()).unwrap();
    store.put("secret", "k", b"token").unwrap();
    // While open, as another process would read them (SQLite removes the two at the last close).
    for name in [FILE, "state.db-wal", "state.db-shm"] {
        let mode = std::fs::metadata(d.path().join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{name} is {mode:o}");
    }
}

#[test]
fn exclusive_holds_off_every_other_holder_until_dropped() {
    let d = dir("lock");
    for store in stores(d.path()) {
        let store: Arc<dyn Store> = store;
        let held = store.exclusive("oauth/s").unwrap();
        let entered = Arc::new(AtomicBool::new(false));
        let other = {
            let (store, entered) = (store.clone(), entered.clone());
            std::thread::spawn(move || {
                let _g = store.exclusive("oauth/s").unwrap();
                entered.store(true, Ordering::SeqCst);
            })
        };
        let _another_name = store.exclusive("oauth/t").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!entered.load(Ordering::SeqCst), "{}: the second holder waited", store.location());
        drop(held);
        other.join().unwrap();
        assert!(entered.load(Ordering::SeqCst));
    }
}
