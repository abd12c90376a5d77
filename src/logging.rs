//! Logging: tracing to stderr or to a file, never to stdout (stdout is the protocol).
//!
//! The destination and level are chosen by flag at start and may be changed once by the host in
//! `initialize` (`log: {file, level}`), so the writer and filter are swappable.
//!
//! Invariant: dependencies that log raw request and response bodies at debug or trace
//! (`QUIET_TARGETS`: rmcp the MCP messages, the HTTP stack its traffic) are capped at info by
//! a fixed filter that no level or filter spec lifts, so a `TOOLREG_LOG=trace` log holds no
//! `catalog/setServers` params, headers or tool arguments.
//! And every line is written with its URLs' credentials redacted: dependencies quote the URL
//! they failed on even at error level (rmcp's worker prints reqwest's error with the query);
//! and with every secret value toolreg knows for a live MCP server redacted
//! (`secret::redactor`): whatever a server prints of its credentials (stderr, error text, a
//! name it sent) is `[redacted]` whichever call site logs it.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, RwLock};
use tracing::Level;
use tracing_appender::non_blocking::{NonBlocking, WorkerGuard};
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;
use tracing_subscriber::{reload, EnvFilter, Registry};

use crate::secret::{redact_urls_in, redactor};
use std::borrow::Cow;

#[derive(Clone)]
struct Sink(Arc<RwLock<Option<NonBlocking>>>);

enum SinkWriter {
    Stderr(std::io::Stderr),
    File(NonBlocking),
}

impl SinkWriter {
    fn write_all_to(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            SinkWriter::Stderr(s) => s.write_all(buf),
            SinkWriter::File(f) => f.write_all(buf),
        }
    }
}

impl Write for SinkWriter {
    /// The fmt layer writes one whole event per call, so a URL or a secret is never split
    /// across calls.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let text = redact_urls_in(&text);
        match redactor::logged(&text) {
            Cow::Borrowed(_) if matches!(text, Cow::Borrowed(_)) => self.write_all_to(buf)?,
            clean => self.write_all_to(clean.as_bytes())?,
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            SinkWriter::Stderr(s) => s.flush(),
            SinkWriter::File(f) => f.flush(),
        }
    }
}

impl<'a> MakeWriter<'a> for Sink {
    type Writer = SinkWriter;
    fn make_writer(&'a self) -> SinkWriter {
        match &*self.0.read().unwrap_or_else(|e| e.into_inner()) {
            Some(f) => SinkWriter::File(f.clone()),
            None => SinkWriter::Stderr(std::io::stderr()),
        }
    }
}

/// Handle to change where and what is logged.
pub struct LogControl {
    sink: Sink,
    filter: reload::Handle<EnvFilter, Registry>,
    guard: std::sync::Mutex<Option<WorkerGuard>>,
}

/// Target prefixes logged at info and above only, whatever the filter says.
const QUIET_TARGETS: [&str; 7] = ["rmcp", "reqwest", "hyper", "h2", "tower", "rustls", "tokio_util"];

/// Whether an event or span may pass the fixed filter.
fn loud_enough(target: &str, level: &Level) -> bool {
    *level <= Level::INFO || !QUIET_TARGETS.iter().any(|q| target.strip_prefix(q).is_some_and(|r| r.is_empty() || r.starts_with("::") || r.starts_with('_') || r.starts_with('-')))
}

fn filter(level: Option<&str>) -> EnvFilter {
    let spec = level.map(str::to_string).or_else(|| std::env::var("TOOLREG_LOG").ok()).unwrap_or_else(|| "info".into());
    EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new("info"))
}

impl LogControl {
    /// Installs the global subscriber. Call once.
    pub fn init(file: Option<&Path>, level: Option<&str>) -> Arc<LogControl> {
        let sink = Sink(Arc::new(RwLock::new(None)));
        let (filter_layer, handle) = reload::Layer::new(filter(level));
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(sink.clone())
            .with_ansi(false)
            .with_filter(filter_fn(|meta| loud_enough(meta.target(), meta.level())));
        let _ = tracing_subscriber::registry().with(filter_layer).with(fmt).try_init();
        let control = Arc::new(LogControl { sink, filter: handle, guard: std::sync::Mutex::new(None) });
        if let Some(f) = file {
            if let Err(e) = control.to_file(f) {
                tracing::warn!("cannot log to {}: {e}", f.display());
            }
        }
        control
    }

    pub fn to_file(&self, path: &Path) -> std::io::Result<()> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        let (writer, guard) = tracing_appender::non_blocking(file);
        *self.sink.0.write().unwrap_or_else(|e| e.into_inner()) = Some(writer);
        *self.guard.lock().unwrap_or_else(|e| e.into_inner()) = Some(guard);
        Ok(())
    }

    pub fn set_level(&self, level: &str) -> Result<(), String> {
        let f = EnvFilter::try_new(level).map_err(|e| e.to_string())?;
        self.filter.reload(f).map_err(|e| e.to_string())
    }

    /// Flushes a file log (the worker guard flushes on drop).
    pub fn flush(&self) {
        *self.sink.0.write().unwrap_or_else(|e| e.into_inner()) = None;
        self.guard.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_dumping_dependencies_stay_at_info() {
        for target in ["rmcp::service", "rmcp::transport::worker", "hyper_util::client", "h2::codec", "reqwest::connect"] {
            assert!(!loud_enough(target, &Level::TRACE) && !loud_enough(target, &Level::DEBUG), "{target}");
            assert!(loud_enough(target, &Level::INFO) && loud_enough(target, &Level::WARN), "{target}");
        }
        for target in ["toolreg::catalog", "toolreg::mcp::stderr", "h2o", "rmcpx"] {
            assert!(loud_enough(target, &Level::TRACE), "{target}");
        }
    }
}
