//! Child processes of stdio MCP servers, which belong to the sidecar: when it exits, for any
//! reason, none may be left behind.
//!
//! Invariants:
//! - Every child runs in its own process group (so stopping it reaches its own children too)
//!   with PDEATHSIG=SIGKILL (so a SIGKILLed sidecar still takes it along).
//! - A SIGKILLed sidecar runs no code, and PDEATHSIG reaches only the direct child: a server
//!   behind `sh -c 'server; …'` (or any wrapper that forks) would outlive us. So each child's
//!   group is also registered with a reaper: a small `/bin/sh` loop, in its own process group
//!   and deaf to HUP/INT/TERM, reading `add PGID` / `del PGID` lines from a pipe only we hold.
//!   When we die, for any reason, the pipe closes and it SIGKILLs every group still registered.
//!   Not covered: a server that leaves its group (`setsid`, daemonizing), and a reaper that was
//!   itself SIGKILLed (then PDEATHSIG alone still covers direct children). A group is
//!   deregistered when we kill it, so a recycled pgid is not hit later.
//! - PDEATHSIG fires when the *spawning thread* exits, not the process, and tokio may retire a
//!   worker thread into the blocking pool; so children are spawned from one dedicated thread
//!   that lives as long as the process.
//! - A child's stderr is drained to EOF into `tracing` (never our stdout, which is the host
//!   protocol); a full pipe would otherwise hang the child. It is read in fixed chunks and a
//!   logged line is capped, so no amount of stderr grows our memory.
//! - Env values are never logged, only their keys; and what the server prints of them (or of any
//!   secret toolreg knows for it) is redacted from the log (`secret::redactor`), a line cut by the
//!   cap included.
//! - Other Unix systems (compiled, not run here: docs/install.md) keep the process groups and the
//!   reaper but have no PDEATHSIG. On Windows (built and tested under Wine: tests/windows/tree.rs)
//!   each child goes into a job object that the OS kills when its handle closes, at the latest
//!   when the sidecar dies (a grandchild started before the assignment escapes it).

use std::sync::OnceLock;

use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::secret::redactor::{self, Redactor};

/// The signals `kill_group` sends (Unix values; ignored where there are no signals).
#[cfg(unix)]
pub(crate) const SIGTERM: i32 = libc::SIGTERM;
#[cfg(unix)]
pub(crate) const SIGKILL: i32 = libc::SIGKILL;
#[cfg(not(unix))]
pub(crate) const SIGTERM: i32 = 15;
#[cfg(not(unix))]
pub(crate) const SIGKILL: i32 = 9;

pub(crate) struct ChildProc {
    pub pgid: i32,
    pub exited: watch::Receiver<Option<String>>,
    /// How it ended, set before `exited` is (`catalog::diagnosis`).
    pub status: std::sync::Arc<OnceLock<std::process::ExitStatus>>,
}

impl ChildProc {
    /// Take ownership: a task reaps the child and publishes why it exited; for a confined
    /// server, with the sandbox in force and the last denial it printed (`Denials`), so a
    /// server that dies of its sandbox is not a bare "exited".
    pub fn own(mut child: tokio::process::Child, confined: Option<(String, Denials)>) -> Self {
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        let (exit_tx, exited) = watch::channel(None);
        let status = std::sync::Arc::new(OnceLock::new());
        let set = status.clone();
        tokio::spawn(async move {
            let mut text = match child.wait().await {
                Ok(s) => {
                    let _ = set.set(s);
                    format!("server process exited ({s})")
                }
                Err(e) => format!("server process lost: {e}"),
            };
            if let Some((policy, denials)) = confined {
                // Its last stderr lines may still be in the pipe: give them a moment.
                let _ = tokio::time::timeout(std::time::Duration::from_millis(300), denials.done.notified()).await;
                match super::lock(&denials.last).clone() {
                    Some(line) => text.push_str(&format!("; denied by its sandbox: {line} (sandbox {policy})")),
                    None => text.push_str(&format!("; it ran in a sandbox: {policy}")),
                }
            }
            let _ = exit_tx.send(Some(text));
        });
        ChildProc { pgid, exited, status }
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        kill_group(self.pgid, SIGKILL);
        reaper_send("del", self.pgid);
        #[cfg(windows)]
        job::release(self.pgid);
    }
}

#[cfg(unix)]
const REAPER_SCRIPT: &str = r#"trap '' HUP INT TERM
groups=' '
while read -r op pg; do
  case $op in
    add) groups="$groups$pg " ;;
    del) rest=' '; for g in $groups; do [ "$g" = "$pg" ] || rest="$rest$g "; done; groups=$rest ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
"#;

/// The write end of the reaper's pipe; `None` when it could not be started (logged once).
#[cfg(unix)]
fn reaper() -> &'static std::sync::Mutex<Option<std::process::ChildStdin>> {
    static REAPER: OnceLock<std::sync::Mutex<Option<std::process::ChildStdin>>> = OnceLock::new();
    REAPER.get_or_init(|| {
        use std::os::unix::process::CommandExt;
        let started = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(REAPER_SCRIPT)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn();
        let stdin = match started {
            Ok(mut child) => child.stdin.take(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the MCP child reaper; servers behind a wrapper may outlive a killed sidecar");
                None
            }
        };
        std::sync::Mutex::new(stdin)
    })
}

#[cfg(not(unix))]
fn reaper_send(_op: &str, _pgid: i32) {}

#[cfg(unix)]
fn reaper_send(op: &str, pgid: i32) {
    use std::io::Write;
    if pgid <= 0 {
        return;
    }
    let mut pipe = super::lock(reaper());
    if let Some(w) = pipe.as_mut() {
        if w.write_all(format!("{op} {pgid}\n").as_bytes()).is_err() {
            *pipe = None;
        }
    }
}

pub(crate) fn kill_group(pgid: i32, signal: i32) {
    #[cfg(unix)]
    if pgid > 0 {
        // SAFETY: plain syscall; a negative pid addresses the group we created for the child.
        unsafe { libc::kill(-pgid, signal) };
    }
    #[cfg(windows)]
    {
        let _ = signal; // no polite stop on Windows: the job is terminated
        job::terminate(pgid);
    }
    #[cfg(not(any(unix, windows)))]
    let _ = (pgid, signal);
}

/// Windows: one job object per child, created with KILL_ON_JOB_CLOSE, keyed by the child's pid.
#[cfg(windows)]
mod job {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation, SetInformationJobObject,
        TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    };
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

    struct Job(HANDLE);
    // SAFETY: a job handle may be used and closed from any thread.
    unsafe impl Send for Job {}

    fn jobs() -> &'static Mutex<HashMap<i32, Job>> {
        static JOBS: OnceLock<Mutex<HashMap<i32, Job>>> = OnceLock::new();
        JOBS.get_or_init(Mutex::default)
    }

    /// Puts process `pid` into a job of its own; the OS kills the job when our handle closes.
    pub fn adopt(pid: i32) {
        // SAFETY: Win32 calls on handles we own; the info struct is plain data, zeroed then set.
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                tracing::warn!(pid, "cannot create a job object; the MCP server may outlive a killed sidecar");
                return;
            }
            let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            let size = std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32;
            let set = SetInformationJobObject(job, JobObjectExtendedLimitInformation, (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(), size);
            let process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid as u32);
            let assigned = !process.is_null() && set != 0 && AssignProcessToJobObject(job, process) != 0;
            if !process.is_null() {
                CloseHandle(process);
            }
            if !assigned {
                tracing::warn!(pid, "cannot assign the MCP server to a job object; it may outlive a killed sidecar");
                CloseHandle(job);
                return;
            }
            super::super::lock(jobs()).insert(pid, Job(job));
        }
    }

    pub fn terminate(pid: i32) {
        if let Some(job) = super::super::lock(jobs()).get(&pid) {
            // SAFETY: a live job handle of ours.
            unsafe { TerminateJobObject(job.0, 1) };
        }
    }

    pub fn release(pid: i32) {
        if let Some(job) = super::super::lock(jobs()).remove(&pid) {
            // SAFETY: closing our last handle kills what is left in the job (KILL_ON_JOB_CLOSE).
            unsafe { CloseHandle(job.0) };
        }
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

/// Starts a stdio server, confined as its configuration says (`confine`); the child and the
/// sandbox report. A sandbox the configuration asks for and the kernel cannot give is an `Err`
/// naming why: the server is not started.
pub(crate) async fn spawn(
    config: &super::config::ServerConfig,
) -> Result<(tokio::process::Child, crate::confine::SandboxReport), String> {
    let super::config::Transport::Stdio { command, args, env, cwd } = &config.transport else {
        return Err("not a stdio server".into());
    };
    let (server_id, cwd) = (config.id.as_str(), cwd.as_deref());
    let launch = config.launch().ok_or("not a stdio server")?;
    let confinement = crate::confine::prepare(config.sandbox.as_ref(), &launch)
        .map_err(|report| format!("sandbox {}", report.summary()))?;
    let report = confinement.report.clone();
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v.expose())))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    if confinement.enforced() {
        // The user's session sockets stay unnamed unless the configuration passes one on.
        for var in crate::confine::SESSION_VARS.iter().filter(|v| !env.contains_key(**v)) {
            cmd.env_remove(var);
        }
    }
    #[cfg(unix)]
    if confinement.enforced() {
        // SAFETY: `enter` only makes syscalls on what `prepare` built (confine/enter.rs).
        unsafe { cmd.pre_exec(move || confinement.enter()) };
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
    tracing::info!(server = server_id, command, ?args, env_keys = ?env.keys().collect::<Vec<_>>(), sandbox = %report.summary(), "starting MCP server");
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: SpawnJob = Box::new(move || {
        let _guard = runtime.enter();
        let spawned = cmd.spawn();
        if let Ok(child) = &spawned {
            reaper_send("add", child.id().map_or(0, |p| p as i32));
            #[cfg(windows)]
            job::adopt(child.id().map_or(0, |p| p as i32));
        }
        let _ = tx.send(spawned);
    });
    spawner().send(job).map_err(|_| "spawner thread is gone".to_owned())?;
    match rx.await {
        Ok(Ok(child)) => Ok((child, report)),
        Ok(Err(e)) if report.state == crate::confine::SandboxState::Enforced => {
            Err(format!("cannot start `{command}` in its sandbox: {e} (sandbox {})", report.summary()))
        }
        Ok(Err(e)) => Err(format!("cannot start `{command}`: {e}{}", batch_refusal(command, &e))),
        Err(_) => Err("spawner thread dropped the request".into()),
    }
}

/// Why the standard library refuses to start a `.cmd` or `.bat` server (`InvalidInput`): its
/// arguments pass through `cmd.exe`, which a line break or NUL in one would cut short.
fn batch_refusal(command: &str, e: &std::io::Error) -> &'static str {
    let batch = [".cmd", ".bat"].iter().any(|x| command.to_ascii_lowercase().ends_with(x));
    if cfg!(windows) && batch && e.kind() == std::io::ErrorKind::InvalidInput {
        " (a .cmd or .bat server is run by cmd.exe, which cannot be given an argument with a line break or NUL safely: remove it from `args`)"
    } else {
        ""
    }
}

/// The last line a confined server wrote on stderr that reads as a refusal (EACCES, EPERM,
/// ENETUNREACH...), redacted as the log is; `done` fires when its stderr ends.
#[derive(Clone, Default)]
pub(crate) struct Denials {
    last: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    done: std::sync::Arc<tokio::sync::Notify>,
    /// The last `TAIL` lines, as logged (redacted), for `diagnosis.stderrTail`.
    tail: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The directories the server sees its own empty copy of (`SandboxReport::private`): a
    /// path beneath one that is "not found" was hidden by the sandbox, not absent.
    hidden: std::sync::Arc<Vec<String>>,
}

/// How many of a server's last stderr lines a diagnosis quotes.
const TAIL: usize = 10;

/// Words with which programs report what a sandbox refused (libc's `strerror`, Node's codes).
const DENIAL_WORDS: &[&str] =
    &["Permission denied", "Operation not permitted", "EACCES", "EPERM", "Network is unreachable", "ENETUNREACH", "Resource temporarily unavailable", "Cannot allocate memory", "ENOMEM"];

/// How programs report a path that is not there.
const NOT_FOUND_WORDS: &[&str] = &["No such file or directory", "ENOENT"];

impl Denials {
    pub(crate) fn hiding(private: &[String]) -> Denials {
        Denials { hidden: std::sync::Arc::new(private.iter().map(|d| format!("{}/", d.trim_end_matches('/'))).collect()), ..Denials::default() }
    }

    /// The last lines it wrote and the last refusal among them, once its stderr ended (or
    /// after `wait`: a grandchild may hold the pipe open).
    pub async fn tail(&self, wait: std::time::Duration) -> (Vec<String>, Option<String>) {
        let notified = self.done.notified();
        if !self.ended.load(std::sync::atomic::Ordering::Acquire) {
            let _ = tokio::time::timeout(wait, notified).await;
        }
        let tail = super::lock(&self.tail).iter().filter(|l| !l.is_empty()).cloned().collect();
        (tail, super::lock(&self.last).clone())
    }

    fn note(&self, line: &str) {
        {
            let mut tail = super::lock(&self.tail);
            if tail.len() == TAIL {
                tail.pop_front();
            }
            tail.push_back(line.chars().take(300).collect());
        }
        let hidden = || NOT_FOUND_WORDS.iter().any(|w| line.contains(w)) && self.hidden.iter().any(|d| line.contains(d.as_str()));
        if DENIAL_WORDS.iter().any(|w| line.contains(w)) || hidden() {
            let cut: String = line.chars().take(300).collect();
            *super::lock(&self.last) = Some(cut);
        }
    }
}

/// The most of one stderr line that is logged; the rest of the line is counted and dropped.
const MAX_LOGGED_LINE: usize = 4096;

/// `redactor` (the server's secret values) stays registered until the child's stderr ends: the
/// log writer redacts them from every line, this one included.
pub(crate) async fn forward_stderr(server_id: String, mut stderr: tokio::process::ChildStderr, _redactor: Redactor, denials: Denials) {
    // Keep draining to EOF whatever the bytes are: a child blocked on a full stderr pipe hangs.
    // Read in fixed chunks, never "until newline": a server writing gigabytes without one
    // must not grow our memory. A line is joined across chunks before it is logged, so a secret
    // split between two reads is whole when it is redacted.
    let mut chunk = vec![0u8; 16 * 1024];
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut dropped = 0usize;
    let log = |line: &[u8], dropped: usize| {
        let text = String::from_utf8_lossy(whole_chars(line, dropped > 0));
        let text = redactor::logged(text.trim_end());
        denials.note(&text);
        if dropped > 0 {
            // The line was cut: its tail may be the start of a secret whose rest was dropped.
            let kept = redactor::cut_partial(&text);
            let dropped = dropped + text.len() - kept.len();
            tracing::info!(target: "toolreg::mcp::stderr", server = %server_id, "{kept} [... {dropped} more bytes]");
        } else {
            tracing::info!(target: "toolreg::mcp::stderr", server = %server_id, "{text}");
        }
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for piece in chunk[..n].split_inclusive(|b| *b == b'\n') {
            let room = MAX_LOGGED_LINE - line.len();
            let body = piece.strip_suffix(b"\n").unwrap_or(piece);
            line.extend_from_slice(&body[..body.len().min(room)]);
            dropped += body.len().saturating_sub(room);
            if piece.ends_with(b"\n") {
                log(&line, dropped);
                line.clear();
                dropped = 0;
            }
        }
    }
    if !line.is_empty() || dropped > 0 {
        log(&line, dropped);
    }
    denials.ended.store(true, std::sync::atomic::Ordering::Release);
    // Both the exit watcher (`ChildProc::own`) and a diagnosis may be waiting.
    denials.done.notify_waiters();
    denials.done.notify_one();
}

/// `line` without a last character that the cap cut in two (it would decode as U+FFFD and hide
/// a secret's prefix from `cut_partial`).
fn whole_chars(line: &[u8], cut: bool) -> &[u8] {
    match std::str::from_utf8(line) {
        Err(e) if cut && e.error_len().is_none() => &line[..e.valid_up_to()],
        _ => line,
    }
}
