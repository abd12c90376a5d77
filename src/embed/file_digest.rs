//! A file's SHA-256, read a MiB at a time: the model files are tens of MB, never held whole
//! just to be hashed (that was a peak of its own while loading).

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// Feeds the file to every hasher.
pub fn feed(path: &Path, hashers: &mut [&mut Sha256]) -> Result<(), String> {
    let err = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let mut f = std::fs::File::open(path).map_err(err)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf).map_err(err)? {
            0 => return Ok(()),
            n => hashers.iter_mut().for_each(|h| h.update(&buf[..n])),
        }
    }
}

/// The file's SHA-256 in lowercase hex.
pub fn hex(path: &Path) -> Result<String, String> {
    let mut h = Sha256::new();
    feed(path, &mut [&mut h])?;
    Ok(data_encoding::HEXLOWER.encode(&h.finalize()))
}
