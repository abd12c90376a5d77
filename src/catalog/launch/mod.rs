//! Which program a stdio server's `command` names, and the `PATH` it starts with (issue 53):
//! a desktop app launched from a dock inherits a bare `PATH`, while the user's runtimes
//! (nvm, Homebrew, mise, Volta...) are on their login shell's. Searched in order:
//! 1. `spawn.paths` (the host's bundled runtimes), then the `PATH` the server would get (its
//!    configuration's `env.PATH`, else ours);
//! 2. with `shellEnv: auto` (the default off Windows), the login shell's `PATH` (`shell.rs`);
//! 3. the folders runtime managers use (`runtimes.rs`).
//! A command with a folder in it runs as given. The server starts with the folder it was found
//! in on its `PATH` (after `spawn.paths`), so `npx`'s `#!/usr/bin/env node` finds the `node`
//! beside it; its sandbox then opens that folder read-only (`confine::profile`'s command and
//! `PATH` folders). Nothing is found: `Missing`, naming every folder looked in.
//! Windows (tested under Wine: tests/windows/): the only code of its own is reading
//! `PATHEXT` and `USERPROFILE` here; the search itself is `search.rs`'s, tested on Linux. A
//! `.cmd` or `.bat` found is started by the standard library's `Command`, which runs batch files
//! through `cmd.exe` with its own argument escaping.

mod runtimes;
pub mod search;
mod shell;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::{ServerConfig, Transport};
use crate::secret::Secret;
use search::{Found, Probe};

/// `spawn` in `initialize` and in the gateway's `gateway` block.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SpawnSettings {
    /// `auto` (default on Linux and macOS): a command not found on the inherited `PATH` is
    /// looked for on the login shell's (`$SHELL -ilc`, read once, bounded) and in the usual
    /// runtime folders. `never`: only `paths` and the inherited `PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_env: Option<ShellEnv>,
    /// Folders searched first for a server's `command` and put at the front of its `PATH`
    /// (a host's bundled runtimes: its own `bun`, `uv`, `node`). Absolute paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ShellEnv {
    Auto,
    Never,
}

impl SpawnSettings {
    fn shell(&self) -> bool {
        self.shell_env.unwrap_or(if cfg!(windows) { ShellEnv::Never } else { ShellEnv::Auto }) == ShellEnv::Auto
    }

    /// `paths` that are absolute (a relative folder would depend on each server's `cwd`).
    fn front(&self) -> Vec<PathBuf> {
        self.paths.iter().map(PathBuf::from).filter(|p| p.is_absolute()).collect()
    }

    /// A `paths` entry that is not absolute, for `initialize` and the config to refuse.
    pub fn check(&self) -> Result<(), String> {
        match self.paths.iter().find(|p| !Path::new(p).is_absolute()) {
            Some(p) => Err(format!("spawn.paths: {p:?} is not an absolute path")),
            None => Ok(()),
        }
    }
}

/// Why a command cannot be started, with every folder that was looked in.
#[derive(Debug, PartialEq)]
pub enum Missing {
    NotFound { looked_in: Vec<PathBuf> },
    /// A match that may not be run (no execute bit, or a folder).
    NotExecutable { path: PathBuf, looked_in: Vec<PathBuf> },
}

/// `config` as it is started: `command` the program found, `env.PATH` the folders it needs.
/// HTTP servers come back unchanged.
pub async fn resolve(config: &ServerConfig, settings: &SpawnSettings) -> Result<ServerConfig, Missing> {
    let Transport::Stdio { command, env, cwd, .. } = &config.transport else { return Ok(config.clone()) };
    let front = settings.front();
    let configured = env.get("PATH").map(|p| p.expose().to_owned());
    let base: Vec<PathBuf> = match &configured {
        Some(p) => std::env::split_paths(p).collect(),
        None => std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default(),
    };
    let pathext = if cfg!(windows) { std::env::var("PATHEXT").ok() } else { None };
    let mut looked_in: Vec<PathBuf> = Vec::new();
    let mut unrunnable = None;
    let mut found = |dirs: &[PathBuf], looked_in: &mut Vec<PathBuf>| {
        looked_in.extend(dirs.iter().filter(|d| !looked_in.contains(d)).cloned().collect::<Vec<_>>());
        match search::search(dirs, command, pathext.as_deref(), search::probe_disk) {
            Found::Runnable(p) => Some(p),
            Found::NotRunnable(p) => {
                unrunnable.get_or_insert(p);
                None
            }
            Found::Missing => None,
        }
    };
    // The PATH is set only when it differs from the one the child gets anyway.
    let started = |program: Option<&Path>, path: Option<Vec<PathBuf>>| started(config, program, path);
    let inherited = front.is_empty();
    if search::is_path(command) {
        let at = cwd.as_deref().map_or_else(|| PathBuf::from(command), |c| Path::new(c).join(command));
        return match search::probe_disk(&at) {
            Probe::Runnable => Ok(started(None, (!inherited).then(|| [front.clone(), base].concat()))),
            Probe::NotRunnable => Err(Missing::NotExecutable { path: at, looked_in: Vec::new() }),
            Probe::Missing => Err(Missing::NotFound { looked_in: at.parent().map(Path::to_path_buf).into_iter().collect() }),
        };
    }
    let first = [front.clone(), base.clone()].concat();
    if let Some(program) = found(&first, &mut looked_in) {
        return Ok(started(Some(&program), (!inherited).then_some(first)));
    }
    let login = if settings.shell() { shell::cached().await.unwrap_or_default() } else { Vec::new() };
    if let Some(program) = found(&login, &mut looked_in) {
        return Ok(started(Some(&program), Some([front.clone(), login.clone(), base.clone()].concat())));
    }
    let home = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from);
    let known = if settings.shell() { runtimes::folders(home.as_deref()) } else { Vec::new() };
    for dir in &known {
        if let Some(program) = found(std::slice::from_ref(dir), &mut looked_in) {
            return Ok(started(Some(&program), Some([front.clone(), vec![dir.clone()], login, base].concat())));
        }
    }
    match unrunnable {
        Some(path) => Err(Missing::NotExecutable { path, looked_in }),
        None => Err(Missing::NotFound { looked_in }),
    }
}

/// Whether `command` is runnable from the inherited `PATH` (no login shell asked): which of a
/// registry document's packages this machine can run (`mcp_registry`).
pub fn on_path(command: &str) -> bool {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    let pathext = if cfg!(windows) { std::env::var("PATHEXT").ok() } else { None };
    matches!(search::search(&dirs, command, pathext.as_deref(), search::probe_disk), Found::Runnable(_))
}

/// `config` with `program` as its command and, when given, `path` as its `PATH` (duplicates
/// dropped).
fn started(config: &ServerConfig, program: Option<&Path>, path: Option<Vec<PathBuf>>) -> ServerConfig {
    let mut out = config.clone();
    let Transport::Stdio { command, env, .. } = &mut out.transport else { return out };
    if let Some(program) = program {
        *command = program.to_string_lossy().into_owned();
    }
    let mut seen = Vec::new();
    for dir in path.into_iter().flatten() {
        if !seen.contains(&dir) {
            seen.push(dir);
        }
    }
    if let Some(joined) = std::env::join_paths(&seen).ok().filter(|_| !seen.is_empty()) {
        env.insert("PATH".into(), Secret::new(joined.to_string_lossy().into_owned()));
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn server(command: &str, env: serde_json::Value) -> ServerConfig {
        serde_json::from_value(serde_json::json!({"id": "s", "name": "s", "transport": {"type": "stdio", "command": command, "env": env}})).unwrap()
    }

    fn runnable(dir: &Path, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn stdio(c: &ServerConfig) -> (String, Option<String>) {
        let Transport::Stdio { command, env, .. } = &c.transport else { panic!() };
        (command.clone(), env.get("PATH").map(|p| p.expose().to_owned()))
    }

    #[tokio::test]
    async fn spawn_paths_come_first_and_lead_the_path() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        runnable(a.path(), "srv");
        let mine = runnable(b.path(), "srv");
        let settings = SpawnSettings { shell_env: Some(ShellEnv::Never), paths: vec![b.path().display().to_string()] };
        let env = serde_json::json!({"PATH": a.path().display().to_string()});
        let (command, path) = stdio(&resolve(&server("srv", env), &settings).await.unwrap());
        assert_eq!(command, mine.display().to_string());
        assert_eq!(path.unwrap(), format!("{}:{}", b.path().display(), a.path().display()));
    }

    #[tokio::test]
    async fn a_missing_command_names_every_folder_and_a_plain_file_is_not_executable() {
        let a = tempfile::tempdir().unwrap();
        let settings = SpawnSettings { shell_env: Some(ShellEnv::Never), paths: vec![] };
        let env = serde_json::json!({"PATH": a.path().display().to_string()});
        assert_eq!(resolve(&server("srv", env.clone()), &settings).await, Err(Missing::NotFound { looked_in: vec![a.path().to_owned()] }));
        std::fs::write(a.path().join("srv"), "").unwrap();
        let Err(Missing::NotExecutable { path, .. }) = resolve(&server("srv", env), &settings).await else { panic!() };
        assert_eq!(path, a.path().join("srv"));
        assert!(SpawnSettings { shell_env: None, paths: vec!["rel/bin".into()] }.check().is_err());
    }
}
