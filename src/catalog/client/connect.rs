//! Opening a session: spawn the child (stdio, under `child.rs`) or reach the URL (Streamable
//! HTTP, with OAuth when the server asks for it), then the handshake, `server/discover` or
//! `initialize` per the server's `protocolVersion`. `auto` falls back to `initialize` once
//! when the probe's answer rules out 2026-07-28 but rmcp did not fall back itself; the whole
//! connect, both tries, stays within one timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt};

use super::handler::{Handler, HandlerShared};
use super::Connection;
use crate::catalog::authorize::ServerAuth;
use crate::catalog::call;
use crate::catalog::call_logs;
use crate::catalog::child::{self, ChildProc};
use crate::catalog::config::{ProtocolChoice, ServerConfig, Transport};
use crate::catalog::diagnosis::Diagnosis;
use crate::catalog::launch::{self, SpawnSettings};
use crate::catalog::elicit::{Asker, InFlight};
use crate::catalog::stdio::BoundedStdio;
use crate::secret::redactor::Redactor;

/// Why a connect failed: `Verdict` when the server's answer to `server/discover` rules out
/// 2026-07-28 but rmcp did not fall back (it knows discover but not our version, it answered
/// with something other than a discover result, or rmcp's own fallback failed on the same
/// stream), so one more connect with `initialize` alone may still work.
enum Failed {
    Verdict(String),
    Other(String),
}

impl From<String> for Failed {
    fn from(why: String) -> Self {
        Failed::Other(why)
    }
}

impl From<&str> for Failed {
    fn from(why: &str) -> Self {
        Failed::Other(why.to_owned())
    }
}

/// A failed connect: why, in one line, and for a person, what to do (`diagnosis.rs`).
pub(crate) type ConnectFailure = (String, Option<Diagnosis>);

/// `legacy_known`: an earlier `auto` connect of this server ended on 2025-11-25, so this one
/// goes straight to `initialize` (a server that ignores `server/discover` costs rmcp's fixed
/// 10 s probe at every connect otherwise).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn connect(
    config: &ServerConfig,
    timeout: Duration,
    max_message_bytes: usize,
    on_list_changed: Box<dyn Fn() + Send + Sync>,
    on_updated: Box<dyn Fn(String) + Send + Sync>,
    asker: Asker,
    auth: Option<Arc<ServerAuth>>,
    legacy_known: bool,
    spawn: &SpawnSettings,
) -> Result<Connection, ConnectFailure> {
    // Registered before the server runs: its first stderr line may quote them.
    let redactor = Redactor::new(config.secret_values());
    let handler = Arc::new(HandlerShared {
        server_id: config.id.clone(),
        progress: Mutex::new(call::Progress::default()),
        on_list_changed,
        on_updated,
        asker,
        in_flight: Mutex::new(InFlight::default()),
        _redactor: redactor.clone(),
    });
    // The program a stdio command names and the PATH it needs (`launch`); HTTP unchanged.
    let started = match launch::resolve(config, spawn).await {
        Ok(started) => started,
        Err(missing) => {
            let command = match &config.transport {
                Transport::Stdio { command, .. } => command.as_str(),
                Transport::Http { .. } | Transport::Sse { .. } => "",
            };
            let diagnosis = Diagnosis::missing(command, &missing);
            return Err((config.redact(&diagnosis.message), Some(diagnosis)));
        }
    };
    let diagnosis = Mutex::new(None);
    let open = Open { config, started: &started, timeout, deadline: Instant::now() + timeout, max_message_bytes, handler, redactor, auth, diagnosis };
    let lifecycle = match (config.protocol_version, legacy_known) {
        (ProtocolChoice::V2025_11_25, _) | (ProtocolChoice::Auto, true) => ClientLifecycleMode::Initialize,
        (ProtocolChoice::V2026_07_28, _) => ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        (ProtocolChoice::Auto, false) => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
    };
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let done = match open.session(lifecycle).await {
        Ok(c) => Ok(c),
        Err(Failed::Verdict(why)) if auto => {
            tracing::info!(server = %config.id, "no 2026-07-28 session ({why}); connecting again with initialize");
            open.session(ClientLifecycleMode::Initialize).await.map_err(|f| match f {
                Failed::Verdict(w) | Failed::Other(w) => w,
            })
        }
        Err(Failed::Verdict(why) | Failed::Other(why)) => Err(why),
    };
    done.map_err(|why| {
        let diagnosis = open.diagnosis.lock().unwrap_or_else(|e| e.into_inner()).take();
        let diagnosis = diagnosis.or_else(|| matches!(config.transport, Transport::Http { .. } | Transport::Sse { .. }).then(|| Diagnosis::http(&config.redact(&why), why.contains("timed out"))));
        (why, diagnosis)
    })
}

/// One connect's inputs; `session` may run twice (the fallback), within one `deadline`.
struct Open<'a> {
    config: &'a ServerConfig,
    /// `config` as started: the program found and its PATH (`launch`).
    started: &'a ServerConfig,
    timeout: Duration,
    deadline: Instant,
    max_message_bytes: usize,
    handler: Arc<HandlerShared>,
    redactor: Redactor,
    auth: Option<Arc<ServerAuth>>,
    /// Set by a stdio start that failed: what `ServerStatus.diagnosis` shows.
    diagnosis: Mutex<Option<Diagnosis>>,
}

impl Open<'_> {
    fn diagnose(&self, d: Diagnosis) {
        *self.diagnosis.lock().unwrap_or_else(|e| e.into_inner()) = Some(d);
    }

    /// The server's command as configured, for a diagnosis.
    fn command(&self) -> &str {
        match &self.config.transport {
            Transport::Stdio { command, .. } => command,
            Transport::Http { .. } | Transport::Sse { .. } => "",
        }
    }

    /// A legacy HTTP+SSE session (`sse.rs`), always with `initialize` (the transport is of
    /// 2024-11-05), within what is left of the connect timeout.
    async fn legacy_sse(&self, url: &crate::secret::SecretUrl, headers: &std::collections::BTreeMap<String, crate::secret::Secret>) -> Result<Connection, Failed> {
        let ms = self.timeout.as_millis();
        let map: http::HeaderMap = header_values(headers)?.into_iter().collect();
        install_tls_provider();
        let client = crate::catalog::proxy::any(self.config.proxy.as_ref())?;
        let pipe = tokio::time::timeout(self.left(), super::sse::open(client, url.expose(), map, self.left()))
            .await
            .map_err(|_| Failed::Other(format!("legacy SSE: no endpoint within {ms} ms")))??;
        let served = tokio::time::timeout(self.left(), Handler(self.handler.clone()).serve_with_lifecycle(pipe, ClientLifecycleMode::Initialize)).await;
        let service = match served {
            Err(_) => return Err(Failed::Other(format!("initialize timed out after {ms} ms (legacy SSE)"))),
            Ok(Err(e)) => return Err(Failed::Other(format!("initialize failed (legacy SSE): {}", describe(&e)))),
            Ok(Ok(s)) => s,
        };
        let mut connection = Connection::new(service, self.handler.clone(), None, None);
        connection.transport = "sse";
        Ok(connection)
    }

    /// A stdio server that ended during `initialize`: its exit and its last stderr lines.
    async fn ended(&self, child: &ChildProc, denials: &child::Denials) {
        let (tail, denied) = denials.tail(std::time::Duration::from_millis(300)).await;
        let status = child.status.get().copied();
        self.diagnose(Diagnosis::exited(self.config, self.command(), status, tail, denied));
    }

    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The handshake's failure as text, classified (`Failed::Verdict`).
    fn failed(&self, e: &ClientInitializeError) -> Failed {
        let why = format!("initialize failed: {}", describe(e));
        match e {
            ClientInitializeError::NoCompatibleProtocolVersion { .. }
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::LegacyFallbackFailed { .. } => Failed::Verdict(why),
            _ => Failed::Other(why),
        }
    }

    async fn session(&self, lifecycle: ClientLifecycleMode) -> Result<Connection, Failed> {
        let (config, handler, auth) = (self.config, &self.handler, &self.auth);
        let ms = self.timeout.as_millis();
        let timed_out = || Failed::Other(format!("initialize timed out after {ms} ms"));
        match &config.transport {
            Transport::Stdio { .. } => {
                let (mut child, sandbox) = match child::spawn(self.started).await {
                    Ok(spawned) => spawned,
                    Err(why) => {
                        if let Some(refusal) = why.strip_prefix("sandbox ") {
                            self.diagnose(Diagnosis::sandbox(self.command(), &format!("sandbox {refusal}")));
                        }
                        return Err(Failed::Other(why));
                    }
                };
                let stdin = child.stdin.take().ok_or("child has no stdin")?;
                let stdout = child.stdout.take().ok_or("child has no stdout")?;
                let denials = child::Denials::hiding(&sandbox.private);
                if let Some(stderr) = child.stderr.take() {
                    tokio::spawn(child::forward_stderr(config.id.clone(), stderr, self.redactor.clone(), denials.clone()));
                }
                let confined = (sandbox.state == crate::confine::SandboxState::Enforced).then(|| (sandbox.summary(), denials.clone()));
                let child = ChildProc::own(child, confined);
                let mut exited = child.exited.clone();
                let transport = BoundedStdio::new(stdout, stdin, self.max_message_bytes);
                let direct = transport.direct();
                let shared = handler.clone();
                direct.on_notice(move |text| call_logs::take(&shared.in_flight, text));
                let served = tokio::select! {
                    r = tokio::time::timeout(self.left(), Handler(handler.clone()).serve_with_lifecycle(transport, lifecycle)) => Ok(r),
                    why = exited.wait_for(|e| e.is_some()) => Err(why.map(|w| w.clone().unwrap_or_default()).unwrap_or_default()),
                };
                let served = match served {
                    Ok(r) => r,
                    Err(why) => {
                        self.ended(&child, &denials).await;
                        return Err(Failed::Other(format!("{why} during initialize")));
                    }
                };
                let service = match served {
                    Err(_) => {
                        let (tail, _) = denials.tail(std::time::Duration::ZERO).await;
                        self.diagnose(Diagnosis::timeout(config, self.command(), ms, tail));
                        return Err(timed_out());
                    }
                    Ok(Err(e)) => {
                        // The pipe closing usually means the process is exiting: its exit (and,
                        // confined, what its sandbox denied) says more than "connection closed".
                        let grace = std::time::Duration::from_millis(500);
                        let ended = tokio::time::timeout(grace, exited.wait_for(|e| e.is_some())).await;
                        if let Some(why) = ended.ok().and_then(|r| r.ok().map(|w| w.clone().unwrap_or_default())) {
                            self.ended(&child, &denials).await;
                            return Err(Failed::Other(format!("{why} during initialize")));
                        }
                        return Err(self.failed(&e));
                    }
                    Ok(Ok(s)) => s,
                };
                let mut connection = Connection::new(service, handler.clone(), Some(child), None);
                connection.direct = Some(direct);
                Ok(connection)
            }
            Transport::Sse { url, headers } => self.legacy_sse(url, headers).await,
            Transport::Http { url, headers } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                use rmcp::transport::StreamableHttpClientTransport;
                let map: HashMap<_, _> = header_values(headers)?.into_iter().collect();
                let initialize_only = matches!(lifecycle, ClientLifecycleMode::Initialize);
                install_tls_provider();
                let proxied = crate::catalog::proxy::client(config.proxy.as_ref())?;
                let transport_config = StreamableHttpClientTransportConfig::with_uri(url.expose()).custom_headers(map);
                let served = match auth {
                    // OAuth: requests carry the server's bearer token; a 401/403 starts authorization.
                    Some(auth) => {
                        // Saved tokens are read from the host and their server found again first.
                        let Ok(client) = tokio::time::timeout(self.left(), auth.http_client()).await else {
                            return Err(Failed::Other(format!("initialize timed out after {ms} ms (loading saved OAuth tokens)")));
                        };
                        let transport = StreamableHttpClientTransport::with_client(client, transport_config);
                        tokio::time::timeout(self.left(), Handler(handler.clone()).serve_with_lifecycle(transport, lifecycle)).await
                    }
                    None => {
                        let transport = match proxied {
                            Some(client) => StreamableHttpClientTransport::with_client(client, transport_config),
                            None => StreamableHttpClientTransport::from_config(transport_config),
                        };
                        tokio::time::timeout(self.left(), Handler(handler.clone()).serve_with_lifecycle(transport, lifecycle)).await
                    }
                };
                let service = match served {
                    Err(_) => return Err(timed_out()),
                    Ok(Err(e)) => {
                        // A 401 (or 403 insufficient_scope) carries the challenge that starts OAuth.
                        // The server answered: what the status says is about authorization.
                        if let (Some(auth), Some(challenge)) = (auth, e.auth_challenge()) {
                            let why = auth.challenged(challenge.to_owned());
                            self.diagnose(Diagnosis::authorization(config, &why, auth.flow_running()));
                            return Err(Failed::Other(why));
                        }
                        // The MCP spec's backwards compatibility: an `initialize` POST refused
                        // with 400, 404 or 405 means a legacy HTTP+SSE server at the same URL.
                        // (A refused `server/discover` is not that: `auto` falls back to
                        // `initialize` first, a 400 included.)
                        let refused = crate::catalog::diagnosis::http_status(&describe(&e));
                        if matches!(refused, Some(404 | 405)) || (refused == Some(400) && initialize_only) {
                            tracing::info!(server = %config.id, status = refused, "Streamable HTTP refused; trying legacy HTTP+SSE at the same URL");
                            return self.legacy_sse(url, headers).await.map_err(|f| match f {
                                Failed::Verdict(w) | Failed::Other(w) => Failed::Other(format!("{}; as legacy SSE: {w}", describe(&e))),
                            });
                        }
                        return Err(self.failed(&e));
                    }
                    Ok(Ok(s)) => s,
                };
                Ok(Connection::new(service, handler.clone(), None, auth.clone()))
            }
        }
    }
}

/// A server's headers as HTTP header values, marked sensitive (kept out of any `Debug` of a
/// request, hyper's and reqwest's); a bad name or value is named by its key only.
fn header_values(headers: &std::collections::BTreeMap<String, crate::secret::Secret>) -> Result<Vec<(http::HeaderName, http::HeaderValue)>, String> {
    headers
        .iter()
        .map(|(k, v)| {
            let name = http::HeaderName::from_bytes(k.as_bytes()).map_err(|_| format!("invalid HTTP header name {k:?}"))?;
            let mut value = http::HeaderValue::from_str(v.expose()).map_err(|_| format!("invalid value for HTTP header {k:?}"))?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

/// reqwest is built with rustls but no crypto provider (the default one, aws-lc, is a heavy C
/// build); we install ring once, unless the process already chose a provider.
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An error and its causes on one line, without rmcp's Rust type names: the root cause
/// (refused connection, bad certificate) is what a user needs to see.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut next = Some(e);
    while let Some(err) = next {
        let mut text = err.to_string();
        // rmcp prints `Transport [rmcp::transport::worker::WorkerTransport<...>]`.
        while let (Some(a), Some(b)) = (text.find(" ["), text.find(']')) {
            if b < a || !text[a..b].contains("::") {
                break;
            }
            text.replace_range(a..=b, "");
        }
        if !out.contains(text.as_str()) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        next = err.source();
    }
    // reqwest quotes the URL it failed on, query (a token) included.
    crate::secret::redact_urls_in(&out).into_owned()
}
