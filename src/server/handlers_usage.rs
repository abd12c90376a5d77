//! `usage/list`, `usage/reset`, and the usage side of `exposition/plan` and `tool/invoke`:
//! which tools a plan places inline for their usage, a session's picks, counting a call.

use super::Ctx;
use crate::exposition::sessions::Promote;
use crate::exposition::{Plan, Reason, UsagePick};
use crate::invoke::Ran;
use crate::protocol::*;
use crate::usage::{self, Tally};
use std::sync::Arc;

/// What a plan gets from usage: a session's picks as its first plan fixed them, or the
/// counts as they are now.
pub(super) enum Pick {
    Fixed(Arc<Vec<Promote>>),
    Fresh { ranked: Vec<Promote>, max_tools: Option<usize>, budget_tokens: Option<u64> },
}

impl Pick {
    pub(super) fn input(&self) -> UsagePick<'_> {
        match self {
            // Whatever the counts, the count and budget now: the first plan chose within them.
            Pick::Fixed(picks) => UsagePick { ranked: picks, max_tools: Some(usize::MAX), budget_tokens: Some(u64::MAX) },
            Pick::Fresh { ranked, max_tools, budget_tokens } => UsagePick { ranked, max_tools: *max_tools, budget_tokens: *budget_tokens },
        }
    }
}

pub(super) fn usage_pick(ctx: &Ctx, usage_key: &str, session: Option<&str>, policy: &UsagePolicy) -> Pick {
    if let Some(picks) = session.and_then(|s| ctx.sessions.get(s, usage_key)) {
        return Pick::Fixed(picks);
    }
    let ranked = ctx
        .usage
        .tallies(usage_key)
        .into_iter()
        .filter(|t| t.count >= usage::MIN_COUNT)
        .map(|t| Promote { note: t.note(), name: t.name })
        .collect();
    Pick::Fresh { ranked, max_tools: policy.max_tools.map(|n| n as usize), budget_tokens: policy.budget_tokens }
}

/// After a session's first plan: its usage-driven tools are the session's from now on.
pub(super) fn fix_session(ctx: &Ctx, session: &str, usage_key: &str, pick: &Pick, plan: &Plan) {
    if let Pick::Fresh { .. } = pick {
        let chosen = plan
            .placements
            .iter()
            .filter(|(_, p)| p.reason == Reason::Usage)
            .map(|(name, p)| Promote { name: name.clone(), note: p.note.clone().unwrap_or_default() })
            .collect();
        ctx.sessions.fix(session, usage_key, chosen);
    }
}

/// Counts a call that ran; the file is written off the async threads, coalesced.
pub(super) fn count(ctx: &Arc<Ctx>, usage_key: &str, ran: &Ran) {
    if ctx.usage.record(usage_key, &ran.name, ran.via) {
        let book = ctx.usage.clone();
        tokio::task::spawn_blocking(move || book.save());
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

pub fn handle_usage_list(ctx: &Ctx, p: UsageKeyParams) -> Result<UsageListResult, RpcError> {
    let keys = ctx
        .usage
        .list(p.usage_key.as_deref())
        .into_iter()
        .map(|(usage_key, tallies)| UsageKeyListing { usage_key, tools: tallies.into_iter().map(tool_usage).collect() })
        .collect();
    Ok(UsageListResult { half_life_days: usage::HALF_LIFE_DAYS, window_days: usage::WINDOW_DAYS, keys })
}

pub fn handle_usage_reset(ctx: &Ctx, p: UsageKeyParams) -> Result<UsageResetResult, RpcError> {
    let (cleared, save) = ctx.usage.reset(p.usage_key.as_deref());
    if save {
        let book = ctx.usage.clone();
        tokio::task::spawn_blocking(move || book.save());
    }
    Ok(UsageResetResult { cleared })
}
