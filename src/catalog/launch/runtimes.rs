//! Folders where runtime managers and installers put `node`, `npx`, `uvx`, `bun` and the like,
//! searched after the login shell's `PATH`: a shell whose startup files could not be read (or
//! that sets its `PATH` only for interactive terminals) still leaves them on disk.

use std::path::{Path, PathBuf};

/// The folders that exist, in order: nvm's default version, fnm's default, Volta, asdf and
/// mise shims, Homebrew (Apple silicon, Intel, Linux), then the user's own bins.
pub fn folders(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(home) = home {
        let nvm = std::env::var_os("NVM_DIR").map(PathBuf::from).unwrap_or_else(|| home.join(".nvm"));
        out.extend(nvm_default(&nvm));
        let fnm = std::env::var_os("FNM_DIR").map(PathBuf::from);
        for dir in fnm.into_iter().chain([home.join(".local/share/fnm"), home.join(".fnm")]) {
            out.push(dir.join("aliases/default/bin"));
        }
        out.push(home.join(".volta/bin"));
        out.push(home.join(".asdf/shims"));
        out.push(home.join(".local/share/mise/shims"));
    }
    out.extend(["/opt/homebrew/bin", "/usr/local/bin", "/home/linuxbrew/.linuxbrew/bin"].map(PathBuf::from));
    if let Some(home) = home {
        out.extend([".local/bin", ".cargo/bin", ".bun/bin"].map(|d| home.join(d)));
    }
    out.retain(|d| d.is_dir());
    out
}

/// nvm's default version's `bin`: `alias/default` names a version or a prefix of one (`20`,
/// `v20.11.0`); anything else (`lts/*`, `node`) takes the newest installed.
fn nvm_default(nvm: &Path) -> Option<PathBuf> {
    let alias = std::fs::read_to_string(nvm.join("alias/default")).unwrap_or_default();
    let want = alias.trim().trim_start_matches('v').to_owned();
    let installed = std::fs::read_dir(nvm.join("versions/node")).ok()?;
    let mut versions: Vec<(Vec<u64>, String)> = installed
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| Some((numbers(name.strip_prefix('v')?)?, name)))
        .collect();
    versions.sort();
    let numeric = want.chars().next().is_some_and(|c| c.is_ascii_digit());
    let pick = versions.iter().rev().find(|(_, name)| !numeric || matches_prefix(&name[1..], &want))?;
    Some(nvm.join("versions/node").join(&pick.1).join("bin"))
}

fn numbers(version: &str) -> Option<Vec<u64>> {
    version.split('.').map(|p| p.parse().ok()).collect()
}

/// `20` matches `20.11.0`, `20.11` matches `20.11.0`, but `2` does not match `20.1.0`.
fn matches_prefix(version: &str, want: &str) -> bool {
    version == want || version.starts_with(&format!("{want}."))
}

#[cfg(test)]
mod tests {
    #[test]
    fn nvm_default_takes_the_newest_version_its_alias_names() {
        let nvm = tempfile::tempdir().unwrap();
        for v in ["v18.19.0", "v20.9.0", "v20.11.1", "v2.0.0"] {
            std::fs::create_dir_all(nvm.path().join("versions/node").join(v).join("bin")).unwrap();
        }
        std::fs::create_dir_all(nvm.path().join("alias")).unwrap();
        let default = |alias: &str| {
            std::fs::write(nvm.path().join("alias/default"), alias).unwrap();
            super::nvm_default(nvm.path()).unwrap().strip_prefix(nvm.path()).unwrap().to_string_lossy().into_owned()
        };
        assert_eq!(default("20\n"), "versions/node/v20.11.1/bin");
        assert_eq!(default("v18.19.0"), "versions/node/v18.19.0/bin");
        assert_eq!(default("2"), "versions/node/v2.0.0/bin");
        assert_eq!(default("lts/*"), "versions/node/v20.11.1/bin");
    }
}
