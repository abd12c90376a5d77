//! Confinement of stdio MCP servers: what a server may read and write, whether it has a
//! network, and how much of the machine it may take. A server is untrusted code running as the
//! user; this module keeps it from the user's secrets, from toolreg and from other servers.
//!
//! Applied in the child between fork and exec (`std`'s `pre_exec`), not by re-executing
//! toolreg: everything that allocates (the Landlock ruleset with its rules, the uid map, the
//! limits) is built here in the parent, and the child only makes syscalls (`enter.rs`). That
//! keeps the child async-signal-safe, costs no second exec, and works for any program that
//! links the library (the unit tests, the benches), not only for the `toolreg` binary. All of
//! it is inherited across exec and fork, so whatever the server starts is confined as well.
//!
//! What a confined server gets (`SECURITY.md` "Stdio servers in a sandbox"):
//! - Landlock: every filesystem right denied except the profile's paths (`profile.rs`);
//!   signals and abstract Unix sockets scoped to its own domain (ABI 6), so it can signal
//!   neither toolreg nor another server; ptrace and `/proc/<pid>/{environ,mem}` of processes
//!   outside its domain refused (any ABI).
//! - A user namespace mapping only the user's own ids, so `RLIMIT_NPROC` counts the server's
//!   processes alone; with `network: false`, a network namespace with no interface up, and
//!   Landlock's TCP rules (ABI 4) denying bind and connect.
//! - A mount namespace with its own `/tmp`, `/var/tmp` and `/dev/shm`, and `/run` and the home
//!   emptied but for what the profile opens (`private.rs`): no socket of the user's session
//!   (ssh-agent, X11, the session bus, gpg-agent, Docker) can be named, since Landlock below ABI
//!   9 does not rule `connect()`; from ABI 9 Landlock refuses it as well. The variables that
//!   name those sockets are not passed on (`SESSION_VARS`); `sandbox.sockets` opens one by name.
//! - SandboxLimits: writable memory (`RLIMIT_DATA`: what a process really allocates, not the address
//!   space V8 and glibc reserve), processes, open files, CPU seconds, and no core dumps.
//!
//! Invariants: an explicit `sandbox` (true or an object) is a demand: when the kernel cannot
//! give all of it, the server does not start and `refused` says why. The implicit default gives
//! what the kernel has and says what it lacks. Env values appear in reports by key only.

#[cfg(target_os = "linux")]
mod enter;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(not(target_os = "linux"))]
#[path = "elsewhere.rs"]
mod landlock;
mod private;
mod profile;

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use profile::Launch;

/// A stdio server's confinement: `true` (the default profile), `false` (none), or a policy
/// that widens or narrows the default profile. Absent: the default profile where the kernel
/// supports it (Linux with Landlock), else none, as `catalog/status` says.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum Sandbox {
    Switch(bool),
    Policy(SandboxPolicy),
}

/// The default profile, widened by `read`/`write` and narrowed by `network` and the limits.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxPolicy {
    /// More paths the server may read (absolute, or `~/...`), beneath each one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// More paths the server may read and write (absolute, or `~/...`), beneath each one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// `false`: no network at all (a network namespace of its own, no TCP bind or connect).
    #[serde(default = "yes")]
    pub network: bool,
    /// Unix sockets of the user's session the server may connect to (absolute, or `~/...`),
    /// each exactly that socket: `["/run/user/1000/gnupg/S.gpg-agent"]`. Its variable
    /// (`SSH_AUTH_SOCK`...) is passed only when the server's `env` sets it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<String>,
    /// SandboxLimits narrower or wider than the default ones.
    #[serde(default, skip_serializing_if = "SandboxLimits::is_unset")]
    pub limits: SandboxLimits,
}

fn yes() -> bool {
    true
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy { read: vec![], write: vec![], network: true, sockets: vec![], limits: SandboxLimits::default() }
    }
}

impl<'de> Deserialize<'de> for Sandbox {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(b) => Ok(Sandbox::Switch(b)),
            v @ serde_json::Value::Object(_) => serde_json::from_value(v).map(Sandbox::Policy).map_err(|e| D::Error::custom(format!("sandbox: {e}"))),
            other => Err(D::Error::custom(format!("sandbox must be true, false or an object, not {other}"))),
        }
    }
}

/// What confines a server, as `catalog/status` and `toolreg mcp --check` show it.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SandboxReport {
    pub state: SandboxState,
    /// Why it is off or refused, what the kernel could not give, named paths left closed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Paths readable (beneath each); an env value is shown as `$KEY`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readable: Vec<String>,
    /// Paths readable and writable (beneath each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// Directories the server sees its own copy of, empty but for the paths above bound back:
    /// its own `/tmp`, `/var/tmp`, `/dev/shm` (gone when it stops), `/run`, the home.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private: Vec<String>,
    /// Unix sockets of the user's session it may connect to (`sandbox.sockets`); none by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<String>,
    /// Whether the server has a network.
    pub network: bool,
    pub limits: SandboxLimits,
    /// Whether the server may write core dumps (never when confined: a core holds its memory).
    pub core_dumps: bool,
    /// The kernel's Landlock ABI version (0: none).
    pub landlock_abi: u32,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SandboxState {
    /// The server runs confined as described.
    Enforced,
    /// The server runs unconfined: `sandbox: false`, or the default on a kernel without Landlock.
    Off,
    /// The configuration asks for what the kernel cannot give: the server is not started.
    Refused,
}

/// Resource limits of a confined server (absent: none, or in a policy the default).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxLimits {
    /// Writable memory in MiB (`RLIMIT_DATA`: what is allocated, not the address space a
    /// runtime reserves); default 2048.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Processes and threads at once (`RLIMIT_NPROC`, counted in the server's own user
    /// namespace); default 256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Open files (`RLIMIT_NOFILE`); default 4096.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u64>,
    /// CPU seconds over the server's whole life (`RLIMIT_CPU`); default none, since a server
    /// lives as long as toolreg does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<u64>,
}

impl SandboxLimits {
    fn is_unset(&self) -> bool {
        *self == SandboxLimits::default()
    }
}

const DEFAULT_MEMORY_MB: u64 = 2048;
const DEFAULT_PROCESSES: u64 = 256;
const DEFAULT_OPEN_FILES: u64 = 4096;

/// What the kernel offers, probed once per process.
#[derive(Clone, Copy, Debug)]
struct Kernel {
    abi: landlock::Abi,
    /// A user namespace with a mount namespace in which a tmpfs mounts (probed, not assumed).
    user_namespaces: bool,
}

/// The variables that name the user's session sockets: a confined server gets them only from
/// its own `env`.
pub const SESSION_VARS: &[&str] = &["SSH_AUTH_SOCK", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "GPG_AGENT_INFO"];

/// `$TOOLREG_LANDLOCK_ABI_MAX` caps the ABI toolreg uses, as if the kernel were older: to see
/// what a server gets, or is refused, on such a kernel (0: as without Landlock).
pub const ABI_MAX_VAR: &str = "TOOLREG_LANDLOCK_ABI_MAX";

fn kernel() -> Kernel {
    static KERNEL: OnceLock<Kernel> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        let cap = std::env::var(ABI_MAX_VAR).ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(u32::MAX);
        let abi = landlock::Abi(landlock::Abi::probe().0.min(cap));
        Kernel { abi, user_namespaces: user_namespaces() && can_mount() }
    })
}

/// Whether this user may create a user namespace with its own id mapped (no sysctl forbids it,
/// nor Ubuntu's AppArmor restriction, under which an unprivileged one has no capabilities).
#[cfg(unix)]
fn user_namespaces() -> bool {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    // SAFETY: a plain getter.
    let root = unsafe { libc::geteuid() } == 0;
    let max_ok = read("/proc/sys/user/max_user_namespaces").is_none_or(|v| v != "0");
    let clone_ok = root || read("/proc/sys/kernel/unprivileged_userns_clone").is_none_or(|v| v != "0");
    let apparmor_ok = root || read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").is_none_or(|v| v != "1");
    max_ok && clone_ok && apparmor_ok
}

#[cfg(not(unix))]
fn user_namespaces() -> bool {
    false
}

#[cfg(target_os = "linux")]
fn can_mount() -> bool {
    enter::can_mount()
}

#[cfg(not(target_os = "linux"))]
fn can_mount() -> bool {
    false
}

/// A server's confinement, ready for its child: `prepared` runs between fork and exec.
pub struct Confinement {
    pub report: SandboxReport,
    #[cfg(target_os = "linux")]
    prepared: Option<enter::Prepared>,
    #[cfg(not(target_os = "linux"))]
    prepared: Option<std::convert::Infallible>,
}

impl Confinement {
    /// The child's part; `Ok` at once when the server runs unconfined.
    pub fn enter(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        return self.prepared.as_ref().map_or(Ok(()), enter::Prepared::enter);
        #[cfg(not(target_os = "linux"))]
        Ok(())
    }
    pub fn enforced(&self) -> bool {
        self.prepared.is_some()
    }
}

/// The plan for one server: its report, and what to build for the child (built on Linux only:
/// elsewhere every plan is `without` a sandbox).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Plan {
    report: SandboxReport,
    grants: Vec<profile::Grant>,
    namespaces: bool,
    layout: private::Layout,
    sockets: Vec<std::path::PathBuf>,
    cwd: Option<std::path::PathBuf>,
}

impl Plan {
    fn without(report: SandboxReport) -> Plan {
        Plan { report, grants: vec![], namespaces: false, layout: private::Layout::default(), sockets: vec![], cwd: None }
    }
}

fn plan(sandbox: Option<&Sandbox>, launch: &Launch) -> Plan {
    let k = kernel();
    let (policy, explicit) = match sandbox {
        Some(Sandbox::Switch(false)) => {
            return Plan::without(off(k, "sandbox: false in the configuration".into()))
        }
        Some(Sandbox::Switch(true)) => (SandboxPolicy::default(), true),
        Some(Sandbox::Policy(p)) => (p.clone(), true),
        None => (SandboxPolicy::default(), false),
    };
    let mut missing = Vec::new();
    if k.abi.0 == 0 {
        missing.push("the kernel has no Landlock (Linux 5.13 or later, enabled in the LSM list)".to_owned());
    } else if !k.abi.has_scopes() {
        missing.push(format!("signals and abstract sockets are not scoped: Landlock ABI {} < 6 (Linux 6.12)", k.abi.0));
    }
    if !policy.network && !k.abi.has_tcp() && k.abi.0 > 0 {
        missing.push(format!("TCP is not ruled by Landlock ABI {} < 4; the network namespace alone removes the network", k.abi.0));
    }
    if !k.user_namespaces {
        missing.push("no user and mount namespaces: no private /tmp, the user's session sockets (ssh-agent, X11, the session bus) stay reachable, the process limit counts all the user's processes, and `network: false` cannot be given".into());
    }
    if cfg!(not(target_os = "linux")) {
        missing = vec!["no sandbox on this platform (Linux only)".into()];
    }
    let network_impossible = !policy.network && !k.user_namespaces;
    if explicit && !missing.is_empty() {
        let mut report = off(k, String::new());
        report.state = SandboxState::Refused;
        report.notes = missing;
        report.notes.push("the configuration asks for a sandbox: the server is not started (set sandbox: false to run it unconfined)".into());
        return Plan::without(report);
    }
    if k.abi.0 == 0 || cfg!(not(target_os = "linux")) || network_impossible {
        let mut report = off(k, "the default profile, which the kernel cannot give here".into());
        report.notes.extend(missing);
        return Plan::without(report);
    }
    let mut grants = profile::grants(launch, &policy.read, &policy.write);
    let namespaces = k.user_namespaces;
    let home = launch.home();
    let mut sockets = Vec::new();
    let mut sockets_shown = Vec::new();
    for p in &policy.sockets {
        let path = profile::expand(p, home.as_deref());
        if profile::is_socket(&path) {
            sockets.push(std::fs::canonicalize(&path).unwrap_or(path));
            sockets_shown.push(p.clone());
        } else {
            grants.notes.push(format!("{p} is not a socket: not opened"));
        }
    }
    let shown = |w: bool| grants.list.iter().filter(|g| g.writable == w && g.path.exists()).map(|g| g.shown.clone()).collect();
    let runtime = launch.env_var("XDG_RUNTIME_DIR").filter(|d| d.starts_with('/')).map(std::path::PathBuf::from);
    let layout = if namespaces { private::layout(&grants.list, &sockets, home.as_deref(), runtime.as_deref()) } else { private::Layout::default() };
    let asked = policy.limits;
    let limits = SandboxLimits {
        memory_mb: Some(asked.memory_mb.unwrap_or(DEFAULT_MEMORY_MB)),
        processes: namespaces.then(|| asked.processes.unwrap_or(DEFAULT_PROCESSES)),
        open_files: Some(asked.open_files.unwrap_or(DEFAULT_OPEN_FILES)),
        cpu_seconds: asked.cpu_seconds,
    };
    let mut notes = missing;
    notes.extend(grants.notes);
    let report = SandboxReport {
        state: SandboxState::Enforced,
        notes,
        readable: shown(false),
        writable: shown(true),
        private: layout.dirs.iter().map(|d| d.path.display().to_string()).collect(),
        sockets: sockets_shown,
        network: policy.network,
        limits,
        core_dumps: false,
        landlock_abi: k.abi.0,
    };
    let cwd = launch.cwd.map(std::path::PathBuf::from).or_else(|| std::env::current_dir().ok());
    Plan { report, grants: grants.list, namespaces, layout, sockets, cwd }
}

fn off(k: Kernel, why: String) -> SandboxReport {
    SandboxReport {
        state: SandboxState::Off,
        notes: if why.is_empty() { vec![] } else { vec![why] },
        readable: vec![],
        writable: vec![],
        private: vec![],
        sockets: vec![],
        network: true,
        limits: SandboxLimits::default(),
        core_dumps: true,
        landlock_abi: k.abi.0,
    }
}

/// The report alone, without building anything (for a status before the server starts).
pub fn describe(sandbox: Option<&Sandbox>, launch: &Launch) -> SandboxReport {
    plan(sandbox, launch).report
}

/// Builds the server's confinement. `Err` (with the report saying why) when the configuration
/// asks for a sandbox that cannot be given: the server must not start.
pub fn prepare(sandbox: Option<&Sandbox>, launch: &Launch) -> Result<Confinement, Box<SandboxReport>> {
    let plan = plan(sandbox, launch);
    match plan.report.state {
        SandboxState::Refused => return Err(Box::new(plan.report)),
        SandboxState::Off => return Ok(Confinement { report: plan.report, prepared: None }),
        SandboxState::Enforced => {}
    }
    build(plan)
}

#[cfg(not(target_os = "linux"))]
fn build(plan: Plan) -> Result<Confinement, Box<SandboxReport>> {
    Ok(Confinement { report: plan.report, prepared: None })
}

/// The Landlock ruleset with its rules, the limits and the id maps, for the child to enter.
#[cfg(target_os = "linux")]
fn build(plan: Plan) -> Result<Confinement, Box<SandboxReport>> {
    let mut report = plan.report;
    let ruleset = landlock::Ruleset::new(kernel().abi, !report.network);
    let ruleset = match ruleset {
        Ok(r) => r,
        Err(e) => {
            report.state = SandboxState::Refused;
            report.notes.push(format!("cannot create the Landlock ruleset: {e}"));
            return Err(Box::new(report));
        }
    };
    // A temp directory the server gets its own of: the host's stays closed (the tmpfs over
    // it gets its rule in the child, once mounted).
    let own = |p: &std::path::Path| plan.layout.dirs.iter().any(|d| d.path == p);
    for g in plan.grants.iter().filter(|g| !(g.fixed && own(&g.path))) {
        if let Err(e) = ruleset.allow(&g.path, g.writable) {
            // A path we cannot open (permissions) stays closed: less, never more.
            report.notes.push(format!("{}: {e}: not opened", g.shown));
        }
    }
    for s in &plan.sockets {
        if let Err(e) = ruleset.allow_socket(s) {
            report.notes.push(format!("{}: {e}: not opened", s.display()));
        }
    }
    let mounts = plan.namespaces.then(|| mounts(&plan.layout, plan.cwd.as_deref(), &mut report));
    let l = report.limits;
    let mut limits = vec![(libc::RLIMIT_CORE, 0, 0)];
    let mib = |m: u64| m.saturating_mul(1 << 20);
    limits.extend(l.memory_mb.map(|m| (libc::RLIMIT_DATA, mib(m), mib(m))));
    limits.extend(l.processes.map(|n| (libc::RLIMIT_NPROC, n, n)));
    limits.extend(l.open_files.map(|n| (libc::RLIMIT_NOFILE, n, n)));
    // SIGXCPU at the limit (a server may catch it and finish), SIGKILL a second later.
    limits.extend(l.cpu_seconds.map(|n| (libc::RLIMIT_CPU, n, n.saturating_add(1))));
    let namespaces = plan.namespaces.then(|| enter::Namespaces::new(!report.network));
    let prepared = enter::Prepared { limits, namespaces, mounts, ruleset: Some(ruleset) };
    Ok(Confinement { report, prepared: Some(prepared) })
}

/// The private directories and what is bound back into them, for the child to mount.
#[cfg(target_os = "linux")]
fn mounts(layout: &private::Layout, cwd: Option<&std::path::Path>, report: &mut SandboxReport) -> enter::Mounts {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &std::path::Path| CString::new(p.as_os_str().as_bytes()).ok();
    let tmpfs = layout
        .dirs
        .iter()
        .filter_map(|d| c(&d.path).map(|p| (p, if d.writable { c"mode=1777" } else { c"mode=0755" }, d.writable)))
        .collect();
    let mut binds = Vec::new();
    for b in &layout.binds {
        let Some(under) = layout.dirs.iter().find(|d| b.starts_with(&d.path)) else { continue };
        match enter::Bind::new(b, &under.path) {
            Ok(bind) => binds.push(bind),
            // Not bound: it stays hidden, less and never more.
            Err(e) => report.notes.push(format!("{}: {e}: not bound into the server's private {}", b.display(), under.path.display())),
        }
    }
    enter::Mounts { tmpfs, binds, cwd: cwd.and_then(c) }
}

impl SandboxReport {
    /// One line for an error or `--check`: the state and the policy in force.
    pub fn summary(&self) -> String {
        match self.state {
            SandboxState::Off => format!("off ({})", self.notes.join("; ")),
            SandboxState::Refused => format!("refused: {}", self.notes.join("; ")),
            SandboxState::Enforced => {
                let l = &self.limits;
                let mut parts = vec![format!("{} paths readable, {} writable", self.readable.len(), self.writable.len())];
                if !self.private.is_empty() {
                    parts.push(format!("its own {}", self.private.join(", ")));
                }
                parts.push(match self.sockets.len() {
                    0 => "no session socket".into(),
                    n => format!("{n} session sockets"),
                });
                parts.push(if self.network { "network".into() } else { "no network".into() });
                parts.extend(l.memory_mb.map(|m| format!("memory {m} MiB")));
                parts.extend(l.processes.map(|n| format!("{n} processes")));
                parts.extend(l.open_files.map(|n| format!("{n} open files")));
                parts.extend(l.cpu_seconds.map(|n| format!("{n} CPU seconds")));
                parts.push("no core dumps".into());
                format!("enforced (Landlock ABI {}: {})", self.landlock_abi, parts.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests;
