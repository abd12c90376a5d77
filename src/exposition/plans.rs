//! Plan scopes: what a plan id names.
//!
//! A plan id names the tools a request may reach through the meta-tools (its deferred pool) and
//! the inspect ledger that the later steps of the same request share. The store knows nothing
//! of search: indexes over a pool are `meta`'s business.
//!
//! Memory is bounded by an estimate in bytes (`MAX_PLAN_BYTES`), not by a count alone: a pool
//! at 50,000 tools is ~2.8 MB. Pools are interned by content, so the many plans of one
//! conversation (same tools, request after request) share one copy and cost it once. The
//! oldest plans go first; a plan also expires after `PLAN_TTL`. A plan that is gone is
//! answered as unknown, and the host plans again.

use super::render::{Programmatic, Rendering};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Estimated bytes the store may hold: each distinct pool once, plus each plan's own share.
/// 32 MiB keeps ~190 distinct pools of 2,500 tools or ~11 of 50,000, and any number of plans
/// over the same pool up to `MAX_PLANS`. The newest plan is kept even when it alone is larger.
pub const MAX_PLAN_BYTES: usize = 32 << 20;
/// At most this many plan ids, however small their pools.
pub const MAX_PLANS: usize = 1024;
pub const PLAN_TTL: Duration = Duration::from_secs(60 * 60);

/// Estimated cost of one name in a pool beyond its bytes: the `String` header and its share
/// of a B-tree node.
const NAME_OVERHEAD: usize = 48;
/// Estimated cost of a plan beyond its pools: the scope, its id, map and queue slots, an empty
/// ledger. (The ledger grows as tools are inspected; it is bounded by the pool and holds a few
/// names in practice, so it is not counted.)
const PLAN_OVERHEAD: usize = 256;

/// A set of tool names shared by every plan with the same content.
pub type Pool = Arc<BTreeSet<String>>;

#[derive(Debug)]
pub struct PlanScope {
    pub id: String,
    /// Names reachable through tool_search / tool_inspect / tool_invoke.
    pub deferred: Pool,
    /// Names the model sees directly.
    pub inline: Pool,
    /// Active under the plan's scope but neither listed nor deferred: tools only a view may
    /// call (MCP Apps), entries a client tool of the same name shadows.
    pub also: Pool,
    /// The provider shape the plan was rendered in (what `tool_search` answers beside its text).
    pub render: Rendering,
    /// The programmatic callers its tools were marked for (a search loads them so marked).
    pub programmatic: Option<Programmatic>,
    /// Rendered with OpenAI's `strict`: a search loads strict forms, and a call's arguments
    /// come back in them (`strict::restore`).
    pub strict: bool,
    /// Tools inspected so far in this request.
    pub ledger: Mutex<BTreeSet<String>>,
    /// Code mode's limits when the plan offers `tool_exec`; `None`: it is refused.
    pub code: Option<crate::sandbox::Limits>,
    /// Where the calls made under this plan are counted (`usage`).
    pub usage_key: String,
    /// Tools `tool_search` returned in this request: a call of one is search-led.
    pub found: Mutex<BTreeSet<String>>,
    /// The host's conversation id, when the plan was made for one.
    pub session: Option<String>,
    /// The tokenizer of the plan's model (result budgets count with it).
    pub encoding: crate::tokenize::EncodingChoice,
    /// The model the plan was made for: which media its results carry, and their cost.
    pub model: Option<String>,
    created: Instant,
}

impl PlanScope {
    /// Whether a call under this plan may reach the registered tool `name`: only what the
    /// plan's scope made active (another request's MCP tools are not this one's).
    pub fn reaches(&self, name: &str) -> bool {
        self.inline.contains(name) || self.deferred.contains(name) || self.also.contains(name)
    }
}

pub struct PlanStore {
    inner: Mutex<Store>,
    budget: usize,
}

impl Default for PlanStore {
    fn default() -> Self {
        PlanStore { inner: Mutex::default(), budget: MAX_PLAN_BYTES }
    }
}

#[derive(Default)]
struct Store {
    seq: u64,
    plans: HashMap<String, Arc<PlanScope>>,
    /// Plan ids, oldest first.
    order: VecDeque<String>,
    /// Interned pools and how many stored plans use each (a plan counts once per field).
    pools: HashMap<Pool, usize>,
    /// Estimated bytes of `plans` and `pools`.
    bytes: usize,
}

fn pool_bytes(pool: &BTreeSet<String>) -> usize {
    pool.iter().map(|n| n.len() + NAME_OVERHEAD).sum()
}

impl Store {
    fn intern(&mut self, set: BTreeSet<String>) -> Pool {
        if let Some((pool, users)) = self.pools.get_key_value(&set).map(|(p, n)| (p.clone(), *n)) {
            self.pools.insert(pool.clone(), users + 1);
            return pool;
        }
        self.bytes += pool_bytes(&set);
        let pool = Arc::new(set);
        self.pools.insert(pool.clone(), 1);
        pool
    }

    fn release(&mut self, pool: &Pool) {
        let Some(users) = self.pools.get_mut(pool) else { return };
        *users -= 1;
        if *users == 0 {
            self.pools.remove(pool);
            self.bytes -= pool_bytes(pool);
        }
    }

    fn evict_oldest(&mut self) {
        let Some(id) = self.order.pop_front() else { return };
        if let Some(plan) = self.plans.remove(&id) {
            self.bytes -= PLAN_OVERHEAD + id.len() + plan.usage_key.len() + plan.session.as_ref().map_or(0, String::len);
            self.release(&plan.deferred);
            self.release(&plan.inline);
            self.release(&plan.also);
        }
    }

    fn over(&self, budget: usize) -> bool {
        self.order.len() > MAX_PLANS || self.bytes > budget
    }
}

/// How a plan is made beyond its tools: rendered as `render` (with its programmatic callers),
/// its calls counted under `usage_key`, its `tool_exec` run within `code` (`None`: no code mode).
pub struct PlanOptions {
    pub render: Rendering,
    pub programmatic: Option<Programmatic>,
    pub usage_key: String,
    pub code: Option<crate::sandbox::Limits>,
    /// The host's conversation id: a result cut under the plan is the session's to read.
    pub session: Option<String>,
    /// The tokenizer the plan counted with: a result's budget is counted with it too.
    pub encoding: Option<crate::tokenize::EncodingChoice>,
    /// Entries the scope made active that the plan neither lists nor defers (`PlanScope::also`).
    pub also: BTreeSet<String>,
    /// Rendered with OpenAI's `strict`.
    pub strict: bool,
    /// The plan's model (`exposition/plan` `model`).
    pub model: Option<String>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { render: Rendering::Portable, programmatic: None, usage_key: crate::usage::DEFAULT_KEY.to_string(), code: None, session: None, encoding: None, also: BTreeSet::new(), strict: false, model: None }
    }
}

impl PlanStore {
    pub fn create(&self, deferred: BTreeSet<String>, inline: BTreeSet<String>) -> Arc<PlanScope> {
        self.create_rendered(deferred, inline, Rendering::Portable)
    }

    pub fn create_rendered(&self, deferred: BTreeSet<String>, inline: BTreeSet<String>, render: Rendering) -> Arc<PlanScope> {
        self.create_with(deferred, inline, PlanOptions { render, ..PlanOptions::default() })
    }

    /// A plan with its `options` (rendering, usage key, code mode).
    pub fn create_with(&self, deferred: BTreeSet<String>, inline: BTreeSet<String>, options: PlanOptions) -> Arc<PlanScope> {
        let PlanOptions { render, programmatic, usage_key, code, session, encoding, also, strict, model } = options;
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Expired plans are the oldest: drop them first.
        while s.order.front().and_then(|id| s.plans.get(id)).is_some_and(|p| p.created.elapsed() >= PLAN_TTL) {
            s.evict_oldest();
        }
        s.seq += 1;
        let id = format!("plan-{}", s.seq);
        let (deferred, inline, also) = (s.intern(deferred), s.intern(inline), s.intern(also));
        let scope = Arc::new(PlanScope {
            id: id.clone(),
            deferred,
            inline,
            also,
            render,
            programmatic,
            strict,
            ledger: Mutex::new(BTreeSet::new()),
            code,
            usage_key,
            found: Mutex::new(BTreeSet::new()),
            session,
            encoding: encoding.unwrap_or_else(|| crate::tokenize::for_model(None)),
            model,
            created: Instant::now(),
        });
        s.bytes += PLAN_OVERHEAD + id.len() + scope.usage_key.len() + scope.session.as_ref().map_or(0, String::len) + scope.model.as_ref().map_or(0, String::len);
        s.plans.insert(id.clone(), scope.clone());
        s.order.push_back(id);
        // Never the plan just made: its request is about to use it.
        while s.over(self.budget) && s.order.len() > 1 {
            s.evict_oldest();
        }
        scope
    }

    pub fn get(&self, id: &str) -> Option<Arc<PlanScope>> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.plans.get(id).filter(|p| p.created.elapsed() < PLAN_TTL).cloned()
    }

    /// A store with another byte budget (the tests use small ones).
    pub fn with_budget(budget: usize) -> PlanStore {
        PlanStore { budget, ..PlanStore::default() }
    }

    /// The store's estimate of what it holds, in bytes.
    pub fn estimated_bytes(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool of `n` names of ~40 bytes, distinct per `tag`.
    fn pool(tag: &str, n: usize) -> BTreeSet<String> {
        (0..n).map(|i| format!("mcp__{tag}__some_reasonably_long_tool_{i:06}")).collect()
    }

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

    #[test]
    fn plans_over_one_pool_share_it_and_cost_it_once() {
        let store = PlanStore::default();
        let a = store.create(pool("a", 2_500), BTreeSet::new());
        let one = store.estimated_bytes();
        for _ in 0..999 {
            let b = store.create(pool("a", 2_500), BTreeSet::new());
            assert!(Arc::ptr_eq(&a.deferred, &b.deferred));
        }
        let per_plan = (store.estimated_bytes() - one) / 999;
        assert!(per_plan < 1_000, "a plan over a known pool costs {per_plan} bytes");
        assert!(store.estimated_bytes() < one + 1_000 * 300, "{} vs one pool at {one}", store.estimated_bytes());
        assert!(store.get(&a.id).is_some());
    }

    #[test]
    fn distinct_pools_are_bounded_by_bytes_oldest_first() {
        let size = pool_bytes(&pool("p00", 2_500));
        let budget = 10 * size + 5_000;
        let store = PlanStore::with_budget(budget);
        let ids: Vec<String> = (0..25).map(|i| store.create(pool(&format!("p{i:02}"), 2_500), BTreeSet::new()).id.clone()).collect();
        assert!(store.estimated_bytes() <= budget, "{} > {budget}", store.estimated_bytes());
        let kept: Vec<bool> = ids.iter().map(|id| store.get(id).is_some()).collect();
        assert_eq!(kept.iter().filter(|k| **k).count(), 10, "{kept:?}");
        assert!(kept[15..].iter().all(|k| *k), "the newest are kept, the oldest went: {kept:?}");
        // Evicted plans released their pools: the estimate is what the ten kept ones cost.
        assert!(store.estimated_bytes() >= 10 * size && store.estimated_bytes() < 10 * size + 5_000);
    }

    #[test]
    fn the_default_budget_holds_pools_not_a_count_of_plans() {
        // Issue 9: 1,024 plans over 2,500 tools were ~170 MB. The same pool now costs once.
        let names: BTreeSet<String> = (0..2_500).map(|i| format!("tool_{i:015}")).collect(); // 20 bytes each
        let at_2500 = pool_bytes(&names);
        assert!((150_000..200_000).contains(&at_2500), "estimate {at_2500} for 2,500 names");
        assert!(MAX_PLAN_BYTES / at_2500 > 100, "room for many distinct pools of 2,500 tools");
    }

    #[test]
    fn a_single_plan_larger_than_the_budget_is_still_kept() {
        let store = PlanStore::with_budget(100_000);
        let big = store.create(pool("big", 5_000), BTreeSet::new());
        assert!(store.estimated_bytes() > 100_000);
        assert!(store.get(&big.id).is_some());
        let next = store.create(BTreeSet::new(), BTreeSet::new());
        assert!(store.get(&big.id).is_none(), "the oversized plan goes when the next one comes");
        assert!(store.get(&next.id).is_some());
        assert!(store.estimated_bytes() < 1_000);
    }
}
