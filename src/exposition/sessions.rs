//! Session memory: the usage-driven tools each conversation's first plan chose.
//!
//! A provider's prompt cache breaks when the tool list changes, so within one conversation
//! (the host's `session` id) the tools placed inline for their usage must not move: the first
//! plan of a session picks them from the counts as they are, and later plans of that session
//! get the same picks, reasons included, whatever was counted meanwhile. Bounded: the
//! `MAX_SESSIONS` most recently planned sessions are kept; a forgotten session picks again.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

pub const MAX_SESSIONS: usize = 1024;

/// A deferred tool to place inline for its usage, and the ledger's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Promote {
    pub name: String,
    pub note: String,
}

#[derive(Default)]
pub struct Sessions {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    picks: HashMap<String, Arc<Vec<Promote>>>,
    /// Keys, least recently planned first.
    order: VecDeque<String>,
}

/// One session of one usage key (a host may plan one conversation under two keys).
fn slot(session: &str, usage_key: &str) -> String {
    format!("{usage_key}\u{0}{session}")
}

impl Sessions {
    /// The session's picks, if its first plan made them.
    pub fn get(&self, session: &str, usage_key: &str) -> Option<Arc<Vec<Promote>>> {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let k = slot(session, usage_key);
        let picks = s.picks.get(&k).cloned()?;
        if let Some(i) = s.order.iter().position(|o| *o == k) {
            let k = s.order.remove(i).expect("found");
            s.order.push_back(k);
        }
        Some(picks)
    }

    /// Keeps the picks of a session's first plan; a session already known keeps its own (two
    /// first plans racing agree on the first one stored).
    pub fn fix(&self, session: &str, usage_key: &str, picks: Vec<Promote>) -> Arc<Vec<Promote>> {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let k = slot(session, usage_key);
        if let Some(known) = s.picks.get(&k) {
            return known.clone();
        }
        let picks = Arc::new(picks);
        s.picks.insert(k.clone(), picks.clone());
        s.order.push_back(k);
        while s.order.len() > MAX_SESSIONS {
            if let Some(old) = s.order.pop_front() {
                s.picks.remove(&old);
            }
        }
        picks
    }

    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).picks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> Promote {
        Promote { name: name.into(), note: "called 3 times in 7 days".into() }
    }

    #[test]
    fn a_session_keeps_its_first_picks() {
        let s = Sessions::default();
        assert!(s.get("c1", "k").is_none());
        s.fix("c1", "k", vec![p("a")]);
        assert_eq!(*s.fix("c1", "k", vec![p("b")]), vec![p("a")]);
        assert_eq!(*s.get("c1", "k").unwrap(), vec![p("a")]);
        assert!(s.get("c1", "other").is_none(), "another key is another session");
    }

    #[test]
    fn sessions_are_bounded_least_recently_planned_first() {
        let s = Sessions::default();
        for i in 0..MAX_SESSIONS {
            s.fix(&format!("c{i}"), "k", vec![]);
        }
        assert!(s.get("c0", "k").is_some(), "touch c0: now the most recent");
        s.fix("new", "k", vec![]);
        assert_eq!(s.len(), MAX_SESSIONS);
        assert!(s.get("c0", "k").is_some());
        assert!(s.get("c1", "k").is_none(), "c1 was the least recently planned");
    }
}
