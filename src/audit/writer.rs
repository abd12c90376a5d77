//! The audit file: appended to, owner-only (0600, its directory 0700 when made here), rotated
//! by size. Rotation renames `FILE` to `FILE.1`, `FILE.1` to `FILE.2`, ..., and drops what
//! would pass `FILE.<maxFiles-1>`, so at most `maxFiles` files of at most `maxBytes` each (a
//! single longer line excepted) are kept. A failed write drops the handle: the next batch opens
//! the file again (a directory made writable again, a disk with room again).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct File {
    path: PathBuf,
    max_bytes: u64,
    max_files: u32,
    open: Option<(std::fs::File, u64)>,
}

/// The `n`th rotated file of `path` (`FILE.n`).
pub fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

impl File {
    pub fn new(path: PathBuf, max_bytes: u64, max_files: u32) -> File {
        File { path, max_bytes, max_files, open: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the directory and opens the file.
    pub fn prepare(&mut self) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                let mut b = std::fs::DirBuilder::new();
                b.recursive(true);
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
                b.create(dir)?;
            }
        }
        self.reopen()
    }

    fn reopen(&mut self) -> std::io::Result<()> {
        let mut o = OpenOptions::new();
        o.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let f = o.open(&self.path)?;
        let meta = f.metadata()?;
        // A file made by someone else, or before: owner-only all the same.
        #[cfg(unix)]
        if meta.is_file() && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077 != 0 {
            f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        }
        self.open = Some((f, meta.len()));
        Ok(())
    }

    /// Appends `text` (whole lines), rotating first whenever the next line would take the
    /// file past `max_bytes`: each run of lines that fits is one write. A single line longer
    /// than the limit goes alone into a fresh file.
    pub fn append(&mut self, text: &str) -> std::io::Result<()> {
        let mut rest = text;
        while !rest.is_empty() {
            if self.open.is_none() {
                self.reopen()?;
            }
            let len = self.open.as_ref().map_or(0, |(_, len)| *len);
            let room = self.max_bytes.saturating_sub(len);
            let mut cut = 0;
            for (i, _) in rest.match_indices('\n') {
                if (i + 1) as u64 > room {
                    break;
                }
                cut = i + 1;
            }
            if cut == 0 {
                if len > 0 {
                    self.open = None;
                    self.rotate()?;
                    continue;
                }
                cut = rest.find('\n').map_or(rest.len(), |i| i + 1);
            }
            let (f, len) = self.open.as_mut().expect("opened above");
            if let Err(e) = f.write_all(&rest.as_bytes()[..cut]) {
                self.open = None;
                return Err(e);
            }
            *len += cut as u64;
            rest = &rest[cut..];
        }
        Ok(())
    }

    fn rotate(&self) -> std::io::Result<()> {
        if self.max_files <= 1 {
            return std::fs::remove_file(&self.path);
        }
        let _ = std::fs::remove_file(rotated(&self.path, self.max_files - 1));
        for n in (1..self.max_files - 1).rev() {
            let from = rotated(&self.path, n);
            if from.exists() {
                std::fs::rename(&from, rotated(&self.path, n + 1))?;
            }
        }
        std::fs::rename(&self.path, rotated(&self.path, 1))
    }
}
