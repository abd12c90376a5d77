//! OAuth grants that need no user, for headless agents and a gateway serving a team (MCP's
//! authorization extensions):
//! - `clientCredentials` (SEP-1046, RFC 6749 §4.4): the client's own credentials, a secret
//!   (`client_secret_basic`, or `_post` where the authorization server lists only that) or a
//!   signed assertion (`private_key_jwt`, RFC 7523 §2.2);
//! - `jwtBearer` (RFC 7523 §2.1; workload identity federation, SEP-1933): a JWT the platform
//!   issued to this workload is the grant;
//! - `enterpriseManaged` (SEP-990): the user's ID token from the enterprise identity provider is
//!   exchanged there for an identity assertion grant (ID-JAG, RFC 8693 token exchange), which is
//!   then the JWT-bearer grant at the server's authorization server.
//!
//! Each is one request per token endpoint, no retry and no fallback to another grant: a refused
//! grant is an error the server shows until it is restarted (`authorize.rs` blocks it).
//!
//! With DPoP (`dpop.rs`), the request at the server's authorization server carries a proof of
//! the key (retried once with its nonce on `use_dpop_nonce`); the identity provider's exchange
//! of `enterpriseManaged` does not: what it issues is a grant for that authorization server, not
//! a token presented to the server.
//!
//! Invariant: no credential, assertion or token reaches an error or a log line; an error quotes
//! the authorization server's `error` code and (cut short) its description only.

use std::time::Duration;

use data_encoding::BASE64;
use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse};
use serde_json::{json, Value};

use super::auth::{Grant, OAuthConfig};
use super::dpop::{self, Dpop};
use super::jwt::{self, SigningKey};
use crate::secret::Secret;

const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A token from the grant `oauth.grant` names (not `authorizationCode`), for `resource` at the
/// authorization server `metadata` describes; `scopes` may be empty; the token request proves
/// `dpop` when given. Returns the client ID the token belongs to with it.
pub(crate) async fn obtain(oauth: &OAuthConfig, metadata: &AuthorizationMetadata, resource: &str, scopes: &[String], dpop: Option<&Dpop>) -> Result<(String, OAuthTokenResponse), String> {
    let http = reqwest::Client::builder()
        .timeout(TOKEN_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let scope = scopes.join(" ");
    let mut form: Vec<(&str, String)> = Vec::new();
    match oauth.grant.unwrap_or_default() {
        Grant::AuthorizationCode => return Err("not a grant without a user".into()),
        Grant::ClientCredentials => form.push(("grant_type", "client_credentials".into())),
        Grant::JwtBearer => {
            let assertion = oauth.assertion.as_ref().ok_or("the jwtBearer grant needs oauth.assertion")?.read()?;
            form.push(("grant_type", JWT_BEARER.into()));
            form.push(("assertion", assertion.expose().to_owned()));
        }
        Grant::EnterpriseManaged => {
            let id_jag = identity_assertion(&http, oauth, metadata, resource, &scope).await?;
            form.push(("grant_type", JWT_BEARER.into()));
            form.push(("assertion", id_jag.expose().to_owned()));
        }
    }
    if !scope.is_empty() {
        form.push(("scope", scope.clone()));
    }
    form.push(("resource", resource.to_owned()));
    let client_id = oauth.client_id.clone().unwrap_or_default();
    // Built for each attempt: a client assertion's `jti` is single-use (RFC 7523 §3), and a
    // nonce retry is another attempt.
    let request = || {
        let mut form = form.clone();
        let auth = client_auth(oauth, metadata, &mut form)?;
        Ok((form, auth))
    };
    let body = post(&http, &metadata.token_endpoint, request, dpop, "the authorization server").await?;
    let token: OAuthTokenResponse = serde_json::from_slice(&body).map_err(|_| "the authorization server's token response is not valid".to_owned())?;
    Ok((client_id, token))
}

/// SEP-990's first step: the ID token exchanged at the identity provider for an ID-JAG whose
/// audience is the server's authorization server and whose resource is the server.
async fn identity_assertion(http: &reqwest::Client, oauth: &OAuthConfig, metadata: &AuthorizationMetadata, resource: &str, scope: &str) -> Result<Secret, String> {
    let idp = oauth.idp.as_ref().ok_or("the enterpriseManaged grant needs oauth.idp")?;
    let audience = metadata.issuer.clone().ok_or("the authorization server's metadata names no issuer (the identity assertion's audience)")?;
    let id_token = idp.id_token.read()?;
    let mut form: Vec<(&str, String)> = vec![
        ("grant_type", TOKEN_EXCHANGE.into()),
        ("requested_token_type", ID_JAG.into()),
        ("subject_token", id_token.expose().to_owned()),
        ("subject_token_type", ID_TOKEN.into()),
        ("audience", audience),
        ("resource", resource.to_owned()),
    ];
    if !scope.is_empty() {
        form.push(("scope", scope.to_owned()));
    }
    let basic = match (&idp.client_id, &idp.client_secret) {
        (Some(id), Some(secret)) => Some(basic(id, &secret.read()?)),
        (Some(id), None) => {
            form.push(("client_id", id.clone()));
            None
        }
        _ => None,
    };
    let body = post(http, &idp.token_endpoint, || Ok((form.clone(), basic.clone())), None, "the identity provider").await?;
    let v: Value = serde_json::from_slice(&body).map_err(|_| "the identity provider's answer is not JSON".to_owned())?;
    if v.get("issued_token_type").and_then(Value::as_str).is_some_and(|t| t != ID_JAG) {
        return Err("the identity provider issued another kind of token than an identity assertion grant".into());
    }
    let jag = v.get("access_token").and_then(Value::as_str).filter(|t| !t.is_empty()).ok_or("the identity provider's answer has no access_token")?;
    Ok(Secret::new(jag))
}

/// How the client authenticates at the token endpoint: a signed assertion when it has a
/// private key, else its secret (`client_secret_basic` unless the server lists only `_post`),
/// else its ID in the body. Returns the Basic header when there is one.
fn client_auth(oauth: &OAuthConfig, metadata: &AuthorizationMetadata, form: &mut Vec<(&str, String)>) -> Result<Option<Secret>, String> {
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let client_id = oauth.client_id.as_deref();
    if let Some(key) = &oauth.private_key {
        let client_id = client_id.ok_or("private_key_jwt needs oauth.clientId")?;
        let audience = metadata.issuer.clone().unwrap_or_else(|| metadata.token_endpoint.clone());
        let key = SigningKey::from_pem(key.read()?.expose(), oauth.signing_algorithm.as_deref())?;
        let now = jwt::now();
        let claims = json!({"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 300, "jti": jwt::random_id()});
        let assertion = key.sign(json!({"typ": "JWT"}), &claims)?;
        form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.into()));
        form.push(("client_assertion", assertion));
        return Ok(None);
    }
    match (client_id, &oauth.client_secret) {
        (Some(id), Some(secret)) if methods.contains(&"client_secret_post") && !methods.contains(&"client_secret_basic") => {
            form.push(("client_id", id.to_owned()));
            form.push(("client_secret", secret.expose().to_owned()));
            Ok(None)
        }
        (Some(id), Some(secret)) => Ok(Some(basic(id, secret))),
        (Some(id), None) => {
            form.push(("client_id", id.to_owned()));
            Ok(None)
        }
        (None, _) => Ok(None),
    }
}

/// RFC 6749 §2.3.1: both parts form-encoded, then Base64.
fn basic(id: &str, secret: &Secret) -> Secret {
    let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    Secret::new(format!("Basic {}", BASE64.encode(format!("{}:{}", enc(id), enc(secret.expose())).as_bytes())))
}

type Form<'a> = Vec<(&'a str, String)>;

/// One form POST to a token endpoint, with a DPoP proof when `dpop` is given: `request` gives
/// each attempt's form and Basic header. The body of a 2xx answer, else the server's error.
async fn post<'a>(
    http: &reqwest::Client,
    endpoint: &str,
    request: impl Fn() -> Result<(Form<'a>, Option<Secret>), String>,
    dpop: Option<&Dpop>,
    who: &str,
) -> Result<Vec<u8>, String> {
    let send = |proof: Option<http::HeaderValue>| {
        let built = build(http, endpoint, &request, proof);
        async move {
            let failed = |e: String| format!("{who}'s token endpoint: {e}");
            let response = built?.send().await.map_err(|e| failed(crate::secret::redact_urls_in(&e.to_string()).into_owned()))?;
            dpop::read_response(response).await.map_err(failed)
        }
    };
    let response = match dpop {
        Some(d) => d.token_request(endpoint, |proof| send(Some(proof))).await?,
        None => send(None).await?,
    };
    let (status, bytes) = (response.status(), response.body());
    if !status.is_success() {
        return Err(refusal(who, status.as_u16(), bytes));
    }
    Ok(response.into_body())
}

/// One attempt's request.
fn build<'a>(http: &reqwest::Client, endpoint: &str, request: &impl Fn() -> Result<(Form<'a>, Option<Secret>), String>, proof: Option<http::HeaderValue>) -> Result<reqwest::RequestBuilder, String> {
    let (form, authorization) = request()?;
    let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str()))).finish();
    let mut builder = http
        .post(endpoint)
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(http::header::ACCEPT, "application/json")
        .body(body);
    if let Some(a) = authorization {
        let mut value = http::HeaderValue::from_str(a.expose()).map_err(|_| "the client credentials cannot be sent in a header".to_owned())?;
        value.set_sensitive(true);
        builder = builder.header(http::header::AUTHORIZATION, value);
    }
    if let Some(p) = proof {
        builder = builder.header("dpop", p);
    }
    Ok(builder)
}

/// `{who} refused the grant: invalid_grant (description)`, from an RFC 6749 §5.2 error body.
fn refusal(who: &str, status: u16, body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let short = |s: &str| s.chars().filter(|c| !c.is_control()).take(200).collect::<String>();
    match v.get("error").and_then(Value::as_str) {
        Some(code) => match v.get("error_description").and_then(Value::as_str) {
            Some(d) => format!("{who} refused the grant: {} ({})", short(code), short(d)),
            None => format!("{who} refused the grant: {}", short(code)),
        },
        None => format!("{who} refused the grant (HTTP {status})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: &[&str]) -> AuthorizationMetadata {
        serde_json::from_value(json!({
            "authorization_endpoint": "https://as/authorize", "token_endpoint": "https://as/token",
            "issuer": "https://as", "token_endpoint_auth_methods_supported": methods,
        }))
        .unwrap()
    }

    fn oauth(v: Value) -> OAuthConfig {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_secret_goes_in_basic_unless_only_post_is_listed() {
        let o = oauth(json!({"clientId": "a b", "clientSecret": "s:t"}));
        let mut form = Vec::new();
        let header = client_auth(&o, &metadata(&["client_secret_basic"]), &mut form).unwrap().unwrap();
        // Form-encoded before Base64: the colon in the secret survives.
        assert_eq!(header.expose(), format!("Basic {}", BASE64.encode(b"a+b:s%3At")));
        assert!(form.is_empty());
        let mut form = Vec::new();
        assert!(client_auth(&o, &metadata(&["client_secret_post"]), &mut form).unwrap().is_none());
        assert_eq!(form, vec![("client_id", "a b".to_owned()), ("client_secret", "s:t".to_owned())]);
        let mut form = Vec::new();
        assert!(client_auth(&oauth(json!({"clientId": "w"})), &metadata(&["none"]), &mut form).unwrap().is_none());
        assert_eq!(form, vec![("client_id", "w".to_owned())]);
    }

    #[test]
    fn a_private_key_signs_an_assertion_for_the_issuer() {
        let rng = ring::rand::SystemRandom::new();
        let der = ring::signature::EcdsaKeyPair::generate_pkcs8(&ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", BASE64.encode(der.as_ref()));
        let o = oauth(json!({"clientId": "c", "privateKey": pem}));
        let mut form = Vec::new();
        assert!(client_auth(&o, &metadata(&["private_key_jwt"]), &mut form).unwrap().is_none());
        assert_eq!(form[0], ("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
        let claims = form[1].1.split('.').nth(1).unwrap();
        let claims: Value = serde_json::from_slice(&data_encoding::BASE64URL_NOPAD.decode(claims.as_bytes()).unwrap()).unwrap();
        assert_eq!((claims["iss"].as_str(), claims["sub"].as_str(), claims["aud"].as_str()), (Some("c"), Some("c"), Some("https://as")));
        assert!(form.iter().all(|(k, _)| *k != "client_id"), "RFC 7523: the assertion identifies the client");
    }

    #[test]
    fn a_refusal_names_the_code_and_not_the_request() {
        let body = br#"{"error": "invalid_grant", "error_description": "expired"}"#;
        assert_eq!(refusal("the authorization server", 400, body), "the authorization server refused the grant: invalid_grant (expired)");
        assert_eq!(refusal("the identity provider", 500, b"<html>"), "the identity provider refused the grant (HTTP 500)");
    }
}
