//! The audit log: one JSON line per event of either face (a tool call, an approval asked and
//! answered, a pin that holds a tool or its approval, an OAuth flow, a server started or gone, a
//! config reload), appended to a rotated, owner-only file (`writer.rs`) and read back by
//! `toolreg audit` (`read.rs`). Knows no JSON-RPC: `service` records through it for both faces.
//!
//! Invariants:
//! - Recording never blocks a call and never fails one: `Audit::record` is a `try_send` into a
//!   queue of `QUEUE` records, written by one thread of its own. A full queue, or a file that
//!   cannot be written (a full disk, a directory made read-only), loses records: they are
//!   counted (`Audit::lost`), said once per burst in the log, and a `lost` record with the count
//!   is written first once the file takes writes again.
//! - Flushing: the writer sleeps until a record arrives, lets others gather for `GATHER`
//!   (20 ms), then writes all that is queued (at most `BATCH`) with one `write(2)` (one per file
//!   when they straddle a rotation; under a lock that other processes writing the same file
//!   take too: `writer.rs`) and goes back to waiting. So under load it wakes once per
//!   20 ms, not once per call (the calls' cost: BENCHMARKS.md), and a record is in the file (the
//!   kernel's page cache) about 20 ms after it was made. A crash of the process loses at most the
//!   records queued and the batch being written (`QUEUE` + `BATCH`: 2,048; in practice those of
//!   the last 20 ms). Shutdown flushes (`Audit::flush`). Nothing is fsynced: an OS crash may lose
//!   what the kernel had not written back.
//! - Secrets never reach the file: every line is passed through the log's redactor
//!   (`secret::redactor::logged`, every value toolreg knows as a secret: servers' env and
//!   header values, URL credentials, OAuth tokens) on the writer's thread, so it is a property of
//!   the sink, not of a call site; the events carry no configuration (`Secret`s serialize raw),
//!   only names. Arguments and results are recorded only when `arguments` / `results` say so.

pub mod read;
mod writer;

pub use crate::settings::AuditSettings;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Records waiting for the writer, at most.
pub const QUEUE: usize = 1024;
/// Records written (and flushed) together, at most: what the queue holds.
pub const BATCH: usize = QUEUE;
/// How long the writer, woken by a record, lets others gather before it writes: one wake-up
/// and one `write(2)` per this much time under load, instead of one per call.
pub const GATHER: Duration = Duration::from_millis(20);
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
pub const MIN_MAX_BYTES: u64 = 4096;
pub const DEFAULT_MAX_FILES: u32 = 5;

/// Which face recorded an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Face {
    Sidecar,
    Gateway,
}

/// How a call reached the tool that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reached {
    /// The tool itself was called.
    Direct,
    /// Through the `tool_invoke` meta-tool.
    ToolInvoke,
    /// From a `tool_exec` script's `tools.call`.
    ToolExec,
    /// By an MCP Apps view.
    App,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Ok,
    /// The tool answered an error, or the call could not run it.
    Error,
    /// The user (or a timeout, or a client that cannot ask) refused its approval.
    Denied,
    /// Its pin held it: its definition changed or is new since approved.
    Held,
    Cancelled,
}

/// An approval's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    Approved,
    Denied,
    TimedOut,
    Cancelled,
}

/// One event, as it is written (after `ts`, `face` and `host`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "camelCase")]
pub enum Event {
    #[serde(rename_all = "camelCase")]
    Call {
        call_id: String,
        /// The wire name the call named (a held tool's, when it was held before it ran).
        tool: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        server: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        upstream_tool: Option<String>,
        reached: Reached,
        outcome: Outcome,
        duration_ms: u64,
        /// The result's size as the tool returned it (its JSON), when it ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        result_bytes: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    ApprovalRequested { approval_id: String, call_id: String, tool: String },
    #[serde(rename_all = "camelCase")]
    ApprovalDecided {
        approval_id: String,
        call_id: String,
        tool: String,
        decision: Decision,
        /// Who answered: `host` (the sidecar's), `client` (the gateway's, by elicitation),
        /// `config` (`trustedClient`); absent for a timeout or a cancelled call.
        #[serde(skip_serializing_if = "Option::is_none")]
        answered_by: Option<String>,
        waited_ms: u64,
    },
    /// A server's pins hold these tools (the set changed).
    #[serde(rename_all = "camelCase")]
    PinsHeld { server: String, changed_tools: Vec<String>, new_tools: Vec<String> },
    /// These tools' current definitions were approved.
    #[serde(rename_all = "camelCase")]
    PinsApproved { server: String, tools: Vec<String>, by: String },
    /// A server's state changed (`connecting`, `ready`, `error`, `disabled`, `needsAuth`).
    #[serde(rename_all = "camelCase")]
    Server {
        server: String,
        state: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_count: Option<usize>,
    },
    /// An OAuth flow of a server: `started` (it needs the user), `authorized`.
    #[serde(rename_all = "camelCase")]
    Oauth { server: String, phase: String },
    /// The config file changed: taken (`applied`), or not (`reason`, no value of the file).
    #[serde(rename_all = "camelCase")]
    Reload {
        applied: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        servers: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Records lost since the last one written (a full queue, a file that took no writes).
    #[serde(rename_all = "camelCase")]
    Lost { count: u64 },
}

/// Where events go: off (the default, every call a no-op) or a file. Cheap to clone.
#[derive(Clone, Default)]
pub struct Audit(Option<Arc<Sink>>, Option<Arc<str>>);

struct Sink {
    tx: SyncSender<Msg>,
    arguments: bool,
    results: bool,
    shared: Arc<Shared>,
    path: PathBuf,
}

/// What the caller and the writer both see.
struct Shared {
    lost: AtomicU64,
    /// A loss was said in the log and no record has been written since: the burst goes on.
    warned: AtomicBool,
}

enum Msg {
    /// With the gateway profile the record is for, if any.
    Record(SystemTime, Event, Option<Arc<str>>),
    /// Everything before it written; then the sender is told.
    Flush(SyncSender<()>),
}

impl Shared {
    fn lose(&self, n: u64, why: &dyn Fn() -> String) {
        self.lost.fetch_add(n, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!("audit log: records lost ({}); counted, and noted in the file once it takes writes again", why());
        }
    }
}

impl Audit {
    /// Off: nothing is recorded.
    pub fn off() -> Audit {
        Audit(None, None)
    }

    /// Starts the writer on `settings.file` (its directory made now, so a bad path is said at
    /// once). `who`: the host or profile the records are for.
    pub fn open(settings: &AuditSettings, face: Face, who: Option<String>) -> Result<Audit, String> {
        let path = PathBuf::from(&settings.file);
        let max_bytes = settings.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        if max_bytes < MIN_MAX_BYTES {
            return Err(format!("audit.maxBytes must be at least {MIN_MAX_BYTES}"));
        }
        let max_files = settings.max_files.unwrap_or(DEFAULT_MAX_FILES);
        if max_files == 0 {
            return Err("audit.maxFiles must be at least 1".into());
        }
        let file = writer::File::new(path.clone(), max_bytes, max_files);
        file.prepare().map_err(|e| format!("cannot open the audit file {}: {e}", path.display()))?;
        let (tx, rx) = sync_channel(QUEUE);
        let shared = Arc::new(Shared { lost: AtomicU64::new(0), warned: AtomicBool::new(false) });
        let (on_thread, label) = (shared.clone(), (face, who));
        std::thread::Builder::new()
            .name("toolreg-audit".into())
            .spawn(move || write_loop(rx, file, &on_thread, label))
            .map_err(|e| format!("cannot start the audit writer: {e}"))?;
        let (arguments, results) = (settings.arguments, settings.results);
        Ok(Audit(Some(Arc::new(Sink { tx, arguments, results, shared, path })), None))
    }

    /// The same log, its records marked as a gateway profile's (`profile`).
    pub fn for_profile(&self, name: &str) -> Audit {
        Audit(self.0.clone(), Some(Arc::from(name)))
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Whether calls' arguments / results are recorded.
    pub fn wants_arguments(&self) -> bool {
        self.0.as_ref().is_some_and(|s| s.arguments)
    }

    pub fn wants_results(&self) -> bool {
        self.0.as_ref().is_some_and(|s| s.results)
    }

    /// Queues `event`; never waits. A full queue loses it (counted).
    pub fn record(&self, event: Event) {
        let Some(sink) = &self.0 else { return };
        match sink.tx.try_send(Msg::Record(SystemTime::now(), event, self.1.clone())) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => sink.shared.lose(1, &|| format!("the queue of {QUEUE} is full: {} is written too slowly", sink.path.display())),
            Err(TrySendError::Disconnected(_)) => sink.shared.lose(1, &|| "the writer has stopped".into()),
        }
    }

    /// Records lost so far (queue full, file not writable).
    pub fn lost(&self) -> u64 {
        self.0.as_ref().map_or(0, |s| s.shared.lost.load(Ordering::Relaxed))
    }

    /// Blocks until what was queued before is written, at most `wait` (at shutdown, on a
    /// thread that may block).
    pub fn flush(&self, wait: Duration) {
        let Some(sink) = &self.0 else { return };
        let (tx, rx) = sync_channel(1);
        let deadline = std::time::Instant::now() + wait;
        let mut msg = Msg::Flush(tx);
        loop {
            match sink.tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(m)) if std::time::Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return,
            }
        }
        let _ = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
        let lost = self.lost();
        if lost > 0 {
            tracing::warn!("audit log: {lost} records lost in all");
        }
    }

}

/// One line as written.
#[derive(Serialize)]
struct Line<'a> {
    ts: String,
    face: Face,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    /// The gateway profile whose client the record is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<&'a str>,
    #[serde(flatten)]
    event: &'a Event,
}

/// RFC 3339 UTC with milliseconds.
fn stamp(at: SystemTime) -> String {
    let at = time::OffsetDateTime::from(at);
    let at = at.replace_nanosecond(at.millisecond() as u32 * 1_000_000).unwrap_or(at);
    at.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// `event` as one line of the file, every known secret redacted, newline ended.
fn line(face: Face, who: Option<&str>, profile: Option<&str>, at: SystemTime, event: &Event) -> String {
    let text = serde_json::to_string(&Line { ts: stamp(at), face, host: who, profile, event }).unwrap_or_default();
    let mut text = crate::secret::redactor::logged(&text).into_owned();
    text.push('\n');
    text
}

/// The writer thread: a batch at a time until every `Audit` is dropped.
fn write_loop(rx: Receiver<Msg>, file: writer::File, shared: &Shared, (face, who): (Face, Option<String>)) {
    let mut reported = 0u64;
    let mut buf = String::new();
    let mut flushes: Vec<SyncSender<()>> = Vec::new();
    while let Ok(first) = rx.recv() {
        // A flush asked at shutdown goes at once; records wait a moment for company.
        if matches!(first, Msg::Record(..)) {
            std::thread::sleep(GATHER);
        }
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        buf.clear();
        let mut records = 0u64;
        for msg in batch {
            match msg {
                Msg::Record(at, event, profile) => {
                    buf.push_str(&line(face, who.as_deref(), profile.as_deref(), at, &event));
                    records += 1;
                }
                Msg::Flush(done) => flushes.push(done),
            }
        }
        let lost = shared.lost.load(Ordering::Relaxed);
        let noted = lost > reported;
        if noted {
            buf.insert_str(0, &line(face, who.as_deref(), None, SystemTime::now(), &Event::Lost { count: lost - reported }));
        }
        if !buf.is_empty() {
            match file.append(&buf) {
                Ok(()) => {
                    if noted && shared.warned.swap(false, Ordering::Relaxed) {
                        tracing::warn!("audit log: writing again; {} records were lost", lost - reported);
                    }
                    reported = lost;
                }
                Err(e) => {
                    // What went out is a prefix: the `lost` line, when there is one, went first.
                    let lines = records + noted as u64;
                    if noted && e.lines < lines {
                        reported = lost;
                    }
                    shared.lose(e.lines.min(records), &|| format!("cannot write {}: {}", file.path().display(), e.error));
                }
            }
        }
        for done in flushes.drain(..) {
            let _ = done.try_send(());
        }
    }
}

#[cfg(test)]
mod tests;
