//! What the child does between fork and exec, prepared by the parent so that the child only
//! makes system calls: no allocation, no locks (the parent is multithreaded, and a fork copies
//! one thread of it with every lock in whatever state the others left it).
//!
//! Order: the user namespace (and the network one with it), then the limits, then Landlock,
//! whose `no_new_privs` must come last but before exec.

use std::ffi::CStr;

use super::landlock::{self, Ruleset};

/// A user namespace mapping only our own uid and gid onto themselves: files keep their owners,
/// and `RLIMIT_NPROC` counts the server's own processes (the kernel counts per namespace),
/// not every process of the user; with `net`, a network namespace with no interface up.
pub struct Namespaces {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    net: bool,
    /// For a toolreg running as root: the real uid the server's processes are counted
    /// against, since Linux never applies `RLIMIT_NPROC` to a real uid of 0. Only the real uid
    /// changes: the effective and file-system uids stay 0, so the server reads and writes as
    /// before, but `getuid()` shows it this (unmapped) uid; and `no_setuid` keeps it from
    /// setting its real uid back to 0.
    charge_uid: Option<libc::uid_t>,
    no_setuid: Option<Vec<libc::sock_filter>>,
}

/// A real uid no account uses, so no other process is counted with a root-started server's.
pub const ROOT_CHARGE_UID: libc::uid_t = 0x7fff_0000;

impl Namespaces {
    pub fn new(net: bool) -> Namespaces {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let charge_uid = (uid == 0).then_some(ROOT_CHARGE_UID);
        let no_setuid = charge_uid.and_then(|_| super::seccomp::no_setuid());
        Namespaces { uid_map: format!("{uid} {uid} 1").into_bytes(), gid_map: format!("{gid} {gid} 1").into_bytes(), net, charge_uid, no_setuid }
    }
}

/// `setrlimit`'s resource type: glibc names its own, musl takes an int.
#[cfg(target_env = "gnu")]
pub type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
pub type Resource = libc::c_int;

pub struct Prepared {
    /// (resource, soft, hard).
    pub limits: Vec<(Resource, u64, u64)>,
    pub namespaces: Option<Namespaces>,
    pub ruleset: Option<Ruleset>,
}

impl Prepared {
    /// Runs in the child. Async-signal-safe: it reads what the parent built and makes syscalls.
    pub fn enter(&self) -> std::io::Result<()> {
        let fail = || Err(std::io::Error::last_os_error());
        if let Some(ns) = &self.namespaces {
            // SAFETY: a plain syscall; root may set its real uid to any value.
            if let Some(uid) = ns.charge_uid {
                if unsafe { libc::setresuid(uid, 0, 0) } != 0 {
                    return fail();
                }
            }
            let flags = libc::CLONE_NEWUSER | if ns.net { libc::CLONE_NEWNET } else { 0 };
            // SAFETY: the child is single-threaded, as unshare(CLONE_NEWUSER) requires.
            if unsafe { libc::unshare(flags) } != 0 {
                return fail();
            }
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &ns.uid_map)?;
            write_proc(c"/proc/self/gid_map", &ns.gid_map)?;
        }
        // After the namespace, not before: the kernel checks a new namespace's processes
        // against the creator's `RLIMIT_NPROC` as it was at `unshare` too, and that must stay
        // the user's own limit (over all their processes), not the server's 256.
        for &(resource, soft, hard) in &self.limits {
            let limit = libc::rlimit { rlim_cur: soft, rlim_max: hard };
            // SAFETY: a plain syscall on a stack value.
            if unsafe { libc::setrlimit(resource, &limit) } != 0 {
                return fail();
            }
        }
        if let Some(ruleset) = &self.ruleset {
            landlock::restrict_self(ruleset.raw_fd())?;
        }
        // After `no_new_privs` (restrict_self), which an unprivileged filter needs.
        if let Some(filter) = self.namespaces.as_ref().and_then(|ns| ns.no_setuid.as_deref()) {
            super::seccomp::install(filter)?;
        }
        Ok(())
    }
}

fn write_proc(path: &CStr, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: open/write/close, each async-signal-safe, on a static path and a prepared buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let e = std::io::Error::last_os_error();
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(e);
        }
    }
    Ok(())
}
