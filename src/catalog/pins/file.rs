//! The pins format, and the pins files of earlier releases: `pins-<id>-<digest>.json` in
//! `cacheDir`, one per server. The store (`stored.rs`) keeps each server's record in this same
//! format; the files are only read now: imported once into the store, and read for a server
//! the store has no record of (a file that could not be imported then fails closed, as it did).
//! A missing file is first use; one that cannot be read fails closed (every tool held until
//! approved); a format 1 file is read and re-fingerprinted.

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

/// A server's pins from a pins file: a missing file is first use; an unreadable one fails closed.
pub fn load(dir: &Path, server_id: &str) -> Pins {
    let path = path_for(dir, server_id);
    let bytes = match cache::read_bounded(&path, cache::MAX_FILE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Pins::default(),
        Err(e) => return fail_closed(server_id, &path.display().to_string(), &e.to_string()),
    };
    parse(&bytes, server_id).unwrap_or_else(|why| fail_closed(server_id, &path.display().to_string(), &why))
}

/// The pins in `bytes` (a file, or a store record), checked: `Err` says why they cannot be
/// trusted.
pub(super) fn parse(bytes: &[u8], server_id: &str) -> Result<Pins, String> {
    let file: PinsFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let stored_fingerprint = match file.format_version {
        1 => fingerprint_v1,
        FORMAT_VERSION => fingerprint,
        _ => return Err("another format version".into()),
    };
    if file.server_id != server_id {
        return Err("another server id".into());
    }
    // A record whose fingerprint does not match its definition was edited by hand or damaged.
    if file.tools.iter().any(|(name, a)| &a.tool.name != name || stored_fingerprint(&a.tool) != a.fingerprint) {
        return Err("a fingerprint does not match its definition".into());
    }
    // Format 1 stored each definition whole, hints included: what the user approved is known,
    // only its fingerprint is computed anew (the next write is format 2).
    let approved = file.tools.into_iter().map(|(name, a)| (name, Approved { fingerprint: fingerprint(&a.tool), tool: a.tool, view: a.view })).collect();
    Ok(Pins { baseline: true, approved, changed_views: file.changed_views })
}

/// The server id a pins file names, if it parses that far (to import it: file names hold a
/// digest of the id, not the id).
pub(super) fn server_id_of(bytes: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Head {
        server_id: String,
    }
    serde_json::from_slice::<Head>(bytes).ok().map(|h| h.server_id)
}

/// Pins that cannot be trusted: a baseline was taken once, so nothing counts as approved.
pub(super) fn fail_closed(server_id: &str, place: &str, why: &str) -> Pins {
    tracing::warn!(server = server_id, place, why,
        "cannot read the approved MCP tool definitions; holding every tool of this server until the host approves it");
    Pins { baseline: true, approved: BTreeMap::new(), changed_views: BTreeMap::new() }
}

/// The format-2 bytes of `pins`.
pub(super) fn encode(server_id: &str, pins: &Pins) -> Vec<u8> {
    let file = PinsFile { format_version: FORMAT_VERSION, server_id: server_id.to_owned(), tools: pins.approved.clone(), changed_views: pins.changed_views.clone() };
    serde_json::to_vec(&file).unwrap_or_default()
}

/// Writes a pins file as an earlier release did (tests of the import and of the format).
#[cfg(test)]
pub fn store(dir: &Path, server_id: &str, pins: &Pins) -> std::io::Result<()> {
    if !pins.baseline {
        return Ok(());
    }
    cache::write_atomic(dir, &path_for(dir, server_id), &encode(server_id, pins))
}
