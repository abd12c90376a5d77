//! The default profile: which paths a confined server may read and write, derived from how it
//! is started. System and runtime directories are readable, temp and package caches writable,
//! and the paths the configuration names (absolute paths in `args`, also inside a `sh -c`
//! script, `env` values, `cwd`) are readable and writable; the rest of the home directory is
//! closed.
//!
//! Why each list holds what it holds:
//! - `SYSTEM_READ`: programs, libraries, `/etc` (what the user may read of it: the secret files
//!   there are not the user's), `/proc` (runtimes read their own; another process's `environ`
//!   or `mem` stays closed, since Landlock refuses ptrace-mode access outside the domain), `/sys`
//!   (cgroup limits, CPU topology), the systemd resolver's `resolv.conf`.
//! - `HOME_READ`: where version managers keep runtimes (nvm, pyenv, rustup...), never a dotfile
//!   that holds credentials (`~/.cargo` only for `bin`: `credentials.toml` sits beside it).
//! - `HOME_WRITE`: package caches, so `npx -y` and `uvx` install and run as they do unconfined.
//! - A named path inside a `node_modules` (or `site-packages`) tree opens that tree read-only:
//!   `node /x/node_modules/pkg/dist/index.js` needs its dependencies beside it, not write access
//!   to them. A named path that does not exist yet (a memory file) opens its parent, so the
//!   server can create it; never the home directory or `/` themselves: those must be named in
//!   `sandbox.write` to be opened.

use std::path::{Path, PathBuf};

const SYSTEM_READ: &[&str] =
    &["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/nix", "/snap", "/proc", "/sys", "/run/systemd/resolve"];
const SYSTEM_WRITE: &[&str] = &["/tmp", "/var/tmp", "/dev"];
const HOME_READ: &[&str] =
    &[".nvm", ".volta", ".fnm", ".pyenv", ".rustup", ".bun", ".deno", ".asdf", ".local/lib", ".local/bin", ".local/share/mise", ".cargo/bin"];
const HOME_WRITE: &[&str] = &[
    ".npm", ".cache/uv", ".cache/pip", ".cache/node", ".cache/node-gyp", ".cache/pypoetry", ".cache/deno", ".cache/pnpm",
    ".local/share/uv", ".local/share/pnpm", ".cargo/registry", ".cargo/git",
];
/// Directories whose contents a named path inside them needs whole, read-only.
const PACKAGE_TREES: &[&str] = &["node_modules", "site-packages", "dist-packages"];

/// How a server is started, as the profile needs it; env values are plain here and are shown
/// only by their keys.
pub struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: Vec<(&'a str, &'a str)>,
    pub cwd: Option<&'a str>,
}

/// One path opened to the server; `shown` is what the status says (`$KEY` for an env value).
#[derive(Clone, Debug, PartialEq)]
pub struct Grant {
    pub path: PathBuf,
    pub shown: String,
    pub writable: bool,
    /// One of the fixed system paths (`SYSTEM_READ`, `SYSTEM_WRITE`), not named by the
    /// configuration: `/tmp` opened this way is the server's own (`private.rs`).
    pub fixed: bool,
}

#[derive(Default)]
pub struct Grants {
    pub list: Vec<Grant>,
    /// Named paths left closed, and why.
    pub notes: Vec<String>,
}

impl Grants {
    fn add(&mut self, path: PathBuf, shown: String, writable: bool) {
        self.add_as(path, shown, writable, false);
    }
    fn add_as(&mut self, path: PathBuf, shown: String, writable: bool, fixed: bool) {
        if let Some(g) = self.list.iter_mut().find(|g| g.path == path) {
            g.writable |= writable;
            g.fixed &= fixed;
        } else {
            self.list.push(Grant { path, shown, writable, fixed });
        }
    }
}

impl Launch<'_> {
    pub(super) fn env_var(&self, key: &str) -> Option<String> {
        match self.env.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => Some((*v).to_owned()),
            None => std::env::var(key).ok(),
        }
    }

    pub(super) fn home(&self) -> Option<PathBuf> {
        self.env_var("HOME").filter(|h| h.starts_with('/') && h.len() > 1).map(PathBuf::from)
    }
}

/// The default profile for `launch`, widened by the policy's `read` and `write` lists.
pub fn grants(launch: &Launch, read: &[String], write: &[String]) -> Grants {
    let mut g = Grants::default();
    let home = launch.home();
    for p in SYSTEM_READ {
        g.add_as(PathBuf::from(p), (*p).to_owned(), false, true);
    }
    for p in SYSTEM_WRITE {
        g.add_as(PathBuf::from(p), (*p).to_owned(), true, true);
    }
    // `TMPDIR=/tmp` names the temp the server gets anyway (its own), not the host's.
    let temp = |t: &String| SYSTEM_WRITE.iter().any(|s| std::fs::canonicalize(t).is_ok_and(|c| c == Path::new(s)));
    if let Some(tmp) = launch.env_var("TMPDIR").filter(|t| t.starts_with('/') && !temp(t)) {
        named(&mut g, home.as_deref(), Path::new(&tmp), "$TMPDIR".into());
    }
    if let Some(home) = &home {
        for (list, writable) in [(HOME_READ, false), (HOME_WRITE, true)] {
            for p in list {
                g.add(home.join(p), format!("~/{p}"), writable);
            }
        }
    }
    command_dirs(&mut g, launch, home.as_deref());
    for word in launch.args.iter().flat_map(|a| path_words(a)) {
        named(&mut g, home.as_deref(), Path::new(word), word.to_owned());
    }
    for (key, value) in &launch.env {
        if value.starts_with('/') && !value.contains(':') {
            named(&mut g, home.as_deref(), Path::new(value), format!("${key}"));
        }
    }
    if let Some(cwd) = launch.cwd {
        named(&mut g, home.as_deref(), Path::new(cwd), cwd.to_owned());
    }
    for (list, writable) in [(read, false), (write, true)] {
        for p in list {
            let path = expand(p, home.as_deref());
            if path.exists() {
                g.add(path, p.clone(), writable);
            } else {
                g.notes.push(format!("{p} does not exist: not opened"));
            }
        }
    }
    g
}

/// The absolute paths an argument names: the argument itself, the value of a `--flag=/path`,
/// or the words of a shell script (`sh -c "exec '/opt/srv/bin/server' --db /data/x"`), quotes
/// and a trailing `;` taken off.
pub(super) fn path_words(arg: &str) -> impl Iterator<Item = &str> {
    arg.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"' || c == ';'))
        .map(|w| w.split_once('=').map_or(w, |(_, v)| v).trim_matches(|c| c == '\'' || c == '"'))
        .filter(|w| w.starts_with('/'))
}

pub(super) fn expand(p: &str, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if p == "~" => home.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(p)),
        _ => PathBuf::from(p),
    }
}

/// Too wide to open by being named: `/`, the home directory, and anything above it.
pub(super) fn too_wide(p: &Path, home: Option<&Path>) -> bool {
    p.parent().is_none() || home.is_some_and(|h| h.starts_with(p))
}

fn named(g: &mut Grants, home: Option<&Path>, p: &Path, shown: String) {
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if is_socket(&p) {
        // `SSH_AUTH_SOCK` passed on in `env` is not a grant: a socket opens by `sandbox.sockets` only.
        g.notes.push(format!("{shown} is a socket: not opened (name it in sandbox.sockets to reach it)"));
        return;
    }
    if let Some(tree) = p.ancestors().find(|a| a.file_name().is_some_and(|n| PACKAGE_TREES.iter().any(|t| n == *t))) {
        g.add(tree.to_path_buf(), format!("{shown} (its package tree, read-only)"), false);
        return;
    }
    let (target, shown) = if p.exists() {
        (p.clone(), shown)
    } else {
        match p.parent().filter(|d| d.is_dir()) {
            // Not the shared /tmp for one file to come: it is made in the server's own.
            Some(d) if SYSTEM_WRITE.iter().any(|t| d == Path::new(t)) => {
                g.notes.push(format!("{shown} does not exist: made in the server's own {}, gone when it stops (create it first to keep it)", d.display()));
                return;
            }
            Some(d) => (d.to_path_buf(), format!("{shown} (its directory, to create it)")),
            None => return,
        }
    };
    if too_wide(&target, home) {
        g.notes.push(format!("{shown} is the home directory or above it: not opened (name it in sandbox.write to open it)"));
        return;
    }
    if target.is_file() {
        if let Some(dir) = target.parent().filter(|d| !too_wide(d, home)) {
            g.add(dir.to_path_buf(), format!("{shown} (its directory)"), false);
        }
    }
    g.add(target, shown, true);
}

/// The command's own directory (and its install prefix for a `bin`, `sbin` or `shims`
/// directory: a runtime's libraries sit beside its `bin`), and each directory of `PATH`,
/// readable: a server started through `npx` or a shim runs other programs from there.
fn command_dirs(g: &mut Grants, launch: &Launch, home: Option<&Path>) {
    let path_var = launch.env_var("PATH").unwrap_or_default();
    let dirs: Vec<&str> = path_var.split(':').filter(|d| d.starts_with('/')).collect();
    let found = if launch.command.contains('/') {
        let base = launch.cwd.map(PathBuf::from).or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        Some(base.join(launch.command))
    } else {
        dirs.iter().map(|d| Path::new(d).join(launch.command)).find(|p| p.is_file())
    };
    let mut exe_dirs: Vec<PathBuf> = Vec::new();
    if let Some(exe) = found {
        exe_dirs.extend(exe.parent().map(Path::to_path_buf));
        if let Ok(real) = std::fs::canonicalize(&exe) {
            exe_dirs.extend(real.parent().map(Path::to_path_buf));
        }
    }
    for dir in exe_dirs {
        let prefix = dir.parent().filter(|_| dir.file_name().is_some_and(|n| n == "bin" || n == "sbin" || n == "shims"));
        let prefix = prefix.filter(|p| !too_wide(p, home) && home.is_none_or(|h| *p != h.join(".local")));
        let shown = format!("{} (the command's)", prefix.unwrap_or(&dir).display());
        if !too_wide(&dir, home) {
            g.add(prefix.unwrap_or(&dir).to_path_buf(), shown, false);
        }
    }
    // A `PATH` the configuration sets is an env value: shown by its key only.
    let configured = launch.env.iter().any(|(k, _)| *k == "PATH");
    for (i, d) in dirs.iter().enumerate() {
        if !too_wide(Path::new(d), home) {
            let shown = if configured { format!("$PATH entry {}", i + 1) } else { format!("{d} (PATH)") };
            g.add(PathBuf::from(d), shown, false);
        }
    }
}

/// Whether `p` is a Unix socket (following links).
pub fn is_socket(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_socket())
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        false
    }
}
