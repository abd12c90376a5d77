//! Live config: `toolreg mcp` polls its `--config` file once a second and takes each valid
//! change (`Gateway::reconfigure`) without a restart.
//!
//! Polling, not file events: portable, one `stat` a second, and an editor that saves by writing
//! a new file and renaming it over the old one is seen as any other write (the path is read,
//! never a handle). The file is read again when its size or mtime moved, or while its mtime is
//! within `RACY` of the last read (a second write in the same mtime tick keeps the stamp), and
//! taken only when its bytes differ from the last read.
//!
//! Invariants: an invalid or unreadable file never replaces the config in force; each problem is
//! logged once (not every second), naming the file and why, and never a value from it (the
//! reasons come from `GatewayConfig::parse`, which masks them).

use super::config::GatewayConfig;
use super::Gateway;
use std::path::{Path, PathBuf};
use std::sync::Weak;
use std::time::{Duration, SystemTime};

const POLL: Duration = Duration::from_secs(1);
/// Coarser than any file system's mtime granularity worth meeting (FAT: 2 s).
const RACY: Duration = Duration::from_secs(2);

/// The config file as `toolreg mcp` read it at start: where it is, and what it said.
pub struct ConfigFile {
    path: PathBuf,
    text: Vec<u8>,
}

impl ConfigFile {
    /// Reads and parses `path`; the error says why it is not a usable config.
    pub fn read(path: &Path) -> Result<(ConfigFile, GatewayConfig), String> {
        let text = std::fs::read(path).map_err(|e| e.to_string())?;
        let cfg = GatewayConfig::from_file(&text, path)?;
        Ok((ConfigFile { path: path.to_path_buf(), text }, cfg))
    }
}

#[derive(Clone, Copy, PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

/// What one look at the file found.
enum Seen {
    Same,
    Changed(GatewayConfig),
    /// Not usable, said for the first time.
    Invalid(String),
}

struct Watcher {
    file: ConfigFile,
    stamp: Option<Stamp>,
    read_at: SystemTime,
    /// The problem last reported, so that it is reported once.
    problem: Option<String>,
}

impl Watcher {
    fn new(file: ConfigFile) -> Watcher {
        // No stamp: the first look reads the file, and finds it the same unless it changed
        // since the start read it.
        Watcher { file, stamp: None, read_at: SystemTime::UNIX_EPOCH, problem: None }
    }

    /// Blocking: a `stat`, and a read when the stamp says the bytes may have changed.
    fn look(&mut self) -> Seen {
        let meta = match std::fs::metadata(&self.file.path) {
            Ok(m) => m,
            Err(e) => return self.invalid(format!("cannot read it: {e}")),
        };
        let stamp = Stamp { len: meta.len(), modified: meta.modified().ok() };
        let racy = match stamp.modified {
            Some(m) => self.read_at.duration_since(m).map_or(true, |d| d < RACY),
            None => true,
        };
        if self.stamp == Some(stamp) && !racy {
            return Seen::Same;
        }
        let text = match std::fs::read(&self.file.path) {
            Ok(t) => t,
            Err(e) => return self.invalid(format!("cannot read it: {e}")),
        };
        self.stamp = Some(stamp);
        self.read_at = SystemTime::now();
        if text == self.file.text {
            self.problem = None;
            return Seen::Same;
        }
        self.file.text = text;
        match GatewayConfig::from_file(&self.file.text, &self.file.path) {
            Ok(cfg) => {
                self.problem = None;
                Seen::Changed(cfg)
            }
            Err(why) => self.invalid(why),
        }
    }

    fn invalid(&mut self, why: String) -> Seen {
        if self.problem.as_ref() == Some(&why) {
            return Seen::Same;
        }
        self.problem = Some(why.clone());
        Seen::Invalid(why)
    }
}

/// Follows the file until the gateway is dropped.
pub(crate) async fn watch(gw: Weak<Gateway>, file: ConfigFile) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut watcher = Watcher::new(file);
    loop {
        tick.tick().await;
        if gw.strong_count() == 0 {
            return;
        }
        let Ok((back, seen)) = tokio::task::spawn_blocking(move || {
            let seen = watcher.look();
            (watcher, seen)
        })
        .await
        else {
            return;
        };
        watcher = back;
        let file = watcher.file.path.display();
        match seen {
            Seen::Same => {}
            Seen::Invalid(why) => {
                tracing::warn!(%file, "config change not applied, the last valid config stays in force: {why}");
                if let Some(gw) = gw.upgrade() {
                    gw.whole.service.audit().record(crate::service::AuditEvent::Reload { applied: false, servers: None, reason: Some(why) });
                }
            }
            Seen::Changed(cfg) => {
                let Some(gw) = gw.upgrade() else { return };
                tracing::info!(%file, servers = cfg.servers.len(), "config changed; applying it");
                gw.reconfigure(cfg).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConfigFile, Seen, Watcher};

    fn seen(w: &mut Watcher) -> &'static str {
        match w.look() {
            Seen::Same => "same",
            Seen::Changed(_) => "changed",
            Seen::Invalid(_) => "invalid",
        }
    }

    #[test]
    fn a_change_is_taken_once_and_a_problem_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.json");
        std::fs::write(&path, r#"{"servers": []}"#).unwrap();
        let (file, _) = ConfigFile::read(&path).unwrap();
        let mut w = Watcher::new(file);
        assert_eq!(seen(&mut w), "same");
        // Same length, same mtime tick: only the bytes tell.
        std::fs::write(&path, r#"{"servers": {}}"#).unwrap();
        assert_eq!(seen(&mut w), "invalid");
        assert_eq!(seen(&mut w), "same", "an unchanged problem is said once");
        // Replaced by rename, as editors save.
        let tmp = dir.path().join("gateway.json.tmp");
        std::fs::write(&tmp, r#"{"servers": [], "gateway": {"defer": "always"}}"#).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert_eq!(seen(&mut w), "changed");
        assert_eq!(seen(&mut w), "same");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(seen(&mut w), "invalid");
        assert_eq!(seen(&mut w), "same");
    }
}
