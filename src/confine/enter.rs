//! What the child does between fork and exec, prepared by the parent so that the child only
//! makes system calls: no allocation, no locks (the parent is multithreaded, and a fork copies
//! one thread of it with every lock in whatever state the others left it).
//!
//! Order: the user namespace (and the mount and network ones with it), then the private
//! directories (`private.rs`: mounts need the namespace's capabilities, which Landlock's
//! `no_new_privs` does not take but its domain would rule), then the limits, then the Landlock
//! rules for the fresh tmpfs mounts (a rule on the host `/tmp` does not cover the tmpfs
//! mounted over it) and Landlock itself, whose `no_new_privs` must come last but before exec.

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicI32, Ordering};

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
    pub mounts: Option<Mounts>,
    pub ruleset: Option<Ruleset>,
}

/// The private directories, made in the server's mount namespace (`private.rs`).
pub struct Mounts {
    /// A fresh tmpfs over each: (path, mount options, whether the server may write in it).
    pub tmpfs: Vec<(CString, &'static CStr, bool)>,
    pub binds: Vec<Bind>,
    /// The working directory, entered again once the mounts are made (else the server would
    /// keep a handle on the host's directory beneath a private one); `/` when it is hidden.
    pub cwd: Option<CString>,
}

/// A host path bound back at the same path inside a private directory.
pub struct Bind {
    target: CString,
    /// The directories to make in the tmpfs above `target`, outermost first.
    parents: Vec<CString>,
    dir: bool,
    /// The host path opened (`O_PATH`) in the child's new mount namespace before the tmpfs
    /// hides it: a bind mount takes its source from the caller's own namespace only.
    fd: AtomicI32,
}

impl Bind {
    pub fn new(path: &std::path::Path, under: &std::path::Path) -> std::io::Result<Bind> {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &std::path::Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
        let mut parents: Vec<CString> = Vec::new();
        for a in path.ancestors().skip(1).take_while(|a| *a != under && a.starts_with(under)) {
            parents.push(c(a)?);
        }
        parents.reverse();
        let dir = std::fs::metadata(path)?.is_dir();
        Ok(Bind { target: c(path)?, parents, dir, fd: AtomicI32::new(-1) })
    }
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
            let mount = if self.mounts.is_some() { libc::CLONE_NEWNS } else { 0 };
            let flags = libc::CLONE_NEWUSER | mount | if ns.net { libc::CLONE_NEWNET } else { 0 };
            // SAFETY: the child is single-threaded, as unshare(CLONE_NEWUSER) requires.
            if unsafe { libc::unshare(flags) } != 0 {
                return fail();
            }
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &ns.uid_map)?;
            write_proc(c"/proc/self/gid_map", &ns.gid_map)?;
        }
        if let Some(m) = &self.mounts {
            m.make()?;
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
            for (path, _, writable) in self.mounts.iter().flat_map(|m| &m.tmpfs) {
                if *writable {
                    landlock::allow_in_child(ruleset.raw_fd(), path, ruleset.dir_rights())?;
                }
            }
            landlock::restrict_self(ruleset.raw_fd())?;
        }
        // After `no_new_privs` (restrict_self), which an unprivileged filter needs.
        if let Some(filter) = self.namespaces.as_ref().and_then(|ns| ns.no_setuid.as_deref()) {
            super::seccomp::install(filter)?;
        }
        Ok(())
    }
}

impl Mounts {
    /// In the child, in its new mount namespace: syscalls on prepared paths only.
    fn make(&self) -> std::io::Result<()> {
        let fail = || Err(std::io::Error::last_os_error());
        // SAFETY: plain syscalls on NUL-terminated strings the parent built.
        unsafe {
            // Nothing mounted here reaches the host, nor does the host's later mounts reach here.
            if libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) != 0 {
                return fail();
            }
            for b in &self.binds {
                let fd = libc::open(b.target.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                if fd < 0 {
                    return fail();
                }
                b.fd.store(fd, Ordering::Relaxed);
            }
            for (path, options, _) in &self.tmpfs {
                let flags = libc::MS_NOSUID | libc::MS_NODEV;
                if libc::mount(c"tmpfs".as_ptr(), path.as_ptr(), c"tmpfs".as_ptr(), flags, options.as_ptr().cast()) != 0 {
                    return fail();
                }
            }
            for b in &self.binds {
                for p in &b.parents {
                    if libc::mkdir(p.as_ptr(), 0o755) != 0 && *libc::__errno_location() != libc::EEXIST {
                        return fail();
                    }
                }
                if b.dir {
                    if libc::mkdir(b.target.as_ptr(), 0o755) != 0 && *libc::__errno_location() != libc::EEXIST {
                        return fail();
                    }
                } else {
                    let fd = libc::open(b.target.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o600);
                    if fd < 0 {
                        return fail();
                    }
                    libc::close(fd);
                }
                let fd = b.fd.load(Ordering::Relaxed);
                let mut buf = [0u8; 32];
                let source = fd_path(fd, &mut buf);
                if libc::mount(source.cast(), b.target.as_ptr(), std::ptr::null(), libc::MS_BIND | libc::MS_REC, std::ptr::null()) != 0 {
                    return fail();
                }
                libc::close(fd);
            }
            if let Some(cwd) = &self.cwd {
                if libc::chdir(cwd.as_ptr()) != 0 && libc::chdir(c"/".as_ptr()) != 0 {
                    return fail();
                }
            }
        }
        Ok(())
    }
}

/// `/proc/self/fd/<fd>` as a C string in `buf`, without allocating.
fn fd_path(fd: i32, buf: &mut [u8; 32]) -> *const u8 {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 10];
    let (mut n, mut len) = (fd.max(0) as u32, 0);
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[PREFIX.len() + i] = digits[len - 1 - i];
    }
    buf[PREFIX.len() + len] = 0;
    buf.as_ptr()
}

/// Whether this process can make what a confined server needs: a user namespace with a mount
/// namespace in which a tmpfs mounts. Tried once in a forked child, which only makes syscalls.
pub fn can_mount() -> bool {
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let (uid_map, gid_map) = (format!("{uid} {uid} 1").into_bytes(), format!("{gid} {gid} 1").into_bytes());
    // SAFETY: the child makes only async-signal-safe syscalls on buffers built before the fork,
    // then `_exit`s; the parent waits for it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let ok = libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) == 0
                && write_proc(c"/proc/self/setgroups", b"deny").is_ok()
                && write_proc(c"/proc/self/uid_map", &uid_map).is_ok()
                && write_proc(c"/proc/self/gid_map", &gid_map).is_ok()
                && libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) == 0
                && libc::mount(c"tmpfs".as_ptr(), c"/tmp".as_ptr(), c"tmpfs".as_ptr(), libc::MS_NOSUID | libc::MS_NODEV, std::ptr::null()) == 0;
            libc::_exit(if ok { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
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
