//! `toolreg mcp --http ADDR`: Streamable HTTP (rmcp's service) on a loopback address, for
//! clients that only speak HTTP. Off by default.
//!
//! Every request must carry `Authorization: Bearer <token>` (401 otherwise): any local process
//! can reach a loopback port, and the tools behind it may write files or spend money. The token
//! comes from `TOOLREG_MCP_TOKEN`, or is made at start from the OS's randomness and printed to
//! stderr (never stdout). DNS rebinding (a web page whose host name resolves to 127.0.0.1) is
//! refused by rmcp's `Host` check (loopback names only) and our `Origin` list (loopback
//! origins only), before the token is looked at.

use super::session::Session;
use super::Gateway;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;

/// The environment variable that supplies the bearer token.
pub const TOKEN_ENV: &str = "TOOLREG_MCP_TOKEN";

/// A fresh token: 32 random bytes, hex.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a token: {e}"))?;
    Ok(data_encoding::HEXLOWER.encode(&bytes))
}

/// Whether `header` is `Bearer <token>`, compared in constant time.
fn authorized(header: Option<&hyper::header::HeaderValue>, token: &str) -> bool {
    let Some(given) = header.and_then(|h| h.to_str().ok()).and_then(|h| h.strip_prefix("Bearer ")) else { return false };
    let (a, b) = (given.trim().as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn unauthorized() -> hyper::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>> {
    use http_body_util::BodyExt;
    let body = http_body_util::Full::new(bytes::Bytes::from_static(b"Unauthorized: send Authorization: Bearer <token> (printed by toolreg mcp at start, or $TOOLREG_MCP_TOKEN)\n"))
        .boxed();
    let mut r = hyper::Response::new(body);
    *r.status_mut() = hyper::StatusCode::UNAUTHORIZED;
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
    let service = StreamableHttpService::new(move || Ok(Session::new(gw.clone())), Arc::new(super::sse_poll::Sessions::default()), config);
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
            let (service, token) = (service.clone(), token.clone());
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (service, token) = (service.clone(), token.clone());
                    async move {
                        // Host and Origin first (rmcp checks them in `handle`), so a rebinding
                        // page learns nothing from a 401; but rmcp runs them only inside
                        // `handle`, so a request failing both gets the Host/Origin refusal.
                        let response = if authorized(req.headers().get(hyper::header::AUTHORIZATION), &token) {
                            service.handle(req).await
                        } else {
                            let probe = service.handle(strip(req)).await;
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
