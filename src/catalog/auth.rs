//! MCP authorization (OAuth 2.1, spec 2025-11-25) for Streamable HTTP servers: what the catalog
//! needs from the host, a server's pre-registered OAuth client, and where tokens live.
//!
//! Invariants:
//! - The host owns the user and the secrets. The catalog reaches it only through `AuthHost`
//!   (implemented in `server/`, over reverse requests): the user's browser opens through
//!   `open_url`, tokens persist through `secret_*` under `secret_key(server id)`. A host without
//!   the `secrets` capability gets tokens kept in memory only, for the life of the process.
//! - Tokens and client secrets are never printed: the saved record has no `Debug`, the client
//!   secret is a `Secret`, and rmcp's `StoredCredentials` prints its tokens redacted. What a
//!   server or a dependency prints of them is redacted from the log: the store keeps the
//!   current tokens registered with `secret::redactor`.
//! - Loads are served from memory after the first one: rmcp reads the credentials before every
//!   HTTP request, which must not become a round trip to the host.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::credential::Credential;
use crate::secret::redactor::Redactor;
use crate::secret::Secret;

/// The longest wait for the host's answer to a secrets request.
const SECRETS_TIMEOUT: Duration = Duration::from_secs(10);

/// The host side of authorization: a port the server layer implements.
pub trait AuthHost: Send + Sync {
    /// The host declared `openUrl`: it can show the user an authorization page.
    fn can_open_url(&self) -> bool;
    /// The host declared `secrets`: tokens persist through it (e.g. in the OS keychain).
    fn has_secrets(&self) -> bool;
    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>>;
    fn secret_get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Secret>, String>>;
    fn secret_set<'a>(&'a self, key: &'a str, value: Secret) -> BoxFuture<'a, Result<(), String>>;
    fn secret_delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// A host that can do neither: servers needing authorization wait in `needsAuth`.
pub struct NoAuthHost;

impl AuthHost for NoAuthHost {
    fn can_open_url(&self) -> bool {
        false
    }
    fn has_secrets(&self) -> bool {
        false
    }
    fn open_url<'a>(&'a self, _: &'a str, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("the host cannot open URLs".to_owned()) })
    }
    fn secret_get<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<Secret>, String>> {
        Box::pin(async { Ok(None) })
    }
    fn secret_set<'a>(&'a self, _: &'a str, _: Secret) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
    fn secret_delete<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// `ServerConfig.oauth`: an OAuth client registered with the server's authorization server
/// out of band, and choices for the authorization flow. Every field is optional; without
/// `clientId` the client registers itself (client ID metadata document, else dynamic
/// client registration).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OAuthConfig {
    /// A pre-registered client ID; preferred over every other registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, for a confidential client (sent as the authorization server asks:
    /// `client_secret_basic` or `client_secret_post`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// Scopes to request instead of the ones the server names (its `WWW-Authenticate`
    /// challenge, else its `scopes_supported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    /// The loopback port of the redirect URI `http://127.0.0.1:<port>/callback` (RFC 8252);
    /// default: any free port (a client registered dynamically keeps its port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_port: Option<u16>,
    /// An HTTPS URL of a client ID metadata document describing this app, used as the client
    /// ID when the authorization server supports it (`client_id_metadata_document_supported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// How tokens are obtained (default `authorizationCode`: the user signs in). The others need
    /// no user (`grant.rs`): `clientCredentials` (SEP-1046; `clientId` with `clientSecret` or
    /// `privateKey`), `jwtBearer` (workload identity, RFC 7523: `assertion`), and
    /// `enterpriseManaged` (SEP-990: `idp`'s ID token exchanged for an identity assertion grant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<Grant>,
    /// A PKCS#8 PEM private key (P-256 or RSA): the client authenticates at the token endpoint
    /// with a signed assertion (`private_key_jwt`) instead of a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<Credential>,
    /// `ES256` or `RS256`; default: the key's kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// `jwtBearer`: the JWT presented as the grant (a workload's identity token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion: Option<Credential>,
    /// `enterpriseManaged`: the enterprise identity provider and the user's ID token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpConfig>,
    /// Sender-constrained tokens (DPoP, RFC 9449), for every grant: `true` always, and a token
    /// the authorization server issues as a bearer token is refused; `false` never; default: when
    /// the authorization server advertises ES256 for DPoP or the server challenges with DPoP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop: Option<bool>,
}

/// `OAuthConfig.grant`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Grant {
    #[default]
    AuthorizationCode,
    ClientCredentials,
    JwtBearer,
    EnterpriseManaged,
}

/// `OAuthConfig.idp`: where an ID token becomes an identity assertion grant (RFC 8693).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IdpConfig {
    /// The identity provider's token endpoint.
    pub token_endpoint: String,
    /// This app's client at the identity provider, when it authenticates there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Credential>,
    /// The user's ID token from the identity provider (the enterprise sign-in the host did).
    pub id_token: Credential,
}

impl OAuthConfig {
    /// The inline secrets of the grants, for the log's redactor.
    pub fn grant_secrets(&self) -> Vec<&Secret> {
        let idp = self.idp.as_ref();
        [self.private_key.as_ref(), self.assertion.as_ref(), idp.and_then(|i| i.client_secret.as_ref()), idp.map(|i| &i.id_token)]
            .into_iter()
            .flatten()
            .filter_map(Credential::inline)
            .collect()
    }
}

/// The host secret that holds a server's tokens and client registration (JSON).
pub fn secret_key(server_id: &str) -> String {
    format!("toolreg/oauth/{server_id}")
}

/// A client this sidecar registered dynamically (kept so the next authorization reuses it).
#[derive(Serialize, Deserialize, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Registration {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    pub redirect_uri: String,
    /// The authorization server that issued it: a client is never presented to another one
    /// (SEP-2352: a resource can move to a new authorization server). `None` in records from
    /// before this was kept, which are then not reused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

/// What is saved under `secret_key`. No `Debug`: it holds tokens.
#[derive(Serialize, Deserialize, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Saved {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// The DPoP key the tokens are bound to (PKCS#8, base64), when they are (`dpop.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

impl Saved {
    /// The tokens and client secret in the record, as a server or a dependency might print them.
    fn secret_values(&self) -> Vec<String> {
        let mut out: Vec<String> = self.registration.iter().filter_map(|r| r.client_secret.as_ref()).chain(&self.dpop_key).map(|s| s.expose().to_owned()).collect();
        if let Some(tokens) = self.credentials.as_ref().and_then(|c| serde_json::to_value(&c.token_response).ok()) {
            for field in ["access_token", "refresh_token", "id_token"] {
                out.extend(tokens.get(field).and_then(serde_json::Value::as_str).map(str::to_owned));
            }
        }
        out
    }
}

/// One server's tokens: in memory, written through to the host's secrets when it has them.
#[derive(Clone)]
pub(crate) struct TokenStore(Arc<StoreInner>);

struct StoreInner {
    key: String,
    host: Arc<dyn AuthHost>,
    /// The tokens and the registered client secret, redacted from the log; set again whenever
    /// the record changes.
    redactor: Redactor,
    /// `None` until the first load (from the host, or empty).
    saved: tokio::sync::Mutex<Option<Saved>>,
}

impl TokenStore {
    pub fn new(server_id: &str, host: Arc<dyn AuthHost>) -> TokenStore {
        TokenStore(Arc::new(StoreInner { key: secret_key(server_id), host, redactor: Redactor::new(Vec::new()), saved: tokio::sync::Mutex::new(None) }))
    }

    /// The saved record, read from the host the first time.
    pub async fn saved(&self) -> Saved {
        let mut slot = self.0.saved.lock().await;
        if slot.is_none() {
            let saved = self.read_host().await;
            self.0.redactor.set(saved.secret_values());
            *slot = Some(saved);
        }
        slot.clone().unwrap_or_default()
    }

    async fn read_host(&self) -> Saved {
        let host = &self.0.host;
        if !host.has_secrets() {
            return Saved::default();
        }
        match tokio::time::timeout(SECRETS_TIMEOUT, host.secret_get(&self.0.key)).await {
            Ok(Ok(Some(value))) => serde_json::from_str(value.expose()).unwrap_or_else(|_| {
                // The error text could quote the value: only say that it did not parse.
                tracing::warn!(key = %self.0.key, "saved OAuth record is not valid; starting over");
                Saved::default()
            }),
            Ok(Ok(None)) => Saved::default(),
            Ok(Err(e)) => {
                tracing::warn!(key = %self.0.key, error = %e, "cannot read saved OAuth tokens from the host");
                Saved::default()
            }
            Err(_) => {
                tracing::warn!(key = %self.0.key, "the host did not answer host/secrets/get in time");
                Saved::default()
            }
        }
    }

    /// Change the record and write it through to the host (deleting it when empty).
    pub async fn update(&self, change: impl FnOnce(&mut Saved)) -> Result<(), String> {
        let mut slot = self.0.saved.lock().await;
        if slot.is_none() {
            *slot = Some(self.read_host().await);
        }
        let saved = slot.get_or_insert_with(Saved::default);
        change(saved);
        self.0.redactor.set(saved.secret_values());
        let host = &self.0.host;
        if !host.has_secrets() {
            return Ok(());
        }
        let write = async {
            if saved.registration.is_none() && saved.credentials.is_none() && saved.dpop_key.is_none() {
                host.secret_delete(&self.0.key).await
            } else {
                let json = serde_json::to_string(saved).map_err(|e| e.to_string())?;
                host.secret_set(&self.0.key, Secret::new(json)).await
            }
        };
        match tokio::time::timeout(SECRETS_TIMEOUT, write).await {
            Ok(r) => r,
            Err(_) => Err("the host did not answer host/secrets in time".to_owned()),
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.saved().await.credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        // The tokens are in memory either way; a host that fails to keep them is logged, not fatal.
        if let Err(e) = self.update(|s| s.credentials = Some(credentials)).await {
            tracing::warn!(key = %self.0.key, error = %e, "tokens kept in memory only");
        }
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        if let Err(e) = self.update(|s| s.credentials = None).await {
            tracing::warn!(key = %self.0.key, error = %e, "cannot delete saved OAuth tokens");
        }
        Ok(())
    }
}
