//! `toolreg mcp --http ADDR`: Streamable HTTP (rmcp's service) on a loopback address, for
//! clients that only speak HTTP. Off by default.
//!
//! Every request must carry `Authorization: Bearer <token>` (401 otherwise): any local process
//! can reach a loopback port, and the tools behind it may write files or spend money. The token
//! comes from `TOOLREG_MCP_TOKEN`, or is made at start from the OS's randomness and printed to
//! stderr (never stdout). DNS rebinding (a web page whose host name resolves to 127.0.0.1) is
//! refused by rmcp's `Host` check (loopback names only) and our `Origin` list (loopback
//! origins only), before the token is looked at.
//!
//! `/mcp/<profile>` serves a profile's lens (`lens.rs`), each with its own session manager;
//! any other path serves the whole gateway. The gateway's token opens every path; a profile's
//! own token (`gateway.profiles.<name>.token`) opens that profile only. A path naming no
//! profile is 404.
//!
//! `DELETE` of a session is rmcp's, answered as clients expect (`Face::end`): 204 for a session
//! ended, 404 for one that is not there. rmcp answers 202 to both, and the MCP Python SDK
//! logs "Session termination failed" for anything but 200, 204 or 405, on every session a
//! per-call client (langchain's) closes.

use super::session::Session;
use super::sse_poll::Sessions;
use super::{Gateway, Lens};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

type Service = StreamableHttpService<Session, Sessions>;
type Response = hyper::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>>;

/// The environment variable that supplies the bearer token.
pub const TOKEN_ENV: &str = "TOOLREG_MCP_TOKEN";

/// A fresh token: 32 random bytes, hex.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a token: {e}"))?;
    Ok(data_encoding::HEXLOWER.encode(&bytes))
}

/// Whether `header` is `Bearer <token>` for one of `tokens`, compared in constant time.
fn authorized(header: Option<&hyper::header::HeaderValue>, tokens: &[&str]) -> bool {
    let Some(given) = header.and_then(|h| h.to_str().ok()).and_then(|h| h.strip_prefix("Bearer ")) else { return false };
    let a = given.trim().as_bytes();
    let same = |b: &[u8]| a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0;
    tokens.iter().fold(false, |any, t| same(t.as_bytes()) | any)
}

/// One path's HTTP service and its sessions.
#[derive(Clone)]
struct Face {
    service: Service,
    sessions: Arc<Sessions>,
}

impl Face {
    fn new(gw: &Arc<Gateway>, lens: &Arc<Lens>, config: &StreamableHttpServerConfig) -> Face {
        let (gw, lens) = (gw.clone(), Arc::downgrade(lens));
        let sessions = Arc::new(Sessions::default());
        let service = StreamableHttpService::new(
            // A profile removed from the config takes no new sessions.
            move || lens.upgrade().filter(|l| !l.is_gone()).map(|l| Session::over_http(gw.clone(), l)).ok_or_else(|| std::io::Error::other("the profile is no longer in the config")),
            sessions.clone(),
            config.clone(),
        );
        Face { service, sessions }
    }

    /// rmcp's answer to an authorized request; a `DELETE`'s through `end`.
    async fn handle(&self, req: hyper::Request<hyper::body::Incoming>) -> Response {
        if req.method() == hyper::Method::DELETE {
            return self.end(req).await;
        }
        // A listen's `taskIds`, which rmcp would drop (`listen_tasks`).
        self.service.handle(super::listen_tasks::read(req).await).await
    }

    /// A session's end. rmcp checks the request (Host and Origin, the session header, the
    /// protocol version; a 2026-07-28 request, which has no session, is 405) and closes the
    /// session; its 202 becomes 204 with no body, or 404 when no such session was open (the
    /// spec's answer for a session that ended or never was). Two `DELETE`s racing for one
    /// session may both get 204: either way it is gone.
    async fn end(&self, req: hyper::Request<hyper::body::Incoming>) -> Response {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        let id = req.headers().get(rmcp::transport::common::http_header::HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(Arc::<str>::from);
        let open = match &id {
            Some(id) => self.sessions.has_session(id).await.unwrap_or(false),
            None => false,
        };
        let answer = self.service.handle(req).await;
        if answer.status() != hyper::StatusCode::ACCEPTED {
            return answer;
        }
        if !open {
            return status(hyper::StatusCode::NOT_FOUND, "Not Found: Session not found");
        }
        use http_body_util::BodyExt;
        let mut ended = hyper::Response::new(http_body_util::Empty::new().boxed());
        *ended.status_mut() = hyper::StatusCode::NO_CONTENT;
        ended
    }
}

/// The HTTP services: the whole gateway's, and one per profile, made when first asked for.
struct Routes {
    gw: Arc<Gateway>,
    config: StreamableHttpServerConfig,
    whole: Face,
    profiles: Mutex<HashMap<String, (Arc<Lens>, Face)>>,
}

impl Routes {
    /// The face for `path` and the profile's own token, if any; `None`: no such profile.
    fn route(&self, path: &str) -> Option<(Face, Option<crate::secret::Secret>)> {
        let Some(name) = path.strip_prefix("/mcp/").map(|p| p.trim_end_matches('/')).filter(|p| !p.is_empty()) else {
            return Some((self.whole.clone(), None));
        };
        let lens = self.gw.profile(name)?;
        let token = lens.token();
        let mut profiles = super::lock(&self.profiles);
        let fresh = |(l, _): &(Arc<Lens>, Face)| Arc::ptr_eq(l, &lens);
        if !profiles.get(name).is_some_and(fresh) {
            profiles.insert(name.to_string(), (lens.clone(), Face::new(&self.gw, &lens, &self.config)));
        }
        Some((profiles[name].1.clone(), token))
    }
}

fn status(code: hyper::StatusCode, text: &'static str) -> Response {
    use http_body_util::BodyExt;
    let mut r = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = code;
    r
}

fn unauthorized() -> Response {
    let text = "Unauthorized: send Authorization: Bearer <token> (printed by toolreg mcp at start, or $TOOLREG_MCP_TOKEN; a profile's own token opens only /mcp/<profile>)\n";
    let mut r = status(hyper::StatusCode::UNAUTHORIZED, text);
    r.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, hyper::header::HeaderValue::from_static("Bearer"));
    r
}

/// Serves until a signal. The address must be loopback.
pub async fn serve(gw: Arc<Gateway>, addr: SocketAddr, token: String) -> i32 {
    use hyper_util::rt::TokioIo;
    if !addr.ip().is_loopback() {
        tracing::error!("--http {addr}: only loopback addresses are served");
        return 2;
    }
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]);
    // Each profile's token read at start: one that cannot be read stops the gateway.
    for (name, p) in &gw.config().gateway.profiles {
        if let Some(Err(why)) = p.token.as_ref().map(|t| t.read()) {
            tracing::error!("gateway.profiles.{name}.token: {why}");
            return 2;
        }
    }
    let whole = Face::new(&gw, &gw.whole, &config);
    let routes = Arc::new(Routes { gw: gw.clone(), config, whole, profiles: Mutex::default() });
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("cannot listen on {addr}: {e}");
            return 2;
        }
    };
    let local = listener.local_addr().map_or_else(|_| addr.to_string(), |a| a.to_string());
    // stderr, not the log: the person or script that started us reads the URL from it.
    eprintln!("toolreg mcp: listening on http://{local}/mcp");
    for name in gw.config().gateway.profiles.keys() {
        eprintln!("toolreg mcp: profile {name} on http://{local}/mcp/{name}");
    }
    let token = Arc::new(token);
    let accept = async {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            };
            // An answer goes out in several small writes (headers, SSE events): with Nagle's
            // algorithm on, each write after the first waits for the client's delayed ACK.
            let _ = stream.set_nodelay(true);
            let (routes, token) = (routes.clone(), token.clone());
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (routes, token) = (routes.clone(), token.clone());
                    async move {
                        let Some((face, own)) = routes.route(req.uri().path()) else {
                            // Only a holder of the gateway's token learns which profiles exist.
                            let known = authorized(req.headers().get(hyper::header::AUTHORIZATION), &[token.as_str()]);
                            return Ok(if known { status(hyper::StatusCode::NOT_FOUND, "Not Found: no such profile in gateway.profiles\n") } else { unauthorized() });
                        };
                        let tokens: Vec<&str> = std::iter::once(token.as_str()).chain(own.as_ref().map(|t| t.expose())).collect();
                        // Host and Origin first (rmcp checks them in `handle`), so a rebinding
                        // page learns nothing from a 401; but rmcp runs them only inside
                        // `handle`, so a request failing both gets the Host/Origin refusal.
                        let response = if authorized(req.headers().get(hyper::header::AUTHORIZATION), &tokens) {
                            face.handle(req).await
                        } else {
                            let probe = face.service.handle(strip(req)).await;
                            if probe.status() == hyper::StatusCode::FORBIDDEN || probe.status() == hyper::StatusCode::MISDIRECTED_REQUEST {
                                probe
                            } else {
                                unauthorized()
                            }
                        };
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
            });
        }
    };
    tokio::select! {
        _ = accept => 1,
        code = signal() => code,
    }
}

/// An unauthorized request reduced to its headers, method and URI, with an empty body and no
/// session: rmcp's Host/Origin checks answer it without running anything.
fn strip(req: hyper::Request<hyper::body::Incoming>) -> hyper::Request<http_body_util::Empty<bytes::Bytes>> {
    let (parts, _) = req.into_parts();
    let mut probe = hyper::Request::new(http_body_util::Empty::new());
    *probe.method_mut() = hyper::Method::OPTIONS;
    *probe.uri_mut() = parts.uri;
    *probe.headers_mut() = parts.headers;
    probe
}

/// SIGTERM or SIGINT, as the exit code a shell reports for them.
pub async fn signal() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => 143,
            _ = int.recv() => 130,
        }
    }
    #[cfg(not(unix))]
    {
        match tokio::signal::ctrl_c().await {
            Ok(()) => 130,
            Err(_) => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_64_lowercase_hex_digits() {
        let (a, b) = (super::new_token().unwrap(), super::new_token().unwrap());
        assert!(a.len() == 64 && a.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')), "{a}");
        assert_ne!(a, b);
    }
}
