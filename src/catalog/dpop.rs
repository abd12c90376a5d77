//! DPoP (RFC 9449; MCP's DPoP extension, SEP-1932): tokens bound to a key this client holds, so
//! a stolen token is useless without it. One P-256 key per server, kept with its tokens; every
//! token request and every request to the server carries a fresh proof (a JWT signed with the
//! key, naming the method and URL, and for the server the token's hash); a `use_dpop_nonce`
//! answer is retried once with the nonce the server gave.
//!
//! - `Dpop::token_request`: a token request with a proof and the nonce retry, for the grants
//!   that need no user (`grant.rs`) and for `DpopOAuth`.
//! - `DpopOAuth`: the OAuth client's HTTP (rmcp's `OAuthHttpClient`) with proofs on token
//!   requests (authorization code, refresh). It is its own reqwest client: rmcp's address-filtering one cannot be wrapped, so
//!   a DPoP server's discovery is not filtered by address (the catalog's `proxy` is not used
//!   for OAuth either way).
//! - `DpopHttp`: the MCP session's HTTP (rmcp's `StreamableHttpClient`), `Authorization: DPoP`
//!   and a proof on each request once the server's tokens are bound; plain bearer before.
//!   rmcp's client does not show us a 401's `DPoP-Nonce` header, so on a `use_dpop_nonce`
//!   challenge one `ping` is sent to learn it (the server refused the request unprocessed).
//! - `bound`: whether a token response is DPoP-bound. The authorization server may answer with
//!   a bearer token instead (RFC 9449 §5, `token_type: Bearer`): it is then used as one, unless
//!   the configuration requires DPoP (`oauth.dpop: true`), where it is refused (fail closed: the
//!   operator asked for sender-constrained tokens, and a bearer token is not one).
//!
//! Invariant: the key and tokens never print; proofs are built per request and not logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use data_encoding::{BASE64, BASE64URL_NOPAD};
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::jwt::{self, SigningKey};
use super::lock;
use crate::secret::Secret;

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BODY: usize = 1 << 20;

/// One server's DPoP key and the nonces its servers gave.
pub(crate) struct Dpop {
    key: SigningKey,
    jwk: Value,
    pkcs8: Vec<u8>,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
}

impl Dpop {
    pub fn generate() -> Result<Arc<Dpop>, String> {
        let (key, pkcs8) = SigningKey::generate_es256()?;
        Dpop::of(key, pkcs8)
    }

    /// The key `saved` returned.
    pub fn restore(saved: &Secret) -> Result<Arc<Dpop>, String> {
        let der = BASE64.decode(saved.expose().as_bytes()).map_err(|_| "the saved DPoP key is not base64")?;
        Dpop::of(SigningKey::es256_from_pkcs8(&der)?, der)
    }

    fn of(key: SigningKey, pkcs8: Vec<u8>) -> Result<Arc<Dpop>, String> {
        let jwk = key.public_jwk().ok_or("a DPoP key must be P-256")?;
        Ok(Arc::new(Dpop { key, jwk, pkcs8, as_nonce: Mutex::new(None), rs_nonce: Mutex::new(None) }))
    }

    /// The key as kept with the tokens (PKCS#8, base64).
    pub fn saved(&self) -> Secret {
        Secret::new(BASE64.encode(&self.pkcs8))
    }

    /// A fresh proof for `method` at `url` (its query and fragment left out, RFC 9449 §4.2),
    /// bound to `token` when presenting one.
    fn proof(&self, method: &str, url: &str, token: Option<&str>, nonce: Option<String>) -> Result<String, String> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({"jti": jwt::random_id(), "htm": method, "htu": htu, "iat": jwt::now()});
        if let Some(t) = token {
            claims["ath"] = json!(BASE64URL_NOPAD.encode(&Sha256::digest(t.as_bytes())));
        }
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        self.key.sign(json!({"typ": "dpop+jwt", "jwk": self.jwk}), &claims)
    }

    /// A token request at `url`, sent by `send` with the proof it is given; once more with the
    /// authorization server's nonce when it answers `use_dpop_nonce` (RFC 9449 §8).
    pub async fn token_request<F, Fut>(&self, url: &str, send: F) -> Result<http::Response<Vec<u8>>, String>
    where
        F: Fn(HeaderValue) -> Fut,
        Fut: std::future::Future<Output = Result<http::Response<Vec<u8>>, String>>,
    {
        let mut tried_nonce = false;
        loop {
            let nonce = lock(&self.as_nonce).clone();
            let response = send(header(&self.proof("POST", url, None, nonce)?)?).await?;
            let fresh = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned);
            if let Some(n) = &fresh {
                *lock(&self.as_nonce) = Some(n.clone());
            }
            let asks_nonce = response.status() == http::StatusCode::BAD_REQUEST
                && serde_json::from_slice::<Value>(response.body()).ok().is_some_and(|v| v["error"] == "use_dpop_nonce");
            if asks_nonce && fresh.is_some() && !tried_nonce {
                tried_nonce = true;
                continue;
            }
            return Ok(response);
        }
    }
}

/// Whether the token in a token response (`token_type`, compared without case) is bound to the
/// key its request proved (module doc); `Err` when it is not and `required`.
pub(crate) fn bound(token_response: &Value, required: bool) -> Result<bool, String> {
    let token_type = token_response.get("token_type").and_then(Value::as_str).unwrap_or_default();
    if token_type.eq_ignore_ascii_case("dpop") {
        return Ok(true);
    }
    if required {
        let shown: String = token_type.chars().filter(|c| c.is_ascii_alphanumeric()).take(20).collect();
        return Err(format!(
            "the authorization server issued a {} token, not a DPoP-bound one, and oauth.dpop requires DPoP (RFC 9449); the token was not used",
            if shown.is_empty() { "untyped".to_owned() } else { format!("{shown:?}") }
        ));
    }
    Ok(false)
}

/// A reqwest answer as an `http::Response`, its body bounded.
pub(crate) async fn read_response(response: reqwest::Response) -> Result<http::Response<Vec<u8>>, String> {
    let mut out = http::Response::builder().status(response.status());
    for (k, v) in response.headers() {
        out = out.header(k, v);
    }
    let body = response.bytes().await.map_err(|e| crate::secret::redact_urls_in(&e.to_string()).into_owned())?;
    if body.len() > MAX_BODY {
        return Err("an OAuth response is too large".into());
    }
    out.body(body.to_vec()).map_err(|e| e.to_string())
}

/// Whether a server's authorization uses DPoP: the configuration's `dpop`, else yes when the
/// authorization server advertises ES256 for it or the server challenged with the DPoP scheme.
pub(crate) fn wanted(configured: Option<bool>, as_metadata: &HashMap<String, Value>, challenge: &str) -> bool {
    configured.unwrap_or_else(|| {
        let es256 = as_metadata
            .get("dpop_signing_alg_values_supported")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some("ES256")));
        es256 || challenge.trim_start().get(..5).is_some_and(|s| s.eq_ignore_ascii_case("dpop "))
    })
}

fn header(value: &str) -> Result<HeaderValue, String> {
    let mut v = HeaderValue::from_str(value).map_err(|_| "a DPoP header is not a valid header value".to_owned())?;
    v.set_sensitive(true);
    Ok(v)
}

/// The OAuth client's HTTP with proofs on token requests (module doc).
pub(crate) struct DpopOAuth {
    dpop: Arc<Dpop>,
    follow: reqwest::Client,
    stop: reqwest::Client,
}

impl DpopOAuth {
    pub fn new(dpop: Arc<Dpop>) -> Result<DpopOAuth, String> {
        let build = |policy| reqwest::Client::builder().timeout(TIMEOUT).redirect(policy).build().map_err(|e| e.to_string());
        Ok(DpopOAuth { dpop, follow: build(reqwest::redirect::Policy::limited(10))?, stop: build(reqwest::redirect::Policy::none())? })
    }

    async fn send(&self, request: &http::Request<Vec<u8>>, policy: OAuthHttpRedirectPolicy, proof: Option<HeaderValue>) -> Result<http::Response<Vec<u8>>, String> {
        let client = if policy == OAuthHttpRedirectPolicy::Stop { &self.stop } else { &self.follow };
        let mut builder = client.request(request.method().clone(), request.uri().to_string()).headers(request.headers().clone()).body(request.body().clone());
        if let Some(p) = proof {
            builder = builder.header("dpop", p);
        }
        let response = builder.send().await.map_err(|e| crate::secret::redact_urls_in(&e.to_string()).into_owned())?;
        read_response(response).await
    }
}

impl OAuthHttpClient for DpopOAuth {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let policy = request.redirect_policy;
            let req = request.request;
            let is_token_request = req.method() == http::Method::POST && form_has_grant(req.body());
            let result = if is_token_request {
                let url = req.uri().to_string();
                self.dpop.token_request(&url, |proof| self.send(&req, policy, Some(proof))).await
            } else {
                self.send(&req, policy, None).await
            };
            result.map_err(|e| e.into())
        })
    }
}

fn form_has_grant(body: &[u8]) -> bool {
    form_urlencoded::parse(body).any(|(k, _)| k == "grant_type")
}

/// The MCP session's HTTP: DPoP once `key` is set (module doc).
#[derive(Clone)]
pub(crate) struct DpopHttp {
    inner: reqwest::Client,
    key: Arc<Mutex<Option<Arc<Dpop>>>>,
}

type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

impl DpopHttp {
    pub fn new(inner: reqwest::Client, key: Arc<Mutex<Option<Arc<Dpop>>>>) -> DpopHttp {
        DpopHttp { inner, key }
    }

    fn key(&self) -> Option<Arc<Dpop>> {
        lock(&self.key).clone()
    }

    /// The headers that present `token` with a proof for `method` at `uri`.
    fn present(dpop: &Dpop, method: &str, uri: &str, token: &str, headers: &mut HashMap<HeaderName, HeaderValue>) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let nonce = lock(&dpop.rs_nonce).clone();
        let proof = dpop.proof(method, uri, Some(token), nonce).map_err(|e| StreamableHttpError::UnexpectedServerResponse(e.into()))?;
        let auth = header(&format!("DPoP {token}")).map_err(|e| StreamableHttpError::UnexpectedServerResponse(e.into()))?;
        headers.insert(http::header::AUTHORIZATION, auth);
        headers.insert(HeaderName::from_static("dpop"), header(&proof).map_err(|e| StreamableHttpError::UnexpectedServerResponse(e.into()))?);
        Ok(())
    }

    /// A `use_dpop_nonce` challenge: learn the nonce with one `ping` (module doc). True when a
    /// new nonce was learnt.
    async fn learn_nonce(&self, dpop: &Dpop, uri: &str, session_id: Option<&str>, token: &str, custom: &HashMap<HeaderName, HeaderValue>) -> bool {
        let mut headers = custom.clone();
        if Self::present(dpop, "POST", uri, token, &mut headers).is_err() {
            return false;
        }
        let mut request = self
            .inner
            .post(uri)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(json!({"jsonrpc": "2.0", "id": "toolreg-dpop-nonce", "method": "ping"}).to_string());
        for (k, v) in headers {
            request = request.header(k, v);
        }
        if let Some(s) = session_id {
            request = request.header("mcp-session-id", s);
        }
        let Ok(response) = request.send().await else { return false };
        let Some(nonce) = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned) else { return false };
        let mut slot = lock(&dpop.rs_nonce);
        let new = slot.as_deref() != Some(nonce.as_str());
        *slot = Some(nonce);
        new
    }
}

fn asks_nonce<E: std::error::Error + Send + Sync + 'static>(e: &StreamableHttpError<E>) -> bool {
    matches!(e, StreamableHttpError::AuthRequired(c) if c.www_authenticate_header.contains("use_dpop_nonce"))
}

impl StreamableHttpClient for DpopHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        self.post_message_with_response_limits(uri, message, session_id, auth_token, custom_headers, StreamableHttpResponseLimits::default()).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth_token, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        let (Some(dpop), Some(token)) = (self.key(), auth_token.clone()) else {
            return self.inner.post_message_with_response_limits(uri, message, session_id, auth_token, custom_headers, limits).await;
        };
        let mut headers = custom_headers.clone();
        Self::present(&dpop, "POST", &uri, &token, &mut headers)?;
        let first = self.inner.post_message_with_response_limits(uri.clone(), message.clone(), session_id.clone(), None, headers, limits).await;
        match first {
            Err(e) if asks_nonce(&e) && self.learn_nonce(&dpop, &uri, session_id.as_deref(), &token, &custom_headers).await => {
                let mut headers = custom_headers;
                Self::present(&dpop, "POST", &uri, &token, &mut headers)?;
                self.inner.post_message_with_response_limits(uri, message, session_id, None, headers, limits).await
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let (Some(dpop), Some(token)) = (self.key(), auth_token.clone()) else {
            return self.inner.delete_session(uri, session_id, auth_token, custom_headers).await;
        };
        Self::present(&dpop, "DELETE", &uri, &token, &mut custom_headers)?;
        self.inner.delete_session(uri, session_id, None, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        self.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth_token, custom_headers, StreamableHttpResponseLimits::default().max_sse_event_size).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let (Some(dpop), Some(token)) = (self.key(), auth_token.clone()) else {
            return self.inner.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth_token, custom_headers, max_sse_event_size).await;
        };
        Self::present(&dpop, "GET", &uri, &token, &mut custom_headers)?;
        self.inner.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, None, custom_headers, max_sse_event_size).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims_of(jwt: &str) -> (Value, Value) {
        let part = |i: usize| serde_json::from_slice::<Value>(&BASE64URL_NOPAD.decode(jwt.split('.').nth(i).unwrap().as_bytes()).unwrap()).unwrap();
        (part(0), part(1))
    }

    #[test]
    fn a_proof_names_the_request_and_binds_the_token() {
        let dpop = Dpop::generate().unwrap();
        let p = dpop.proof("POST", "https://rs/mcp?x=1#f", Some("tok"), Some("n1".into())).unwrap();
        let (header, claims) = claims_of(&p);
        assert_eq!((header["typ"].as_str(), header["alg"].as_str(), header["jwk"]["crv"].as_str()), (Some("dpop+jwt"), Some("ES256"), Some("P-256")));
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!((claims["htm"].as_str(), claims["htu"].as_str(), claims["nonce"].as_str()), (Some("POST"), Some("https://rs/mcp"), Some("n1")));
        assert_eq!(claims["ath"], json!(BASE64URL_NOPAD.encode(&Sha256::digest(b"tok"))));
        // Fresh each time; the kept key is the same key.
        let again = dpop.proof("POST", "https://rs/mcp", None, None).unwrap();
        assert_ne!(claims_of(&again).1["jti"], claims["jti"]);
        let restored = Dpop::restore(&dpop.saved()).unwrap();
        assert_eq!(restored.jwk, dpop.jwk);
    }

    #[test]
    fn a_bearer_token_is_used_as_one_unless_dpop_is_required() {
        assert_eq!(bound(&json!({"token_type": "DPoP"}), true), Ok(true));
        assert_eq!(bound(&json!({"token_type": "dpop"}), false), Ok(true));
        assert_eq!(bound(&json!({"token_type": "Bearer"}), false), Ok(false));
        let refused = bound(&json!({"token_type": "Bearer"}), true).unwrap_err();
        assert!(refused.contains("\"Bearer\" token") && refused.contains("oauth.dpop"), "{refused}");
        // What the server wrote is quoted only as a short word.
        let odd = bound(&json!({"token_type": "x\u{1b}[2J".repeat(20)}), true).unwrap_err();
        assert!(!odd.contains('\u{1b}') && odd.len() < 200, "{odd}");
    }

    #[test]
    fn dpop_is_used_as_configured_else_as_the_servers_say() {
        let none = HashMap::new();
        let es256 = HashMap::from([("dpop_signing_alg_values_supported".to_owned(), json!(["ES256"]))]);
        assert!(!wanted(None, &none, "Bearer resource_metadata=\"x\""));
        assert!(wanted(None, &es256, "Bearer"));
        assert!(wanted(None, &none, "DPoP resource_metadata=\"x\""));
        assert!(!wanted(Some(false), &es256, "DPoP x"));
        assert!(wanted(Some(true), &none, ""));
    }
}
