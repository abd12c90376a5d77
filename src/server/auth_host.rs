//! The catalog's `AuthHost` port over reverse requests: `host/openUrl` and
//! `host/secrets/get|set|delete`, each only when the host declared the capability.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::outgoing::Outgoing;
use crate::catalog::AuthHost;
use crate::protocol::{HostOpenUrl, HostSecretsDelete, HostSecretsGet, HostSecretsSet, Request};
use crate::secret::Secret;

/// Opening a page is quick; the user's authorizing is not awaited here.
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);

pub struct HostAuth {
    pub out: Arc<Outgoing>,
    pub open_url: bool,
    pub secrets: bool,
}

impl HostAuth {
    async fn ask(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        match tokio::time::timeout(timeout, self.out.request(method, params)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.message),
            Err(_) => Err(format!("no answer to {method} within {} ms", timeout.as_millis())),
        }
    }
}

impl AuthHost for HostAuth {
    fn can_open_url(&self) -> bool {
        self.open_url
    }

    fn has_secrets(&self) -> bool {
        self.secrets
    }

    fn open_url<'a>(&'a self, url: &'a str, server_id: &'a str, reason: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let params = json!({"url": url, "serverId": server_id, "reason": reason});
            self.ask(HostOpenUrl::METHOD, params, OPEN_TIMEOUT).await.map(|_| ())
        })
    }

    fn secret_get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Secret>, String>> {
        Box::pin(async move {
            let v = self.ask(HostSecretsGet::METHOD, json!({"key": key}), OPEN_TIMEOUT).await?;
            match v.get("value") {
                Some(Value::String(s)) => Ok(Some(Secret::new(s.clone()))),
                Some(Value::Null) | None => Ok(None),
                // Never quote the answer: it may be the secret in the wrong shape.
                Some(_) => Err("the host's host/secrets/get value is not a string".into()),
            }
        })
    }

    fn secret_set<'a>(&'a self, key: &'a str, value: Secret) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let params = json!({"key": key, "value": value.expose()});
            self.ask(HostSecretsSet::METHOD, params, OPEN_TIMEOUT).await.map(|_| ())
        })
    }

    fn secret_delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move { self.ask(HostSecretsDelete::METHOD, json!({"key": key}), OPEN_TIMEOUT).await.map(|_| ()) })
    }
}
