//! The work pool: CPU-bound request work (plans that count thousands of tools, scans of big
//! registries, search indexes) off the runtime's two threads, so the main loop always reads
//! the next frame and answers cheap requests and `$/cancelRequest` at once.
//!
//! One thread per core, each at a slightly lower scheduling priority (nice 3): on a busy machine
//! the runtime's threads win the CPU when they wake (CFS weights about 2:1), so a trivial request
//! waits neither for the plans nor for a timeslice behind them. Not lower: at nice 10 (9:1) a
//! first plan over 10,000 tools took 57 s instead of 8 s while other processes kept the cores
//! busy. Jobs queue in arrival order.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

pub struct Pool {
    // Unbounded: one job per request in flight (and one index build per plan); the main loop
    // stops reading requests while the host does not read our answers (`Outgoing::writable`).
    tx: mpsc::Sender<Job>,
}

/// Niceness of the pool's threads: the reactor preempts them, other processes do not starve them.
const NICE: i32 = 3;

impl Pool {
    pub fn new() -> Pool {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("toolreg-work-{i}"))
                .spawn(move || {
                    lower_priority();
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
        Pool { tx }
    }

    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let _ = self.tx.send(Box::new(job));
    }
}

fn lower_priority() {
    crate::os::lower_thread_priority(NICE);
}
