//! Tasks (the MCP extension `io.modelcontextprotocol/tasks`, SEP-2663) that toolreg hands on:
//! an upstream server made a task of a call, and the caller gets it under an id of ours. `Book`
//! keeps what each of our ids names (the server, the server's own id) and whose it is: the id
//! is 32 random bytes (unguessable), and it opens only for the owner that made it (another
//! owner's id reads as unknown, exactly as one that never existed). Knowing no JSON-RPC.
//!
//! Kept in memory only: a restart of toolreg forgets its ids (the upstream's task may still
//! run; a caller that polls an old id is told it is unknown). An entry lasts the task's
//! `ttlMs` (an hour when the server gives none) after it was last asked about; the oldest go
//! first past `MAX`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most this many tasks are remembered at once.
pub const MAX: usize = 10_000;
/// How long a task is remembered when its server names no `ttlMs`.
const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// Where one of our task ids leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub server_id: String,
    /// The task's id at its server.
    pub upstream_id: String,
    /// The server's tool the task runs.
    pub tool: String,
}

struct Entry {
    owner: String,
    route: Route,
    ttl: Duration,
    touched: Instant,
}

#[derive(Default)]
pub struct Book {
    entries: Mutex<HashMap<String, Entry>>,
}

/// A fresh id: 32 random bytes, hex.
fn new_id() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a task id: {e}"))?;
    Ok(data_encoding::HEXLOWER.encode(&bytes))
}

impl Book {
    /// Remembers `route` for `owner` under a new id, which it returns.
    pub fn adopt(&self, owner: &str, route: Route, ttl: Option<Duration>) -> Result<String, String> {
        let id = new_id()?;
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|_, e| now.duration_since(e.touched) <= e.ttl);
        while entries.len() >= MAX {
            let Some(oldest) = entries.iter().min_by_key(|(_, e)| e.touched).map(|(k, _)| k.clone()) else { break };
            entries.remove(&oldest);
        }
        entries.insert(id.clone(), Entry { owner: owner.to_owned(), route, ttl: ttl.unwrap_or(DEFAULT_TTL), touched: now });
        Ok(id)
    }

    /// Where `id` leads, if `owner` made it and it is still remembered.
    pub fn route(&self, owner: &str, id: &str) -> Option<Route> {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let e = entries.get_mut(id).filter(|e| e.owner == owner && now.duration_since(e.touched) <= e.ttl)?;
        e.touched = now;
        Some(e.route.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route() -> Route {
        Route { server_id: "fx".into(), upstream_id: "u1".into(), tool: "slow".into() }
    }

    #[test]
    fn an_id_opens_for_its_owner_only() {
        let book = Book::default();
        let id = book.adopt("alice", route(), None).unwrap();
        assert_eq!(id.len(), 64);
        assert_eq!(book.route("alice", &id), Some(route()));
        assert_eq!(book.route("bob", &id), None);
        assert_eq!(book.route("alice", "u1"), None);
    }

    #[test]
    fn ids_differ_and_expire() {
        let book = Book::default();
        let a = book.adopt("o", route(), Some(Duration::ZERO)).unwrap();
        let b = book.adopt("o", route(), None).unwrap();
        assert_ne!(a, b);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(book.route("o", &a), None);
        assert!(book.route("o", &b).is_some());
    }
}
