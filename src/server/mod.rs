//! The only place where the protocol meets the domain: the main loop, the method table,
//! requests in flight in both directions, and the mapping of errors to codes.
//!
//! One loop reads frames in order. Notifications and `Ordered` requests (those that change
//! state) complete before the next frame is read, so later messages see their effect; other
//! requests run concurrently on a snapshot. Every request gets exactly one reply: a
//! cancelled or panicking one too.

mod dispatch;
mod handlers;
mod handlers_pins;
mod handlers_tools;
mod host;
pub mod outgoing;

use crate::approval::Approvals;
use crate::catalog::{Catalog, CatalogEvent};
use crate::exposition::plans::PlanStore;
use crate::logging::LogControl;
use crate::protocol::{ErrorCode, HostCapabilities, RpcError, Timeouts};
use crate::registry::Registry;
use crate::transport::record::{Direction, Recorder};
use crate::transport::{ContentLengthCodec, Frame};
use futures::{FutureExt, StreamExt};
use jsonrpsee::RpcModule;
use outgoing::Outgoing;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use crate::validate::Validators;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::codec::FramedRead;

pub struct ServeOptions {
    pub max_frame_bytes: usize,
    pub record: Option<PathBuf>,
}

/// State shared by the handlers. Only `Ordered` handlers (run by the main loop) write it.
pub struct Ctx {
    pub registry: RwLock<Arc<Registry>>,
    pub plans: PlanStore,
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
    pub validators: Validators,
    pub approvals: Arc<Approvals>,
    pub call_seq: std::sync::atomic::AtomicU64,
}

tokio::task_local! {
    /// The cancellation token of the request being handled (set for concurrent requests).
    static CANCEL: CancellationToken;
}

/// The current request's cancellation token; a fresh one outside a request.
pub fn current_cancel() -> CancellationToken {
    CANCEL.try_with(|t| t.clone()).unwrap_or_default()
}

impl Ctx {
    pub fn snapshot(&self) -> Arc<Registry> {
        self.registry.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lifecycle {
    Uninitialized,
    Running,
    ShuttingDown,
}

/// Requests running concurrently, by id, so `$/cancelRequest` can stop them. Whoever removes
/// an id first (the finishing task or the canceller) sends the one reply.
#[derive(Default)]
struct InFlight(Mutex<HashMap<String, (AbortHandle, CancellationToken)>>);

impl InFlight {
    fn take(&self, key: &str) -> Option<(AbortHandle, CancellationToken)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(key)
    }
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

struct Server {
    module: Arc<RpcModule<Ctx>>,
    out: Arc<Outgoing>,
    in_flight: Arc<InFlight>,
    lifecycle: Lifecycle,
    exit: Option<i32>,
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
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    tokio::spawn(forward_catalog_events(events_rx, out.clone()));
    let ctx = Ctx {
        registry: RwLock::new(Arc::new(Registry::with_builtins())),
        plans: PlanStore::default(),
        host: Mutex::new(HostCapabilities::default()),
        out: out.clone(),
        log: log.clone(),
        max_frame_bytes: opts.max_frame_bytes,
        methods: std::sync::OnceLock::new(),
        catalog: std::sync::OnceLock::new(),
        catalog_events: events_tx,
        timeouts: Mutex::new(Timeouts::default()),
        validators: Validators::new(),
        approvals: Arc::default(),
        call_seq: Default::default(),
    };
    let ctx = Arc::new(ctx);
    let module = dispatch::module(ctx.clone());
    let mut methods: Vec<String> = module.method_names().map(str::to_string).collect();
    methods.sort();
    let _ = ctx.methods.set(methods);
    let mut server = Server {
        module: Arc::new(module),
        out: out.clone(),
        in_flight: Arc::default(),
        lifecycle: Lifecycle::Uninitialized,
        exit: None,
    };

    let mut frames = FramedRead::new(crate::transport::stdio::stdin(), ContentLengthCodec::new(opts.max_frame_bytes));
    let mut sigterm = signal(tokio::signal::unix::SignalKind::terminate());
    let mut sigint = signal(tokio::signal::unix::SignalKind::interrupt());
    let code = loop {
        tokio::select! {
            frame = frames.next() => match frame {
                Some(Ok(frame)) => {
                    server.on_frame(frame, recorder.as_deref()).await;
                    if let Some(code) = server.exit {
                        break code;
                    }
                }
                Some(Err(e)) => {
                    tracing::error!("reading stdin failed: {e}");
                    break 1;
                }
                None => {
                    tracing::info!("stdin closed");
                    break if server.lifecycle == Lifecycle::ShuttingDown { 0 } else { 1 };
                }
            },
            _ = sigterm.recv() => { tracing::info!("SIGTERM"); break 143; }
            _ = sigint.recv() => { tracing::info!("SIGINT"); break 130; }
        }
    };
    for (_, (handle, token)) in server.in_flight.0.lock().unwrap_or_else(|e| e.into_inner()).drain() {
        token.cancel();
        handle.abort();
    }
    // MCP children go with us; bounded so a stuck child cannot hold the exit.
    if let Some(catalog) = ctx.catalog.get() {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), catalog.shutdown()).await;
    }
    out.close().await;
    log.flush();
    code
}

/// Catalog events become host notifications.
async fn forward_catalog_events(mut rx: mpsc::UnboundedReceiver<CatalogEvent>, out: Arc<Outgoing>) {
    while let Some(ev) = rx.recv().await {
        match ev {
            CatalogEvent::DidChange { server_id, status, tool_count, held } => out.notify(
                "catalog/didChange",
                crate::protocol::DidChangeParams {
                    server_id,
                    status,
                    tool_count,
                    changed_tools: held.as_ref().map(|h| h.changed_tools.clone()),
                    new_tools: held.map(|h| h.new_tools),
                },
            ),
            CatalogEvent::Progress { token, value } => out.notify("$/progress", json!({"token": token, "value": value})),
            CatalogEvent::ToolsChanged { server_id } => tracing::debug!(server = %server_id, "tool list changed"),
        }
    }
}

fn signal(kind: tokio::signal::unix::SignalKind) -> tokio::signal::unix::Signal {
    tokio::signal::unix::signal(kind).expect("signal handlers install")
}

impl Server {
    async fn on_frame(&mut self, frame: Frame, recorder: Option<&Recorder>) {
        let body = match frame {
            Frame::Message(body) => body,
            Frame::TooLarge { length, max } => {
                let e = RpcError::new(ErrorCode::FRAME_TOO_LARGE, format!("frame of {length} bytes exceeds the limit of {max} bytes; it was skipped"))
                    .with_data(json!({"contentLength": length, "maxFrameBytes": max}));
                return self.out.error(Value::Null, e);
            }
            Frame::BadHeader(reason) => {
                let e = RpcError::new(ErrorCode::PARSE_ERROR, format!("bad frame header: {reason}"))
                    .with_data(json!({"reason": reason}));
                return self.out.error(Value::Null, e);
            }
        };
        if let Some(r) = recorder {
            r.record(Direction::In, &body);
        }
        let msg: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                let err = RpcError::new(ErrorCode::PARSE_ERROR, format!("invalid JSON: {e}"))
                    .with_data(json!({"error": e.to_string(), "line": e.line(), "column": e.column()}));
                return self.out.error(Value::Null, err);
            }
        };
        let invalid = |why: &str| RpcError::new(ErrorCode::INVALID_REQUEST, why.to_string());
        let Value::Object(obj) = &msg else {
            let why = if msg.is_array() { "batches are not supported" } else { "a message must be a JSON object" };
            return self.out.error(Value::Null, invalid(why));
        };
        let id = obj.get("id").cloned();
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return self.out.error(id.unwrap_or(Value::Null), invalid("\"jsonrpc\" must be \"2.0\""));
        }
        if let Some(id) = &id {
            if !(id.is_string() || id.is_i64() || id.is_u64()) {
                return self.out.error(Value::Null, invalid("\"id\" must be a string or an integer"));
            }
        }
        match (obj.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => {
                let method = method.to_string();
                self.on_request(method, id, body).await
            }
            (Some(method), None) => {
                let method = method.to_string();
                self.on_notification(&method, obj.get("params"))
            }
            (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
                let result = match obj.get("error") {
                    Some(e) => Err(RpcError {
                        code: e.get("code").and_then(Value::as_i64).unwrap_or(-32603) as i32,
                        message: e.get("message").and_then(Value::as_str).unwrap_or("").to_string(),
                        data: e.get("data").cloned(),
                    }),
                    None => Ok(obj.get("result").cloned().unwrap_or(Value::Null)),
                };
                if !self.out.complete(&id, result) {
                    tracing::warn!("response for unknown request id {id}");
                }
            }
            (_, id) => self.out.error(id.unwrap_or(Value::Null), invalid("a message needs a \"method\", or a \"result\" or \"error\"")),
        }
    }

    fn on_notification(&mut self, method: &str, _params: Option<&Value>) {
        match method {
            "exit" => self.exit = Some(if self.lifecycle == Lifecycle::ShuttingDown { 0 } else { 1 }),
            "initialized" => tracing::debug!("host initialized"),
            "$/cancelRequest" => {
                let Some(id) = _params.and_then(|p| p.get("id")) else { return };
                if let Some((handle, token)) = self.in_flight.take(&id_key(id)) {
                    // The handler sees the token and stops cleanly (an MCP call tells its server);
                    // the abort is a backstop for one that does not.
                    token.cancel();
                    tokio::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                        handle.abort();
                    });
                    self.out.error(id.clone(), RpcError::new(ErrorCode::REQUEST_CANCELLED, "request cancelled"));
                }
            }
            // LSP: notifications starting with `$/` may be ignored.
            m if m.starts_with("$/") => {}
            m => tracing::debug!("ignoring unknown notification {m}"),
        }
    }

    async fn on_request(&mut self, method: String, id: Value, body: bytes::Bytes) {
        let refuse = |code, msg: String| RpcError::new(code, msg).with_data(json!({"method": method}));
        match (self.lifecycle, method.as_str()) {
            (Lifecycle::Uninitialized, "initialize") => {}
            (Lifecycle::Uninitialized, _) => {
                return self.out.error(id, refuse(ErrorCode::SERVER_NOT_INITIALIZED, "the server is not initialized: send initialize first".into()));
            }
            (Lifecycle::Running, "initialize") => {
                return self.out.error(id, refuse(ErrorCode::INVALID_REQUEST, "initialize was already received".into()));
            }
            (Lifecycle::ShuttingDown, _) => {
                return self.out.error(id, refuse(ErrorCode::INVALID_REQUEST, "the server is shutting down: only exit is accepted".into()));
            }
            _ => {}
        }
        if self.module.method(&method).is_none() {
            return self.out.error(id, refuse(ErrorCode::METHOD_NOT_FOUND, format!("unknown method {method:?}")));
        }
        // `body` parsed as JSON above, so it is UTF-8 and this borrows rather than copies.
        match dispatch::kind(&method) {
            dispatch::Kind::Ordered => {
                let resp = call(&self.module, &id, &String::from_utf8_lossy(&body)).await;
                // Only the lifecycle methods need to know whether they succeeded.
                let ok = matches!(method.as_str(), "initialize" | "shutdown") && !is_error(&resp);
                self.out.send_raw(resp);
                match method.as_str() {
                    "initialize" if ok => self.lifecycle = Lifecycle::Running,
                    "shutdown" if ok => self.lifecycle = Lifecycle::ShuttingDown,
                    _ => {}
                }
            }
            dispatch::Kind::Inline => {
                let resp = call(&self.module, &id, &String::from_utf8_lossy(&body)).await;
                self.out.send_raw(resp);
            }
            dispatch::Kind::Concurrent => {
                let key = id_key(&id);
                let (module, out, in_flight) = (self.module.clone(), self.out.clone(), self.in_flight.clone());
                let mut guard = self.in_flight.0.lock().unwrap_or_else(|e| e.into_inner());
                let k = key.clone();
                let token = CancellationToken::new();
                let task = tokio::spawn(CANCEL.scope(token.clone(), async move {
                    let resp = call(&module, &id, &String::from_utf8_lossy(&body)).await;
                    if in_flight.take(&k).is_some() {
                        out.send_raw(resp);
                    }
                }));
                guard.insert(key, (task.abort_handle(), token));
            }
        }
    }
}

/// Whether a response is an error, without building it as a `Value`.
fn is_error(resp: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        error: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Probe>(resp).map_or(true, |p| p.error.is_some())
}

/// Runs one request through the method table; a panic becomes -32603 for that request alone.
async fn call(module: &RpcModule<Ctx>, id: &Value, text: &str) -> bytes::Bytes {
    match AssertUnwindSafe(module.raw_json_request(text, 1)).catch_unwind().await {
        // The response moves into the frame without a copy.
        Ok(Ok((resp, _))) => bytes::Bytes::from(String::from(Box::<str>::from(resp))),
        Ok(Err(e)) => error_body(id, RpcError::new(ErrorCode::INVALID_REQUEST, format!("invalid request: {e}"))),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!("handler panicked: {what}");
            error_body(id, RpcError::new(ErrorCode::INTERNAL_ERROR, format!("internal error: {what}")))
        }
    }
}

fn error_body(id: &Value, e: RpcError) -> bytes::Bytes {
    bytes::Bytes::from(serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "error": e})).expect("serializes"))
}
