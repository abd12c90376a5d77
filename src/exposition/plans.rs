//! Plan scopes: what a plan id names.
//!
//! A plan id names the tools a request may reach through the meta-tools (its deferred pool) and
//! the inspect ledger that the later steps of the same request share. The store keeps the most
//! recent `MAX_PLANS` plans for at most `PLAN_TTL`; an expired id is answered as unknown.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const MAX_PLANS: usize = 1024;
pub const PLAN_TTL: Duration = Duration::from_secs(60 * 60);

#[derive(Debug)]
pub struct PlanScope {
    pub id: String,
    /// Names reachable through tool_search / tool_inspect / tool_invoke.
    pub deferred: BTreeSet<String>,
    /// Names the model sees directly.
    pub inline: BTreeSet<String>,
    /// Tools inspected so far in this request.
    pub ledger: Mutex<BTreeSet<String>>,
    /// tool_search's index over `deferred`, built on first search.
    pub index: OnceLock<Arc<crate::meta::PlanIndex>>,
    created: Instant,
}

#[derive(Default)]
pub struct PlanStore {
    inner: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    seq: u64,
    plans: HashMap<String, Arc<PlanScope>>,
    order: VecDeque<String>,
}

impl PlanStore {
    pub fn create(&self, deferred: BTreeSet<String>, inline: BTreeSet<String>) -> Arc<PlanScope> {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.seq += 1;
        let id = format!("plan-{}", s.seq);
        let scope = Arc::new(PlanScope {
            id: id.clone(),
            deferred,
            inline,
            ledger: Mutex::new(BTreeSet::new()),
            index: OnceLock::new(),
            created: Instant::now(),
        });
        s.plans.insert(id.clone(), scope.clone());
        s.order.push_back(id);
        while s.order.len() > MAX_PLANS {
            if let Some(old) = s.order.pop_front() {
                s.plans.remove(&old);
            }
        }
        scope
    }

    pub fn get(&self, id: &str) -> Option<Arc<PlanScope>> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.plans.get(id).filter(|p| p.created.elapsed() < PLAN_TTL).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recent_plans() {
        let store = PlanStore::default();
        let first = store.create(BTreeSet::new(), BTreeSet::new());
        for _ in 0..MAX_PLANS {
            store.create(BTreeSet::new(), BTreeSet::new());
        }
        assert!(store.get(&first.id).is_none());
        assert!(store.get(&format!("plan-{}", MAX_PLANS + 1)).is_some());
    }
}
