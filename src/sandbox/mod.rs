//! The code-mode sandbox: a short JavaScript program run in an embedded QuickJS engine
//! (rquickjs), with nothing of the sidecar's privileges. Tool calls leave it only as
//! `HostCall`s that the caller answers; it knows no tools, plans or JSON-RPC.
//!
//! Every run gets a fresh runtime and context on a thread of its own (never the reactor's),
//! so nothing a script does (a polluted prototype, a global, a leaked object) reaches the
//! next run, and a script that spins blocks no other request. The limits, in `Limits`:
//! - memory: QuickJS's allocator limit (`memoryMb`); an allocation over it throws
//!   `out of memory`, so a bomb ends as an error, never as the process's memory;
//! - stack: `STACK_BYTES` for the engine, on a thread with `THREAD_STACK_BYTES`, so deep
//!   recursion is a RangeError, not a segfault;
//! - time: an interrupt handler ends the script once it has run `timeoutMs`; the time spent
//!   waiting for a host call does not count (each call has its own timeout and an approval
//!   waits for the user), a script that spins does;
//! - calls: at most `maxCalls` host calls (`tools.call`, `search`, `inspect` together);
//! - output: `console.log` and the returned JSON each kept to `maxOutputBytes`, cut with a note.
//!
//! What the context has: the language and its standard objects (JSON, Math, Date, RegExp,
//! Map/Set, typed arrays, Promise, Proxy), `console.log` and `tools`. It has no module loader
//! and none of quickjs-libc's `std`/`os` (files, sockets, processes, timers, environment), no
//! `performance` clock and no `setTimeout`: a script can await only tool calls. `Date.now()`
//! and `Math.random()` work (the wall clock and an unseeded generator: nothing secret).

mod bridge;
mod console;
mod engine;
mod outcome;
#[cfg(test)]
mod sandbox_tests;

pub use outcome::{Ended, Finished, ScriptError};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The engine's own stack limit: far below the thread's, so QuickJS throws before the
/// thread's guard page is reached.
pub const STACK_BYTES: usize = 1 << 20;
/// The run's thread: the engine's stack plus room for the C frames of one JS call.
const THREAD_STACK_BYTES: usize = 4 << 20;

/// A run's bounds (`initialize.codeMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub memory_bytes: usize,
    /// The script's own running time (waits for host calls excluded).
    pub timeout: Duration,
    pub max_calls: u32,
    /// The most bytes kept of the console and of the returned JSON, each.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    /// 32 MiB, 10 s, 50 calls, 64 KiB: room for a script that reads a few large results and
    /// returns a summary, far from anything that could hurt the sidecar.
    fn default() -> Self {
        Limits { memory_bytes: 32 << 20, timeout: Duration::from_secs(10), max_calls: 50, max_output_bytes: 64 << 10 }
    }
}

/// What a script asks of its host.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Call { name: String, arguments: Value },
    Search { query: String },
    Inspect { name: String },
}

/// A request with the id its reply must carry.
#[derive(Debug)]
pub struct HostCall {
    pub id: u64,
    pub request: Request,
}

/// The host's answer: the value the script's promise resolves to, or the message of the
/// exception it rejects with.
pub type Reply = Result<Value, String>;

/// A run under way. Dropping it stops the script: the engine is interrupted at its next
/// check and a script waiting for a reply ends as cancelled.
pub struct Run {
    pub calls: mpsc::UnboundedReceiver<HostCall>,
    replies: std::sync::mpsc::Sender<(u64, Reply)>,
    pub done: oneshot::Receiver<Finished>,
    stop: Arc<AtomicBool>,
}

impl Run {
    /// Hands a reply to the script (ignored once it has ended).
    pub fn reply(&self, id: u64, reply: Reply) {
        let _ = self.replies.send((id, reply));
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts `code` (the body of an async function) on a thread of its own.
pub fn start(code: String, limits: Limits) -> std::io::Result<Run> {
    let (calls_tx, calls) = mpsc::unbounded_channel();
    let (replies, replies_rx) = std::sync::mpsc::channel();
    let (done_tx, done) = oneshot::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::Builder::new().name("toolreg-sandbox".into()).stack_size(THREAD_STACK_BYTES).spawn(move || {
        let finished = engine::run(&code, &limits, &flag, calls_tx, replies_rx);
        let _ = done_tx.send(finished);
    })?;
    Ok(Run { calls, replies, done, stop })
}
