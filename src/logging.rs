//! Logging: tracing to stderr or to a file, never to stdout (stdout is the protocol).
//!
//! The destination and level are chosen by flag at start and may be changed once by the host in
//! `initialize` (`log: {file, level}`), so the writer and filter are swappable.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, RwLock};
use tracing_appender::non_blocking::{NonBlocking, WorkerGuard};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;
use tracing_subscriber::{reload, EnvFilter, Registry};

#[derive(Clone)]
struct Sink(Arc<RwLock<Option<NonBlocking>>>);

enum SinkWriter {
    Stderr(std::io::Stderr),
    File(NonBlocking),
}

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            SinkWriter::Stderr(s) => s.write(buf),
            SinkWriter::File(f) => f.write(buf),
        }
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

fn filter(level: Option<&str>) -> EnvFilter {
    let spec = level.map(str::to_string).or_else(|| std::env::var("TOOLREG_LOG").ok()).unwrap_or_else(|| "info".into());
    EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new("info"))
}

impl LogControl {
    /// Installs the global subscriber. Call once.
    pub fn init(file: Option<&Path>, level: Option<&str>) -> Arc<LogControl> {
        let sink = Sink(Arc::new(RwLock::new(None)));
        let (filter_layer, handle) = reload::Layer::new(filter(level));
        let fmt = tracing_subscriber::fmt::layer().with_writer(sink.clone()).with_ansi(false);
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
