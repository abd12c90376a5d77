//! Outgoing HTTP through a proxy (issue 53). Every request reqwest makes already honours
//! `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (either case); a server's own
//! `proxy` (beside its `transport`) goes over them for its MCP requests. Its credentials are a
//! `SecretUrl`'s: never shown, redacted from errors (`ServerConfig::secret_values`).

use crate::secret::SecretUrl;

/// The client an `http` server's session sends through when it names a `proxy`; `None`: the
/// transport's default client (which reads the environment's proxies).
pub fn client(proxy: Option<&SecretUrl>) -> Result<Option<reqwest::Client>, String> {
    let Some(proxy) = proxy else { return Ok(None) };
    let shown = proxy.redacted();
    let proxy = reqwest::Proxy::all(proxy.expose()).map_err(|_| format!("proxy {shown} is not a proxy URL"))?;
    builder()
        .proxy(proxy)
        .build()
        .map(Some)
        .map_err(|e| format!("cannot build an HTTP client for proxy {shown}: {}", crate::secret::redact_urls_in(&e.to_string())))
}

/// `client`, or one that reads the environment's proxies when the server names none.
pub fn any(proxy: Option<&SecretUrl>) -> Result<reqwest::Client, String> {
    match client(proxy)? {
        Some(c) => Ok(c),
        None => builder().build().map_err(|e| format!("cannot build an HTTP client: {e}")),
    }
}

/// As rmcp's default client: no idle pool (delayed-ACK stalls), same-origin 307/308 only.
fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().pool_max_idle_per_host(0).redirect(same_origin())
}

/// Follows a 307 or 308 to the same origin (they keep the method and the JSON-RPC body), at
/// most 10 times; never to another host, which would get the server's headers.
fn same_origin() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        let kept = matches!(attempt.status().as_u16(), 307 | 308);
        if same && kept && attempt.previous().len() <= 10 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}
