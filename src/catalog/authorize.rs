//! One Streamable HTTP server's authorization: the OAuth client its sessions send requests
//! through, and the authorization-code flow (PKCE, loopback redirect) run when the server
//! answers 401, or 403 `insufficient_scope`.
//!
//! What rmcp's `auth` does for us: discovery (protected resource metadata from the challenge,
//! then authorization server metadata, RFC 9728/8414/OIDC), dynamic client registration, PKCE,
//! the `resource` parameter (RFC 8707), the token endpoint's client authentication
//! (`client_secret_basic`/`post`/none as the server advertises), bearer tokens on every request,
//! and refresh before expiry (its `AuthClient` refreshes a token within 30 s of expiry, and once
//! on a 401). What we add: the loopback redirect listener (RFC 8252), the host opening the URL,
//! tokens in the host's secrets, the registration order (pre-registered, then client ID metadata
//! document, then dynamic registration, reusing a registration we made before), scope selection
//! as the spec orders it (the challenge's `scope`, else `scopes_supported`, else none; a step-up
//! adds what was granted before), and the retry limit.
//!
//! Invariants:
//! - Nothing waits for the user but the flow's own task: a request that meets a 401/403 fails
//!   at once (`CatalogError::NeedsAuth`) and the server shows `needsAuth` until the flow ends.
//! - At most one flow per server at a time; at most `MAX_ATTEMPTS` flows without a successful
//!   request in between (a server that keeps refusing the granted scopes does not loop).
//! - No token, code or client secret reaches a log line or an error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::auth::{AuthClient, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession, CredentialStore as _, OAuthClientConfig, StoredCredentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::auth::{AuthHost, Grant, OAuthConfig, Registration};
use super::rotated::Rotated;
use super::tokens::TokenStore;
use super::dpop::{self, Dpop, DpopHttp, DpopOAuth};
use super::lock;

/// How long the user has to finish authorizing in the browser.
const USER_TIMEOUT: Duration = Duration::from_secs(300);
/// Authorization flows without a successful request in between before giving up.
const MAX_ATTEMPTS: u32 = 3;
const CLIENT_NAME: &str = "toolreg";

/// Tokens attached and refreshed by rmcp, tried again when another process rotated them.
pub(crate) type HttpClient = Rotated<AuthClient<DpopHttp>>;

#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// No authorization pending (tokens, if any, are in use).
    Idle,
    /// A flow runs: the user was (or is about to be) asked.
    Waiting(String),
    /// The user is needed but cannot be asked, or the flow failed; a restart tries again.
    Blocked(String),
}

pub(crate) struct ServerAuth {
    server_id: String,
    url: String,
    oauth: Option<OAuthConfig>,
    host: Arc<dyn AuthHost>,
    store: TokenStore,
    client: tokio::sync::OnceCell<HttpClient>,
    /// The server's own `proxy` for its MCP requests (OAuth's discovery and token requests
    /// keep rmcp's address-filtering client, which reads the environment's proxies).
    proxy: Option<crate::secret::SecretUrl>,
    phase: Mutex<(Phase, u32)>,
    /// The DPoP key the server's tokens are bound to, once they are (`dpop.rs`).
    dpop: Arc<Mutex<Option<Arc<Dpop>>>>,
    stop: CancellationToken,
    /// Told when a flow ends (`Ok`: new tokens; the server refreshes).
    on_done: Mutex<Option<Arc<dyn Fn(Result<(), String>) + Send + Sync>>>,
}

impl ServerAuth {
    pub fn new(server_id: &str, url: &str, oauth: Option<OAuthConfig>, proxy: Option<crate::secret::SecretUrl>, host: Arc<dyn AuthHost>, stop: CancellationToken) -> Arc<Self> {
        Arc::new(ServerAuth {
            server_id: server_id.to_owned(),
            url: url.to_owned(),
            oauth,
            store: TokenStore::new(server_id, host.clone()),
            host,
            client: tokio::sync::OnceCell::new(),
            proxy,
            phase: Mutex::new((Phase::Idle, 0)),
            dpop: Arc::new(Mutex::new(None)),
            stop,
            on_done: Mutex::new(None),
        })
    }

    pub fn set_on_done(&self, f: Arc<dyn Fn(Result<(), String>) + Send + Sync>) {
        *lock(&self.on_done) = Some(f);
    }

    /// Why the server waits for the user, if it does.
    pub fn needs_user(&self) -> Option<String> {
        match &lock(&self.phase).0 {
            Phase::Idle => None,
            Phase::Waiting(why) | Phase::Blocked(why) => Some(why.clone()),
        }
    }

    /// A flow runs: its page may still be opened, and its redirect is awaited.
    pub fn flow_running(&self) -> bool {
        matches!(lock(&self.phase).0, Phase::Waiting(_))
    }

    /// A request went through: the attempts start over.
    pub fn succeeded(&self) {
        let mut p = lock(&self.phase);
        if p.0 == Phase::Idle {
            p.1 = 0;
        }
    }

    /// A restart: a blocked server may ask again.
    pub fn reset(&self) {
        let mut p = lock(&self.phase);
        if matches!(p.0, Phase::Blocked(_)) {
            *p = (Phase::Idle, 0);
        }
    }

    /// The client every session of this server sends through: tokens from the store (the
    /// host's secrets on first use), refreshed before they expire.
    pub async fn http_client(&self) -> HttpClient {
        self.client.get_or_init(|| self.build_client()).await.clone()
    }

    async fn build_client(&self) -> HttpClient {
        let saved = self.store.saved().await;
        if let Some(key) = &saved.dpop_key {
            match Dpop::restore(key) {
                Ok(d) => *lock(&self.dpop) = Some(d),
                Err(e) => tracing::warn!(server = %self.server_id, error = %e, "saved DPoP key unusable"),
            }
        }
        let mut manager = self.manager().await;
        if let Some(creds) = &saved.credentials {
            // Tokens from an earlier run: find the token endpoint again so they can be refreshed.
            match manager.initialize_from_store().await {
                Ok(true) => {
                    let secret = self.client_secret_for(&creds.client_id, &saved.registration);
                    let mut config = OAuthClientConfig::new(creds.client_id.clone(), self.url.clone());
                    config.client_secret = secret;
                    if let Err(e) = manager.configure_client(config) {
                        tracing::warn!(server = %self.server_id, error = %e, "cannot configure the saved OAuth client");
                    }
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(server = %self.server_id, error = %e, "saved OAuth tokens: discovery failed"),
            }
        }
        // A bad proxy URL fails the connect before this client is asked for (`connect.rs`).
        let client = super::proxy::client(self.proxy.as_ref()).ok().flatten().unwrap_or_default();
        Rotated::new(AuthClient::new(DpopHttp::new(client, self.dpop.clone()), manager), self.store.clone())
    }

    fn client_secret_for(&self, client_id: &str, registration: &Option<Registration>) -> Option<String> {
        if let Some(o) = &self.oauth {
            if o.client_id.as_deref() == Some(client_id) {
                return o.client_secret.as_ref().map(|s| s.expose().to_owned());
            }
        }
        registration
            .as_ref()
            .filter(|r| r.client_id == client_id)
            .and_then(|r| r.client_secret.as_ref().map(|s| s.expose().to_owned()))
    }

    async fn manager(&self) -> AuthorizationManager {
        let key = lock(&self.dpop).clone();
        match key {
            Some(key) => self.manager_with(key).await,
            None => self.plain_manager().await,
        }
    }

    /// A manager whose token requests carry DPoP proofs with `key`.
    async fn manager_with(&self, key: Arc<Dpop>) -> AuthorizationManager {
        let manager = match DpopOAuth::new(key) {
            Ok(http) => AuthorizationManager::new_with_oauth_http_client(self.url.as_str(), Arc::new(http)).await.ok(),
            Err(_) => None,
        };
        match manager {
            Some(mut m) => {
                m.set_credential_store(self.store.clone());
                m
            }
            None => self.plain_manager().await,
        }
    }

    async fn plain_manager(&self) -> AuthorizationManager {
        // Only fails on an unparsable URL, which no HTTP session could use either.
        let mut manager = match AuthorizationManager::new(self.url.as_str()).await {
            Ok(m) => m,
            Err(_) => AuthorizationManager::new("http://127.0.0.1/").await.expect("a fixed valid URL"),
        };
        manager.set_credential_store(self.store.clone());
        manager
    }

    /// The server answered 401, or 403 `insufficient_scope`, with this `WWW-Authenticate`
    /// value: start a flow unless one runs, the host cannot ask the user, or the attempts are
    /// spent. Returns the reason the server now waits (for the failing request's error).
    pub fn challenged(self: &Arc<Self>, challenge: String) -> String {
        let mut p = lock(&self.phase);
        if let Phase::Waiting(why) | Phase::Blocked(why) = &p.0 {
            return why.clone();
        }
        let name = &self.server_id;
        let machine = self.oauth.as_ref().and_then(|o| o.grant).is_some_and(|g| g != Grant::AuthorizationCode);
        let why = if machine && p.1 < MAX_ATTEMPTS {
            format!("MCP server {name} needs authorization; requesting a token (no user needed)")
        } else if !self.host.can_open_url() && !machine {
            p.0 = Phase::Blocked(format!(
                "MCP server {name} needs authorization, but the host cannot open an authorization page \
                 (declare the openUrl capability), or configure an Authorization header"
            ));
            return blocked(&p.0);
        } else if p.1 >= MAX_ATTEMPTS {
            p.0 = Phase::Blocked(format!(
                "MCP server {name} refused access after {MAX_ATTEMPTS} authorizations; restart it to try again"
            ));
            return blocked(&p.0);
        } else if is_insufficient_scope(&challenge) {
            format!("MCP server {name} needs more access; waiting for the user to authorize in the browser")
        } else {
            format!("MCP server {name} needs authorization; waiting for the user to authorize in the browser")
        };
        *p = (Phase::Waiting(why.clone()), p.1 + 1);
        drop(p);
        let me = self.clone();
        tokio::spawn(async move {
            // The user's time plus a minute for the servers: a hanging authorization server
            // does not keep the server waiting forever.
            let outcome = tokio::select! {
                r = tokio::time::timeout(USER_TIMEOUT + Duration::from_secs(60), async {
                    if machine { me.grant(challenge).await } else { me.authorize(challenge).await }
                }) => {
                    r.unwrap_or_else(|_| Err("timed out".into()))
                }
                _ = me.stop.cancelled() => return,
            };
            {
                let mut p = lock(&me.phase);
                p.0 = match &outcome {
                    Ok(()) => Phase::Idle,
                    Err(e) => Phase::Blocked(format!("MCP server {} authorization failed: {e}", me.server_id)),
                };
            }
            if let Err(e) = &outcome {
                tracing::warn!(server = %me.server_id, error = %e, "OAuth authorization failed");
            }
            let done = lock(&me.on_done).clone();
            if let Some(done) = done {
                done(outcome);
            }
        });
        why
    }

    /// Discovery from the challenge, and the manager a flow's token requests go through. With
    /// DPoP wanted (`dpop::wanted`; the authorization server's metadata is only read for it when
    /// `oauth.dpop` is unset), that manager proves a key: the one the tokens are bound to, else
    /// a new one, kept only once a token is bound to it (`keep_key`).
    async fn discover(&self, oauth: &OAuthConfig, challenge: &str) -> Result<(AuthorizationManager, AuthorizationMetadata, Option<Arc<Dpop>>), String> {
        let resolve = |manager: AuthorizationManager| async move {
            let resolution = manager.resolve_metadata_from_challenge(Some(challenge)).await.map_err(|e| format!("discovery: {e}"))?;
            Ok::<_, String>((manager, resolution.metadata))
        };
        let mut plain = None;
        let wanted = match oauth.dpop {
            Some(w) => w,
            None => {
                let (manager, metadata) = resolve(self.plain_manager().await).await?;
                let w = dpop::wanted(None, &metadata.additional_fields, challenge);
                plain = Some((manager, metadata));
                w
            }
        };
        let current = lock(&self.dpop).clone();
        let key = match (wanted, current) {
            (false, _) => None,
            (true, Some(k)) => Some(k),
            (true, None) => Some(Dpop::generate()?),
        };
        let (mut manager, metadata) = match (&key, plain) {
            (Some(k), _) => resolve(self.manager_with(k.clone()).await).await?,
            (None, Some(found)) => found,
            (None, None) => resolve(self.plain_manager().await).await?,
        };
        manager.set_metadata(metadata.clone());
        Ok((manager, metadata, key))
    }

    /// After a token response: the key its request proved becomes the tokens' key when the
    /// token is bound to it, else there is none (a bearer token is sent as one); `Err` when
    /// `oauth.dpop` requires DPoP and the token is not bound (`dpop::bound`).
    async fn keep_key(&self, token_response: &serde_json::Value, proved: Option<Arc<Dpop>>, required: bool) -> Result<(), String> {
        let bound = dpop::bound(token_response, required)?;
        let key = proved.filter(|_| bound);
        let current = lock(&self.dpop).clone();
        let same = match (&current, &key) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same {
            let saved = key.as_ref().map(|k| k.saved());
            if let Err(e) = self.store.update(|s| s.dpop_key = saved).await {
                tracing::warn!(server = %self.server_id, error = %e, "DPoP key kept in memory only");
            }
            *lock(&self.dpop) = key;
        }
        Ok(())
    }

    /// A grant that needs no user (`grant.rs`); on success the token is in the store and the
    /// manager every session uses.
    async fn grant(&self, challenge: String) -> Result<(), String> {
        let oauth = self.oauth.clone().unwrap_or_default();
        let (mut manager, metadata, key) = self.discover(&oauth, &challenge).await?;
        let scopes = match &oauth.scopes {
            Some(s) => s.clone(),
            None => manager.select_initial_scopes(&[]).await,
        };
        let (client_id, token) = super::grant::obtain(&oauth, &metadata, &self.url, &scopes, key.as_deref()).await?;
        let response = serde_json::to_value(&token).unwrap_or_default();
        // Before the token is kept: a bearer token where DPoP is required is not used at all.
        self.keep_key(&response, key, oauth.dpop == Some(true)).await?;
        // A grant without a client ID (a workload's assertion alone) still needs one to key the
        // stored tokens and the refresh check.
        let client_id = if client_id.is_empty() { CLIENT_NAME.to_owned() } else { client_id };
        // A client configured for refreshes: without a refresh token an expired or refused
        // token is a new challenge (a new grant), not a refresh error.
        let mut config = OAuthClientConfig::new(client_id.clone(), self.url.clone());
        config.client_secret = oauth.client_secret.as_ref().map(|s| s.expose().to_owned());
        manager.configure_client(config).map_err(|e| format!("OAuth client: {e}"))?;
        // The granted scopes (`scope`), else the requested ones (RFC 6749 §5.1).
        let granted = response.get("scope").and_then(|s| s.as_str()).map(|s| s.split(' ').map(str::to_owned).collect()).unwrap_or(scopes);
        let stored = StoredCredentials::new(client_id, Some(token), granted, Some(super::jwt::now())).with_issuer(metadata.issuer.clone());
        self.store.save(stored).await.map_err(|e| format!("tokens: {e}"))?;
        let client = self.http_client().await;
        *client.inner().auth_manager.lock().await = manager;
        Ok(())
    }

    /// One authorization-code flow with PKCE; on success the tokens are in the store and in
    /// the manager every session uses.
    async fn authorize(&self, challenge: String) -> Result<(), String> {
        let saved = self.store.saved().await;
        let oauth = self.oauth.clone().unwrap_or_default();
        // A client we registered keeps its redirect URI; a fixed port is the host's choice.
        let port = oauth
            .redirect_port
            .or_else(|| saved.registration.as_ref().and_then(|r| port_of(&r.redirect_uri)))
            .unwrap_or(0);
        let listener = match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            Err(_) if oauth.redirect_port.is_none() && port != 0 => {
                TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| format!("cannot listen on loopback: {e}"))?
            }
            Err(e) => return Err(format!("cannot listen on 127.0.0.1:{port} for the redirect: {e}")),
        };
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");

        let (mut manager, metadata, key) = self.discover(&oauth, &challenge).await?;
        let cimd = metadata.additional_fields.get("client_id_metadata_document_supported").and_then(|v| v.as_bool()).unwrap_or(false);
        let issuer = metadata.issuer.clone();

        // Scopes (spec 2025-11-25): the host's, else the challenge's, else the resource's
        // `scopes_supported`, else none; a step-up keeps what was granted before.
        let mut scopes = match &oauth.scopes {
            Some(s) => s.clone(),
            None => manager.select_initial_scopes(&[]).await,
        };
        if is_insufficient_scope(&challenge) && oauth.scopes.is_none() {
            // Scopes granted by another authorization server say nothing about this one.
            let granted = saved
                .credentials
                .as_ref()
                .filter(|c| c.issuer.is_none() || c.issuer == issuer)
                .map(|c| c.granted_scopes.clone())
                .unwrap_or_default();
            for s in granted {
                if !scopes.contains(&s) {
                    scopes.push(s);
                }
            }
        }

        // Registration, in the spec's order of preference.
        let (client_id, client_secret) = if let Some(id) = &oauth.client_id {
            (id.clone(), oauth.client_secret.as_ref().map(|s| s.expose().to_owned()))
        } else if let Some(r) = saved.registration.as_ref().filter(|r| reusable(r, &redirect_uri, &issuer)) {
            (r.client_id.clone(), r.client_secret.as_ref().map(|s| s.expose().to_owned()))
        } else if let (Some(url), true) = (&oauth.client_metadata_url, cimd) {
            (url.clone(), None)
        } else {
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let config = manager
                .register_client(CLIENT_NAME, &redirect_uri, &refs)
                .await
                .map_err(|e| format!("client registration: {e}"))?;
            let registration = Registration {
                client_id: config.client_id.clone(),
                client_secret: config.client_secret.clone().map(crate::secret::Secret::new),
                redirect_uri: redirect_uri.clone(),
                issuer: issuer.clone(),
            };
            if let Err(e) = self.store.update(|s| s.registration = Some(registration)).await {
                tracing::warn!(server = %self.server_id, error = %e, "client registration kept in memory only");
            }
            (config.client_id, config.client_secret)
        };

        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_initial_scope_selection()
            .with_client_name(CLIENT_NAME)
            .with_preregistered_client(client_id);
        if let Some(secret) = client_secret {
            request = request.with_client_secret(secret);
        }
        if !scopes.is_empty() {
            request = request.with_scopes(scopes);
        }
        let session = AuthorizationSession::new(manager, request).await.map_err(|(_, e)| format!("authorization request: {e}"))?;

        // Aborted when this flow ends early (stop, timeout): the listener closes with it.
        let mut callback = AbortOnDrop(tokio::spawn(wait_for_callback(listener)));
        let reason = if is_insufficient_scope(&challenge) {
            format!("MCP server {} asks for more access", self.server_id)
        } else {
            format!("MCP server {} asks you to sign in", self.server_id)
        };
        let opened = self.host.open_url(session.get_authorization_url(), &self.server_id, &reason).await;
        if let Err(e) = opened {
            return Err(format!("the host could not open the authorization page: {e}"));
        }
        let params = match tokio::time::timeout(USER_TIMEOUT, &mut callback.0).await {
            Err(_) => return Err(format!("no answer from the browser within {} s", USER_TIMEOUT.as_secs())),
            Ok(Err(_)) => return Err("the redirect listener stopped".into()),
            Ok(Ok(r)) => r?,
        };
        session
            .handle_callback_with_issuer(&params.code, &params.state, params.iss.as_deref())
            .await
            .map_err(|e| format!("token request: {e}"))?;

        // rmcp kept the tokens in the store: a bearer token where DPoP is required goes again.
        let response = self.store.saved().await.credentials.and_then(|c| serde_json::to_value(c.token_response?).ok()).unwrap_or_default();
        if let Err(e) = self.keep_key(&response, key, oauth.dpop == Some(true)).await {
            let _ = self.store.clear().await;
            return Err(e);
        }
        // Every session of this server sends through this manager from now on.
        let client = self.http_client().await;
        *client.inner().auth_manager.lock().await = session.auth_manager;
        Ok(())
    }
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A registration is used again only with the same redirect URI at the authorization server
/// that issued it. A record from before issuers were kept names none: it is reused only where
/// the metadata names none either (the 2025-03-26 fallback endpoints), else registered anew.
fn reusable(r: &Registration, redirect_uri: &str, issuer: &Option<String>) -> bool {
    r.redirect_uri == redirect_uri && r.issuer == *issuer
}

fn blocked(p: &Phase) -> String {
    match p {
        Phase::Blocked(why) | Phase::Waiting(why) => why.clone(),
        Phase::Idle => String::new(),
    }
}

pub(crate) fn is_insufficient_scope(challenge: &str) -> bool {
    challenge.contains("insufficient_scope")
}

fn port_of(uri: &str) -> Option<u16> {
    let rest = uri.strip_prefix("http://127.0.0.1:")?;
    rest.split('/').next()?.parse().ok()
}

struct CallbackParams {
    code: String,
    state: String,
    iss: Option<String>,
}

/// Serves the loopback redirect until `/callback` arrives with a code (or an error).
async fn wait_for_callback(listener: TcpListener) -> Result<CallbackParams, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| format!("redirect listener: {e}"))?;
        let target = request_target(&mut stream).await.unwrap_or_default();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        if path != "/callback" {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
            continue;
        }
        let mut code = None;
        let mut state = None;
        let mut iss = None;
        let mut error = None;
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            let v = v.into_owned();
            match &*k {
                "code" => code = Some(v),
                "state" => state = Some(v),
                "iss" => iss = Some(v),
                "error" => error = Some(v),
                _ => {}
            }
        }
        let (status, body) = match (&code, &state, &error) {
            (Some(_), Some(_), None) => ("200 OK", "Authorized. You can close this window and return to the app."),
            _ => ("400 Bad Request", "Authorization did not complete. You can close this window."),
        };
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
        if let Some(e) = error {
            // The authorization server's error code (e.g. access_denied) is not a secret.
            return Err(format!("the authorization server answered {}", e.chars().take(100).collect::<String>()));
        }
        if let (Some(code), Some(state)) = (code, state) {
            return Ok(CallbackParams { code, state, iss });
        }
    }
}

/// The target of the request on `stream` (`/callback?code=...`), read up to the end of its
/// headers: bounded to 16 KiB and 10 s a read, as a GET has no body we need. None when the
/// request is malformed, cut short or too large.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    while buf.len() < 16 * 1024 {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return None,
        }
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf) {
            Ok(httparse::Status::Complete(_)) => return request.path.map(str::to_owned),
            Ok(httparse::Status::Partial) => {}
            Err(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_and_scope_challenges() {
        assert_eq!(port_of("http://127.0.0.1:8123/callback"), Some(8123));
        assert_eq!(port_of("https://x/callback"), None);
        assert!(is_insufficient_scope(r#"Bearer error="insufficient_scope", scope="a b""#));
    }

    #[test]
    fn a_registration_is_presented_only_to_the_server_that_issued_it() {
        let reg = |issuer: Option<&str>| Registration {
            client_id: "c".into(),
            client_secret: None,
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            issuer: issuer.map(str::to_owned),
        };
        let as1 = Some("https://as1".to_owned());
        let uri = "http://127.0.0.1:1/callback";
        assert!(reusable(&reg(Some("https://as1")), uri, &as1));
        // The resource moved to another authorization server: register there (SEP-2352).
        assert!(!reusable(&reg(Some("https://as1")), uri, &Some("https://as2".into())));
        // Issuers compare as strings, no normalisation.
        assert!(!reusable(&reg(Some("https://as1")), uri, &Some("https://as1/".into())));
        // A record from before issuers were kept, at a server that names one.
        assert!(!reusable(&reg(None), uri, &as1));
        assert!(reusable(&reg(None), uri, &None));
        assert!(!reusable(&reg(Some("https://as1")), "http://127.0.0.1:2/callback", &as1));
    }

    /// One connection to the redirect listener, `parts` written one at a time: its status line.
    async fn send(addr: std::net::SocketAddr, parts: &[&str]) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        for p in parts {
            s.write_all(p.as_bytes()).await.unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut reply = String::new();
        s.read_to_string(&mut reply).await.unwrap();
        reply.lines().next().unwrap_or_default().to_owned()
    }

    async fn listener() -> (std::net::SocketAddr, tokio::task::JoinHandle<Result<CallbackParams, String>>) {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        (addr, tokio::spawn(wait_for_callback(listener)))
    }

    #[tokio::test]
    async fn the_redirect_listener_answers_until_the_callback() {
        let (addr, flow) = listener().await;
        assert_eq!(send(addr, &["GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n"]).await, "HTTP/1.1 404 Not Found");
        assert_eq!(send(addr, &["garbage\r\n\r\n"]).await, "HTTP/1.1 404 Not Found");
        // No state: answered, and the listener waits on.
        assert_eq!(send(addr, &["GET /callback?code=c HTTP/1.1\r\n\r\n"]).await, "HTTP/1.1 400 Bad Request");
        assert!(!flow.is_finished());
        // The request cut across reads; values decoded as in a form (`+` a space).
        let request = ["GET /callback?code=a%20b+c&state=s%2Bt&iss=https%3A%2F%2Fas&x HTTP/1.1\r\nHo", "st: 127.0.0.1\r\n\r\n"];
        assert_eq!(send(addr, &request).await, "HTTP/1.1 200 OK");
        let p = flow.await.unwrap().unwrap();
        assert_eq!((p.code.as_str(), p.state.as_str(), p.iss.as_deref()), ("a b c", "s+t", Some("https://as")));
    }

    #[tokio::test]
    async fn an_authorization_error_ends_the_flow() {
        let (addr, flow) = listener().await;
        assert_eq!(send(addr, &["GET /callback?error=access_denied&state=s HTTP/1.1\r\n\r\n"]).await, "HTTP/1.1 400 Bad Request");
        let error = flow.await.unwrap().err().unwrap();
        assert_eq!(error, "the authorization server answered access_denied");
    }
}
