//! `toolreg approvals --config FILE [--revoke TOOL | --all]`: the remembered approvals in the
//! gateway's state directory (its store, shared with every gateway and sidecar over it). A
//! running process reads the tool's grant at its next gated call, so a revocation here holds
//! there at once. Session grants live in the running process only, and end with their session.

use super::config::GatewayConfig;
use crate::service::{Grants, Lasts};
use std::fmt::Write;

/// What to do with the grants.
pub enum Revoke<'a> {
    Nothing,
    Tool(&'a str),
    All,
}

/// The listing (or what was revoked) as text for the terminal.
pub fn approvals(cfg: &GatewayConfig, revoke: Revoke<'_>) -> Result<String, String> {
    let dir = cfg.state_dir().ok_or("the config names no gateway.cacheDir and there is no per-user state directory: no approval was remembered")?;
    let grants = Grants::default();
    grants.open(&dir);
    let mut out = String::new();
    match revoke {
        Revoke::Tool(tool) => {
            let n = grants.revoke(Some(tool), false);
            if n == 0 {
                return Err(format!("no remembered approval of {tool:?} (toolreg approvals --config FILE lists them)"));
            }
            let _ = writeln!(out, "revoked {n} approval(s) of {tool}");
        }
        Revoke::All => {
            let n = grants.revoke(None, true);
            let _ = writeln!(out, "revoked {n} approval(s)");
        }
        Revoke::Nothing => {
            let listed: Vec<_> = grants.list().into_iter().filter(|g| g.lasts == Lasts::Always).collect();
            if listed.is_empty() {
                let _ = writeln!(out, "no remembered approvals in {}", dir.display());
            }
            for g in listed {
                let server = g.server_id.as_deref().map(|s| format!(" (server {s})")).unwrap_or_default();
                let _ = writeln!(out, "{}{server}: always, since {}", crate::invisible::visible(&g.tool), g.granted_at);
            }
        }
    }
    Ok(out)
}
