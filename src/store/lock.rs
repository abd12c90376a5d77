//! `Store::exclusive`: a named lock across processes. A state directory's is an OS file lock
//! on `locks/<name>.lock` (`flock` on Unix, `LockFileEx` on Windows, through the standard
//! library): the OS drops it when its holder dies, so no crash leaves it held. A memory
//! store's is a lock inside the process.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Condvar, Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// Held until dropped.
#[must_use = "the lock is released when the guard drops"]
pub struct Exclusive(Held);

enum Held {
    /// The locked file: closing it releases the lock.
    File(#[allow(dead_code)] std::fs::File),
    /// A name held in `MEMORY`.
    Memory(String),
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        if let Held::Memory(name) = &self.0 {
            let (held, freed) = memory();
            held.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
            freed.notify_all();
        }
    }
}

/// Blocks until `dir/locks/<name>` is held by this caller.
pub fn exclusive_file(dir: &Path, name: &str) -> std::io::Result<Exclusive> {
    let locks = dir.join("locks");
    std::fs::create_dir_all(&locks)?;
    // A name is any text (a server id): the file is named by its digest.
    let digest = data_encoding::HEXLOWER.encode(&Sha256::digest(name.as_bytes()));
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(locks.join(format!("{}.lock", &digest[..32])))?;
    file.lock()?;
    Ok(Exclusive(Held::File(file)))
}

fn memory() -> &'static (Mutex<BTreeSet<String>>, Condvar) {
    static MEMORY: OnceLock<(Mutex<BTreeSet<String>>, Condvar)> = OnceLock::new();
    MEMORY.get_or_init(Default::default)
}

/// Blocks until `name` is held by this caller within the process.
pub fn exclusive_memory(name: &str) -> Exclusive {
    let (held, freed) = memory();
    let mut names = held.lock().unwrap_or_else(|e| e.into_inner());
    while names.contains(name) {
        names = freed.wait(names).unwrap_or_else(|e| e.into_inner());
    }
    names.insert(name.to_owned());
    Exclusive(Held::Memory(name.to_owned()))
}
