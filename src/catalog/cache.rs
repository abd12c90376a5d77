//! The on-disk last-known-good tool list, one file per server, so a restarted sidecar is warm
//! before any server has connected.
//!
//! Invariants: a write is atomic (temp file in the same directory, fsync, rename), so a reader
//! sees the old file or the new one, never half of one. A file we cannot trust (unreadable,
//! corrupt, truncated, another format version, another server id, another transport identity)
//! is logged and treated as absent: the cache is an optimisation, never a reason to fail.
//! So is a file over `MAX_FILE_BYTES`: `catalog/setServers` waits for these reads (so the first
//! `catalog/listTools` already has the list), and a huge file must not hold it.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::tool::McpTool;
use super::resources::Extras;

const FORMAT_VERSION: u32 = 1;

/// A cache or pins file bigger than this is not read: 64 MiB holds tens of thousands of tool
/// definitions, and parsing it takes a fraction of a second.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    format_version: u32,
    server_id: String,
    identity: String,
    refreshed_at: Option<String>,
    tools: Vec<McpTool>,
    /// Resources, templates and prompts; absent in files written before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    extras: Option<Extras>,
}

/// What a cache file gives back.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedList {
    pub tools: Vec<McpTool>,
    pub refreshed_at: Option<String>,
    pub extras: Option<Extras>,
}

/// `<dir>/mcp-<sanitized id>-<8 hex of sha256(id)>.json`: the digest keeps two ids that
/// sanitize alike (`a/b`, `a_b`) apart.
pub fn path_for(dir: &Path, server_id: &str) -> PathBuf {
    let mut safe: String = server_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    safe.truncate(64);
    let digest = data_encoding::HEXLOWER.encode(&Sha256::digest(server_id.as_bytes())[..4]);
    dir.join(format!("mcp-{safe}-{digest}.json"))
}

pub fn load(dir: &Path, server_id: &str, identity: &str) -> Option<CachedList> {
    load_within(dir, server_id, identity, MAX_FILE_BYTES)
}

fn load_within(dir: &Path, server_id: &str, identity: &str, max: u64) -> Option<CachedList> {
    let path = path_for(dir, server_id);
    let bytes = match read_bounded(&path, max) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(server = server_id, path = %path.display(), error = %e, "cannot read MCP tool cache; ignoring it");
            return None;
        }
    };
    let file: CacheFile = match serde_json::from_slice(&bytes) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(server = server_id, path = %path.display(), error = %e, "corrupt MCP tool cache; ignoring it");
            return None;
        }
    };
    let reason = if file.format_version != FORMAT_VERSION {
        Some("format version")
    } else if file.server_id != server_id {
        Some("server id")
    } else if file.identity != identity {
        Some("server transport")
    } else {
        None
    };
    if let Some(reason) = reason {
        tracing::warn!(server = server_id, path = %path.display(), "MCP tool cache is for another {reason}; ignoring it");
        return None;
    }
    Some(CachedList { tools: file.tools, refreshed_at: file.refreshed_at, extras: file.extras })
}

/// The whole file, or an error when it holds more than `max` bytes (counted as read, so a file
/// that grows meanwhile is bounded too). Also used for the pins (`pins.rs`).
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!("the file is over {max} bytes")));
    }
    Ok(bytes)
}

pub fn store(dir: &Path, server_id: &str, identity: &str, list: &CachedList) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let file = CacheFile {
        format_version: FORMAT_VERSION,
        server_id: server_id.to_owned(),
        identity: identity.to_owned(),
        refreshed_at: list.refreshed_at.clone(),
        tools: list.tools.clone(),
        extras: list.extras.clone(),
    };
    let bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    write_atomic(dir, &path_for(dir, server_id), &bytes)
}

/// Forget a server's list: a list the server marked `cacheScope: private` is not kept on disk,
/// and the file of an earlier public one would otherwise serve it after a restart.
pub fn remove(dir: &Path, server_id: &str) -> std::io::Result<()> {
    match std::fs::remove_file(path_for(dir, server_id)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Temp file in the same directory, fsync, rename, fsync of the directory: a reader sees the
/// old file or the new one. Also used for the pins (`pins.rs`).
pub fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_new(path, bytes, &mut std::fs::OpenOptions::new())
}

/// `write_atomic` for a secret: the file is the owner's alone (0600) from its creation, never
/// readable by others for a moment; `dir` must exist (the caller chooses its mode).
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    write_new(path, bytes, &mut opts)
}

/// Renames `tmp` (written and synced) to `path`, both in `dir`, then syncs `dir`: the rename
/// itself is durable only once the directory is.
pub fn rename_durably(tmp: &Path, path: &Path, dir: &Path) -> std::io::Result<()> {
    std::fs::rename(tmp, path)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn write_new(path: &Path, bytes: &[u8], opts: &mut std::fs::OpenOptions) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Unique per write, not only per process: two threads writing one path must not share a
    // temp file (one would rename the other's away and leave its own behind).
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("json.tmp{}-{seq}", std::process::id()));
    // A leftover of a crashed run would keep its old mode: `mode` applies only on creation.
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut f = opts.write(true).create(true).truncate(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        rename_durably(&tmp, path, dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> CachedList {
        CachedList {
            tools: vec![McpTool {
                name: "t".into(),
                title: None,
                description: "d".into(),
                input_schema: serde_json::json!({"type": "object"}),
                output_schema: None,
                annotations: None,
                meta: None,
                ui: None,
            }],
            refreshed_at: Some("2026-01-01T00:00:00Z".into()),
            extras: Some(Extras { prompts: vec![serde_json::json!({"name": "p"})], ..Extras::default() }),
        }
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "toolreg-cache-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn round_trip_and_rejections() {
        let dir = tempdir();
        assert_eq!(load(&dir, "s/1", "id"), None);
        store(&dir, "s/1", "id", &list()).unwrap();
        assert_eq!(load(&dir, "s/1", "id"), Some(list()));
        // Another transport identity: not ours.
        assert_eq!(load(&dir, "s/1", "other"), None);
        // Same sanitized name, other id: other file.
        assert_ne!(path_for(&dir, "s/1"), path_for(&dir, "s_1"));
        // 8 hex of SHA-256("s/1"): a cache written before finds its file again.
        assert_eq!(path_for(&dir, "s/1"), dir.join("mcp-s_1-b6a3c3d6.json"));
        assert_eq!(load(&dir, "s_1", "id"), None);
        // Truncated file.
        let p = path_for(&dir, "s/1");
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(load(&dir, "s/1", "id"), None);
        // Foreign file: valid JSON, other id.
        std::fs::write(&p, br#"{"formatVersion":1,"serverId":"x","identity":"id","tools":[]}"#).unwrap();
        assert_eq!(load(&dir, "s/1", "id"), None);
        std::fs::write(&p, br#"{"formatVersion":99,"serverId":"s/1","identity":"id","tools":[]}"#).unwrap();
        assert_eq!(load(&dir, "s/1", "id"), None);
        // Over the size bound: not read, however valid.
        store(&dir, "s/1", "id", &list()).unwrap();
        let size = std::fs::metadata(&p).unwrap().len();
        assert_eq!(load_within(&dir, "s/1", "id", size), Some(list()));
        assert_eq!(load_within(&dir, "s/1", "id", size - 1), None);
        // Removed (a private list), and removing again is no error.
        remove(&dir, "s/1").unwrap();
        assert_eq!(load(&dir, "s/1", "id"), None);
        remove(&dir, "s/1").unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
