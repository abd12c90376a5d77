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
//!   HTTP request, which must not become a round trip to the host. Secrets other processes
//!   share (`refresh_lock`, `secrets_revision`) are read again when they changed (`tokens.rs`).

use futures::future::BoxFuture;
use rmcp::transport::auth::StoredCredentials;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::credential::Credential;
use crate::secret::Secret;

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
    /// Holds the refresh of `key`'s tokens against every other process that shares these
    /// secrets, until the guard drops: a refresh token may be single-use. `None`: no other
    /// process shares them (the default; a host's own secrets).
    fn refresh_lock<'a>(&'a self, _key: &'a str) -> BoxFuture<'a, Result<Option<Box<dyn Send>>, String>> {
        Box::pin(async { Ok(None) })
    }
    /// A count that grows whenever any process changes a secret, when other processes share
    /// them (a gateway's state store); `None` (the default): only this process changes them,
    /// so what it read once stays true.
    fn secrets_revision(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async { None })
    }
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
    pub(super) fn secret_values(&self) -> Vec<String> {
        let mut out: Vec<String> = self.registration.iter().filter_map(|r| r.client_secret.as_ref()).chain(&self.dpop_key).map(|s| s.expose().to_owned()).collect();
        if let Some(tokens) = self.credentials.as_ref().and_then(|c| serde_json::to_value(&c.token_response).ok()) {
            for field in ["access_token", "refresh_token", "id_token"] {
                out.extend(tokens.get(field).and_then(serde_json::Value::as_str).map(str::to_owned));
            }
        }
        out
    }
}
