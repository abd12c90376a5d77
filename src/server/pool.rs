//! The work pool: CPU-bound request work (plans that count thousands of tools, scans of big
//! registries, search indexes) off the runtime's two threads, so the main loop always reads
//! the next frame and answers cheap requests and `$/cancelRequest` at once.
//!
//! One thread per core, each at a slightly lower scheduling priority (nice 3): on a busy machine
//! the runtime's threads win the CPU when they wake (CFS weights about 2:1), so a trivial request
//! waits neither for the plans nor for a timeslice behind them. Not lower: at nice 10 (9:1) a
//! first plan over 10,000 tools took 57 s instead of 8 s while other processes kept the cores
//! busy. Jobs queue in arrival order.
//!
//! Warm-ups (the search index a plan's first `tool_search` will want, built after the plan is
//! answered) run on one more thread of their own, one at a time, at nice 10. On the work threads
//! they queued beside the plans and ran side by side: two plans in a row over a new pool built
//! its index twice at once, and the next plan waited behind both (the first `openai` plan on the
//! pipe at 2,422 tools, issue 25). One at a time, the second finds the first one's index.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

pub struct Pool {
    // Unbounded: one job per request in flight (and one warm-up per plan); the main loop
    // stops reading requests while the host does not read our answers (`Outgoing::writable`).
    tx: mpsc::Sender<Job>,
    warm: mpsc::Sender<Job>,
}

/// Niceness of the pool's threads: the reactor preempts them, other processes do not starve them.
const NICE: i32 = 3;
/// Niceness of the warm-up thread: requests first (CFS weights about 5:1 against the work threads).
const WARM_NICE: i32 = 10;

impl Pool {
    pub fn new() -> Pool {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads {
            start(format!("toolreg-work-{i}"), NICE, rx.clone());
        }
        let (warm, warm_rx) = mpsc::channel::<Job>();
        start("toolreg-warm".into(), WARM_NICE, Arc::new(Mutex::new(warm_rx)));
        Pool { tx, warm }
    }

    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let _ = self.tx.send(Box::new(job));
    }

    /// Work that only saves a later request time: one job at a time in arrival order, below
    /// the requests' priority.
    pub fn spawn_warmup(&self, job: impl FnOnce() + Send + 'static) {
        let _ = self.warm.send(Box::new(job));
    }
}

fn start(name: String, nice: i32, rx: Arc<Mutex<mpsc::Receiver<Job>>>) {
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            crate::os::lower_thread_priority(nice);
            loop {
                // The lock is held only while waiting for the next job.
                let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                match job {
                    // A job catches its own panics (`Server::call_sync`); this is a backstop.
                    Ok(job) => {
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                    Err(_) => return, // the pool is gone
                }
            }
        })
        .expect("work threads start");
}
