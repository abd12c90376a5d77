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
//! - An `always` grant lives in `approvals.json` in the face's directory (`cacheDir`, the
//!   gateway's state dir), owner-only, written whole and atomically. The file is read again
//!   whenever it changed on disk, so a revocation by another process (`toolreg approvals
//!   --revoke`) holds from the next call. A file that cannot be read grants nothing (the user
//!   is asked) and is kept aside as `approvals.json.corrupt` at the next write, never lost.
//! - Without a directory, `always` grants last the process's run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

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

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GrantsFile {
    format_version: u32,
    grants: Vec<Stored>,
}

/// The grants of one face (shared by a gateway's profiles).
#[derive(Default)]
pub struct Grants {
    /// (session, grant), for the process's run.
    session: Mutex<Vec<(Option<String>, Stored)>>,
    always: Mutex<Always>,
}

#[derive(Default)]
struct Always {
    dir: Option<PathBuf>,
    grants: Vec<Stored>,
    /// The file as last read (modified time, length); `None`: absent or never read.
    seen: Option<(SystemTime, u64)>,
    /// The file was there but unreadable: kept aside before the next write.
    corrupt: bool,
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

impl Always {
    fn path(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(FILE))
    }

    /// Reads the file again when it changed since last read (a stat otherwise).
    fn refresh(&mut self) {
        let Some(path) = self.path() else { return };
        let stamp = std::fs::metadata(&path).ok().map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        if stamp == self.seen {
            return;
        }
        self.seen = stamp;
        self.corrupt = false;
        self.grants = match crate::catalog::cache::read_bounded(&path, MAX_FILE_BYTES) {
            Ok(bytes) => match serde_json::from_slice::<GrantsFile>(&bytes) {
                Ok(f) if f.format_version == FORMAT_VERSION => f.grants,
                Ok(f) => self.unreadable(&path, &format!("format {} is not ours", f.format_version)),
                Err(e) => self.unreadable(&path, &e.to_string()),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => self.unreadable(&path, &e.to_string()),
        };
    }

    /// Fails closed: no grant from a file we cannot read.
    fn unreadable(&mut self, path: &Path, why: &str) -> Vec<Stored> {
        tracing::warn!(path = %path.display(), why, "remembered approvals unreadable: every gated call asks again");
        self.corrupt = true;
        Vec::new()
    }

    /// Writes the grants whole; a write that fails leaves them in memory for this run.
    fn store(&mut self) {
        let (Some(dir), Some(path)) = (self.dir.clone(), self.path()) else { return };
        if self.corrupt {
            let aside = dir.join(format!("{FILE}.corrupt"));
            if let Err(e) = std::fs::rename(&path, &aside) {
                tracing::warn!(path = %path.display(), error = %e, "could not keep the unreadable approvals file aside");
            }
            self.corrupt = false;
        }
        let file = GrantsFile { format_version: FORMAT_VERSION, grants: self.grants.clone() };
        let written = serde_json::to_vec_pretty(&file)
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::create_dir_all(&dir).and_then(|()| crate::catalog::cache::write_private(&path, &bytes)));
        match written {
            Ok(()) => self.seen = std::fs::metadata(&path).ok().map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len())),
            Err(e) => tracing::warn!(path = %path.display(), error = %e, "remembered approvals not written: they last this run only"),
        }
    }
}

impl Grants {
    /// Keeps `always` grants in `dir` from now on (once; a later directory is ignored), and
    /// reads what is there. Blocking: a small file.
    pub fn open(&self, dir: &Path) {
        let mut a = lock(&self.always);
        if a.dir.is_some() {
            return;
        }
        let kept = std::mem::take(&mut a.grants);
        a.dir = Some(dir.to_path_buf());
        a.refresh();
        // Granted before the directory was known: kept, and written with the file's.
        if !kept.is_empty() {
            for g in kept {
                a.grants.retain(|s| s.tool != g.tool);
                a.grants.push(g);
            }
            a.store();
        }
    }

    /// How long the grant that lets this call run without asking lasts, if one does.
    pub fn covers(&self, asked: &Asked) -> Option<Lasts> {
        if lock(&self.session).iter().any(|(s, g)| *s == asked.session && g.covers(asked)) {
            return Some(Lasts::Session);
        }
        let mut a = lock(&self.always);
        a.refresh();
        a.grants.iter().any(|g| g.covers(asked)).then_some(Lasts::Always)
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
                let mut a = lock(&self.always);
                a.refresh();
                a.grants.retain(|g| g.tool != asked.tool);
                a.grants.push(Stored::of(asked));
                a.store();
            }
        }
    }

    /// Every grant: the sessions' (in memory) and the lasting ones.
    pub fn list(&self) -> Vec<Grant> {
        let mut out: Vec<Grant> = lock(&self.session).iter().map(|(_, g)| g.listed(Lasts::Session)).collect();
        let mut a = lock(&self.always);
        a.refresh();
        out.extend(a.grants.iter().map(|g| g.listed(Lasts::Always)));
        out
    }

    /// Revokes the grants of `tool` (every session's and the lasting one), or all of them;
    /// returns how many were revoked.
    pub fn revoke(&self, tool: Option<&str>, all: bool) -> usize {
        let hit = |g: &Stored| all || tool == Some(g.tool.as_str());
        let mut s = lock(&self.session);
        let before = s.len();
        s.retain(|(_, g)| !hit(g));
        let mut n = before - s.len();
        drop(s);
        let mut a = lock(&self.always);
        a.refresh();
        let before = a.grants.len();
        a.grants.retain(|g| !hit(g));
        if a.grants.len() != before {
            n += before - a.grants.len();
            a.store();
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
    fn always_survives_a_new_process_and_a_revocation_on_disk_holds() {
        let dir = tempfile::tempdir().unwrap();
        let first = Grants::default();
        first.open(dir.path());
        first.remember(&asked("t", "def:x", None), Lasts::Always);
        let second = Grants::default();
        second.open(dir.path());
        assert_eq!(second.covers(&asked("t", "def:x", Some("any"))), Some(Lasts::Always));
        assert_eq!(second.list().len(), 1);
        // Another process revokes: the first sees it at its next call.
        assert_eq!(second.revoke(Some("t"), false), 1);
        assert_eq!(first.covers(&asked("t", "def:x", None)), None);
    }

    #[test]
    fn a_corrupt_file_grants_nothing_and_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        let g = Grants::default();
        g.open(dir.path());
        assert!(g.list().is_empty());
        g.remember(&asked("t", "def:x", None), Lasts::Always);
        assert_eq!(std::fs::read(dir.path().join(format!("{FILE}.corrupt"))).unwrap(), b"{not json");
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
