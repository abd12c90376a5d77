//! Landlock through raw system calls (`libc` has the syscall numbers; the three structs are
//! copied from `linux/landlock.h`). Raw calls rather than the `landlock` crate because the
//! ruleset is built in the parent and only `landlock_restrict_self` runs in the forked child,
//! where nothing may allocate: two syscalls are easier to prove async-signal-safe than a
//! crate's builder.
//!
//! Invariants: the ruleset fd is close-on-exec (the kernel makes it so), so the server never
//! holds it; rights a kernel does not know are never asked for (`Abi::fs_rights`), so a rule
//! never fails with EINVAL on an older kernel.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

pub const EXECUTE: u64 = 1 << 0;
pub const WRITE_FILE: u64 = 1 << 1;
pub const READ_FILE: u64 = 1 << 2;
pub const READ_DIR: u64 = 1 << 3;
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;
const IOCTL_DEV: u64 = 1 << 15;
/// `connect()` (and `sendto`) to a path Unix socket (ABI 9): below it, Landlock does not rule
/// connecting to a socket at all, and only what a server cannot name keeps it out (`private.rs`).
pub const RESOLVE_UNIX: u64 = 1 << 16;
/// The rights that apply to a file (not a directory): a file rule may hold only these.
const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV | RESOLVE_UNIX;
pub const READ: u64 = EXECUTE | READ_FILE | READ_DIR;

const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version of the running kernel; 0 when it has none (or it is disabled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Abi(pub u32);

impl Abi {
    pub fn probe() -> Abi {
        // SAFETY: the documented version query: null attr, size 0.
        let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<RulesetAttr>(), 0usize, CREATE_RULESET_VERSION) };
        Abi(if v < 0 { 0 } else { v as u32 })
    }

    /// Every filesystem right this ABI knows: all of them are handled (denied unless a rule
    /// grants them).
    pub fn fs_rights(self) -> u64 {
        let mut all = (1u64 << 13) - 1; // ABI 1: execute .. make_sym
        if self.0 >= 2 {
            all |= REFER;
        }
        if self.0 >= 3 {
            all |= TRUNCATE;
        }
        if self.0 >= 5 {
            all |= IOCTL_DEV;
        }
        if self.has_resolve_unix() {
            all |= RESOLVE_UNIX;
        }
        all
    }
    /// Connecting to path Unix sockets ruled by Landlock (ABI 9).
    pub fn has_resolve_unix(self) -> bool {
        self.0 >= 9
    }
    /// TCP bind and connect rules (ABI 4).
    pub fn has_tcp(self) -> bool {
        self.0 >= 4
    }
    /// Signals and abstract Unix sockets scoped to the domain (ABI 6).
    pub fn has_scopes(self) -> bool {
        self.0 >= 6
    }
}

/// A ruleset under construction in the parent, restricted to in the child.
pub struct Ruleset {
    fd: OwnedFd,
    abi: Abi,
}

impl Ruleset {
    /// A ruleset that denies every filesystem right; with `no_tcp`, TCP bind and connect too;
    /// signals and abstract sockets scoped to the server's own domain where the ABI has it.
    pub fn new(abi: Abi, no_tcp: bool) -> std::io::Result<Ruleset> {
        let attr = RulesetAttr {
            handled_access_fs: abi.fs_rights(),
            handled_access_net: if no_tcp && abi.has_tcp() { NET_BIND_TCP | NET_CONNECT_TCP } else { 0 },
            scoped: if abi.has_scopes() { SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL } else { 0 },
        };
        // The struct grew with the ABI: pass only the fields this kernel knows.
        let size = if abi.has_scopes() { 24 } else if abi.has_tcp() { 16 } else { 8 };
        // SAFETY: attr is a live repr(C) struct of at least `size` bytes.
        let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr as *const RulesetAttr, size as usize, 0u32) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh fd the kernel gave us, owned from here on.
        Ok(Ruleset { fd: unsafe { OwnedFd::from_raw_fd(fd as i32) }, abi })
    }

    /// Grants `rights` (READ, or everything for a writable path) beneath `path`. A missing
    /// path is `Ok(false)`: nothing to grant.
    pub fn allow(&self, path: &Path, writable: bool) -> std::io::Result<bool> {
        self.allow_rights(path, if writable { self.abi.fs_rights() } else { READ })
    }

    /// Grants connecting to the socket at `path` (`sandbox.sockets`), where the ABI rules it.
    pub fn allow_socket(&self, path: &Path) -> std::io::Result<bool> {
        if !self.abi.has_resolve_unix() {
            return Ok(false);
        }
        self.allow_rights(path, RESOLVE_UNIX)
    }

    /// Every right this ruleset handles: what a writable directory grants.
    pub fn dir_rights(&self) -> u64 {
        self.abi.fs_rights()
    }

    fn allow_rights(&self, path: &Path, rights: u64) -> std::io::Result<bool> {
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return Ok(false) };
        // SAFETY: a NUL-terminated path; O_PATH opens without reading anything.
        let raw = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if raw < 0 {
            let e = std::io::Error::last_os_error();
            return if e.kind() == std::io::ErrorKind::NotFound { Ok(false) } else { Err(e) };
        }
        // SAFETY: the fd was just opened and is ours.
        let dir = unsafe { OwnedFd::from_raw_fd(raw) };
        let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
        let mut rights = rights;
        if !is_dir {
            rights &= FILE_RIGHTS;
        }
        let attr = PathBeneathAttr { allowed_access: rights, parent_fd: dir.as_raw_fd() };
        // SAFETY: attr is live for the call; the fd is open.
        let r = unsafe { libc::syscall(libc::SYS_landlock_add_rule, self.fd.as_raw_fd(), RULE_PATH_BENEATH, &attr as *const PathBeneathAttr, 0u32) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(true)
    }

    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
}

/// In the child, after a private directory is mounted: `rights` beneath `path` (a tmpfs that
/// exists only in the child's mount namespace, so the parent cannot open it). Syscalls only.
pub fn allow_in_child(ruleset_fd: i32, path: &std::ffi::CStr, rights: u64) -> std::io::Result<()> {
    // SAFETY: open/landlock_add_rule/close on a prepared path and a stack struct.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let attr = PathBeneathAttr { allowed_access: rights, parent_fd: fd };
        let r = libc::syscall(libc::SYS_landlock_add_rule, ruleset_fd, RULE_PATH_BENEATH, &attr as *const PathBeneathAttr, 0u32);
        let e = std::io::Error::last_os_error();
        libc::close(fd);
        if r < 0 {
            return Err(e);
        }
    }
    Ok(())
}

/// In the child, between fork and exec: async-signal-safe (two syscalls, no allocation).
pub fn restrict_self(ruleset_fd: i32) -> std::io::Result<()> {
    // SAFETY: plain syscalls on an fd the child inherited.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset_fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
