//! `usage/list`, `usage/reset`, and the usage side of `exposition/plan` and `tool/invoke`:
//! which tools a plan places inline for their usage, and a session's picks. Calls are counted
//! where they run (`handle_invoke`'s executor, `Book::count`).

use super::Ctx;
use crate::service::{Pick, Plan, Service};
use crate::protocol::*;
use crate::service::{Tally, HALF_LIFE_DAYS, WINDOW_DAYS};

pub(super) fn usage_pick(ctx: &Ctx, usage_key: &str, session: Option<&str>, policy: &UsagePolicy) -> Pick {
    match session.and_then(|s| ctx.sessions.get(s, usage_key)) {
        Some(picks) => Pick::Fixed(picks),
        None => Pick::fresh(&ctx.service.usage, usage_key, policy.max_tools.map(|n| n as usize), policy.budget_tokens),
    }
}

/// After a session's first plan: its usage-driven tools are the session's from now on.
pub(super) fn fix_session(ctx: &Ctx, session: &str, usage_key: &str, pick: &Pick, plan: &Plan) {
    if let Pick::Fresh { .. } = pick {
        ctx.sessions.fix(session, usage_key, Service::usage_picks(plan));
    }
}

fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

fn tool_usage(t: Tally) -> ToolUsage {
    // Two decimals: enough to rank by eye, and the answer does not change every millisecond.
    let count = (t.count * 100.0).round() / 100.0;
    ToolUsage { name: t.name, count, last_used: rfc3339(t.last_used), calls_in_window: t.calls_in_window, searched_in_window: t.searched_in_window }
}

/// `Serial`: waits (on the blocking pool) for the store's opening that `initialize` began, and
/// reads the counts again when another process changed them.
pub fn handle_usage_list(ctx: &Ctx, p: UsageKeyParams) -> Result<UsageListResult, RpcError> {
    ctx.service.usage.wait_loaded();
    let keys = ctx
        .service
        .usage
        .list(p.usage_key.as_deref())
        .into_iter()
        .map(|(usage_key, tallies)| UsageKeyListing { usage_key, tools: tallies.into_iter().map(tool_usage).collect() })
        .collect();
    Ok(UsageListResult { half_life_days: HALF_LIFE_DAYS, window_days: WINDOW_DAYS, keys })
}

/// `Serial`, as `usage/list`: an operation on the stored counts, once the store is open.
pub fn handle_usage_reset(ctx: &Ctx, p: UsageKeyParams) -> Result<UsageResetResult, RpcError> {
    ctx.service.usage.wait_loaded();
    Ok(UsageResetResult { cleared: ctx.service.usage.reset(p.usage_key.as_deref()) })
}
