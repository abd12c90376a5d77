//! Child processes of stdio MCP servers, which belong to the sidecar: when it exits, for any
//! reason, none may be left behind.
//!
//! Invariants:
//! - Every child runs in its own process group (so stopping it reaches its own children too)
//!   with PDEATHSIG=SIGKILL (so a SIGKILLed sidecar still takes it along).
//! - PDEATHSIG fires when the *spawning thread* exits, not the process, and tokio may retire a
//!   worker thread into the blocking pool; so children are spawned from one dedicated thread
//!   that lives as long as the process.
//! - A child's stderr is drained to EOF into `tracing` (never our stdout, which is the host
//!   protocol); a full pipe would otherwise hang the child.
//! - Env values are never logged, only their keys.

use std::sync::OnceLock;

use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;

use crate::secret::Secret;

pub(crate) struct ChildProc {
    pub pgid: i32,
    pub exited: watch::Receiver<Option<String>>,
}

impl ChildProc {
    /// Take ownership: a task reaps the child and publishes why it exited.
    pub fn own(mut child: tokio::process::Child) -> Self {
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        let (exit_tx, exited) = watch::channel(None);
        tokio::spawn(async move {
            let text = match child.wait().await {
                Ok(s) => format!("server process exited ({s})"),
                Err(e) => format!("server process lost: {e}"),
            };
            let _ = exit_tx.send(Some(text));
        });
        ChildProc { pgid, exited }
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        kill_group(self.pgid, libc::SIGKILL);
    }
}

pub(crate) fn kill_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        // SAFETY: plain syscall; a negative pid addresses the group we created for the child.
        unsafe { libc::kill(-pgid, signal) };
    }
}

type SpawnJob = Box<dyn FnOnce() + Send>;

/// The thread children are spawned from: it never exits, so PDEATHSIG only fires when the
/// whole process dies.
fn spawner() -> &'static std::sync::mpsc::Sender<SpawnJob> {
    static SPAWNER: OnceLock<std::sync::mpsc::Sender<SpawnJob>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("toolreg-mcp-spawner".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })
            .expect("spawn the MCP spawner thread");
        tx
    })
}

pub(crate) async fn spawn(
    server_id: &str,
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, Secret>,
    cwd: Option<&str>,
) -> Result<tokio::process::Child, String> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v.expose())))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before prctl: then nobody will ever kill us.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("parent exited during spawn"));
                }
                Ok(())
            });
        }
    }
    tracing::info!(server = server_id, command, ?args, env_keys = ?env.keys().collect::<Vec<_>>(), "starting MCP server");
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: SpawnJob = Box::new(move || {
        let _guard = runtime.enter();
        let _ = tx.send(cmd.spawn());
    });
    spawner().send(job).map_err(|_| "spawner thread is gone".to_owned())?;
    match rx.await {
        Ok(Ok(child)) => Ok(child),
        Ok(Err(e)) => Err(format!("cannot start `{command}`: {e}")),
        Err(_) => Err("spawner thread dropped the request".into()),
    }
}

pub(crate) async fn forward_stderr(server_id: String, stderr: tokio::process::ChildStderr) {
    // Keep draining to EOF whatever the bytes are: a child blocked on a full stderr pipe hangs.
    let mut reader = tokio::io::BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                buf.truncate(4096);
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end();
                tracing::info!(target: "toolreg::mcp::stderr", server = %server_id, "{line}");
            }
        }
    }
}
