//! Usage in `toolreg mcp` (issue 28): every call the gateway runs for any client is counted
//! (`Book`, in the state dir beside the pins: names and counts only), and with `gateway.usage`
//! set the listing places the most used deferred tools inline, as a sidecar plan does.
//!
//! The MCP spec asks for one listing for every connection, so the gateway's listing has
//! "sessions" of its own choosing, and the usage-driven tools are fixed for each:
//! - a session starts with the gateway, when the config file is reloaded, and when the catalog
//!   changes the listed tools anyway (an upstream's list changed, a server came or went, a held
//!   tool was approved): the picks are made then from the counts as they are;
//! - meanwhile every resync (and a replan of an expired plan) keeps the session's picks, so
//!   calls counted during a run never move the listing: they apply from the next session, and
//!   no `list_changed` is ever sent for usage alone. A new session's listing is announced with
//!   `notifications/tools/list_changed` when its tools differ, as any change is.
//!
//! Counting is on whatever the config says (the file is small and bounded); placing is off
//! unless `gateway.usage` is set (`{}` takes the defaults: 5 tools, 5% of the context
//! window), so a listing never changes between runs unless its config asks for it.

use super::{Gateway, Lens};
use crate::service::{Pick, Promote};
use std::sync::Arc;

/// The usage key of the gateway's calls when `gateway.usageKey` does not name one (a
/// profile's: `profile:<name>` unless it names its own).
pub const DEFAULT_KEY: &str = "gateway";

impl Gateway {
    /// Where `view`'s calls are counted (directly, through `tool_invoke`, or from a
    /// `tool_exec` script).
    pub(super) fn usage_key(&self, view: &Lens) -> String {
        view.settings(&self.config()).usage_key
    }

    /// What a plan of `view`'s current session takes from usage: nothing when its `usage` is
    /// off; the session's picks (`kept`: the listing's); or, for a new session, the counts now.
    pub(super) fn usage_pick(&self, view: &Lens, kept: Option<&Arc<Vec<Promote>>>) -> Option<Pick> {
        let settings = view.settings(&self.config());
        let policy = settings.usage.as_ref()?;
        Some(match kept {
            Some(picks) => Pick::Fixed(picks.clone()),
            None => Pick::fresh(&view.service.usage, &settings.usage_key, policy.max_tools.map(|n| n as usize), policy.budget_tokens),
        })
    }
}
