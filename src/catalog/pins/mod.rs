//! Tool pinning against rug pulls: a server must not change what a tool says or takes after
//! the user accepted it, nor shed the approval question the user was asked. Each tool gets a
//! fingerprint; the first list seen from a server is its baseline (trust on first use); a tool
//! whose definition differs from its approved one is `changed`, a tool that appears after the
//! baseline is `new`, and both are held (not synced, not called) until the host approves them.
//!
//! Invariants:
//! - The fingerprint is SHA-256 over the canonical JSON (keys sorted by bytes, recursively, no
//!   whitespace) of `name`, `description`, `inputSchema`, `outputSchema` and, when the tool
//!   declares either, `annotations` reduced to `readOnlyHint` and `destructiveHint` (the
//!   `ApprovalHints`). The title and the other annotations are left out: servers drop and flap
//!   them on reconnect, and they neither instruct the model nor decide approval. serde_json keeps
//!   insertion order here (`preserve_order`), so keys are sorted by hand.
//! - What an approval decision rests on is pinned: where the server's policy reads the hints
//!   (`ApprovalPolicy::reads_hints`), a hint change that could spare the tool the user's question
//!   (`ApprovalHints::relaxed_by`, compared with the approved hints, never the previous list's)
//!   makes it `changed`; a change that only adds questions, or one of hints the policy does not
//!   read, leaves it approved. So the state is not fingerprint equality: the fingerprint of an
//!   approved tool may differ from its approved one by the hints alone.
//! - The approved definition is kept beside its fingerprint, so a change can be shown (the
//!   description before and after, the schema paths that differ).
//! - Pins are per server id, not per transport: reconfiguring how a server is reached (a new
//!   package version in its command) must not re-baseline it.
//! - Kept in the shared store of `cacheDir` (`stored.rs`: one record per server, changed by
//!   operations, so that every process over the directory sees the others' approvals and
//!   undoes none): no record means first use. A record that exists but cannot be read
//!   (corrupt, foreign, another format), or a store found damaged, fails closed: a baseline was
//!   taken once, so every tool counts as `new` until approved, rather than silently accepting
//!   the very change the pin was there to catch. Without a `cacheDir` pins live in memory for
//!   the life of the process.
//!
//! Here the fingerprints, states and `Pins`; `diff.rs` says what changed, `file.rs` has the
//! format (and the pins files of earlier releases), `stored.rs` the records and operations.

mod diff;
mod file;
pub(crate) mod stored;
mod views;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use data_encoding::HEXLOWER;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::canonical::canonical;
use super::config::ServerConfig;
use super::policy::{ApprovalHints, ApprovalPolicy, Trust};
use super::tool::McpTool;

pub use diff::diff;
pub use file::{load, path_for};
#[cfg(test)]
pub use file::store;
pub use stored::PinOp;
pub use views::{view_digest, ViewCheck};

/// The part of a tool that the fingerprint covers; format 1 left the hints out.
fn pinned_part(t: &McpTool, with_hints: bool) -> Value {
    let mut part = json!({
        "name": t.name,
        "description": t.description,
        "inputSchema": t.input_schema,
        "outputSchema": t.output_schema.clone().unwrap_or(Value::Null),
    });
    let hints = ApprovalHints::of(t);
    // Only when declared: a tool without hints keeps the fingerprint format 1 gave it.
    if with_hints && hints != ApprovalHints::default() {
        part["annotations"] = json!(hints);
    }
    // Only when declared, likewise: a view acts with the user's authority, so which view a tool
    // names and who may call it are part of what the user approved.
    if let Some(ui) = view_part(t) {
        part["ui"] = ui;
    }
    part
}

/// The tool's `_meta` keys of MCP Apps, as the server sent them, when it has any.
fn view_part(t: &McpTool) -> Option<Value> {
    let meta = t.meta.as_ref()?.as_object()?;
    let keys: serde_json::Map<String, Value> = ["ui", "ui/resourceUri"].iter().filter_map(|k| Some((k.to_string(), meta.get(*k)?.clone()))).collect();
    (!keys.is_empty()).then_some(Value::Object(keys))
}

/// Whether two definitions agree on everything `pinned_part` covers but the hints (maps
/// compare regardless of key order, so equal means equal canonical JSON): no hashing per call.
fn same_definition(a: &McpTool, b: &McpTool) -> bool {
    a.name == b.name
        && a.description == b.description
        && a.input_schema == b.input_schema
        && a.output_schema.as_ref().unwrap_or(&Value::Null) == b.output_schema.as_ref().unwrap_or(&Value::Null)
        && view_part(a) == view_part(b)
}

/// Why `approve` approved nothing: the names it refused.
#[derive(Debug, PartialEq)]
pub enum Refused {
    NotInList(Vec<String>),
    ChangedSinceReview(Vec<String>),
}

/// Hex SHA-256 of the canonical JSON of name, description, inputSchema, outputSchema and the
/// declared approval hints.
pub fn fingerprint(t: &McpTool) -> String {
    HEXLOWER.encode(&Sha256::digest(canonical(&pinned_part(t, true)).as_bytes()))
}

/// The fingerprint format 1 stored (no hints), to check a format 1 file.
fn fingerprint_v1(t: &McpTool) -> String {
    HEXLOWER.encode(&Sha256::digest(canonical(&pinned_part(t, false)).as_bytes()))
}

/// What a server's pins are checked under: its trust, and its approval settings (which decide
/// whether a tool's hints are part of what the user approved).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    pub trust: Trust,
    /// `ServerConfig.quarantine`: the first list is held too, and `trust` is `pinned`.
    pub quarantine: bool,
    pub approval: ApprovalPolicy,
    pub approval_tools: Vec<String>,
}

impl Rules {
    pub fn of(config: &ServerConfig) -> Rules {
        let trust = if config.quarantine { Trust::Pinned } else { config.trust };
        Rules { trust, quarantine: config.quarantine, approval: config.approval, approval_tools: config.approval_tools.clone() }
    }

    fn hints_bear(&self, tool: &str) -> bool {
        self.approval.reads_hints(&self.approval_tools, tool)
    }
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PinState {
    Approved,
    /// The definition differs from the approved one, or its approval hints would spare it a
    /// question the approved ones asked.
    Changed,
    /// Appeared after the baseline; never approved.
    New,
}

/// What changed between the approved definition and the current one, for a person to read.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PinDiff {
    /// E.g. "description and input schema differ", "readOnlyHint annotation went from false to
    /// true".
    pub summary: String,
    /// Present when the description changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_after: Option<String>,
    /// JSON Pointers (RFC 6901) into the tool of every schema value that was added, removed or
    /// changed, e.g. `/inputSchema/properties/path`, and of every approval hint that changed,
    /// e.g. `/annotations/readOnlyHint`; at most 100 schema paths.
    pub changed_paths: Vec<String>,
    /// Present when `readOnlyHint` or `destructiveHint` changed: the approved hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints_before: Option<ApprovalHints>,
    /// Present when `readOnlyHint` or `destructiveHint` changed: the current hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints_after: Option<ApprovalHints>,
}

/// One tool of a server's current list and its pin.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolPin {
    /// The tool's name as the server calls it.
    pub name: String,
    pub state: PinState,
    /// The fingerprint of the current definition: what the user reviews, and what
    /// `catalog/approveTools` checks. It may differ from `approvedFingerprint` while `state` is
    /// `approved`, by approval hints that only add questions or that the policy does not read.
    pub fingerprint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_fingerprint: Option<String>,
    /// Present when `state` is `changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<PinDiff>,
}

/// The tools of one server that are held, by kind, sorted by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    pub changed: Vec<String>,
    pub new: Vec<String>,
}

impl Held {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.new.is_empty()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.changed.iter().chain(&self.new).any(|n| n == name)
    }

    pub fn names(&self) -> BTreeSet<String> {
        self.changed.iter().chain(&self.new).cloned().collect()
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Approved {
    fingerprint: String,
    tool: McpTool,
    /// The digest of the tool's view as first read (`views.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    view: Option<String>,
}

/// One server's approved definitions. `baseline` is false until the first list was seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pins {
    baseline: bool,
    approved: BTreeMap<String, Approved>,
    /// Views read with another digest than approved, by URI (kept in the pins file).
    changed_views: BTreeMap<String, String>,
}

impl Pins {
    /// A new list was stored. Without a baseline it becomes the baseline; under `auto` it is
    /// approved as it is. Returns whether the approvals changed (and so should be persisted).
    pub fn observe(&mut self, tools: &[McpTool], trust: Trust) -> bool {
        if self.baseline && trust == Trust::Pinned {
            return false;
        }
        self.baseline = true;
        let mut changed = false;
        for t in tools {
            changed |= self.approve_one(t);
        }
        // Taking the baseline is a change even for an empty list.
        changed || tools.is_empty()
    }

    /// A quarantined server's list: the first one is the baseline with nothing approved, so
    /// every tool is `new` until the user approves it. Returns whether the baseline was taken.
    pub fn quarantine(&mut self) -> bool {
        !std::mem::replace(&mut self.baseline, true)
    }

    fn approve_one(&mut self, t: &McpTool) -> bool {
        let fingerprint = fingerprint(t);
        let read = self.view_read(t).cloned();
        let old = self.approved.get(&t.name);
        // The view goes with the tool: as last read when that changed, else as approved if it
        // is still the same view.
        let same_view = old.is_some_and(|a| views::view_uri(&a.tool) == views::view_uri(t));
        let view = read.or_else(|| old.filter(|_| same_view).and_then(|a| a.view.clone()));
        if old.is_some_and(|a| a.fingerprint == fingerprint && a.view == view) {
            return false;
        }
        self.approved.insert(t.name.clone(), Approved { fingerprint, tool: t.clone(), view });
        true
    }

    /// Make the current definitions of `names` the approved ones. `reviewed` holds, for some of
    /// them, the fingerprint the user was shown: a tool whose definition has changed since is
    /// refused, as are names not in `tools`; on any refusal nothing is approved.
    pub fn approve(&mut self, tools: &[McpTool], names: &[String], reviewed: &BTreeMap<String, String>) -> Result<(), Refused> {
        let unknown: Vec<String> = names.iter().filter(|n| !tools.iter().any(|t| &t.name == *n)).cloned().collect();
        if !unknown.is_empty() {
            return Err(Refused::NotInList(unknown));
        }
        let changed: Vec<String> = tools
            .iter()
            .filter(|t| names.contains(&t.name))
            .filter(|t| reviewed.get(&t.name).is_some_and(|fp| *fp != fingerprint(t)))
            .map(|t| t.name.clone())
            .collect();
        if !changed.is_empty() {
            return Err(Refused::ChangedSinceReview(changed));
        }
        let chosen: Vec<McpTool> = tools.iter().filter(|t| names.contains(&t.name)).cloned().collect();
        self.approve_checked(&chosen);
        Ok(())
    }

    /// Make these definitions the approved ones (what `approve` checked), and take the baseline.
    pub fn approve_checked(&mut self, tools: &[McpTool]) {
        self.baseline = true;
        for t in tools {
            self.approve_one(t);
        }
    }

    /// Whether a first list was seen (or the pins failed closed).
    pub fn has_baseline(&self) -> bool {
        self.baseline
    }

    /// Every call checks its tool, so this compares values and never hashes.
    pub fn state(&self, t: &McpTool, rules: &Rules) -> PinState {
        if rules.trust == Trust::Auto || !self.baseline {
            return PinState::Approved;
        }
        let Some(a) = self.approved.get(&t.name) else { return PinState::New };
        let relaxed = rules.hints_bear(&t.name) && ApprovalHints::of(&a.tool).relaxed_by(ApprovalHints::of(t));
        if same_definition(&a.tool, t) && !relaxed && !self.view_changed(t) {
            PinState::Approved
        } else {
            PinState::Changed
        }
    }

    /// Whether these pins hold `t` approved as it is now: never for pins without a baseline
    /// (an absent file approves nothing when read to adopt what another process approved).
    pub fn approves(&self, t: &McpTool, rules: &Rules) -> bool {
        self.baseline && self.state(t, rules) == PinState::Approved
    }

    /// The fingerprint `name` is approved by, if any (a remembered approval is bound to it).
    pub fn approved_fingerprint(&self, name: &str) -> Option<&str> {
        self.approved.get(name).map(|a| a.fingerprint.as_str())
    }

    /// The approved definition of `name`, if any (`ask` decisions also consult its hints).
    pub fn approved_tool(&self, name: &str) -> Option<&McpTool> {
        self.approved.get(name).map(|a| &a.tool)
    }

    pub fn held(&self, tools: &[McpTool], rules: &Rules) -> Held {
        let mut held = Held::default();
        for t in tools {
            match self.state(t, rules) {
                PinState::Approved => {}
                PinState::Changed => held.changed.push(t.name.clone()),
                PinState::New => held.new.push(t.name.clone()),
            }
        }
        held.changed.sort();
        held.new.sort();
        held
    }

    /// What changed between `a` and `t`: the definition, or else its view.
    fn diff_of(&self, a: &Approved, t: &McpTool) -> PinDiff {
        match views::view_uri(t) {
            Some(uri) if same_definition(&a.tool, t) && self.view_changed(t) => views::view_diff(uri),
            _ => diff(&a.tool, t),
        }
    }

    /// Every tool of the list with its state, and a diff for the changed ones.
    pub fn report(&self, tools: &[McpTool], rules: &Rules) -> Vec<ToolPin> {
        tools
            .iter()
            .map(|t| {
                let state = self.state(t, rules);
                let approved = self.approved.get(&t.name);
                ToolPin {
                    name: t.name.clone(),
                    state,
                    approved_fingerprint: approved.map(|a| a.fingerprint.clone()),
                    diff: (state == PinState::Changed).then(|| approved.map(|a| self.diff_of(a, t))).flatten(),
                    fingerprint: fingerprint(t),
                }
            })
            .collect()
    }

    /// Why a call to `t` must not run, for the model and the user; `None` when it may run.
    /// `review`: the sentence that says how to review it (`ReviewHint`).
    pub fn refusal(&self, server_id: &str, t: &McpTool, rules: &Rules, review: &str) -> Option<String> {
        match self.state(t, rules) {
            PinState::Approved => None,
            PinState::Changed => {
                let what = self.approved.get(&t.name).map(|a| self.diff_of(a, t).summary).unwrap_or_default();
                Some(format!(
                    "The definition of {} on MCP server {server_id} changed since the user approved it ({what}); it was not run. {review}",
                    t.name
                ))
            }
            PinState::New => Some(format!(
                "{} appeared on MCP server {server_id} after the user approved its tools; it was not run. {review}",
                t.name
            )),
        }
    }
}

