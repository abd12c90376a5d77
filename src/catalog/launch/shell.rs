//! The login shell's `PATH`, as a terminal would have it: a desktop app started from a dock or
//! a start menu inherits a bare `PATH` (`/usr/bin:/bin`), while nvm, Homebrew, mise or Volta
//! add their folders in the shell's startup files. Read the way editors resolve a GUI launch's
//! environment: `$SHELL -ilc` printing `env` between markers, bounded by `TIMEOUT`, once per
//! process (`cached`). Only `PATH` is taken from it.

use std::path::PathBuf;
use std::time::Duration;

/// How long the shell may take; a slow or hanging startup file costs this once, then nothing.
pub const TIMEOUT: Duration = Duration::from_secs(10);
const BEGIN: &str = "__TOOLREG_ENV_BEGIN__";
const END: &str = "__TOOLREG_ENV_END__";

/// The login shell's `PATH` folders; `None` when it could not be read (logged once).
pub async fn cached() -> Option<Vec<PathBuf>> {
    static PATH: tokio::sync::OnceCell<Option<Vec<PathBuf>>> = tokio::sync::OnceCell::const_new();
    PATH.get_or_init(read).await.clone()
}

/// `$SHELL`, else the user's login shell from the password database, else `/bin/sh`; and its
/// arguments (`-ilc` for shells that take it, `-lc` for `sh`, which may not be interactive).
fn shell() -> (String, Vec<&'static str>) {
    let shell = std::env::var("SHELL").ok().filter(|s| s.starts_with('/')).or_else(passwd_shell);
    match shell {
        Some(s) if !s.ends_with("/sh") => (s, vec!["-i", "-l", "-c"]),
        Some(s) => (s, vec!["-l", "-c"]),
        None => ("/bin/sh".into(), vec!["-l", "-c"]),
    }
}

#[cfg(unix)]
fn passwd_shell() -> Option<String> {
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: getpwuid_r writes into `pwd` and `buf`, both ours and sized as passed.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(libc::getuid(), &mut pwd, buf.as_mut_ptr().cast(), buf.len(), &mut out);
        if rc != 0 || out.is_null() || pwd.pw_shell.is_null() {
            return None;
        }
        let shell = std::ffi::CStr::from_ptr(pwd.pw_shell).to_string_lossy().into_owned();
        shell.starts_with('/').then_some(shell)
    }
}

#[cfg(not(unix))]
fn passwd_shell() -> Option<String> {
    None
}

async fn read() -> Option<Vec<PathBuf>> {
    let (shell, flags) = shell();
    let script = format!("echo {BEGIN}; env; echo {END}");
    let mut cmd = tokio::process::Command::new(&shell);
    cmd.args(&flags)
        .arg(script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0); // its own group: an interactive shell must not take our terminal
    let out = match tokio::time::timeout(TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            tracing::warn!(shell, error = %e, "cannot read the login shell's PATH");
            return None;
        }
        Err(_) => {
            tracing::warn!(shell, timeout_ms = TIMEOUT.as_millis() as u64, "the login shell did not print its environment in time; its PATH is not used");
            return None;
        }
    };
    let path = path_of(&String::from_utf8_lossy(&out.stdout));
    if path.is_none() {
        tracing::warn!(shell, "the login shell printed no PATH");
    }
    path
}

/// `PATH` from `env`'s output between the markers (startup files may print around them).
fn path_of(out: &str) -> Option<Vec<PathBuf>> {
    let (_, rest) = out.split_once(BEGIN)?;
    let (env, _) = rest.split_once(END)?;
    let value = env.lines().find_map(|l| l.strip_prefix("PATH="))?;
    Some(std::env::split_paths(value).filter(|p| p.is_absolute()).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn path_is_read_between_the_markers_only() {
        let out = "PATH=/from/motd\n__TOOLREG_ENV_BEGIN__\nHOME=/h\nPATH=/h/.nvm/bin:relative:/usr/bin\nMYPATH=/x\n__TOOLREG_ENV_END__\nPATH=/late\n";
        assert_eq!(super::path_of(out), Some(vec!["/h/.nvm/bin".into(), "/usr/bin".into()]));
        assert_eq!(super::path_of("PATH=/x\n"), None);
    }
}
