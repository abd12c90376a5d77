//! Remembered approvals (issue 54): the user answers "approve, and don't ask again" once, for
//! a session or for good, instead of every call.
//!
//! Invariants:
//! - A grant is bound to the tool's definition (`Asked::binding`): an MCP tool's approved pin
//!   fingerprint, else a digest of its registered name, description and input schema. A
//!   definition that changed (and was approved again through its pin) has another binding, so
//!   no grant covers it and the user is asked again: a rug pull ends a grant.
//! - A session grant covers calls of the same session only (`None`, the calls with no
//!   session, is a session of its own); it lives in memory for the process's run.
//! - An `always` grant is a record of the face's store (`crate::store`, kind `grant`, keyed by
//!   the tool's name: one lasting grant per tool, the newer definition's replacing the older),
//!   shared by every process over the same state directory (`cacheDir`, the gateway's state
//!   dir). Remember is a put, revoke a delete, each applied to what is stored now; a gated call
//!   reads the tool's record (a point read, tens of microseconds), so a grant or revocation
//!   made by another process (`toolreg approvals --revoke`) holds from the next call. A record
//!   or store that cannot be read grants nothing: the user is asked.
//! - Before the directory is known (and without one) the store is a memory store: the same
//!   operations, for the process's run; what was granted meanwhile is copied in at `open`.
//! - `approvals.json` (before issue 63) is imported once per store and left in place, readable
//!   by an older toolreg; an unreadable one imports nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use crate::store::{MemoryStore, Store};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

/// Where grants were kept before issue 63: imported once (`import`), never written.
pub const FILE: &str = "approvals.json";
/// A larger file is not ours (a grant is a few hundred bytes).
const MAX_FILE_BYTES: u64 = 4 << 20;
const FORMAT_VERSION: u32 = 1;

/// How long an approval lasts, as the user answered it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Remember {
    /// This call only (the default).
    #[default]
    Once,
    /// Every call of the tool in the same session, for the rest of the run.
    Session,
    /// Every call of the tool, persisted until revoked.
    Always,
}

impl Remember {
    pub fn lasts(self) -> Option<Lasts> {
        match self {
            Remember::Once => None,
            Remember::Session => Some(Lasts::Session),
            Remember::Always => Some(Lasts::Always),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Lasts {
    Session,
    Always,
}

/// One grant as listed (`approval/grants`, `toolreg approvals`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The tool's name as calls name it.
    pub tool: String,
    /// The MCP server of an MCP tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    pub lasts: Lasts,
    /// When the user granted it (RFC 3339, UTC).
    pub granted_at: String,
}

/// A call as grants see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Asked {
    pub tool: String,
    pub server_id: Option<String>,
    /// The definition the call would run (`pinned`, `definition`).
    pub binding: String,
    /// The call's session (a plan's, a gateway client's); `None`: the calls with none.
    pub session: Option<String>,
}

/// The binding of an MCP tool its pins approve: the approved fingerprint.
pub fn pinned(fingerprint: &str) -> String {
    format!("pin:{fingerprint}")
}

/// The binding of any other tool: its registered name, description and input schema.
pub fn definition(name: &str, description: &str, input_schema: &Value) -> String {
    let text = crate::catalog::canonical::canonical(&json!([name, description, input_schema]));
    format!("def:{}", data_encoding::HEXLOWER.encode(&Sha256::digest(text.as_bytes())))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_id: Option<String>,
    binding: String,
    /// Unix seconds.
    granted_at: i64,
}

impl Stored {
    fn of(asked: &Asked) -> Stored {
        Stored { tool: asked.tool.clone(), server_id: asked.server_id.clone(), binding: asked.binding.clone(), granted_at: now() }
    }

    fn covers(&self, asked: &Asked) -> bool {
        self.tool == asked.tool && self.binding == asked.binding
    }

    fn listed(&self, lasts: Lasts) -> Grant {
        Grant { tool: self.tool.clone(), server_id: self.server_id.clone(), lasts, granted_at: rfc3339(self.granted_at) }
    }
}

/// The old file's shape (`approvals.json`), read once by the import.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GrantsFile {
    format_version: u32,
    grants: Vec<Stored>,
}

/// The store's kind for lasting grants; a record's key is the tool's name.
const KIND: &str = "grant";
/// The `once` marker of the import of `approvals.json`.
const IMPORT: &str = "import approvals.json";

/// The grants of one face (shared by a gateway's profiles).
pub struct Grants {
    /// (session, grant), for the process's run.
    session: Mutex<Vec<(Option<String>, Stored)>>,
    /// Where `always` grants are kept: a memory store until `open`, then the directory's.
    store: RwLock<Arc<dyn Store>>,
    opened: AtomicBool,
}

impl Default for Grants {
    fn default() -> Grants {
        Grants { session: Mutex::default(), store: RwLock::new(Arc::new(MemoryStore::default())), opened: AtomicBool::new(false) }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn now() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

fn rfc3339(secs: i64) -> String {
    use time::{format_description::well_known::Rfc3339, OffsetDateTime};
    OffsetDateTime::from_unix_timestamp(secs).unwrap_or(OffsetDateTime::UNIX_EPOCH).format(&Rfc3339).unwrap_or_default()
}

/// A record as stored; one that is not ours grants nothing (and is logged).
fn decode(key: &str, bytes: &[u8]) -> Option<Stored> {
    serde_json::from_slice(bytes).map_err(|e| tracing::warn!(tool = key, error = %e, "a remembered approval is unreadable: its tool asks again")).ok()
}

/// Reads `approvals.json` (before issue 63) into the store, once per store; the file stays.
fn import(store: &dyn Store, dir: &Path) {
    let path = dir.join(FILE);
    let ran = store.once(IMPORT, &mut |tx| {
        for g in read_file(&path) {
            // The file lists the newest last: a later duplicate replaces an earlier one.
            tx.put(KIND, &g.tool, &serde_json::to_vec(&g).unwrap_or_default())?;
        }
        Ok(())
    });
    match ran {
        Ok(true) => tracing::info!(path = %path.display(), store = %store.location(), "remembered approvals imported"),
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, "remembered approvals not imported: asked again until the next start"),
    }
}

/// The old file's grants; none when it is absent or unreadable (the user is asked: fail closed).
fn read_file(path: &Path) -> Vec<Stored> {
    let unreadable = |why: &str| {
        tracing::warn!(path = %path.display(), why, "the old remembered approvals are unreadable: nothing imported, their tools ask again");
        Vec::new()
    };
    match crate::catalog::cache::read_bounded(path, MAX_FILE_BYTES) {
        Ok(bytes) => match serde_json::from_slice::<GrantsFile>(&bytes) {
            Ok(f) if f.format_version == FORMAT_VERSION => f.grants,
            Ok(f) => unreadable(&format!("format {} is not ours", f.format_version)),
            Err(e) => unreadable(&e.to_string()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => unreadable(&e.to_string()),
    }
}

impl Grants {
    /// Keeps `always` grants in `dir`'s store from now on (once; a later directory is ignored),
    /// importing the old file first. Blocking: opens the store.
    pub fn open(&self, dir: &Path) {
        if self.opened.swap(true, Ordering::AcqRel) {
            return;
        }
        let store = crate::store::shared(dir);
        import(&*store, dir);
        let mut current = self.store.write().unwrap_or_else(|e| e.into_inner());
        // Granted before the directory was known: kept, replacing the stored grant of the tool.
        let early = current.list(KIND).unwrap_or_default();
        if !early.is_empty() {
            let copied = store.transact(&mut |tx| early.iter().try_for_each(|(tool, g)| tx.put(KIND, tool, g)));
            if let Err(e) = copied {
                tracing::warn!(error = %e, "approvals remembered before the state directory was known are not kept");
            }
        }
        *current = store;
    }

    fn store(&self) -> Arc<dyn Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How long the grant that lets this call run without asking lasts, if one does.
    pub fn covers(&self, asked: &Asked) -> Option<Lasts> {
        if lock(&self.session).iter().any(|(s, g)| *s == asked.session && g.covers(asked)) {
            return Some(Lasts::Session);
        }
        let stored = self.store().get(KIND, &asked.tool).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "remembered approvals unreadable: the call asks");
            None
        });
        stored.and_then(|b| decode(&asked.tool, &b)).filter(|g| g.covers(asked)).map(|_| Lasts::Always)
    }

    /// Remembers the user's approval of this call; one grant per tool and session (the newer
    /// definition replaces the older one's grant).
    pub fn remember(&self, asked: &Asked, lasts: Lasts) {
        match lasts {
            Lasts::Session => {
                let mut s = lock(&self.session);
                s.retain(|(session, g)| !(*session == asked.session && g.tool == asked.tool));
                s.push((asked.session.clone(), Stored::of(asked)));
            }
            Lasts::Always => {
                let record = serde_json::to_vec(&Stored::of(asked)).unwrap_or_default();
                // Under the read lock: `open` copies the memory store's grants under the write lock.
                let store = self.store.read().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = store.put(KIND, &asked.tool, &record) {
                    tracing::warn!(error = %e, "an approval was not remembered: the tool asks again next time");
                }
            }
        }
    }

    /// Every grant: the sessions' (in memory) and the lasting ones.
    pub fn list(&self) -> Vec<Grant> {
        let mut out: Vec<Grant> = lock(&self.session).iter().map(|(_, g)| g.listed(Lasts::Session)).collect();
        let stored = self.store().list(KIND).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "remembered approvals unreadable");
            Vec::new()
        });
        out.extend(stored.iter().filter_map(|(k, b)| decode(k, b)).map(|g| g.listed(Lasts::Always)));
        out
    }

    /// Revokes the grants of `tool` (every session's and the lasting one), or all of them;
    /// returns how many were revoked.
    pub fn revoke(&self, tool: Option<&str>, all: bool) -> usize {
        let hit = |t: &str| all || tool == Some(t);
        let mut s = lock(&self.session);
        let before = s.len();
        s.retain(|(_, g)| !hit(&g.tool));
        let mut n = before - s.len();
        drop(s);
        let mut gone = 0;
        let revoked = self.store().transact(&mut |tx| {
            gone = 0;
            let keys: Vec<String> = match tool {
                _ if all => tx.list(KIND)?.into_iter().map(|(k, _)| k).collect(),
                Some(t) => vec![t.to_string()],
                None => Vec::new(),
            };
            for k in keys {
                gone += usize::from(tx.delete(KIND, &k)?);
            }
            Ok(())
        });
        match revoked {
            Ok(()) => n += gone,
            Err(e) => tracing::warn!(error = %e, "remembered approvals not revoked"),
        }
        n
    }

    /// A session ended (a gateway client went away): its grants go with it.
    pub fn forget_session(&self, session: &str) {
        lock(&self.session).retain(|(s, _)| s.as_deref() != Some(session));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(tool: &str, binding: &str, session: Option<&str>) -> Asked {
        Asked { tool: tool.into(), server_id: Some("s".into()), binding: binding.into(), session: session.map(str::to_string) }
    }

    #[test]
    fn a_session_grant_covers_its_session_and_definition_only() {
        let g = Grants::default();
        g.remember(&asked("t", "pin:a", Some("one")), Lasts::Session);
        assert_eq!(g.covers(&asked("t", "pin:a", Some("one"))), Some(Lasts::Session));
        assert_eq!(g.covers(&asked("t", "pin:a", Some("two"))), None, "another session");
        assert_eq!(g.covers(&asked("t", "pin:a", None)), None, "the calls with no session");
        assert_eq!(g.covers(&asked("t", "pin:b", Some("one"))), None, "a changed definition");
        assert_eq!(g.covers(&asked("u", "pin:a", Some("one"))), None, "another tool");
        g.forget_session("one");
        assert_eq!(g.covers(&asked("t", "pin:a", Some("one"))), None);
    }

    #[test]
    fn always_survives_a_new_process_and_a_revocation_elsewhere_holds() {
        let dir = tempfile::tempdir().unwrap();
        let first = Grants::default();
        first.open(dir.path());
        first.remember(&asked("t", "def:x", None), Lasts::Always);
        let second = Grants::default();
        second.open(dir.path());
        assert_eq!(second.covers(&asked("t", "def:x", Some("any"))), Some(Lasts::Always));
        assert_eq!(second.list().len(), 1);
        // Another one revokes: the first sees it at its next call.
        assert_eq!(second.revoke(Some("t"), false), 1);
        assert_eq!(first.covers(&asked("t", "def:x", None)), None);
        assert!(!dir.path().join(FILE).exists(), "the old file is never written");
    }

    #[test]
    fn the_old_file_is_imported_once_and_left_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let old = br#"{"formatVersion": 1, "grants": [{"tool": "t", "serverId": "s", "binding": "def:x", "grantedAt": 1700000000}]}"#;
        std::fs::write(dir.path().join(FILE), old).unwrap();
        let g = Grants::default();
        g.open(dir.path());
        assert_eq!(g.covers(&asked("t", "def:x", None)), Some(Lasts::Always));
        assert_eq!(g.list()[0].granted_at, "2023-11-14T22:13:20Z");
        assert_eq!(g.revoke(Some("t"), false), 1);
        assert_eq!(std::fs::read(dir.path().join(FILE)).unwrap(), old, "readable for a downgrade");
        // Imported once: the revocation is not undone by the file at the next start.
        let again = Grants::default();
        again.open(dir.path());
        assert_eq!(again.covers(&asked("t", "def:x", None)), None);
    }

    #[test]
    fn a_corrupt_old_file_imports_nothing_and_stays() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        let g = Grants::default();
        g.open(dir.path());
        assert!(g.list().is_empty());
        g.remember(&asked("t", "def:x", None), Lasts::Always);
        assert_eq!(std::fs::read(dir.path().join(FILE)).unwrap(), b"{not json");
        assert_eq!(Grants::default().tap_open(dir.path()).covers(&asked("t", "def:x", None)), Some(Lasts::Always));
    }

    #[test]
    fn grants_made_before_the_directory_was_known_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let g = Grants::default();
        g.remember(&asked("t", "def:x", None), Lasts::Always);
        assert_eq!(g.covers(&asked("t", "def:x", None)), Some(Lasts::Always), "in memory meanwhile");
        g.open(dir.path());
        assert_eq!(Grants::default().tap_open(dir.path()).covers(&asked("t", "def:x", None)), Some(Lasts::Always));
    }

    #[test]
    fn revoke_all_counts_both_kinds() {
        let g = Grants::default();
        g.remember(&asked("t", "a", None), Lasts::Session);
        g.remember(&asked("u", "a", None), Lasts::Always);
        assert_eq!(g.revoke(None, true), 2);
        assert!(g.list().is_empty());
    }

    impl Grants {
        fn tap_open(self, dir: &Path) -> Grants {
            self.open(dir);
            self
        }
    }
}
