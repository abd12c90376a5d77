//! Session memory: the usage-driven tools each conversation's first plan chose.
//!
//! A provider's prompt cache breaks when the tool list changes, so within one conversation
//! (the host's `session` id) the tools placed inline for their usage must not move: the first
//! plan of a session picks them from the counts as they are, and later plans of that session
//! get the same picks, reasons included, whatever was counted meanwhile. Bounded: the
//! `MAX_SESSIONS` most recently planned sessions are kept; a forgotten session picks again.
//!
//! Both faces pick alike (`Pick`, `ranked`, `chosen`): the sidecar per host session, the
//! gateway (`toolreg mcp`) for its one listing, whose sessions it chooses itself.

use super::{Plan, Reason, UsagePick};
use crate::usage::book::Book;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

pub const MAX_SESSIONS: usize = 1024;

/// A deferred tool to place inline for its usage, and the ledger's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Promote {
    pub name: String,
    pub note: String,
}

/// What a plan gets from usage: a session's picks as its first plan fixed them, or the
/// counts as they are now.
pub enum Pick {
    Fixed(Arc<Vec<Promote>>),
    Fresh { ranked: Vec<Promote>, max_tools: Option<usize>, budget_tokens: Option<u64> },
}

impl Pick {
    /// The counts of `usage_key` now, within a count and a budget (`None`: the defaults).
    pub fn fresh(book: &Book, usage_key: &str, max_tools: Option<usize>, budget_tokens: Option<u64>) -> Pick {
        Pick::Fresh { ranked: ranked(book, usage_key), max_tools, budget_tokens }
    }

    pub fn input(&self) -> UsagePick<'_> {
        match self {
            // Whatever the counts, the count and budget now: the first plan chose within them.
            Pick::Fixed(picks) => UsagePick { ranked: picks, max_tools: Some(usize::MAX), budget_tokens: Some(u64::MAX) },
            Pick::Fresh { ranked, max_tools, budget_tokens } => UsagePick { ranked, max_tools: *max_tools, budget_tokens: *budget_tokens },
        }
    }
}

/// `usage_key`'s tools worth a place inline (`usage::MIN_COUNT`), most used first, each with
/// its ledger note.
fn ranked(book: &Book, usage_key: &str) -> Vec<Promote> {
    book.tallies(usage_key)
        .into_iter()
        .filter(|t| t.count >= crate::usage::MIN_COUNT)
        .map(|t| Promote { note: t.note(), name: t.name })
        .collect()
}

/// The tools `plan` placed inline for their usage: what its session keeps.
pub fn chosen(plan: &Plan) -> Vec<Promote> {
    plan.placements
        .iter()
        .filter(|(_, p)| p.reason == Reason::Usage)
        .map(|(name, p)| Promote { name: name.clone(), note: p.note.clone().unwrap_or_default() })
        .collect()
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
