//! Finding a command in a list of folders, the same on every platform: the Windows rules
//! (`PATHEXT`) are plain data here, so they are tested on Linux with a simulated folder layout.

use std::path::{Path, PathBuf};

/// What a folder holds under a name, as the search needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Missing,
    /// A file that may be run (Unix: an execute bit; Windows: any file).
    Runnable,
    /// A file without the right to run it (Unix: no execute bit), or a folder.
    NotRunnable,
}

/// The outcome of a search: the first runnable match, or the first match that could not be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    Runnable(PathBuf),
    NotRunnable(PathBuf),
    Missing,
}

/// The names `command` may have on disk. `pathext` (Windows' `PATHEXT`, `;`-separated):
/// a command already ending in one of its extensions is tried as is, any other with each
/// extension in turn, never bare (npm ships an extensionless `npx` shell script beside
/// `npx.cmd`, which Windows cannot run). `None`: the name as is (Unix).
pub fn candidates(command: &str, pathext: Option<&str>) -> Vec<String> {
    let Some(pathext) = pathext else { return vec![command.to_owned()] };
    let exts: Vec<&str> = pathext.split(';').map(str::trim).filter(|e| e.starts_with('.')).collect();
    let lower = command.to_ascii_lowercase();
    if exts.iter().any(|e| lower.ends_with(&e.to_ascii_lowercase())) {
        return vec![command.to_owned()];
    }
    exts.iter().map(|e| format!("{command}{}", e.to_ascii_lowercase())).collect()
}

/// The first folder of `dirs` holding `command` (by `candidates`), as `probe` sees the disk.
pub fn search(dirs: &[PathBuf], command: &str, pathext: Option<&str>, probe: impl Fn(&Path) -> Probe) -> Found {
    let names = candidates(command, pathext);
    let mut unrunnable = None;
    for dir in dirs {
        for name in &names {
            let path = dir.join(name);
            match probe(&path) {
                Probe::Runnable => return Found::Runnable(path),
                Probe::NotRunnable if unrunnable.is_none() => unrunnable = Some(path),
                _ => {}
            }
        }
    }
    unrunnable.map_or(Found::Missing, Found::NotRunnable)
}

/// The disk as this platform sees it.
pub fn probe_disk(path: &Path) -> Probe {
    let Ok(meta) = std::fs::metadata(path) else { return Probe::Missing };
    if !meta.is_file() {
        return Probe::NotRunnable;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Probe::NotRunnable;
        }
    }
    Probe::Runnable
}

/// Whether `command` names a file rather than a program to look for: a path with a folder in it.
pub fn is_path(command: &str) -> bool {
    command.contains('/') || (cfg!(windows) && command.contains('\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows' rules on a folder layout as npm, Node.js and Python's installers leave it,
    /// simulated by names (this test runs on Linux): every file there is runnable.
    #[test]
    fn pathext_finds_the_cmd_shim_never_the_bare_script() {
        let layout = [
            r"C:\Program Files\nodejs\node.exe",
            r"C:\Program Files\nodejs\npx",
            r"C:\Program Files\nodejs\npx.cmd",
            r"C:\Program Files\nodejs\npx.ps1",
            r"C:\Users\me\AppData\Roaming\npm\tsx.CMD",
            r"C:\Users\me\.local\bin\uvx.exe",
            r"C:\Tools\run.bat",
        ];
        let dirs: Vec<PathBuf> =
            [r"C:\Windows\system32", r"C:\Program Files\nodejs", r"C:\Users\me\AppData\Roaming\npm", r"C:\Users\me\.local\bin", r"C:\Tools"]
                .iter()
                .map(PathBuf::from)
                .collect();
        // `Path::join` on Linux puts `/` between the parts: compare as the simulated disk names them.
        let probe = |p: &Path| {
            let name = p.to_string_lossy().replace('/', "\\");
            if layout.iter().any(|f| f.eq_ignore_ascii_case(&name)) { Probe::Runnable } else { Probe::Missing }
        };
        let pathext = Some(".COM;.EXE;.BAT;.CMD;.VBS;.JS");
        let found = |cmd: &str| match search(&dirs, cmd, pathext, probe) {
            Found::Runnable(p) => p.to_string_lossy().replace('/', "\\"),
            other => format!("{other:?}"),
        };
        assert_eq!(found("npx"), r"C:\Program Files\nodejs\npx.cmd");
        assert_eq!(found("node"), r"C:\Program Files\nodejs\node.exe");
        assert_eq!(found("tsx"), r"C:\Users\me\AppData\Roaming\npm\tsx.cmd");
        assert_eq!(found("uvx.exe"), r"C:\Users\me\.local\bin\uvx.exe");
        assert_eq!(found("run"), r"C:\Tools\run.bat");
        assert_eq!(found("python"), "Missing");
        // Extensions are tried in PATHEXT's order, folders first: the first folder wins.
        assert_eq!(candidates("npx", Some(".EXE;.CMD")), ["npx.exe", "npx.cmd"]);
        assert_eq!(candidates("a.Cmd", Some(".EXE;.CMD")), ["a.Cmd"]);
        assert_eq!(candidates("npx", None), ["npx"]);
    }

    #[test]
    fn a_file_without_its_execute_bit_is_reported_when_nothing_else_runs() {
        let (a, b) = (PathBuf::from("/a"), PathBuf::from("/b"));
        let probe = |p: &Path| match p.to_str() {
            Some("/a/srv") => Probe::NotRunnable,
            Some("/b/srv") => Probe::Runnable,
            _ => Probe::Missing,
        };
        assert_eq!(search(&[a.clone(), b.clone()], "srv", None, probe), Found::Runnable(b.join("srv")));
        assert_eq!(search(std::slice::from_ref(&a), "srv", None, probe), Found::NotRunnable(a.join("srv")));
    }
}
