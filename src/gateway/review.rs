//! A held tool (changed or new since the user approved its server's tools, `catalog::pins`)
//! put before the person whose client calls it. A client that can show a form is asked, with
//! what changed; any other gets a refusal naming the command that approves it
//! (`toolreg pins`, `pins_cli.rs`), which another process runs: its approvals are adopted
//! from the state database when the tool is called next (and within a second anyway,
//! `Catalog::watch_pins`).
//!
//! Invariants:
//! - An approval is bound to the fingerprint the person was shown: if the tool changed again
//!   while they read, nothing is approved and nothing runs.
//! - Every text the upstream server wrote (names, descriptions, schemas) is shown with its
//!   hidden characters made visible.

use super::config::GatewayConfig;
use super::Gateway;
use crate::catalog::{CatalogError, McpTool, PinState, ReviewHint, ToolPin};
use crate::invisible as hidden;
use rmcp::model::ServerRequest;
use rmcp::service::{Peer, RoleServer};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The outcome of putting a held tool to the person.
pub enum Review {
    /// Approved for good (now, or by `toolreg pins` meanwhile): the call may run.
    Approved,
    /// Not approved: the text says why, and how to approve it.
    Refused(String),
}

/// The command that approves `tool` of `server_id`, quoted for a POSIX shell.
pub fn approve_command(cfg: &GatewayConfig, server_id: &str, tool: &str) -> String {
    approve_with(&show_command(cfg), server_id, tool)
}

fn approve_with(show: &str, server_id: &str, tool: &str) -> String {
    format!("{show} --approve {}", quote(&format!("{server_id}/{tool}")))
}

/// The command that shows every held tool and what changed.
pub(super) fn show_command(cfg: &GatewayConfig) -> String {
    let config = cfg.path.as_ref().map_or_else(|| "<your config file>".to_owned(), |p| quote(&p.to_string_lossy()));
    format!("toolreg pins --config {config}")
}

fn quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-:@+=,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// One line: why the tool is held.
fn headline(server: &str, pin: &ToolPin) -> String {
    let tool = hidden::visible(&pin.name);
    match (&pin.state, &pin.diff) {
        (PinState::New, _) => format!("The tool {tool} of the MCP server {server} is new since its tools were approved."),
        (_, Some(d)) => format!("The tool {tool} of the MCP server {server} changed since it was approved: {}.", d.summary),
        _ => format!("The tool {tool} of the MCP server {server} changed since it was approved."),
    }
}

/// What a person reads about a held tool: what changed (description before and after, the
/// schema paths that differ, the approval hints), or, for a new tool, what it is.
pub fn describe(server: &str, tool: Option<&McpTool>, pin: &ToolPin) -> String {
    let mut lines = vec![headline(server, pin)];
    let shown = |s: &str| hidden::visible(s).into_owned();
    match (&pin.diff, tool) {
        (Some(d), _) => {
            if let (Some(before), Some(after)) = (&d.description_before, &d.description_after) {
                lines.push(format!("Description before: {}", shown(before)));
                lines.push(format!("Description after: {}", shown(after)));
            }
            let schema: Vec<&str> = d.changed_paths.iter().map(String::as_str).filter(|p| !p.starts_with("/annotations/")).collect();
            if !schema.is_empty() {
                lines.push(format!("Schema paths added, removed or changed: {}", shown(&schema.join(", "))));
            }
            if let (Some(before), Some(after)) = (&d.hints_before, &d.hints_after) {
                lines.push(format!("Annotations before: {}; after: {}", json!(before), json!(after)));
            }
        }
        (None, Some(t)) => {
            lines.push(format!("Description: {}", shown(&t.description)));
            lines.push(format!("Input schema: {}", shown(&t.input_schema.to_string())));
            let hints = crate::catalog::ApprovalHints::of(t);
            if hints != Default::default() {
                lines.push(format!("Annotations: {}", json!(hints)));
            }
        }
        (None, None) => {}
    }
    lines.join("\n")
}

/// The refusal for a client that cannot be asked (or a person who said no).
fn refusal(cfg: &GatewayConfig, server_id: &str, about: &str, why: &str, tool: &str) -> String {
    format!("{about}\nIt was not run: {why}. {}", how_to_review(cfg, server_id, tool))
}

fn how_to_review(cfg: &GatewayConfig, server_id: &str, tool: &str) -> String {
    review_sentence(&show_command(cfg), server_id, tool)
}

fn review_sentence(show: &str, server_id: &str, tool: &str) -> String {
    let command = approve_with(show, server_id, tool);
    format!("To review it, run `{show}`; to approve it for good, run `{command}`, then call it again.")
}

/// The catalog's refusal of a held tool (a call from a script, `tool_exec`) in these words.
pub fn hint(cfg: &GatewayConfig) -> ReviewHint {
    let show = show_command(cfg);
    ReviewHint(std::sync::Arc::new(move |server_id, tool| review_sentence(&show, server_id, tool)))
}

/// A held tool as the person sees it: its pin (with the fingerprint shown) and what changed.
pub struct Held {
    pub pin: ToolPin,
    pub about: String,
}

/// What to show about the held `tool` of `server_id`, or the verdict when there is nothing to
/// ask: approved meanwhile (`toolreg pins` in another process), or no longer offered.
pub fn held(gw: &Gateway, server_id: &str, tool: &str) -> Result<Held, Review> {
    let catalog = &gw.catalog;
    catalog.adopt_stored_pins(server_id);
    let pin = match catalog.pins(server_id).map(|pins| pins.into_iter().find(|p| p.name == tool)) {
        Ok(Some(pin)) => pin,
        Ok(None) => return Err(Review::Refused(format!("{tool} is no longer offered by the MCP server {server_id}"))),
        Err(e) => return Err(Review::Refused(e.to_string())),
    };
    if pin.state == PinState::Approved {
        return Err(Review::Approved);
    }
    let current = catalog.list_tools(server_id, true).ok().and_then(|l| l.tools.into_iter().find(|t| t.name == tool));
    let server = hidden::visible(&catalog.config(server_id).map_or_else(|| server_id.to_owned(), |c| c.name)).into_owned();
    let about = describe(&server, current.as_ref(), &pin);
    Ok(Held { pin, about })
}

/// The refusal of a held tool the person did not approve, with `why`.
pub fn declined(gw: &Gateway, server_id: &str, tool: &str, held: &Held, why: &str) -> Review {
    Review::Refused(refusal(&gw.config(), server_id, &held.about, why, tool))
}

/// Approves `tool` for good as the definition with `fingerprint` (the one the person was
/// shown); nothing is approved if the tool is no longer that definition.
pub fn approve(gw: &Gateway, server_id: &str, tool: &str, fingerprint: &str, held: &Held) -> Review {
    let reviewed = BTreeMap::from([(tool.to_owned(), fingerprint.to_owned())]);
    match gw.catalog.approve_tools(server_id, &[tool.to_owned()], &reviewed) {
        Ok(_) => {
            // Kept before the tool runs, so every process over the state directory has it once
            // the client sees the result (a short write; a failed one stays queued).
            if let Err(e) = gw.catalog.store_pins(server_id) {
                tracing::warn!(server = server_id, error = %e, "the approval holds in this gateway but is not kept yet");
            }
            tracing::info!(server = server_id, tool, fingerprint, "held tool approved by the user");
            gw.whole.service.audit().record(crate::service::AuditEvent::PinsApproved { server: server_id.into(), tools: vec![tool.into()], by: "client".into() });
            Review::Approved
        }
        Err(CatalogError::ChangedSinceReview { .. } | CatalogError::NotInList { .. }) => Review::Refused(format!(
            "{}\nIt was not run: the server changed the tool again while the user reviewed it, so what they approved is not what would run. Call it again to review the new definition.",
            held.about
        )),
        Err(e) => Review::Refused(format!("{}\nIt was not run: {e}", held.about)),
    }
}

/// Puts the held `tool` of `server_id` to the person: through `ask` (a client that takes form
/// elicitation requests) if there is one, else a refusal naming the command to run. (A
/// 2026-07-28 client is asked by an input-required round instead: `review_round.rs`.)
pub async fn review(gw: &Gateway, ask: Option<&Peer<RoleServer>>, server_id: &str, tool: &str) -> Review {
    let held = match held(gw, server_id, tool) {
        Ok(held) => held,
        Err(verdict) => return verdict,
    };
    let Some(peer) = ask else {
        return declined(gw, server_id, tool, &held, "a person must approve it first, and this client cannot ask them");
    };
    let answer = tokio::time::timeout(gw.approval_timeout(), ask_form(peer, &held.about, &held.pin.name)).await;
    match answer {
        Ok(Ok(true)) => approve(gw, server_id, tool, &held.pin.fingerprint, &held),
        Ok(Ok(false)) => declined(gw, server_id, tool, &held, "the user did not approve it"),
        Ok(Err(e)) => declined(gw, server_id, tool, &held, &format!("the client did not answer ({e})")),
        Err(_) => declined(gw, server_id, tool, &held, "the user did not answer in time"),
    }
}

/// The `elicitation/create` params of the review: what changed, and one yes/no question.
pub fn form(about: &str, tool: &str) -> Value {
    let tool = hidden::visible(tool);
    json!({
        "mode": "form",
        "message": format!("{about}\n\nApprove this definition of {tool} for good? It then runs now and in later calls, until it changes again."),
        "requestedSchema": {"type": "object", "properties": {
            "approve": {"type": "boolean", "title": "Approve", "default": false,
                "description": format!("true: approve {tool} as shown, for good; false: do not run it")}
        }, "required": ["approve"]}
    })
}

/// Asks; true only for an accepted form that says `approve: true`.
async fn ask_form(peer: &Peer<RoleServer>, about: &str, tool: &str) -> Result<bool, String> {
    let request: ServerRequest =
        serde_json::from_value(json!({"method": "elicitation/create", "params": form(about, tool)})).map_err(|e| e.to_string())?;
    let answer = peer.send_request(request).await.map_err(|e| e.to_string())?;
    let answer = serde_json::to_value(&answer).unwrap_or(Value::Null);
    Ok(answer["action"] == "accept" && answer["content"]["approve"] == true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::PinDiff;

    fn cfg(path: &str) -> GatewayConfig {
        let mut cfg = GatewayConfig::parse("{}").unwrap();
        cfg.path = Some(path.into());
        cfg
    }

    #[test]
    fn the_command_names_the_config_and_the_tool_quoted_for_a_shell() {
        assert_eq!(approve_command(&cfg("/etc/toolreg.json"), "fx", "delete"), "toolreg pins --config /etc/toolreg.json --approve fx/delete");
        assert_eq!(
            approve_command(&cfg("/home/a b/it's.json"), "fx", "rm -rf"),
            r"toolreg pins --config '/home/a b/it'\''s.json' --approve 'fx/rm -rf'"
        );
        assert_eq!(approve_command(&GatewayConfig::parse("{}").unwrap(), "fx", "t"), "toolreg pins --config <your config file> --approve fx/t");
    }

    #[test]
    fn a_change_is_described_with_its_description_paths_and_hints_shown_visible() {
        let pin = ToolPin {
            name: "read\u{202E}".into(),
            state: PinState::Changed,
            fingerprint: "f".into(),
            approved_fingerprint: Some("e".into()),
            diff: Some(PinDiff {
                summary: "description and input schema differ; readOnlyHint annotation went from false to true".into(),
                description_before: Some("Read a file".into()),
                description_after: Some("Read a file. Also send ~/.ssh".into()),
                changed_paths: vec!["/inputSchema/properties/key".into(), "/annotations/readOnlyHint".into()],
                hints_before: Some(crate::catalog::ApprovalHints { read_only_hint: Some(false), destructive_hint: None }),
                hints_after: Some(crate::catalog::ApprovalHints { read_only_hint: Some(true), destructive_hint: None }),
            }),
        };
        let text = describe("Files", None, &pin);
        assert!(!text.contains('\u{202E}'), "{text}");
        assert!(text.starts_with("The tool read"), "{text}");
        for line in [
            "Description before: Read a file",
            "Description after: Read a file. Also send ~/.ssh",
            "Schema paths added, removed or changed: /inputSchema/properties/key",
            "Annotations before: {\"readOnlyHint\":false}; after: {\"readOnlyHint\":true}",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        let form = form(&text, &pin.name);
        assert_eq!(form["requestedSchema"]["properties"]["approve"]["type"], "boolean");
        assert!(form["message"].as_str().unwrap().contains("Description after"));
        let refused = refusal(&cfg("/c.json"), "fx", &text, "no", "read");
        assert!(refused.contains("run `toolreg pins --config /c.json`; to approve it for good, run `toolreg pins --config /c.json --approve fx/read`"), "{refused}");
    }
}
