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
    /// SandboxLimits narrower or wider than the default ones.
    #[serde(default, skip_serializing_if = "SandboxLimits::is_unset")]
    pub limits: SandboxLimits,
}

fn yes() -> bool {
    true
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy { read: vec![], write: vec![], network: true, limits: SandboxLimits::default() }
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
    user_namespaces: bool,
}

/// `$TOOLREG_LANDLOCK_ABI_MAX` caps the ABI toolreg uses, as if the kernel were older: to see
/// what a server gets, or is refused, on such a kernel (0: as without Landlock).
pub const ABI_MAX_VAR: &str = "TOOLREG_LANDLOCK_ABI_MAX";

fn kernel() -> Kernel {
    static KERNEL: OnceLock<Kernel> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        let cap = std::env::var(ABI_MAX_VAR).ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(u32::MAX);
        let abi = landlock::Abi(landlock::Abi::probe().0.min(cap));
        Kernel { abi, user_namespaces: user_namespaces() }
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

/// The plan for one server: its report, and what to build for the child.
struct Plan {
    report: SandboxReport,
    grants: Vec<profile::Grant>,
    namespaces: bool,
}

fn plan(sandbox: Option<&Sandbox>, launch: &Launch) -> Plan {
    let k = kernel();
    let (policy, explicit) = match sandbox {
        Some(Sandbox::Switch(false)) => {
            return Plan { report: off(k, "sandbox: false in the configuration".into()), grants: vec![], namespaces: false }
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
        missing.push("no user namespaces: the process limit counts all the user's processes, and `network: false` cannot be given".into());
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
        return Plan { report, grants: vec![], namespaces: false };
    }
    if k.abi.0 == 0 || cfg!(not(target_os = "linux")) || network_impossible {
        let mut report = off(k, "the default profile, which the kernel cannot give here".into());
        report.notes.extend(missing);
        return Plan { report, grants: vec![], namespaces: false };
    }
    let grants = profile::grants(launch, &policy.read, &policy.write);
    let shown = |w: bool| grants.list.iter().filter(|g| g.writable == w && g.path.exists()).map(|g| g.shown.clone()).collect();
    let namespaces = k.user_namespaces;
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
        network: policy.network,
        limits,
        core_dumps: false,
        landlock_abi: k.abi.0,
    };
    Plan { report, grants: grants.list, namespaces }
}

fn off(k: Kernel, why: String) -> SandboxReport {
    SandboxReport {
        state: SandboxState::Off,
        notes: if why.is_empty() { vec![] } else { vec![why] },
        readable: vec![],
        writable: vec![],
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
    for g in &plan.grants {
        if let Err(e) = ruleset.allow(&g.path, g.writable) {
            // A path we cannot open (permissions) stays closed: less, never more.
            report.notes.push(format!("{}: {e}: not opened", g.shown));
        }
    }
    let l = report.limits;
    let mut limits = vec![(libc::RLIMIT_CORE, 0, 0)];
    let mib = |m: u64| m.saturating_mul(1 << 20);
    limits.extend(l.memory_mb.map(|m| (libc::RLIMIT_DATA, mib(m), mib(m))));
    limits.extend(l.processes.map(|n| (libc::RLIMIT_NPROC, n, n)));
    limits.extend(l.open_files.map(|n| (libc::RLIMIT_NOFILE, n, n)));
    // SIGXCPU at the limit (a server may catch it and finish), SIGKILL a second later.
    limits.extend(l.cpu_seconds.map(|n| (libc::RLIMIT_CPU, n, n.saturating_add(1))));
    let namespaces = plan.namespaces.then(|| enter::Namespaces::new(!report.network));
    let prepared = enter::Prepared { limits, namespaces, ruleset: Some(ruleset) };
    Ok(Confinement { report, prepared: Some(prepared) })
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
