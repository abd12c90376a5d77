//! For a toolreg running as root only: a seccomp filter that refuses `setuid`, `setreuid` and
//! `setresuid` (EPERM), so a server cannot set its real uid back to 0 (allowed without any
//! capability while its effective uid is 0), which would free it from the process limit
//! (`enter.rs`, `ROOT_CHARGE_UID`). Another architecture's system calls (the 32-bit ones on
//! x86-64) are refused whole (ENOSYS): their numbers differ and no server needs them.

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

const LD_ABS_W: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter, built in the parent; `None` on an architecture it does not know (the process
/// limit then binds no root-started server: SECURITY.md).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn no_setuid() -> Option<Vec<libc::sock_filter>> {
    let nr = |n: libc::c_long| n as u32;
    Some(vec![
        op(LD_ABS_W, 0, 0, 4), // seccomp_data.arch
        op(JEQ_K, 1, 0, ARCH),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        op(LD_ABS_W, 0, 0, 0), // seccomp_data.nr
        op(JEQ_K, 3, 0, nr(libc::SYS_setuid)),
        op(JEQ_K, 2, 0, nr(libc::SYS_setreuid)),
        op(JEQ_K, 1, 0, nr(libc::SYS_setresuid)),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
    ])
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn no_setuid() -> Option<Vec<libc::sock_filter>> {
    None
}

/// In the child, after `no_new_privs`: one prctl on the prepared filter.
pub fn install(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr().cast_mut() };
    // SAFETY: prog points at the live filter for the duration of the call.
    if unsafe { libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const libc::sock_fprog) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
