//! The local ONNX model as ONNX Runtime optimised it, kept in the cache directory and loaded
//! from there at the next start. ONNX Runtime folds all-MiniLM-L6-v2's int8 weights to float32
//! while optimising, through temporaries: that load peaked ~110 MiB above the resident model.
//! The optimised graph, with its float32 weights in a file of their own, loads with no folding,
//! and ONNX Runtime maps that file rather than copying it: the same graph, the same vectors.
//!
//! The directory `DIR` holds `model.onnx` (the graph), `weights.bin` (its initializers) and
//! `stamp` (what it was made from, and the SHA-256 of both files). It is written under a
//! temporary name and renamed into place; one that is short, damaged, or of another model or
//! runtime build is made again; one that cannot be written leaves the model loaded as before.

use super::file_digest;
use std::path::{Path, PathBuf};

/// The directory's name in the cache directory.
pub const DIR: &str = "onnx-optimised";
const MODEL: &str = "model.onnx";
/// Relative to the model's directory, as ONNX Runtime resolves it.
pub const WEIGHTS: &str = "weights.bin";
const STAMP: &str = "stamp";

/// The optimised model in `cache_dir` for `key` (the source model and the runtime's build):
/// found and checked, else made by `optimise(model_path)` (which must write the graph there,
/// its initializers to `WEIGHTS` beside it). `None` when neither worked (logged).
pub fn path(cache_dir: &Path, key: &str, optimise: impl FnOnce(&Path) -> Result<(), String>) -> Option<PathBuf> {
    let dir = cache_dir.join(DIR);
    match check(&dir, key) {
        Ok(()) => return Some(dir.join(MODEL)),
        Err(why) if dir.exists() => tracing::info!(dir = %dir.display(), %why, "the optimised embedding model is made again"),
        Err(_) => {}
    }
    match make(cache_dir, &dir, key, optimise) {
        Ok(()) => Some(dir.join(MODEL)),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot keep the optimised embedding model: it is optimised at every start");
            None
        }
    }
}

/// Forgets the directory (its model did not load): the next start makes it again.
pub fn forget(cache_dir: &Path) {
    let _ = std::fs::remove_dir_all(cache_dir.join(DIR));
}

fn stamp(dir: &Path, key: &str) -> Result<String, String> {
    let mut s = format!("{key}\n");
    for f in [MODEL, WEIGHTS] {
        s.push_str(&format!("{f} {}\n", file_digest::hex(&dir.join(f))?));
    }
    Ok(s)
}

/// Ok when the stamp is `key`'s and both files hash to it (read, not mapped: the page cache
/// holds what is read here, not this process).
fn check(dir: &Path, key: &str) -> Result<(), String> {
    let written = std::fs::read_to_string(dir.join(STAMP)).map_err(|e| format!("no stamp: {e}"))?;
    if written.lines().next() != Some(key) {
        return Err("made from another model or runtime".into());
    }
    if stamp(dir, key)? != written {
        return Err("a file does not match its digest".into());
    }
    Ok(())
}

fn make(cache_dir: &Path, dir: &Path, key: &str, optimise: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let tmp = cache_dir.join(format!("{DIR}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = (|| {
        std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
        optimise(&tmp.join(MODEL))?;
        let stamp = stamp(&tmp, key)?;
        crate::catalog::cache::write_atomic(&tmp, &tmp.join(STAMP), stamp.as_bytes()).map_err(|e| e.to_string())?;
        for f in [MODEL, WEIGHTS] {
            std::fs::File::open(tmp.join(f)).and_then(|f| f.sync_all()).map_err(|e| e.to_string())?;
        }
        let _ = std::fs::remove_dir_all(dir);
        crate::catalog::cache::rename_durably(&tmp, dir, cache_dir).map_err(|e| e.to_string())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}
