//! USE-m3's piece table kept in a file of the cache directory: written once (a temporary file
//! renamed into place); at every later start nothing of the archive's 17 blocks is inflated,
//! and a token's row is read from the file when it is embedded (a 384-byte read: the page
//! cache holds the table, not this process). Not mapped: a mapped file's pages count as the
//! process's once touched, and the kernel maps the pages around each fault too; the catalog's
//! pieces made 42 of its 47 MiB resident that way (docs/benchmarks-history.md "Two local models:
//! USE-m3 beside MiniLM (issue 41)", "Memory, second round").
//!
//! The file: a header (`MAGIC`, the piece count, the SHA-256 of the weights file it was built
//! from and of the rows), padded to a page, then the rows (`use_m3_table::Table`). A file that
//! is short, of other weights, or whose rows do not hash to the header's digest is rebuilt;
//! when it cannot be written or read, the table is kept in memory as without a cache dir.

use super::use_m3_table::{checked, pack_row, read_at, Blocks, Table, BLOCKS, EMB, ROW_BYTES};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::path::Path;

/// The file's name in the cache directory.
pub const FILE: &str = "use-m3-pieces.bin";
const MAGIC: &[u8; 16] = b"toolreg-use-m3-1";
/// The rows start on a page of their own.
const HEADER: usize = 4096;

/// The table for the weights of SHA-256 `weights`, read from `file` (built into it first when
/// it is missing or not this table). `blocks` failing is the weights' error, returned as is.
pub fn cached(file: &Path, weights: &[u8; 32], blocks: Blocks) -> Result<Table, String> {
    match open(file, weights) {
        Ok(t) => return Ok(t),
        Err(why) if file.exists() => tracing::info!(file = %file.display(), %why, "USE-m3 piece table rebuilt"),
        Err(_) => {}
    }
    match write(file, weights, blocks) {
        Ok(()) => {}
        Err(Failed::Weights(e)) => return Err(e),
        Err(Failed::File(e)) => {
            tracing::warn!(file = %file.display(), error = %e, "cannot write the USE-m3 piece table: kept in memory");
            return Table::in_memory(blocks);
        }
    }
    open(file, weights).or_else(|e| {
        tracing::warn!(file = %file.display(), error = %e, "cannot read the USE-m3 piece table: kept in memory");
        Table::in_memory(blocks)
    })
}

enum Failed {
    Weights(String),
    File(String),
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Failed {
        Failed::File(e.to_string())
    }
}

/// The file, when its header and rows are this table's.
fn open(file: &Path, weights: &[u8; 32]) -> Result<Table, String> {
    let f = File::open(file).map_err(|e| e.to_string())?;
    let len = f.metadata().map_err(|e| e.to_string())?.len() as usize;
    let mut head = [0u8; 16 + 8 + 32 + 32];
    read_at(&f, &mut head, 0).map_err(|_| "shorter than its header".to_string())?;
    if &head[..16] != MAGIC {
        return Err("not a piece table".into());
    }
    let pieces = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default()) as usize;
    if head[24..56] != weights[..] {
        return Err("built from other weights".into());
    }
    if pieces == 0 || !pieces.is_multiple_of(BLOCKS) || Some(len) != pieces.checked_mul(ROW_BYTES).and_then(|n| n.checked_add(HEADER)) {
        return Err(format!("{len} bytes for {pieces} pieces"));
    }
    if rows_digest(&f, pieces).map_err(|e| e.to_string())? != head[56..88] {
        return Err("its rows do not match their digest".into());
    }
    Ok(Table::in_file_at(f, HEADER as u64, pieces))
}

fn rows_digest(f: &File, pieces: usize) -> std::io::Result<[u8; 32]> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let (mut at, end) = (HEADER, HEADER + pieces * ROW_BYTES);
    while at < end {
        let n = buf.len().min(end - at);
        read_at(f, &mut buf[..n], at as u64)?;
        h.update(&buf[..n]);
        at += n;
    }
    Ok(h.finalize().into())
}

/// Builds the file under a temporary name, block by block (each row written at its place),
/// then renames it into place.
fn write(file: &Path, weights: &[u8; 32], blocks: Blocks) -> Result<(), Failed> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let result = (|| {
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&tmp)?;
        let mut rows = 0;
        let mut packed = [0u8; ROW_BYTES];
        for b in 0..BLOCKS {
            let codes = blocks(b).and_then(|c| checked(b, c, &mut rows)).map_err(Failed::Weights)?;
            if b == 0 {
                f.set_len((HEADER + rows * BLOCKS * ROW_BYTES) as u64)?;
            }
            for (r, row) in codes.chunks_exact(EMB).enumerate() {
                pack_row(row, &mut packed);
                write_at(&f, &packed, (HEADER + (r * BLOCKS + b) * ROW_BYTES) as u64)?;
            }
        }
        let pieces = rows * BLOCKS;
        let mut head = Vec::with_capacity(88);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&(pieces as u64).to_le_bytes());
        head.extend_from_slice(weights);
        head.extend_from_slice(&rows_digest(&f, pieces)?);
        write_at(&f, &head, 0)?;
        f.sync_all()?;
        Ok(crate::catalog::cache::rename_durably(&tmp, file, dir)?)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn write_at(f: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, buf, at)
}

#[cfg(windows)]
fn write_at(f: &File, mut buf: &[u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(f, buf, at)? {
            0 => return Err(std::io::ErrorKind::WriteZero.into()),
            n => (buf, at) = (&buf[n..], at + n as u64),
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "use_m3_table_file_tests.rs"]
mod tests;
