//! Where `toolreg mcp` and `toolreg auth` keep upstream servers' OAuth records (tokens, the
//! client they registered): one file per secret key, `<state dir>/secrets/oauth-<digest>.json`,
//! the digest that of the key (`toolreg/oauth/<server id>`), so a server id never becomes a path.
//!
//! Invariants: the directory is the owner's alone (0700) and each file too (0600, from its
//! creation); a file is replaced whole (temp file, rename), so a reader (the other command, a
//! second gateway) sees the old record or the new one. Values are `Secret`s: never printed.

use crate::catalog::AuthHost;
use crate::secret::Secret;
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Records larger than this are not read (a record is a few KiB).
const MAX_BYTES: u64 = 1 << 20;

#[derive(Clone, Debug)]
pub struct TokenFiles {
    dir: PathBuf,
}

impl TokenFiles {
    /// The files under `state_dir/secrets`.
    pub fn new(state_dir: &Path) -> TokenFiles {
        TokenFiles { dir: state_dir.join("secrets") }
    }

    pub fn path(&self, key: &str) -> PathBuf {
        let digest = data_encoding::HEXLOWER.encode(&Sha256::digest(key.as_bytes()));
        self.dir.join(format!("oauth-{}.json", &digest[..32]))
    }

    pub fn get(&self, key: &str) -> Result<Option<Secret>, String> {
        let path = self.path(key);
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            Ok(m) if m.len() > MAX_BYTES => return Err(format!("{} is larger than {MAX_BYTES} bytes", path.display())),
            Ok(_) => {}
        }
        std::fs::read_to_string(&path).map(|t| Some(Secret::new(t))).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    pub fn set(&self, key: &str, value: &Secret) -> Result<(), String> {
        self.private_dir().map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        let path = self.path(key);
        crate::catalog::cache::write_private(&path, value.expose().as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    pub fn delete(&self, key: &str) -> Result<(), String> {
        let path = self.path(key);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("cannot delete {}: {e}", path.display())),
            _ => Ok(()),
        }
    }

    /// The directory, created 0700 (its parents as the umask says), and made 0700 if it was not.
    fn private_dir(&self) -> std::io::Result<()> {
        if let Some(parent) = self.dir.parent() {
            std::fs::create_dir_all(parent)?;
        }
        #[cfg_attr(not(unix), allow(unused_mut))] // only Unix sets a mode
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if std::fs::metadata(&self.dir)?.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
            }
        }
        Ok(())
    }
}

/// The half of `AuthHost` that reaches the person (a client's elicitation, a terminal).
pub trait Opener: Send + Sync {
    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// An `AuthHost` whose secrets are these files (none without a state directory: tokens then
/// live for the run only) and whose pages go through `opener`, which can always be tried: one
/// that cannot reach the person fails the flow with what to do instead.
pub struct FileAuth<O> {
    pub opener: O,
    pub files: Option<TokenFiles>,
}

impl<O: Opener> FileAuth<O> {
    /// One secret operation off the reactor (a write fsyncs); `none` without files.
    fn off_thread<T: Send + 'static>(
        &self,
        none: T,
        op: impl FnOnce(&TokenFiles) -> Result<T, String> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, String>> {
        let files = self.files.clone();
        Box::pin(async move {
            let Some(files) = files else { return Ok(none) };
            tokio::task::spawn_blocking(move || op(&files)).await.map_err(|e| e.to_string())?
        })
    }
}

impl<O: Opener> AuthHost for FileAuth<O> {
    fn can_open_url(&self) -> bool {
        true
    }

    fn has_secrets(&self) -> bool {
        self.files.is_some()
    }

    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.opener.open_url(url, server_id, reason)
    }

    fn secret_get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Secret>, String>> {
        let key = key.to_owned();
        self.off_thread(None, move |f| f.get(&key))
    }

    fn secret_set<'a>(&'a self, key: &'a str, value: Secret) -> BoxFuture<'a, Result<(), String>> {
        let key = key.to_owned();
        self.off_thread((), move |f| f.set(&key, &value))
    }

    fn secret_delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        let key = key.to_owned();
        self.off_thread((), move |f| f.delete(&key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_in_owner_only_files() {
        let dir = tempfile::tempdir().unwrap();
        let files = TokenFiles::new(dir.path());
        let key = "toolreg/oauth/../web";
        assert!(files.get(key).unwrap().is_none());
        files.set(key, &Secret::new("{\"a\":1}")).unwrap();
        assert_eq!(files.get(key).unwrap().unwrap().expose(), "{\"a\":1}");
        let path = files.path(key);
        assert_eq!(path.parent().unwrap(), dir.path().join("secrets"), "the key never becomes a path");
        files.set(key, &Secret::new("{\"a\":2}")).unwrap();
        assert_eq!(files.get(key).unwrap().unwrap().expose(), "{\"a\":2}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(dir.path().join("secrets")).unwrap().permissions().mode() & 0o777, 0o700);
        }
        assert_eq!(std::fs::read_dir(dir.path().join("secrets")).unwrap().count(), 1, "no temp file left");
        files.delete(key).unwrap();
        assert!(files.get(key).unwrap().is_none());
        files.delete(key).unwrap();
    }
}
