//! A server's pins on disk: `pins-<id>-<digest>.json` in `cacheDir`, written atomically
//! beside the list cache. A missing file is first use; one that cannot be read fails closed
//! (every tool held until approved); a format 1 file is read and re-fingerprinted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{fingerprint, fingerprint_v1, Approved, Pins};
use crate::catalog::cache;

/// 2: fingerprints cover the approval hints. A format 1 file (fingerprints without them) is
/// read and its fingerprints recomputed from the stored definitions, which hold the hints.
const FORMAT_VERSION: u32 = 2;

/// `<dir>/pins-<sanitized id>-<hex of sha256(id)>.json`, beside the list cache.
pub fn path_for(dir: &Path, server_id: &str) -> PathBuf {
    let name = cache::path_for(dir, server_id);
    let file = name.file_name().and_then(|n| n.to_str()).unwrap_or_default().trim_start_matches("mcp-");
    dir.join(format!("pins-{file}"))
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PinsFile {
    format_version: u32,
    server_id: String,
    tools: BTreeMap<String, Approved>,
    /// Views read changed since approved (`Pins::changed_views`): kept, so that the held
    /// tools stay held across a restart and another process (`toolreg pins`) approving them
    /// approves the view as it was read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    changed_views: BTreeMap<String, String>,
}

/// The server's pins from disk: a missing file is first use; an unreadable one fails closed.
pub fn load(dir: &Path, server_id: &str) -> Pins {
    let path = path_for(dir, server_id);
    let bytes = match cache::read_bounded(&path, cache::MAX_FILE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Pins::default(),
        Err(e) => return fail_closed(server_id, &path, &e.to_string()),
    };
    let file: PinsFile = match serde_json::from_slice(&bytes) {
        Ok(f) => f,
        Err(e) => return fail_closed(server_id, &path, &e.to_string()),
    };
    let stored_fingerprint = match file.format_version {
        1 => fingerprint_v1,
        FORMAT_VERSION => fingerprint,
        _ => return fail_closed(server_id, &path, "another format version"),
    };
    if file.server_id != server_id {
        return fail_closed(server_id, &path, "another server id");
    }
    // A record whose fingerprint does not match its definition was edited by hand or damaged.
    if file.tools.iter().any(|(name, a)| &a.tool.name != name || stored_fingerprint(&a.tool) != a.fingerprint) {
        return fail_closed(server_id, &path, "a fingerprint does not match its definition");
    }
    // Format 1 stored each definition whole, hints included: what the user approved is known,
    // only its fingerprint is computed anew (the next store writes format 2).
    let approved = file.tools.into_iter().map(|(name, a)| (name, Approved { fingerprint: fingerprint(&a.tool), tool: a.tool, view: a.view })).collect();
    Pins { baseline: true, approved, changed_views: file.changed_views }
}

fn fail_closed(server_id: &str, path: &Path, why: &str) -> Pins {
    tracing::warn!(server = server_id, path = %path.display(), why,
        "cannot read the approved MCP tool definitions; holding every tool of this server until the host approves it");
    Pins { baseline: true, approved: BTreeMap::new(), changed_views: BTreeMap::new() }
}

/// Written atomically; a pins value without a baseline is not written (nothing to keep).
pub fn store(dir: &Path, server_id: &str, pins: &Pins) -> std::io::Result<()> {
    if !pins.baseline {
        return Ok(());
    }
    let file = PinsFile { format_version: FORMAT_VERSION, server_id: server_id.to_owned(), tools: pins.approved.clone(), changed_views: pins.changed_views.clone() };
    let bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    cache::write_atomic(dir, &path_for(dir, server_id), &bytes)
}
