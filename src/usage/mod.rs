//! Usage: how often each tool is called, per usage key, so that plans can keep the tools a user
//! actually calls inline instead of behind a search round trip (issue 28).
//!
//! Names and counts only: a tool's name, a decayed count, when it was last called, and calls per
//! day for the last `WINDOW_DAYS`. Never arguments, results, or anything else of a call.
//!
//! Decay is exponential with a half-life of `HALF_LIFE_DAYS` (7): a call a week old weighs 1/2,
//! a month old 1/20. Habits that drift over days move the ranking within a week or two, and one
//! busy afternoon does not pin a tool for a month. The count is stored as of its last update
//! and decayed on read, so nothing runs on a timer.
//!
//! Bounds: at most `MAX_TOOLS` tools per key (the lowest decayed count goes first) and
//! `MAX_KEYS` keys (the least recently used goes first), so the stored record stays under
//! ~300 KiB whatever the host does. A usage key is the host's explicit `usageKey`, else one
//! derived from the plan's scope (`key_for_scope`), else `DEFAULT_KEY`.
//!
//! Plain data, no I/O: `book.rs` keeps one `Usage` behind a lock and adds to the stored one.

pub mod book;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const HALF_LIFE_DAYS: u32 = 7;
/// "Calls in window": the last this many days, today included.
pub const WINDOW_DAYS: u32 = 7;
pub const MAX_TOOLS: usize = 64;
pub const MAX_KEYS: usize = 32;
/// Calls without a plan, and plans without a usage key or scope.
pub const DEFAULT_KEY: &str = "default";
/// A tool must weigh at least this much to be worth a place inline: two calls within the last
/// day (two calls a day old weigh 2 x 2^(-1/7) = 1.81). Not 2.0: counts decay by the second, so
/// two calls made a moment ago already weigh a hair under 2 and would not count.
pub const MIN_COUNT: f64 = 1.8;

const DAY: i64 = 86_400;
const HALF_LIFE_SECS: f64 = HALF_LIFE_DAYS as f64 * DAY as f64;

/// How a call reached the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// `tool/invoke` of the tool itself (an inline tool).
    Direct,
    /// `tool_invoke` of a deferred tool the plan's `tool_search` did not return.
    Invoke,
    /// `tool_invoke` of a deferred tool after `tool_search` returned it: a search round trip
    /// that an inline definition would have saved.
    Search,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCount {
    /// The decayed count as of `at`.
    count: f64,
    /// Unix seconds.
    at: i64,
    last_used: i64,
    /// Calls per unix day, oldest first, the last `WINDOW_DAYS` only.
    days: Vec<Day>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Day {
    day: i64,
    calls: u32,
    /// Of which after a search.
    searched: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyCounts {
    last_used: i64,
    tools: BTreeMap<String, ToolCount>,
}

/// Every key's counts. Serialised as is into the store's usage record (`book.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    version: u32,
    keys: BTreeMap<String, KeyCounts>,
}

impl Default for Usage {
    fn default() -> Usage {
        Usage::new()
    }
}

/// One tool's usage as of a moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally {
    pub name: String,
    /// The decayed count.
    pub count: f64,
    pub last_used: i64,
    pub calls_in_window: u32,
    pub searched_in_window: u32,
}

impl Tally {
    /// The plan's ledger reason, e.g. "called 14 times in 7 days (9 after a search)".
    pub fn note(&self) -> String {
        let n = self.calls_in_window;
        let mut s = if n > 0 {
            format!("called {n} time{} in {WINDOW_DAYS} days", if n == 1 { "" } else { "s" })
        } else {
            format!("called often before: weighs {:.1} calls (half-life {HALF_LIFE_DAYS} days)", self.count)
        };
        if self.searched_in_window > 0 {
            s.push_str(&format!(" ({} after a search)", self.searched_in_window));
        }
        s
    }
}

fn decayed(count: f64, at: i64, now: i64) -> f64 {
    let age = (now.saturating_sub(at)).max(0) as f64;
    count * 0.5f64.powf(age / HALF_LIFE_SECS)
}

fn day_of(t: i64) -> i64 {
    t.div_euclid(DAY)
}

impl ToolCount {
    fn in_window(&self, now: i64) -> (u32, u32) {
        let first = day_of(now) - i64::from(WINDOW_DAYS) + 1;
        self.days.iter().filter(|d| d.day >= first).fold((0, 0), |(c, s), d| (c + d.calls, s + d.searched))
    }
}

impl Usage {
    pub const VERSION: u32 = 1;

    pub fn new() -> Usage {
        Usage { version: Self::VERSION, keys: BTreeMap::new() }
    }

    /// Counts one call of `tool` under `key` at `now` (unix seconds).
    pub fn record(&mut self, key: &str, tool: &str, via: Via, now: i64) {
        if !self.keys.contains_key(key) && self.keys.len() >= MAX_KEYS {
            let oldest = self.keys.iter().min_by_key(|(k, c)| (c.last_used, (*k).clone())).map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.keys.remove(&k);
            }
        }
        let counts = self.keys.entry(key.to_string()).or_default();
        counts.last_used = counts.last_used.max(now);
        if !counts.tools.contains_key(tool) && counts.tools.len() >= MAX_TOOLS {
            let weakest = counts
                .tools
                .iter()
                .min_by(|a, b| decayed(a.1.count, a.1.at, now).total_cmp(&decayed(b.1.count, b.1.at, now)).then(a.0.cmp(b.0)))
                .map(|(k, _)| k.clone());
            if let Some(k) = weakest {
                counts.tools.remove(&k);
            }
        }
        let t = counts.tools.entry(tool.to_string()).or_default();
        t.count = decayed(t.count, t.at, now) + 1.0;
        t.at = t.at.max(now);
        t.last_used = t.last_used.max(now);
        let today = day_of(now);
        match t.days.iter_mut().find(|d| d.day == today) {
            Some(d) => d.calls += 1,
            None => {
                t.days.push(Day { day: today, calls: 1, searched: 0 });
                t.days.sort_by_key(|d| d.day);
            }
        }
        if via == Via::Search {
            if let Some(d) = t.days.iter_mut().find(|d| d.day == today) {
                d.searched += 1;
            }
        }
        let first = today - i64::from(WINDOW_DAYS) + 1;
        t.days.retain(|d| d.day >= first);
    }

    /// `key`'s tools, most used first (ties by name), as of `now`.
    pub fn tallies(&self, key: &str, now: i64) -> Vec<Tally> {
        let Some(counts) = self.keys.get(key) else { return Vec::new() };
        let mut out: Vec<Tally> = counts
            .tools
            .iter()
            .map(|(name, t)| {
                let (calls_in_window, searched_in_window) = t.in_window(now);
                Tally { name: name.clone(), count: decayed(t.count, t.at, now), last_used: t.last_used, calls_in_window, searched_in_window }
            })
            .collect();
        out.sort_by(|a, b| b.count.total_cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        out
    }

    /// The keys, in name order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    /// Forgets `key`, or every key; returns the keys forgotten.
    pub fn reset(&mut self, key: Option<&str>) -> Vec<String> {
        match key {
            Some(k) => self.keys.remove_entry(k).map(|(k, _)| k).into_iter().collect(),
            None => std::mem::take(&mut self.keys).into_keys().collect(),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A file of another version or shape is refused whole (the caller starts afresh), and the
    /// bounds are applied again: a file edited by hand cannot make the sidecar keep more.
    pub fn from_bytes(bytes: &[u8]) -> Option<Usage> {
        let mut u: Usage = serde_json::from_slice(bytes).ok()?;
        if u.version != Self::VERSION {
            return None;
        }
        while u.keys.len() > MAX_KEYS {
            let oldest = u.keys.iter().min_by_key(|(_, c)| c.last_used).map(|(k, _)| k.clone())?;
            u.keys.remove(&oldest);
        }
        for c in u.keys.values_mut() {
            while c.tools.len() > MAX_TOOLS {
                let weakest = c.tools.iter().min_by(|a, b| a.1.count.total_cmp(&b.1.count)).map(|(k, _)| k.clone())?;
                c.tools.remove(&weakest);
            }
            for t in c.tools.values_mut() {
                if !t.count.is_finite() || t.count < 0.0 {
                    t.count = 0.0;
                }
                t.days.truncate(WINDOW_DAYS as usize);
            }
        }
        Some(u)
    }
}

/// The usage key of a plan without `usageKey`: `default` for an empty scope, else `scope-` and
/// a digest of the scope's canonical JSON, so the same settings share their counts.
pub fn key_for_scope(scope: &serde_json::Value) -> String {
    use sha2::{Digest, Sha256};
    if scope.as_object().is_none_or(|o| o.is_empty()) {
        return DEFAULT_KEY.to_string();
    }
    let text = crate::catalog::canonical::canonical(scope);
    format!("scope-{}", data_encoding::HEXLOWER.encode(&Sha256::digest(text.as_bytes())[..8]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    #[test]
    fn a_call_loses_half_its_weight_per_half_life() {
        let mut u = Usage::new();
        for _ in 0..8 {
            u.record("k", "a", Via::Direct, NOW);
        }
        let at = |t: i64| u.tallies("k", t)[0].count;
        assert!((at(NOW) - 8.0).abs() < 1e-9);
        assert!((at(NOW + 7 * DAY) - 4.0).abs() < 1e-9);
        assert!((at(NOW + 14 * DAY) - 2.0).abs() < 1e-9);
        // A new call adds one to the decayed count.
        u.record("k", "a", Via::Direct, NOW + 7 * DAY);
        assert!((u.tallies("k", NOW + 7 * DAY)[0].count - 5.0).abs() < 1e-9);
    }

    #[test]
    fn calls_in_window_count_the_last_seven_days() {
        let mut u = Usage::new();
        u.record("k", "a", Via::Search, NOW - 10 * DAY);
        u.record("k", "a", Via::Search, NOW - 2 * DAY);
        u.record("k", "a", Via::Direct, NOW);
        let t = &u.tallies("k", NOW)[0];
        assert_eq!((t.calls_in_window, t.searched_in_window), (2, 1));
        assert_eq!(t.note(), "called 2 times in 7 days (1 after a search)");
        let later = &u.tallies("k", NOW + 30 * DAY)[0];
        assert_eq!(later.calls_in_window, 0);
        assert!(later.note().starts_with("called often before"), "{}", later.note());
    }

    #[test]
    fn two_calls_within_a_day_are_worth_a_place_and_one_never() {
        let now = 1_000_000_000;
        assert!(decayed(2.0, now - 1, now) < 2.0, "a second's decay");
        assert!(decayed(2.0, now - 1, now) >= MIN_COUNT && decayed(2.0, now - DAY + 60, now) >= MIN_COUNT);
        assert!(decayed(2.0, now - 2 * DAY, now) < MIN_COUNT && decayed(1.0, now, now) < MIN_COUNT);
    }

    #[test]
    fn ranking_is_by_decayed_count_then_name() {
        let mut u = Usage::new();
        for _ in 0..4 {
            u.record("k", "old", Via::Direct, NOW - 21 * DAY);
        }
        u.record("k", "new", Via::Direct, NOW);
        u.record("k", "b", Via::Direct, NOW);
        let names: Vec<String> = u.tallies("k", NOW).into_iter().map(|t| t.name).collect();
        // old: 4 * 1/8 = 0.5 < 1.
        assert_eq!(names, ["b", "new", "old"]);
    }

    #[test]
    fn tools_and_keys_are_bounded() {
        let mut u = Usage::new();
        u.record("k", "favourite", Via::Direct, NOW);
        u.record("k", "favourite", Via::Direct, NOW);
        for i in 0..MAX_TOOLS * 2 {
            u.record("k", &format!("t{i:03}"), Via::Direct, NOW + i as i64);
        }
        let names: Vec<String> = u.tallies("k", NOW + 1_000).into_iter().map(|t| t.name).collect();
        assert_eq!(names.len(), MAX_TOOLS);
        assert_eq!(names[0], "favourite", "the most used tool stays");
        for i in 0..MAX_KEYS + 5 {
            u.record(&format!("key{i:02}"), "a", Via::Direct, NOW + 10_000 + i as i64);
        }
        assert_eq!(u.keys().count(), MAX_KEYS);
        assert!(!u.keys().any(|k| k == "k" || k == "key00"), "the least recently used keys went");
    }

    #[test]
    fn reset_forgets_one_key_or_all() {
        let mut u = Usage::new();
        u.record("a", "t", Via::Direct, NOW);
        u.record("b", "t", Via::Direct, NOW);
        assert_eq!(u.reset(Some("a")), ["a"]);
        assert_eq!(u.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(u.reset(None), ["b"]);
        assert!(u.tallies("b", NOW).is_empty());
    }

    #[test]
    fn the_file_round_trips_and_a_bad_one_is_refused() {
        let mut u = Usage::new();
        u.record("a", "t", Via::Search, NOW);
        assert_eq!(Usage::from_bytes(&u.to_bytes()), Some(u.clone()));
        assert_eq!(Usage::from_bytes(b"{not json"), None);
        assert_eq!(Usage::from_bytes(br#"{"version": 99, "keys": {}}"#), None);
    }

    #[test]
    fn scope_keys_are_stable_and_empty_scopes_share_the_default() {
        let a = serde_json::json!({"settings": {"x": true, "y": 1}});
        let b = serde_json::json!({"settings": {"y": 1, "x": true}});
        assert_eq!(key_for_scope(&a), key_for_scope(&b));
        assert!(key_for_scope(&a).starts_with("scope-"));
        assert_eq!(key_for_scope(&serde_json::json!({})), DEFAULT_KEY);
    }
}
