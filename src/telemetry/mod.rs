//! OpenTelemetry export (issue 43 §4): a span per request of either face and per tool run
//! (for an MCP tool, the upstream call), and metrics of calls, errors, latency, approvals and
//! the tokens deferral kept out of the context, sent over OTLP/HTTP (protobuf) to a collector.
//! Knows no JSON-RPC: the faces wrap a request (`request`); the service's call pipeline
//! (`service/pipeline.rs`) names the tool a request called (`note_tool`) and reports each run
//! (`Telemetry::ran`) where it also audits it.
//!
//! Names follow OpenTelemetry's semantic conventions for MCP and GenAI tool calls where they
//! exist: a gateway request is a SERVER span `{mcp.method.name} {target}` (`tools/call
//! get_weather`) with `mcp.method.name`, `jsonrpc.request.id`, `mcp.session.id`,
//! `network.transport`, and for a tool call `gen_ai.operation.name = execute_tool`,
//! `gen_ai.tool.name`, `gen_ai.tool.call.id`; a failure carries `error.type` (the JSON-RPC
//! code, or `tool_error` for a result with `isError`) and an error status. The sidecar's
//! requests are not MCP: `rpc.system = jsonrpc`, `rpc.method`, the same GenAI attributes.
//! Each run of an MCP tool is a CLIENT span `tools/call {upstream tool}`, a child of the
//! request's span (a host tool's run, `execute_tool {name}`, INTERNAL). The durations are the
//! conventions' histograms (`mcp.server.operation.duration`, `mcp.client.operation.duration`,
//! `rpc.server.call.duration`, seconds); the rest are toolreg's own counters (`metrics.rs`).
//!
//! Invariants:
//! - Off by default (`global()` is off until a face `install`s one); off, every hook is a
//!   branch on `None` and the request future is passed through untouched.
//! - A dead or slow collector costs a call nothing: a finished span is a `try_send` into a
//!   queue of `QUEUE`, metrics are counters under a lock held for an addition; one thread of
//!   its own (`export.rs`) encodes and posts them, each post bounded by `timeoutMs`. A full
//!   queue or a failed export loses spans: counted (`toolreg.telemetry.dropped`), said once in
//!   the log until an export succeeds again.
//! - The export's headers are secrets (`Secret`): no log line or error names their values, and
//!   the values are given to the log's redactor besides.
//! - A request cancelled before it answered leaves no span; its tool runs still report theirs.

mod export;
mod face;
mod metrics;
mod otlp;

pub use crate::settings::TelemetrySettings;
use crate::audit::{Decision, Outcome, Reached};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// Finished spans waiting for the exporter, at most.
pub const QUEUE: usize = 2048;

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Str(String),
    Int(i64),
}

impl From<&str> for Val {
    fn from(s: &str) -> Val {
        Val::Str(s.to_string())
    }
}

impl From<String> for Val {
    fn from(s: String) -> Val {
        Val::Str(s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Internal,
    Server,
    Client,
}

/// A finished span, as the exporter encodes it.
#[derive(Clone, Debug)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub kind: Kind,
    /// Unix time, nanoseconds.
    pub start: u64,
    pub end: u64,
    pub attrs: Vec<(&'static str, Val)>,
    /// Failed, with this `error.type` (also the status message).
    pub error: Option<String>,
}

/// Which face a request came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    /// `toolreg serve`: the host's JSON-RPC.
    Sidecar,
    /// `toolreg mcp`: MCP.
    Gateway,
}

/// A request as its face sees it.
pub struct Request {
    pub face: Face,
    pub method: String,
    pub id: String,
    /// The MCP session (Streamable HTTP's `Mcp-Session-Id`).
    pub session: Option<String>,
    /// `network.transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub transport: &'static str,
}

/// Where spans and metrics go: off (the default) or an exporter. Cheap to clone.
#[derive(Clone, Default)]
pub struct Telemetry(Option<Arc<Inner>>);

struct Inner {
    tx: tokio::sync::mpsc::Sender<export::Msg>,
    metrics: Arc<metrics::Store>,
    shared: Arc<export::Shared>,
    ids: AtomicU64,
}

static GLOBAL: OnceLock<Telemetry> = OnceLock::new();
static OFF: Telemetry = Telemetry(None);

/// The process's telemetry: off until a face installs one.
pub fn global() -> &'static Telemetry {
    GLOBAL.get().unwrap_or(&OFF)
}

/// Makes `t` the process's telemetry; `false` if one was installed already (kept).
pub fn install(t: Telemetry) -> bool {
    GLOBAL.set(t).is_ok()
}

/// The request a task serves, while it runs: what `note_tool` adds to, the parent of its runs.
struct Open {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    notes: Mutex<Notes>,
}

#[derive(Default)]
struct Notes {
    tool: Option<String>,
    call_id: Option<String>,
    tool_error: bool,
}

tokio::task_local! {
    static CURRENT: Arc<Open>;
}

/// Whether the process exports telemetry: a face describes a request (`Request`) only then.
pub fn is_on() -> bool {
    global().is_on()
}

/// `fut`, the request `req` describes, in a span (`req` is `None` when telemetry is off: the
/// future is passed through). `judge` reads the answer: `Some(error.type)` when it failed.
pub fn request<F, J>(req: Option<Request>, fut: F, judge: J) -> futures::future::Either<F, impl Future<Output = F::Output>>
where
    F: Future,
    J: FnOnce(&F::Output) -> Option<String>,
{
    use futures::future::Either;
    let (Some(inner), Some(req)) = (global().0.clone(), req) else { return Either::Left(fut) };
    let open = Arc::new(Open { trace_id: inner.trace_id(), span_id: inner.span_id(), notes: Mutex::default() });
    Either::Right(async move {
        let (start, started) = (now(), Instant::now());
        let out = CURRENT.scope(open.clone(), fut).await;
        let failed = judge(&out);
        inner.served(req, &open, start, started.elapsed(), failed);
        out
    })
}

/// The request this task serves called `tool` (a tool call of either face): its span is named
/// after it and carries the GenAI attributes. `is_error`: the tool answered an error.
pub fn note_tool(tool: &str, call_id: &str, is_error: bool) {
    let _ = CURRENT.try_with(|open| {
        let mut notes = open.notes.lock().unwrap_or_else(|e| e.into_inner());
        notes.tool = Some(tool.to_string());
        notes.call_id = Some(call_id.to_string());
        notes.tool_error |= is_error;
    });
}

/// One tool run as the call pipeline saw it.
pub struct Run<'a> {
    /// The wire name.
    pub tool: &'a str,
    /// An MCP tool's server and its name there.
    pub upstream: Option<(&'a str, &'a str)>,
    pub call_id: &'a str,
    pub reached: Reached,
    pub outcome: Outcome,
    /// Why it failed when it did not run to an answer (a JSON-RPC code, `input_required`).
    pub failure: Option<String>,
    pub started: SystemTime,
    pub took: Duration,
}

impl Telemetry {
    /// Starts the exporter thread on `settings`, the rest from the environment (`env`).
    pub fn start(settings: &TelemetrySettings, env: &dyn Fn(&str) -> Option<String>) -> Result<Telemetry, String> {
        let target = export::Target::resolve(settings, env)?;
        let metrics = Arc::new(metrics::Store::new(now()));
        let shared = Arc::new(export::Shared::default());
        let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
        export::spawn(target, rx, metrics.clone(), shared.clone())?;
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).map_err(|e| format!("no randomness for trace ids: {e}"))?;
        Ok(Telemetry(Some(Arc::new(Inner { tx, metrics, shared, ids: AtomicU64::new(u64::from_le_bytes(seed)) }))))
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// A tool ran (or was refused before it could): its span, a child of the request's, and
    /// its counts.
    pub fn ran(&self, run: Run<'_>) {
        let Some(inner) = &self.0 else { return };
        let error = match run.outcome {
            Outcome::Ok => None,
            Outcome::Error => Some(run.failure.clone().unwrap_or_else(|| "tool_error".into())),
            Outcome::Denied => Some("denied".into()),
            Outcome::Held => Some("held".into()),
            Outcome::Cancelled => Some("cancelled".into()),
        };
        let mut attrs: Vec<(&'static str, Val)> = vec![
            ("gen_ai.operation.name", "execute_tool".into()),
            ("gen_ai.tool.call.id", run.call_id.into()),
            ("toolreg.tool", run.tool.into()),
            ("toolreg.reached", reached(run.reached).into()),
            ("toolreg.outcome", outcome(run.outcome).into()),
        ];
        let (name, kind, called) = match run.upstream {
            Some((server, tool)) => {
                attrs.extend([("mcp.method.name", "tools/call".into()), ("toolreg.server", server.into())]);
                (format!("tools/call {tool}"), Kind::Client, tool)
            }
            None => (format!("execute_tool {}", run.tool), Kind::Internal, run.tool),
        };
        attrs.push(("gen_ai.tool.name", called.into()));
        if let Some(e) = &error {
            attrs.push(("error.type", e.as_str().into()));
        }
        let parent = CURRENT.try_with(|o| (o.trace_id, o.span_id)).ok();
        let start = nanos(run.started);
        inner.send(Span {
            trace_id: parent.map_or_else(|| inner.trace_id(), |p| p.0),
            span_id: inner.span_id(),
            parent: parent.map(|p| p.1),
            name,
            kind,
            start,
            end: start + run.took.as_nanos() as u64,
            attrs,
            error: error.clone(),
        });
        let server = run.upstream.map_or("", |u| u.0);
        let mut labels = vec![("gen_ai.tool.name", run.tool.to_string()), ("toolreg.outcome", outcome(run.outcome).to_string())];
        if !server.is_empty() {
            labels.push(("toolreg.server", server.to_string()));
        }
        inner.metrics.add(&metrics::CALLS, labels.clone(), 1);
        if let Some(e) = &error {
            labels.push(("error.type", e.clone()));
            inner.metrics.add(&metrics::ERRORS, labels, 1);
        }
        if let Some((server, tool)) = run.upstream {
            let mut labels = vec![("mcp.method.name", "tools/call".to_string()), ("gen_ai.tool.name", tool.to_string()), ("toolreg.server", server.to_string())];
            labels.extend(error.map(|e| ("error.type", e)));
            inner.metrics.record(&metrics::CLIENT_DURATION, labels, run.took.as_secs_f64());
        }
    }

    /// An approval was decided.
    pub fn approval(&self, decision: Decision) {
        let Some(inner) = &self.0 else { return };
        let d = match decision {
            Decision::Approved => "approved",
            Decision::Denied => "denied",
            Decision::TimedOut => "timed_out",
            Decision::Cancelled => "cancelled",
        };
        inner.metrics.add(&metrics::APPROVALS, vec![("toolreg.decision", d.to_string())], 1);
    }

    /// A plan kept `tokens` of definitions out of the model's context by deferring them.
    pub fn deferred(&self, tokens: u64) {
        let Some(inner) = &self.0 else { return };
        if tokens > 0 {
            inner.metrics.add(&metrics::DEFERRED_TOKENS, Vec::new(), tokens);
        }
    }

    /// Spans lost so far (queue full, exports failed).
    pub fn dropped(&self) -> u64 {
        self.0.as_ref().map_or(0, |i| i.shared.dropped())
    }

    /// Exports what is queued and the metrics now, waiting at most `wait` (at exit, on a
    /// thread that may block).
    pub fn flush(&self, wait: Duration) {
        let Some(inner) = &self.0 else { return };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let deadline = Instant::now() + wait;
        let mut msg = export::Msg::Flush(tx);
        loop {
            match inner.tx.try_send(msg) {
                Ok(()) => break,
                Err(tokio::sync::mpsc::error::TrySendError::Full(m)) if Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return,
            }
        }
        let _ = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    }
}

impl Inner {
    fn send(&self, span: Span) {
        if self.tx.try_send(export::Msg::Span(Box::new(span))).is_err() {
            self.shared.lose(1, &|| format!("the queue of {QUEUE} spans is full: the collector takes them too slowly"));
        }
    }

    /// A request of either face answered.
    fn served(&self, req: Request, open: &Open, start: u64, took: Duration, failed: Option<String>) {
        let notes = std::mem::take(&mut *open.notes.lock().unwrap_or_else(|e| e.into_inner()));
        let error = failed.or_else(|| notes.tool_error.then(|| "tool_error".to_string()));
        let (method_key, histogram) = match req.face {
            Face::Gateway => ("mcp.method.name", &metrics::SERVER_DURATION),
            Face::Sidecar => ("rpc.method", &metrics::RPC_DURATION),
        };
        let mut attrs: Vec<(&'static str, Val)> = vec![(method_key, req.method.as_str().into()), ("jsonrpc.request.id", req.id.into())];
        match req.face {
            Face::Gateway => attrs.push(("network.transport", req.transport.into())),
            Face::Sidecar => attrs.push(("rpc.system", "jsonrpc".into())),
        }
        attrs.extend(req.session.map(|s| ("mcp.session.id", Val::Str(s))));
        let mut labels = vec![(method_key, req.method.clone())];
        let name = match &notes.tool {
            Some(tool) => {
                attrs.extend([("gen_ai.operation.name", "execute_tool".into()), ("gen_ai.tool.name", tool.as_str().into())]);
                attrs.extend(notes.call_id.map(|c| ("gen_ai.tool.call.id", Val::Str(c))));
                labels.push(("gen_ai.tool.name", tool.clone()));
                format!("{} {tool}", req.method)
            }
            None => req.method,
        };
        if let Some(e) = &error {
            attrs.push(("error.type", e.as_str().into()));
            labels.push(("error.type", e.clone()));
        }
        self.metrics.record(histogram, labels, took.as_secs_f64());
        let span_id = open.span_id;
        self.send(Span { trace_id: open.trace_id, span_id, parent: None, name, kind: Kind::Server, start, end: start + took.as_nanos() as u64, attrs, error });
    }

    /// A fresh 64-bit value: splitmix64 over a random seed (unique within the process, and
    /// no system call per span).
    fn next(&self) -> u64 {
        let mut z = self.ids.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) | 1
    }

    fn trace_id(&self) -> [u8; 16] {
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&self.next().to_be_bytes());
        id[8..].copy_from_slice(&self.next().to_be_bytes());
        id
    }

    fn span_id(&self) -> [u8; 8] {
        self.next().to_be_bytes()
    }
}

fn reached(r: Reached) -> &'static str {
    match r {
        Reached::Direct => "direct",
        Reached::ToolInvoke => "tool_invoke",
        Reached::ToolExec => "tool_exec",
        Reached::App => "app",
    }
}

fn outcome(o: Outcome) -> &'static str {
    match o {
        Outcome::Ok => "ok",
        Outcome::Error => "error",
        Outcome::Denied => "denied",
        Outcome::Held => "held",
        Outcome::Cancelled => "cancelled",
    }
}

fn nanos(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn now() -> u64 {
    nanos(SystemTime::now())
}

#[cfg(test)]
mod tests;
