//! What the operating system does for us beyond the standard library.

/// Lowers the calling thread's scheduling priority to `nice` (Linux; elsewhere nothing), so
/// that CPU work in the background yields to the threads that answer requests.
pub fn lower_thread_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on the calling thread's own id (Linux applies PRIO_PROCESS to a tid).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        if libc::setpriority(libc::PRIO_PROCESS, tid, nice) != 0 {
            tracing::debug!("cannot lower a thread's priority: {}", std::io::Error::last_os_error());
        }
    };
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}
