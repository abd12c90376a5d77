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

/// Keeps the allocator's resident memory nearer what is in use (glibc; elsewhere nothing).
/// Call before any thread starts.
///
/// glibc gives threads their own arenas (up to 8 per core: the runtime's, the work pool's and
/// tokio's blocking threads) and keeps what is freed in each. Two arenas held 8 MiB less with
/// 2,422 tools registered and a plan in every rendering (`scripts/bench_memory.py`, issue 25 §4).
/// A fixed 128 KiB mmap threshold saved ~10 MiB more but cost a warm native plan ~15 ms of page
/// faults (its multi-MB buffers mapped afresh each time): not kept.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the pages the allocator holds free back to the system (glibc; elsewhere nothing).
///
/// For after a burst of short-lived large allocations that will not come again: loading the
/// embedding model folds its int8 weights to float32 through temporaries, and glibc kept ~60 MiB
/// of them resident afterwards (BENCHMARKS.md "Embedding the catalog faster"). One call, not
/// a fixed mmap threshold (see `tune_allocator`), so later allocations are as fast as before.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of every arena to the system; it takes the
    // arenas' locks as malloc does.
    unsafe {
        libc::malloc_trim(0);
    }
}
