//! The audit file, shared by every process configured with it (a sidecar and gateways): appended
//! to, owner-only (0600, its directory 0700 when made here), rotated by size.
//!
//! Invariants, whoever writes:
//! - Each append runs under an exclusive OS lock on `FILE.lock` (`flock` on Unix, `LockFileEx`
//!   on Windows, through `std::fs::File::lock`; the OS drops it when its holder dies). Under it
//!   the path is opened afresh (`O_APPEND`) and sized by its own metadata, so no process writes
//!   to a file another has moved or removed, and rotation follows the file's real size, not a
//!   process's count. No handle is kept between batches (nothing to go stale; on Windows no open
//!   handle stands in the way of a rename).
//! - A run of whole lines is one `write`: no torn line from toolreg. A file found not ending in
//!   a newline (a crash or a full disk cut its last line) gets one first, so the cut line never
//!   swallows the next record.
//! - Rotation renames `FILE` to `FILE.1`, `FILE.n` to `FILE.n+1`, and removes every `FILE.n`
//!   with `n >= maxFiles-1` it would make: at most `maxFiles` files of at most `maxBytes` each (a
//!   single longer line alone in its file excepted). The numbers are read from the directory, so
//!   a gap (left by an older version) neither stops rotation nor hides a file from `toolreg audit`.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub struct File {
    path: PathBuf,
    max_bytes: u64,
    max_files: u32,
}

/// What an append could not write: its last `lines` lines (a suffix), and why.
#[derive(Debug)]
pub struct Unwritten {
    pub lines: u64,
    pub error: std::io::Error,
}

/// The `n`th rotated file of `path` (`FILE.n`).
pub fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// The lock every writer of `path` takes around an append (`FILE.lock`).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// The rotated files of `path` that exist, by number, highest (oldest) first.
pub fn numbered(path: &Path) -> std::io::Result<Vec<(u32, PathBuf)>> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return Ok(Vec::new()) };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let prefix = format!("{}.", name.to_string_lossy());
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(n) = file_name.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        // Digits only: `FILE.lock`, `FILE.1.bak` are not rotated files.
        if n.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = n.parse::<u32>() {
                out.push((n, rotated(path, n)));
            }
        }
    }
    out.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(out)
}

/// `path` opened owner-only (0600) for `o`, created when missing.
fn open_private(path: &Path, o: &mut OpenOptions) -> std::io::Result<std::fs::File> {
    o.create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(o, 0o600);
    o.open(path)
}

impl File {
    pub fn new(path: PathBuf, max_bytes: u64, max_files: u32) -> File {
        File { path, max_bytes, max_files }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the directory and opens the file and its lock, so a bad path is said at once.
    pub fn prepare(&self) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                let mut b = std::fs::DirBuilder::new();
                b.recursive(true);
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
                b.create(dir)?;
            }
        }
        let _held = self.hold()?;
        self.open().map(drop)
    }

    /// The exclusive lock of every writer of this file, held until dropped (closing the
    /// handle releases it).
    fn hold(&self) -> std::io::Result<std::fs::File> {
        let lock = open_private(&lock_path(&self.path), OpenOptions::new().read(true).write(true).truncate(false))?;
        lock.lock()?;
        Ok(lock)
    }

    /// The file as it is at its path now, and its length.
    fn open(&self) -> std::io::Result<(std::fs::File, u64)> {
        let f = open_private(&self.path, OpenOptions::new().read(true).append(true))?;
        let meta = f.metadata()?;
        // A file made by someone else, or before: owner-only all the same.
        #[cfg(unix)]
        if meta.is_file() && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o077 != 0 {
            f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        }
        Ok((f, meta.len()))
    }

    /// Appends `text` (whole lines) under the lock, rotating first whenever the next line would
    /// take the file past `max_bytes`: each run of lines that fits is one write. A single line
    /// longer than the limit goes alone into a fresh file.
    pub fn append(&self, text: &str) -> Result<(), Unwritten> {
        let unwritten = |rest: &str, error| Unwritten { lines: rest.matches('\n').count() as u64, error };
        let _held = self.hold().map_err(|e| unwritten(text, e))?;
        let mut rest = text;
        let mut fresh = false;
        while !rest.is_empty() {
            match self.append_some(rest, fresh) {
                Ok(Some(cut)) => (rest, fresh) = (&rest[cut..], false),
                Ok(None) => fresh = true,
                Err(e) => return Err(unwritten(rest, e)),
            }
        }
        Ok(())
    }

    /// Writes the lines of `rest` that fit and says how many bytes that was, or rotates (`None`)
    /// when none fits. `fresh`: just rotated, so the first line goes in whatever its size.
    fn append_some(&self, rest: &str, fresh: bool) -> std::io::Result<Option<usize>> {
        let (mut f, len) = self.open()?;
        let cut_off = len > 0 && !ends_in_newline(&mut f, len)?;
        let room = self.max_bytes.saturating_sub(len + cut_off as u64);
        let mut cut = 0;
        for (i, _) in rest.match_indices('\n') {
            if (i + 1) as u64 > room {
                break;
            }
            cut = i + 1;
        }
        if cut == 0 {
            if len > 0 && !fresh {
                drop(f);
                self.rotate()?;
                return Ok(None);
            }
            cut = rest.find('\n').map_or(rest.len(), |i| i + 1);
        }
        if cut_off {
            let mut whole = Vec::with_capacity(cut + 1);
            whole.push(b'\n');
            whole.extend_from_slice(&rest.as_bytes()[..cut]);
            f.write_all(&whole)?;
        } else {
            f.write_all(&rest.as_bytes()[..cut])?;
        }
        Ok(Some(cut))
    }

    /// Under the lock: shifts the rotated files up one, dropping those it would number
    /// `max_files - 1` or more, and moves the file to `FILE.1`.
    fn rotate(&self) -> std::io::Result<()> {
        for (n, from) in numbered(&self.path)? {
            // Highest first, so `FILE.n+1` has already moved on when `FILE.n` takes its name.
            if n.saturating_add(1) >= self.max_files {
                std::fs::remove_file(&from)?;
            } else {
                std::fs::rename(&from, rotated(&self.path, n + 1))?;
            }
        }
        if self.max_files <= 1 {
            return std::fs::remove_file(&self.path);
        }
        std::fs::rename(&self.path, rotated(&self.path, 1))
    }
}

/// Whether the file's last byte (it has `len`) is a newline.
fn ends_in_newline(f: &mut std::fs::File, len: u64) -> std::io::Result<bool> {
    let mut last = [0u8];
    f.seek(SeekFrom::Start(len - 1))?;
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}
