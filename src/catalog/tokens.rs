//! One server's OAuth record (`auth::Saved`) as rmcp's `CredentialStore`: in memory, written
//! through to the host's secrets under `secret_key(server id)`.
//!
//! Several processes can share one server's record (the gateways of one state directory), and
//! an authorization server may take each refresh token once. Invariants:
//! - A refresh is made by one process at a time: `acquire_refresh_guard` holds the host's
//!   `refresh_lock` for the key, and reads the record again inside it, so the exchange spends
//!   the refresh token the last holder saved, never one another process already spent.
//! - Outside a refresh loads come from memory, read again only when the host's
//!   `secrets_revision` moved (one cheap read per request, no record read): a process uses the
//!   tokens another one rotated rather than refreshing again.
//! - A rejected refresh (`invalid_grant`) reads the record again first: a record another
//!   process saved meanwhile is kept, and `adopted` moves so that the request is sent once more
//!   with it (`rotated.rs`) instead of asking the user to sign in again.
//! - A host whose secrets no other process shares (`secrets_revision` is `None`) is read once
//!   and never locked: the sidecar's `host/secrets/*` traffic is what it always was.
//! - Tokens never reach a log or an error: `Saved` has no `Debug`, and every value read is
//!   registered with the redactor.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials};

use super::auth::{secret_key, AuthHost, Saved};
use crate::secret::redactor::Redactor;
use crate::secret::Secret;

/// The longest wait for the host's answer to a secrets request.
const SECRETS_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait for another process's refresh of the same tokens (its token request).
const REFRESH_WAIT: Duration = Duration::from_secs(60);

/// One server's tokens.
#[derive(Clone)]
pub(crate) struct TokenStore(Arc<Inner>);

struct Inner {
    key: String,
    host: Arc<dyn AuthHost>,
    /// The tokens and the registered client secret, redacted from the log; set again whenever
    /// the record changes.
    redactor: Redactor,
    slot: tokio::sync::Mutex<Slot>,
    /// How many times a record another process saved replaced the one in memory.
    adopted: AtomicU64,
}

#[derive(Default)]
struct Slot {
    /// `None` until the first load (from the host, or empty).
    saved: Option<Saved>,
    /// The host's `secrets_revision` when `saved` was read.
    revision: Option<u64>,
}

impl TokenStore {
    pub fn new(server_id: &str, host: Arc<dyn AuthHost>) -> TokenStore {
        let inner = Inner { key: secret_key(server_id), host, redactor: Redactor::new(Vec::new()), slot: Default::default(), adopted: AtomicU64::new(0) };
        TokenStore(Arc::new(inner))
    }

    /// The saved record: read from the host the first time, and again when another process
    /// changed a shared one.
    pub async fn saved(&self) -> Saved {
        let mut slot = self.0.slot.lock().await;
        let revision = self.0.host.secrets_revision().await;
        if slot.saved.is_none() || (revision.is_some() && revision != slot.revision) {
            self.reread(&mut slot, revision).await;
        }
        slot.saved.clone().unwrap_or_default()
    }

    /// How many times another process's record replaced this one's (see `reload`).
    pub fn adopted(&self) -> u64 {
        self.0.adopted.load(Ordering::Relaxed)
    }

    /// Reads a shared record again now: true when one another process saved replaced the
    /// one in memory since `adopted()` was `seen`. False for secrets no one else shares.
    pub async fn reload(&self, seen: u64) -> bool {
        let Some(revision) = self.0.host.secrets_revision().await else { return false };
        let mut slot = self.0.slot.lock().await;
        self.reread(&mut slot, Some(revision)).await;
        self.adopted() != seen
    }

    /// `slot` from the host; kept as it was when the host cannot be read (a passing failure
    /// must not sign the process out). `revision` was taken before the read: a change after it
    /// is seen at the next load.
    async fn reread(&self, slot: &mut Slot, revision: Option<u64>) {
        let Some(fresh) = self.read_host().await else {
            slot.saved.get_or_insert_with(Saved::default);
            return;
        };
        if slot.saved.as_ref().is_some_and(|old| !same(old, &fresh)) {
            self.0.adopted.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(key = %self.0.key, "OAuth record changed by another process; using it");
        }
        self.0.redactor.set(fresh.secret_values());
        slot.saved = Some(fresh);
        slot.revision = revision;
    }

    /// The host's record (empty when there is none); `None` when it cannot be read.
    async fn read_host(&self) -> Option<Saved> {
        let host = &self.0.host;
        if !host.has_secrets() {
            return Some(Saved::default());
        }
        match tokio::time::timeout(SECRETS_TIMEOUT, host.secret_get(&self.0.key)).await {
            Ok(Ok(Some(value))) => Some(serde_json::from_str(value.expose()).unwrap_or_else(|_| {
                // The error text could quote the value: only say that it did not parse.
                tracing::warn!(key = %self.0.key, "saved OAuth record is not valid; starting over");
                Saved::default()
            })),
            Ok(Ok(None)) => Some(Saved::default()),
            Ok(Err(e)) => {
                tracing::warn!(key = %self.0.key, error = %e, "cannot read saved OAuth tokens from the host");
                None
            }
            Err(_) => {
                tracing::warn!(key = %self.0.key, "the host did not answer host/secrets/get in time");
                None
            }
        }
    }

    /// Change the record and write it through to the host (deleting it when empty). A shared
    /// record is read again first, so the change applies to what another process saved.
    pub async fn update(&self, change: impl FnOnce(&mut Saved)) -> Result<(), String> {
        let mut slot = self.0.slot.lock().await;
        let revision = self.0.host.secrets_revision().await;
        if slot.saved.is_none() || revision.is_some() {
            self.reread(&mut slot, revision).await;
        }
        let saved = slot.saved.get_or_insert_with(Saved::default);
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

/// The same record (compared as stored: `Saved` has no `PartialEq`, its tokens none either).
fn same(a: &Saved, b: &Saved) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
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

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let held = tokio::time::timeout(REFRESH_WAIT, self.0.host.refresh_lock(&self.0.key)).await;
        let held = held.map_err(|_| AuthError::CredentialStoreError(format!("another process kept refreshing {} for {} s", self.0.key, REFRESH_WAIT.as_secs())))?;
        let Some(guard) = held.map_err(AuthError::CredentialStoreError)? else { return Ok(None) };
        // rmcp loads the credentials next: what the last holder saved, not the memory copy.
        let revision = self.0.host.secrets_revision().await;
        self.reread(&mut *self.0.slot.lock().await, revision).await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }

    async fn on_refresh_token_rejected(&self, _rejected: &StoredCredentials) -> Result<(), AuthError> {
        // Another process may have rotated the tokens without our lock (an older toolreg, or
        // `toolreg auth`): what is stored now is kept, and `rotated.rs` tries it.
        if self.reload(self.adopted()).await {
            tracing::info!(key = %self.0.key, "refresh token rejected, but another process saved new tokens: using them");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::future::BoxFuture;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Secrets two "processes" share: a map and a revision, as the gateways' store keeps them;
    /// or, `own`, a host's own (no lock, no revision).
    #[derive(Default)]
    struct Shared {
        values: Mutex<HashMap<String, String>>,
        revision: AtomicU64,
        own: bool,
    }

    impl AuthHost for Shared {
        fn can_open_url(&self) -> bool {
            false
        }
        fn has_secrets(&self) -> bool {
            true
        }
        fn open_url<'a>(&'a self, _: &'a str, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
            Box::pin(async { Err("no".to_owned()) })
        }
        fn secret_get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Secret>, String>> {
            let v = self.values.lock().unwrap().get(key).cloned().map(Secret::new);
            Box::pin(async move { Ok(v) })
        }
        fn secret_set<'a>(&'a self, key: &'a str, value: Secret) -> BoxFuture<'a, Result<(), String>> {
            self.values.lock().unwrap().insert(key.to_owned(), value.expose().to_owned());
            self.revision.fetch_add(1, Ordering::Relaxed);
            Box::pin(async { Ok(()) })
        }
        fn secret_delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
            self.values.lock().unwrap().remove(key);
            self.revision.fetch_add(1, Ordering::Relaxed);
            Box::pin(async { Ok(()) })
        }
        fn refresh_lock<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<Box<dyn Send>>, String>> {
            let held = (!self.own).then(|| Box::new(()) as Box<dyn Send>);
            Box::pin(async { Ok(held) })
        }
        fn secrets_revision(&self) -> BoxFuture<'_, Option<u64>> {
            let n = (!self.own).then(|| self.revision.load(Ordering::Relaxed));
            Box::pin(async move { n })
        }
    }

    fn creds(refresh: &str) -> StoredCredentials {
        let tokens = serde_json::from_value(serde_json::json!({"access_token": format!("a-{refresh}"), "refresh_token": refresh, "token_type": "Bearer"})).unwrap();
        StoredCredentials::new("client".into(), Some(tokens), vec![], None)
    }

    fn refresh_of(c: Option<StoredCredentials>) -> String {
        serde_json::to_value(c.unwrap().token_response).unwrap()["refresh_token"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn a_process_uses_the_tokens_another_one_rotated() {
        let host = Arc::new(Shared::default());
        let (a, b) = (TokenStore::new("web", host.clone()), TokenStore::new("web", host.clone()));
        a.save(creds("r1")).await.unwrap();
        assert_eq!(refresh_of(b.load().await.unwrap()), "r1");
        // A rotates under its guard; B's next load sees it (the revision moved).
        let guard = a.acquire_refresh_guard().await.unwrap();
        assert!(guard.is_some(), "a shared record is refreshed under the host's lock");
        a.save(creds("r2")).await.unwrap();
        drop(guard);
        assert_eq!(refresh_of(b.load().await.unwrap()), "r2");

        // Rotated behind B's back with the revision unseen (an old toolreg): inside B's guard
        // the record is read again all the same.
        host.values.lock().unwrap().insert(secret_key("web"), serde_json::json!({"credentials": creds("r3")}).to_string());
        let _guard = b.acquire_refresh_guard().await.unwrap();
        assert_eq!(refresh_of(b.load().await.unwrap()), "r3");
    }

    #[tokio::test]
    async fn a_rejected_refresh_keeps_what_another_process_saved_and_says_so() {
        let host = Arc::new(Shared::default());
        let b = TokenStore::new("web", host.clone());
        b.save(creds("r1")).await.unwrap();
        let seen = b.adopted();
        // Another process saved r2 without the lock; B's refresh of r1 was rejected.
        host.values.lock().unwrap().insert(secret_key("web"), serde_json::json!({"credentials": creds("r2")}).to_string());
        b.on_refresh_token_rejected(&creds("r1")).await.unwrap();
        assert_ne!(b.adopted(), seen, "the request is worth sending again");
        assert_eq!(refresh_of(b.load().await.unwrap()), "r2");
        // Nothing new stored: no second chance.
        let seen = b.adopted();
        assert!(!b.reload(seen).await);
    }

    #[tokio::test]
    async fn secrets_no_one_shares_are_read_once_and_never_locked() {
        let host = Arc::new(Shared { own: true, ..Shared::default() });
        let s = TokenStore::new("web", host.clone());
        s.save(creds("r1")).await.unwrap();
        host.values.lock().unwrap().insert(secret_key("web"), serde_json::json!({"credentials": creds("r2")}).to_string());
        assert!(s.acquire_refresh_guard().await.unwrap().is_none());
        assert_eq!(refresh_of(s.load().await.unwrap()), "r1", "served from memory");
        assert!(!s.reload(s.adopted()).await);
    }
}
