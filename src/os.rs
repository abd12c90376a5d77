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
/// glibc keeps freed blocks in its arenas, resident, for the next allocation. For after a burst
/// of short-lived large allocations: loading the embedding model folds its int8 weights to
/// float32 through temporaries, and glibc kept ~60 MiB of them resident afterwards
/// (docs/benchmarks-history.md "Embedding the catalog faster (issue 25 §2)"). A call, not a
/// fixed mmap threshold (see `tune_allocator`), so later allocations are as fast as before.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of every arena to the system; it takes the
    // arenas' locks as malloc does.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// How long after the last big job the freed memory is handed back: a burst of plans trims
/// once, after it, and a host planning back to back keeps its warm buffers.
pub const TRIM_QUIET: std::time::Duration = std::time::Duration::from_millis(500);

/// Jobs whose transient buffers reach this size ask for a trim (`release_freed_memory_soon`).
pub const TRIM_AFTER_BYTES: usize = 1 << 20;

/// Asks for `release_freed_memory` once `TRIM_QUIET` has passed with no other ask, on a
/// thread of its own: call it when a big transient job ends (a multi-MB response written, a
/// search index built, a big registration), never waiting for the trim itself.
///
/// glibc keeps what a job freed (serialisation buffers that grew to MBs, an index build's
/// temporaries) resident until something reuses it; with 2,422 tools and a plan in every
/// rendering that was tens of MiB (`scripts/bench_memory.py`, issue 25 §4). The cost: the
/// next job faults its buffers in afresh, a few ms per multi-MB response, only after a pause.
pub fn release_freed_memory_soon() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    trimmer::ask();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod trimmer {
    use std::sync::{Condvar, Mutex, Once};
    use std::time::Instant;

    /// When the trim is due (`None`: nothing asked since the last one), and the trimmer's wake-up.
    static AT: Mutex<Option<Instant>> = Mutex::new(None);
    static WAKE: Condvar = Condvar::new();

    pub fn ask() {
        static STARTED: Once = Once::new();
        STARTED.call_once(|| {
            if let Err(e) = std::thread::Builder::new().name("toolreg-trim".into()).spawn(run) {
                tracing::debug!("no memory trimmer: {e}");
            }
        });
        *AT.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + super::TRIM_QUIET);
        WAKE.notify_one();
    }

    fn run() {
        let mut at = AT.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match *at {
                None => at = WAKE.wait(at).unwrap_or_else(|e| e.into_inner()),
                Some(when) if Instant::now() < when => {
                    at = WAKE.wait_timeout(at, when.saturating_duration_since(Instant::now())).unwrap_or_else(|e| e.into_inner()).0;
                }
                Some(_) => {
                    *at = None;
                    drop(at);
                    super::release_freed_memory();
                    at = AT.lock().unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }
}
