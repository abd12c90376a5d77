//! The server's own view of the shared directories, made in its mount namespace: a fresh
//! tmpfs over `/tmp`, `/var/tmp` and `/dev/shm` (writable, its own, gone when its last process
//! exits), and over `/run`, `$XDG_RUNTIME_DIR` and the home (closed, as Landlock keeps them). Each one is empty but
//! for what the profile opens beneath it, bound back at the same path.
//!
//! Why mounts and not Landlock alone: below ABI 9 Landlock does not rule `connect()` to a path
//! socket, so a server could reach every socket it can name: the ssh-agent under `/tmp/ssh-*`,
//! X11 under `/tmp/.X11-unix`, the session bus and gpg-agent under `/run/user/<uid>`, Docker
//! under `/run`, gpg-agent and ssh ControlMaster sockets under the home. A path that does not
//! exist in its namespace cannot be named. And a shared `/tmp` holds other programs' files.
//!
//! A directory the configuration names whole (`/tmp` as an argument, the home in
//! `sandbox.write`) stays the host's: the user asked for it.

use std::path::{Path, PathBuf};

use super::profile::Grant;

/// Shared temp directories: each server gets its own, writable.
const TEMP: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];
/// Runtime sockets (the user's session under `/run/user/<uid>`, Docker, the system bus).
const RUN: &str = "/run";

/// A fresh tmpfs over `path`.
#[derive(Clone, Debug, PartialEq)]
pub struct Private {
    pub path: PathBuf,
    /// The server may write in it (a temp directory), else it stays closed as before.
    pub writable: bool,
}

#[derive(Debug, Default, PartialEq)]
pub struct Layout {
    pub dirs: Vec<Private>,
    /// Host paths bound back at the same path inside a private directory (outermost only).
    pub binds: Vec<PathBuf>,
}

/// The private directories for a server with these grants and sockets, and what is bound back.
/// `runtime` is `$XDG_RUNTIME_DIR`, hidden wherever it is (its sockets are the session's).
pub fn layout(grants: &[Grant], sockets: &[PathBuf], home: Option<&Path>, runtime: Option<&Path>) -> Layout {
    let mut candidates: Vec<Private> = TEMP.iter().map(|p| Private { path: PathBuf::from(p), writable: true }).collect();
    candidates.push(Private { path: PathBuf::from(RUN), writable: false });
    for dir in [home, runtime].into_iter().flatten().filter(|d| !super::profile::too_wide(d, None)) {
        candidates.push(Private { path: dir.to_path_buf(), writable: false });
    }
    // A real directory (not a link to one), not named whole by the configuration.
    candidates.retain(|c| {
        std::fs::canonicalize(&c.path).is_ok_and(|real| real == c.path && real.is_dir())
            && !grants.iter().any(|g| !g.fixed && c.path.starts_with(&g.path))
    });
    // One inside another (a home under /tmp) is hidden by the outer one already.
    let all = candidates.clone();
    candidates.retain(|c| !all.iter().any(|o| o.path != c.path && c.path.starts_with(&o.path)));
    let mut wanted: Vec<PathBuf> = grants.iter().map(|g| g.path.clone()).chain(sockets.iter().cloned()).collect();
    wanted.retain(|p| p.exists() && candidates.iter().any(|c| p.starts_with(&c.path) && *p != c.path));
    wanted.sort();
    wanted.dedup();
    let mut binds: Vec<PathBuf> = Vec::new();
    for p in wanted {
        if !binds.iter().any(|b| p.starts_with(b)) {
            binds.push(p);
        }
    }
    Layout { dirs: candidates, binds }
}
