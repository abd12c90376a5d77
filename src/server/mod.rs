//! The only place where the protocol meets the domain: the main loop, the method table,
//! requests in flight in both directions, and the mapping of errors to codes.
//!
//! One loop reads frames in order. Notifications and `Ordered` requests (those that change
//! state) complete before the next frame is read, so later messages see their effect; other
//! requests run concurrently on a snapshot. A `Serial` request changes state too but runs on
//! the blocking pool, with the loop holding the next message (and, for `SerialRegistry`, only
//! a message that could see the registry) until it is done. Every request gets exactly one
//! reply: a cancelled or panicking one too.

mod auth_host;
pub mod dispatch;
mod handlers;
mod handlers_approvals;
mod handlers_extras;
mod handlers_pins;
mod handlers_registry;
mod handlers_tools;
mod handlers_usage;
mod host;
pub mod message;
pub mod outgoing;
mod pool;

use crate::catalog::{Catalog, CatalogEvent};
use crate::logging::LogControl;
use crate::protocol::error::clip;
use crate::protocol::{ErrorCode, HostCapabilities, RpcError, Timeouts};
use crate::invisible::visible;
use crate::service::Registry;
use crate::transport::record::{Direction, Recorder};
use crate::transport::{ContentLengthCodec, Frame};
use crate::service::Service;
use bytes::Bytes;
use dispatch::{Answer, Handler, Kind, Table};
use futures::{FutureExt, StreamExt};
use message::{Id, IdKey, Incoming};
use outgoing::Outgoing;
use serde_json::json;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

pub struct ServeOptions {
    pub max_frame_bytes: usize,
    pub record: Option<PathBuf>,
}

/// State shared by the handlers. Only `Ordered` handlers (run by the main loop) write it.
///
/// Locks: a poisoned lock is recovered (`into_inner`), never propagated. Every critical
/// section in the server is a single insert, remove, swap or clone, so a panic elsewhere
/// cannot leave the state behind a lock half-changed; the registry is changed through
/// `Arc::make_mut` on a value that the domain call validates before it mutates.
pub struct Ctx {
    /// The registry, plans, approvals, usage and semantic signal, and the call operation:
    /// the core this face translates the host's protocol to.
    pub service: Service,
    pub host: Mutex<HostCapabilities>,
    pub out: Arc<Outgoing>,
    pub log: Arc<LogControl>,
    pub max_frame_bytes: usize,
    /// Filled once the method table is built (`initialize` lists it).
    pub methods: std::sync::OnceLock<Vec<String>>,
    /// Created at `initialize` (it needs the cache dir and timeouts).
    pub catalog: std::sync::OnceLock<Catalog>,
    pub catalog_events: mpsc::UnboundedSender<CatalogEvent>,
    pub timeouts: Mutex<Timeouts>,
    /// CPU-bound work, off the runtime's threads.
    pub work: pool::Pool,
    /// `tool_exec`'s limits (`initialize.codeMode`, else the defaults).
    pub code_limits: std::sync::OnceLock<crate::service::Limits>,
    /// `initialize.mcpRegistry`: the registry `catalog/searchRegistry` and
    /// `catalog/resolveRegistryServer` read.
    pub mcp_registry: Mutex<crate::settings::McpRegistrySettings>,
    /// The usage-driven tools each session's first plan chose.
    pub sessions: crate::service::Sessions,
    /// The runtime, for the work pool's few waits on it (a plan's query vector).
    pub runtime: tokio::runtime::Handle,
}

tokio::task_local! {
    /// The cancellation token of the request being handled (set for concurrent requests).
    static CANCEL: CancellationToken;
    /// The registry as it was when the request's frame was read (set for requests that do not
    /// run on the main loop), so a request never sees a registration sent after it.
    static ARRIVAL: Arc<Registry>;
}

/// The current request's cancellation token; a fresh one outside a request.
pub fn current_cancel() -> CancellationToken {
    CANCEL.try_with(|t| t.clone()).unwrap_or_default()
}

/// From this many entries, reading the whole registry (`Kind::Scan`) moves to the work pool:
/// listing 1,000 entries takes on the order of 100 µs, tokio's budget between two `.await`s.
const BIG_REGISTRY: usize = 1_000;

/// A request cancelled but still running after this long is dropped (its task ends).
const CANCEL_BACKSTOP: Duration = Duration::from_secs(5);

/// At exit, running requests get this long to end after being cancelled, then are aborted.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

impl Ctx {
    /// The registry as the current request saw it on arrival; outside a request, as it is.
    pub fn snapshot(&self) -> Arc<Registry> {
        ARRIVAL.try_with(Arc::clone).unwrap_or_else(|_| self.current())
    }

    fn current(&self) -> Arc<Registry> {
        self.service.registry()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lifecycle {
    Uninitialized,
    Running,
    ShuttingDown,
}

/// Requests running off the main loop, by id, so `$/cancelRequest` can stop them. Whoever
/// removes an id first (the finishing task or the canceller) sends the one reply.
#[derive(Default)]
struct InFlight(Mutex<HashMap<IdKey, CancellationToken>>);

impl InFlight {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<IdKey, CancellationToken>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self, key: &IdKey) -> Option<CancellationToken> {
        self.map().remove(key)
    }

    fn contains(&self, key: &IdKey) -> bool {
        self.map().contains_key(key)
    }
}

struct Server {
    table: Arc<Table>,
    ctx: Arc<Ctx>,
    out: Arc<Outgoing>,
    in_flight: Arc<InFlight>,
    /// Every request task; reaped by the main loop, cancelled then aborted at exit.
    tasks: JoinSet<()>,
    lifecycle: Lifecycle,
    exit: Option<i32>,
    /// The `Serial` request running, if any.
    serial: Option<Serial>,
    /// What the loop read while `serial` ran and that must wait for its end (a frame, EOF).
    held: Option<Event>,
}

/// A `Serial` request on the blocking pool.
struct Serial {
    id: Id,
    job: tokio::task::JoinHandle<Answer>,
    /// `SerialRegistry`: `Inline` requests are answered meanwhile.
    registry_only: bool,
}

/// What the main loop reacts to.
enum Event {
    Frame(Option<std::io::Result<Frame>>),
    SerialDone(Result<Answer, tokio::task::JoinError>),
    TaskDone,
    Signal(i32),
}

/// Runs the sidecar on stdin/stdout until `exit`, EOF or a signal. Returns the exit code.
pub async fn serve(opts: ServeOptions, log: Arc<LogControl>) -> i32 {
    let recorder = match &opts.record {
        Some(path) => match Recorder::create(path) {
            Ok(r) => Some(Arc::new(r)),
            Err(e) => {
                tracing::error!("cannot record to {}: {e}", path.display());
                return 2;
            }
        },
        None => None,
    };
    let (stdout, direct_fd) = crate::transport::stdio::stdout();
    let out = outgoing::start(stdout, direct_fd, recorder.clone());
    // Unbounded: the catalog sends one event per server state change (refreshes are
    // single-flight and back off), and the forwarder waits while stdout is full.
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let ctx = Ctx {
        service: Service::new(Registry::with_builtins(), "toolreg-call-"),
        host: Mutex::new(HostCapabilities::default()),
        out: out.clone(),
        log: log.clone(),
        max_frame_bytes: opts.max_frame_bytes,
        methods: std::sync::OnceLock::new(),
        catalog: std::sync::OnceLock::new(),
        catalog_events: events_tx,
        timeouts: Mutex::new(Timeouts::default()),
        work: pool::Pool::new(),
        code_limits: std::sync::OnceLock::new(),
        mcp_registry: Mutex::default(),
        sessions: Default::default(),
        runtime: tokio::runtime::Handle::current(),
    };
    let ctx = Arc::new(ctx);
    let forwarder = tokio::spawn(forward_catalog_events(events_rx, out.clone(), Arc::downgrade(&ctx)));
    let table = dispatch::table();
    let _ = ctx.methods.set(table.names());
    let mut server = Server {
        table: Arc::new(table),
        ctx: ctx.clone(),
        out: out.clone(),
        in_flight: Arc::default(),
        tasks: JoinSet::new(),
        lifecycle: Lifecycle::Uninitialized,
        exit: None,
        serial: None,
        held: None,
    };

    let mut frames = FramedRead::new(crate::transport::stdio::stdin(), ContentLengthCodec::new(opts.max_frame_bytes));
    let mut signals = Signals::install();
    let code = loop {
        let event = match server.held.take() {
            // The serial request is done: what waited for it goes first.
            Some(held) if server.serial.is_none() => held,
            held => {
                let reading = held.is_none();
                server.held = held;
                let (serial, tasks) = (&mut server.serial, &mut server.tasks);
                tokio::select! {
                    // Backpressure: no next frame while the host leaves our answers unread.
                    frame = async { out.writable().await; frames.next().await }, if reading => Event::Frame(frame),
                    done = async { (&mut serial.as_mut().expect("guarded by the branch condition").job).await }, if serial.is_some() => Event::SerialDone(done),
                    Some(_) = tasks.join_next(), if !tasks.is_empty() => Event::TaskDone,
                    code = signals.next() => Event::Signal(code),
                }
            }
        };
        match event {
            Event::Frame(f) if server.serial.is_some() && !matches!(&f, Some(Ok(frame)) if server.answers_beside_serial(frame)) => {
                server.held = Some(Event::Frame(f));
            }
            Event::SerialDone(done) => server.serial_done(done),
            Event::Frame(Some(Ok(frame))) => {
                server.on_frame(frame, recorder.as_deref()).await;
                if let Some(code) = server.exit {
                    break code;
                }
            }
            Event::Frame(Some(Err(e))) => {
                tracing::error!("reading stdin failed: {e}");
                break 1;
            }
            Event::Frame(None) => {
                tracing::info!("stdin closed");
                break if server.lifecycle == Lifecycle::ShuttingDown { 0 } else { 1 };
            }
            Event::TaskDone => {}
            Event::Signal(code) => {
                tracing::info!("signal, exit code {code}");
                break code;
            }
        }
    };
    // Running requests are cancelled (an MCP call tells its server), given a moment to end,
    // then aborted.
    for (_, token) in server.in_flight.map().drain() {
        token.cancel();
    }
    let mut tasks = std::mem::take(&mut server.tasks);
    if tokio::time::timeout(SHUTDOWN_GRACE, async { while tasks.join_next().await.is_some() {} }).await.is_err() {
        tracing::warn!("{} requests still running at exit: aborted", tasks.len());
    }
    tasks.shutdown().await;
    // A usage write queued on the blocking pool may never start once the runtime ends.
    let book = ctx.service.usage.clone();
    let _ = tokio::task::spawn_blocking(move || book.flush()).await;
    let audit = ctx.service.audit();
    let _ = tokio::task::spawn_blocking(move || audit.flush(Duration::from_secs(2))).await;
    // MCP children go with us; bounded so a stuck child cannot hold the exit.
    if let Some(catalog) = ctx.catalog.get() {
        let _ = tokio::time::timeout(Duration::from_secs(3), catalog.shutdown()).await;
    }
    forwarder.abort();
    out.close().await;
    log.flush();
    code
}

/// Catalog events become host notifications.
async fn forward_catalog_events(mut rx: mpsc::UnboundedReceiver<CatalogEvent>, out: Arc<Outgoing>, ctx: std::sync::Weak<Ctx>) {
    while let Some(ev) = rx.recv().await {
        if let Some(ctx) = ctx.upgrade() {
            ctx.service.audit_catalog(&ev);
        }
        out.writable().await;
        match ev {
            CatalogEvent::DidChange { server_id, status, tool_count, held } => out.notify(
                "catalog/didChange",
                crate::protocol::DidChangeParams {
                    server_id,
                    status,
                    tool_count,
                    // Names the host shows the user: hidden characters shown (`\u{202E}`).
                    changed_tools: held.as_ref().map(|h| h.changed_tools.iter().map(|n| visible(n).into_owned()).collect()),
                    new_tools: held.map(|h| h.new_tools.iter().map(|n| visible(n).into_owned()).collect()),
                },
            ),
            CatalogEvent::Progress { token, value } => out.notify("$/progress", json!({"token": token, "value": value})),
            CatalogEvent::ToolsChanged { server_id } => tracing::debug!(server = %server_id, "tool list changed"),
            CatalogEvent::ExtrasChanged { server_id, resources, prompts } => {
                if resources {
                    out.notify("catalog/resourcesChanged", crate::protocol::ServerChanged { server_id: server_id.clone() });
                }
                if prompts {
                    out.notify("catalog/promptsChanged", crate::protocol::ServerChanged { server_id });
                }
            }
            CatalogEvent::ResourceUpdated { server_id, uri } => out.notify("catalog/resourceUpdated", crate::protocol::ResourceUpdated { server_id, uri }),
        }
    }
}

/// The signals that end the sidecar, as the exit code a shell would report for them.
#[cfg(unix)]
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn install() -> Self {
        use tokio::signal::unix::{signal, SignalKind};
        Signals {
            term: signal(SignalKind::terminate()).expect("signal handlers install"),
            int: signal(SignalKind::interrupt()).expect("signal handlers install"),
        }
    }

    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => 143,
            _ = self.int.recv() => 130,
        }
    }
}

/// Elsewhere (Windows): Ctrl-C only.
#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn install() -> Self {
        Signals
    }

    async fn next(&mut self) -> i32 {
        match tokio::signal::ctrl_c().await {
            Ok(()) => 130,
            Err(_) => std::future::pending().await,
        }
    }
}

impl Server {
    async fn on_frame(&mut self, frame: Frame, recorder: Option<&Recorder>) {
        let body = match frame {
            Frame::Message(body) => body,
            Frame::TooLarge { length, max } => {
                let e = RpcError::new(ErrorCode::FRAME_TOO_LARGE, format!("frame of {length} bytes exceeds the limit of {max} bytes; it was skipped"))
                    .with_data(json!({"contentLength": length, "maxFrameBytes": max}));
                return self.out.error(None, e);
            }
            Frame::BadHeader(reason) => {
                let e = RpcError::new(ErrorCode::PARSE_ERROR, format!("bad frame header: {reason}"))
                    .with_data(json!({"reason": clip(&reason)}));
                return self.out.error(None, e);
            }
        };
        if let Some(r) = recorder {
            r.record(Direction::In, &body);
        }
        match message::classify(&body) {
            Incoming::Request { id, method, params } => self.on_request(id, method, params).await,
            Incoming::Notification { method, params } => self.on_notification(&method, params.as_deref()),
            // A response is never answered, even a malformed one: the host would answer ours.
            Incoming::Response { id: Some(id), result } => {
                if !self.out.complete(&id, result) {
                    tracing::warn!("response for unknown request id {}: dropped", id.display());
                }
            }
            Incoming::Response { id: None, result } => match result {
                Err(e) => tracing::warn!("the host reported an error without a request id: {} {}", e.code, clip(&e.message)),
                Ok(_) => tracing::warn!("a response without a request id: dropped"),
            },
            Incoming::Invalid { id, error } => self.out.error(id.as_ref(), error),
        }
    }

    fn on_notification(&mut self, method: &str, params: Option<&[u8]>) {
        match method {
            "exit" => self.exit = Some(if self.lifecycle == Lifecycle::ShuttingDown { 0 } else { 1 }),
            "initialized" => tracing::debug!("host initialized"),
            "$/cancelRequest" => {
                let Some(id) = cancel_target(params) else {
                    return tracing::warn!("$/cancelRequest without a string or integer id: ignored");
                };
                if let Some(token) = self.in_flight.take(id.key()) {
                    // The answer goes out before the token fires: a handler on another thread
                    // that stops at once (withdrawing its own request to the host) must not
                    // write before it. The handler then stops cleanly (an MCP call tells its
                    // server); the task drops it anyway after `CANCEL_BACKSTOP`.
                    self.out.error(Some(&id), RpcError::new(ErrorCode::REQUEST_CANCELLED, "request cancelled"));
                    token.cancel();
                }
            }
            // LSP: notifications starting with `$/` may be ignored.
            m if m.starts_with("$/") => {}
            m => tracing::debug!("ignoring unknown notification {}", clip(m)),
        }
    }

    async fn on_request(&mut self, id: Id, method: String, params: Option<Bytes>) {
        let refuse = |code, msg: String| RpcError::new(code, msg).with_data(json!({"method": clip(&method)}));
        let refusal = match (self.lifecycle, method.as_str()) {
            (Lifecycle::Uninitialized, "initialize") => None,
            (Lifecycle::Uninitialized, _) => Some(refuse(ErrorCode::SERVER_NOT_INITIALIZED, "the server is not initialized: send initialize first".into())),
            (Lifecycle::Running, "initialize") => Some(refuse(ErrorCode::INVALID_REQUEST, "initialize was already received".into())),
            (Lifecycle::ShuttingDown, _) => Some(refuse(ErrorCode::INVALID_REQUEST, "the server is shutting down: only exit is accepted".into())),
            _ => None,
        };
        if let Some(e) = refusal {
            return self.out.error(Some(&id), e);
        }
        let table = self.table.clone();
        let Some(m) = table.get(&method) else {
            return self.out.error(Some(&id), refuse(ErrorCode::METHOD_NOT_FOUND, format!("unknown method {:?}", clip(&method))));
        };
        // Two requests in flight with one id: the host could not tell their answers apart.
        if self.in_flight.contains(id.key()) {
            let e = RpcError::new(ErrorCode::INVALID_REQUEST, format!("request id {} is already in use by a request in flight", id.display()))
                .with_data(json!({"id": id.display(), "method": clip(&method)}));
            return self.out.error(Some(&id), e);
        }
        let kind = match m.kind {
            Kind::Scan if self.ctx.current().len() >= BIG_REGISTRY => Kind::Heavy,
            Kind::Scan => Kind::Inline,
            kind => kind,
        };
        // Described for its span when telemetry is on (requests that run concurrently).
        let span = crate::service::Telemetry::global().is_on().then(|| crate::service::TelemetryRequest {
            face: crate::service::TelemetryFace::Sidecar,
            method: method.clone(),
            id: id.display(),
            session: None,
            transport: "pipe",
        });
        match (kind, &m.handler) {
            (Kind::Serial | Kind::SerialRegistry, Handler::Sync(_)) => {
                // In flight under its id (duplicate ids are refused meanwhile), not cancellable:
                // `$/cancelRequest` waits for its end like every notification.
                self.in_flight.map().insert(id.key().clone(), CancellationToken::new());
                let (table, ctx, job_id) = (self.table.clone(), self.ctx.clone(), id.clone());
                let job = tokio::task::spawn_blocking(move || {
                    let Some(Handler::Sync(f)) = table.get(&method).map(|m| &m.handler) else { unreachable!("the method was found") };
                    call_sync(f, &ctx, &job_id, params.as_deref())
                });
                self.serial = Some(Serial { id, job, registry_only: kind == Kind::SerialRegistry });
            }
            (Kind::Ordered | Kind::Inline, Handler::Sync(f)) => {
                let answer = call_sync(f, &self.ctx, &id, params.as_deref());
                let ok = answer.ok;
                if method == "shutdown" && ok {
                    self.out.send_shutdown_answer(answer.body);
                } else {
                    self.out.send_raw(answer.body);
                }
                match method.as_str() {
                    "initialize" if ok => self.lifecycle = Lifecycle::Running,
                    "shutdown" if ok => self.lifecycle = Lifecycle::ShuttingDown,
                    _ => {}
                }
            }
            (_, Handler::Sync(_)) => {
                // On the work pool, on the registry as of now.
                let (table, ctx, token) = (self.table.clone(), self.ctx.clone(), CancellationToken::new());
                let (snapshot, (tx, rx)) = (ctx.current(), tokio::sync::oneshot::channel());
                let (job_id, job_token) = (id.clone(), token.clone());
                let work = ctx.clone();
                work.work.spawn(move || {
                    if job_token.is_cancelled() {
                        return; // cancelled while queued: answered already
                    }
                    let Some(Handler::Sync(f)) = table.get(&method).map(|m| &m.handler) else { return };
                    let answer = ARRIVAL.sync_scope(snapshot, || CANCEL.sync_scope(job_token, || call_sync(f, &ctx, &job_id, params.as_deref())));
                    let _ = tx.send(answer);
                });
                let lost = id.clone();
                let work = async move {
                    rx.await.unwrap_or_else(|_| Answer { body: message::failure(Some(&lost), &internal("the work pool dropped the request")), ok: false })
                };
                self.track(id, token, traced(span, work));
            }
            (_, Handler::Async(f)) => {
                let token = CancellationToken::new();
                let work = f(self.ctx.clone(), id.clone(), params);
                let caught = id.clone();
                let work = async move { AssertUnwindSafe(work).catch_unwind().await.unwrap_or_else(|panic| panicked(&caught, panic)) };
                let work = ARRIVAL.scope(self.ctx.current(), CANCEL.scope(token.clone(), traced(span, work)));
                self.track(id, token, work);
            }
        }
    }

    /// Whether `frame`, read while a `Serial` request runs, is answered at once: an `Inline`
    /// request beside a `SerialRegistry` one (it reads no registry, so it answers the same).
    fn answers_beside_serial(&self, frame: &Frame) -> bool {
        let (Some(serial), Frame::Message(body), Lifecycle::Running) = (&self.serial, frame, self.lifecycle) else { return false };
        serial.registry_only
            && matches!(message::classify(body), Incoming::Request { method, .. } if self.table.get(&method).is_some_and(|m| m.kind == Kind::Inline))
    }

    fn serial_done(&mut self, done: Result<Answer, tokio::task::JoinError>) {
        let Some(serial) = self.serial.take() else { return };
        self.in_flight.take(serial.id.key());
        let answer = done.unwrap_or_else(|_| Answer { body: message::failure(Some(&serial.id), &internal("the request's job was lost")), ok: false });
        self.out.send_raw(answer.body);
    }

    /// Runs a request off the main loop, in flight under its id until it answers.
    fn track(&mut self, id: Id, token: CancellationToken, work: impl std::future::Future<Output = Answer> + Send + 'static) {
        let (out, in_flight) = (self.out.clone(), self.in_flight.clone());
        self.in_flight.map().insert(id.key().clone(), token.clone());
        self.tasks.spawn(async move {
            tokio::select! {
                answer = work => {
                    if in_flight.take(id.key()).is_some() {
                        out.send_raw(answer.body);
                    }
                }
                _ = async { token.cancelled().await; tokio::time::sleep(CANCEL_BACKSTOP).await } => {
                    tracing::warn!("request {} ignored its cancellation for {CANCEL_BACKSTOP:?}: dropped", id.display());
                }
            }
        });
    }
}

/// `work` in its span (`telemetry::request`); a failure's `error.type` is its JSON-RPC code.
fn traced(span: Option<crate::service::TelemetryRequest>, work: impl std::future::Future<Output = Answer>) -> impl std::future::Future<Output = Answer> {
    crate::service::TelemetryRequest::traced(span, work, |a: &Answer| {
        #[derive(serde::Deserialize)]
        struct Failure {
            error: Code,
        }
        #[derive(serde::Deserialize)]
        struct Code {
            code: i64,
        }
        (!a.ok).then(|| serde_json::from_slice::<Failure>(&a.body).map_or_else(|_| "error".into(), |f| f.error.code.to_string()))
    })
}

/// The id named by `$/cancelRequest`'s params.
fn cancel_target(params: Option<&[u8]>) -> Option<Id> {
    #[derive(serde::Deserialize)]
    struct Target<'a> {
        #[serde(borrow)]
        id: &'a serde_json::value::RawValue,
    }
    let t: Target = serde_json::from_slice(params?).ok()?;
    Id::parse(Bytes::copy_from_slice(t.id.get().as_bytes()))
}

fn internal(what: &str) -> RpcError {
    RpcError::new(ErrorCode::INTERNAL_ERROR, format!("internal error: {what}"))
}

/// Runs a synchronous handler; a panic becomes -32603 for that request alone.
fn call_sync(f: &dispatch::SyncFn, ctx: &Ctx, id: &Id, params: Option<&[u8]>) -> Answer {
    std::panic::catch_unwind(AssertUnwindSafe(|| f(ctx, id, params))).unwrap_or_else(|panic| panicked(id, panic))
}

fn panicked(id: &Id, panic: Box<dyn std::any::Any + Send>) -> Answer {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    tracing::error!("handler panicked: {what}");
    Answer { body: message::failure(Some(id), &internal(&what)), ok: false }
}
