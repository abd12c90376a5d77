//! Running one registered tool: validate and repair the arguments, ask for approval when the
//! entry is gated, then execute through the tool's owner (an MCP server or the host) and turn
//! the result into model-ready output.
//!
//! This module knows no meta-tools: `route` sends a meta-tool to `meta`, and both the direct
//! path and `tool_invoke` reach execution through the one `Execute` port, which the service's
//! call pipeline implements over `Executor` (`service::pipeline`: what every run gets around
//! it). A tool's own failure, refused approval, arguments that cannot be repaired or a
//! schema that does not compile are results the model can read (`is_error`), not protocol
//! errors; only a call that names no tool, an unknown plan, or a cancelled call is an
//! `InvokeError`. The host and the MCP catalog are reached through the `HostPort` / `McpPort`
//! traits, so this module knows no JSON-RPC.

use crate::approval::grants::{self, Asked, Grants};
use crate::approval::{Approvals, Outcome};
use crate::audit::{self, Audit, Reached};
use crate::output::{self, ModelOutput};
use crate::registry::{Registered, Source, ToolEntry};
use crate::repair;
use crate::validate::{Invalid, Validators};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the sidecar asks of the host.
pub trait HostPort: Send + Sync {
    /// Asks the user; what the user reads must show hidden characters (`registry::hidden`).
    fn approval_request(&self, req: ApprovalRequest);
    /// The approval is no longer wanted (timed out or cancelled): the host can close its prompt.
    fn approval_withdrawn(&self, approval_id: &str, reason: &str);
    fn progress(&self, token: &str, value: Value);
    /// The tool's result in the MCP `CallToolResult` shape, or why the host could not run it.
    fn execute_tool(&self, name: &str, arguments: &Value, call_id: &str) -> impl Future<Output = Result<Value, String>> + Send;
    /// New arguments, `None` when the host gives up, or why the request failed.
    fn repair_tool_call(&self, name: &str, schema: &Value, arguments: &Value, error: &str) -> impl Future<Output = Result<Option<Value>, String>> + Send;
}

/// What the sidecar asks of the MCP catalog.
pub trait McpPort: Send + Sync {
    fn call_tool(
        &self,
        server_id: &str,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Value>,
        call_id: &str,
    ) -> impl Future<Output = Result<Value, McpCallError>> + Send;
    /// The fingerprint `tool`'s pins approve it by, when its server pins definitions (a grant
    /// of the user's is bound to it); `None` for a `trust: "auto"` server or none configured.
    fn pin_of(&self, _server_id: &str, _tool: &str) -> Option<String> {
        None
    }
    /// Enabled servers whose tool list has not been fetched yet (search says so when empty).
    fn cold_servers(&self) -> Vec<String>;
    /// Whether a call to `tool` waits for the user under the server's configuration as it is
    /// now (not as it was when the tool was synced); `None` when the server is not configured.
    fn asks_approval(&self, server_id: &str, tool: &str) -> Option<bool>;
    /// Why a call to `tool` must not run now (its pin holds it), for the model; `None` if it may.
    /// `call_tool` checks again: this one only spares the user a question that cannot matter.
    fn held_refusal(&self, server_id: &str, tool: &str) -> Option<String>;
    /// Why `wire` names no tool of `registry` when the MCP tool it would name is held: the
    /// refusal a direct call of that name gets. `None` when no held tool has that name.
    fn held_wire_refusal(&self, registry: &crate::registry::Registry, wire: &str) -> Option<String>;
}

#[derive(Debug)]
pub enum McpCallError {
    Cancelled,
    Failed(String),
    /// A JSON-RPC error the caller can act on (a missing capability, refused params), for a
    /// port whose caller is an MCP client that reads codes; the sidecar's port makes it text.
    Rpc { code: i32, message: String, data: Option<Value> },
    /// The server needs input that the caller gives itself (MCP 2026-07-28, passed through).
    InputRequired(InputAsked),
    /// The server made a task of the call, for a caller that declared the tasks extension.
    Task(TaskMade),
}

/// A task an upstream server made of a call (`CreateTaskResult`, SEP-2663), as it came.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskMade {
    pub server_id: String,
    pub tool: String,
    /// The `CreateTaskResult` (JSON): the server's task id, status, times, `ttlMs`.
    pub task: Value,
}

/// An upstream server's input requests for the caller, as the server sent them.
#[derive(Clone, Debug, PartialEq)]
pub struct InputAsked {
    pub server_id: String,
    pub tool: String,
    /// Key → `elicitation/create` | `sampling/createMessage` | `roots/list` request (JSON).
    pub requests: Vec<(String, Value)>,
    /// The server's `requestState`, never read.
    pub state: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub approval_id: String,
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct HostAbilities {
    pub approval: bool,
    pub host_tools: bool,
    pub repair: bool,
}

pub struct Call {
    pub name: String,
    pub arguments: Value,
    pub call_id: String,
    pub plan_id: Option<String>,
    /// A call for a view (MCP Apps), not for the model: the server whose view asks. Such a
    /// call reaches only that server's tools whose visibility has `"app"`.
    pub app: Option<String>,
}

/// How the arguments were mended before the tool ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Repair {
    /// `deterministic` or `host`.
    pub by: String,
    pub fixes: Vec<String>,
    /// The arguments the tool ran with.
    pub arguments: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Invoked {
    pub output: ModelOutput,
    pub is_error: bool,
    pub raw: Option<Value>,
    pub repaired: Option<Repair>,
    /// For `tool_search` under a natively rendered plan: the value to send back to the provider.
    pub provider_output: Option<Value>,
    /// The registered tool this call ran, if it reached one (for `usage`; names only).
    pub ran: Option<Ran>,
    /// The answer was over the result budget: `output` is its first tokens (`results`).
    pub cut: Option<crate::results::CutInfo>,
}

/// A tool that ran (its owner was asked), and how the call reached it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ran {
    pub name: String,
    /// Who let a gated call run: the face's approver (`host`, `client`, `config`) or `grant`
    /// (a remembered approval); `None`: it needed no approval.
    pub approved_by: Option<&'static str>,
}

impl Invoked {
    pub fn error(text: impl Into<String>) -> Invoked {
        Invoked { output: ModelOutput::error(text), is_error: true, raw: None, repaired: None, provider_output: None, ran: None, cut: None }
    }

    pub fn text(text: impl Into<String>, raw: Option<Value>) -> Invoked {
        Invoked { output: ModelOutput::Text(text.into()), is_error: false, raw, repaired: None, provider_output: None, ran: None, cut: None }
    }

    /// A tool's `CallToolResult` (JSON) as the model reads it under `media`'s policy.
    pub fn of_result(raw: Value, media: &crate::media::Media) -> Invoked {
        let (output, is_error) = output::for_model(&raw, media);
        Invoked { output, is_error, raw: Some(raw), repaired: None, provider_output: None, ran: None, cut: None }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InvokeError {
    #[error("no tool is registered under the name {0:?}")]
    UnknownTool(String),
    #[error("{0:?} is a meta-tool and needs the planId of the request it belongs to")]
    PlanRequired(String),
    #[error("unknown or expired plan {0:?}: plans are kept for a while only, so plan again (exposition/plan) and use the new planId")]
    UnknownPlan(String),
    #[error("the call was cancelled")]
    Cancelled,
    /// `McpCallError::Rpc`: the call ends as that error (only where the port keeps codes).
    #[error("MCP error: {message} (JSON-RPC error {code})")]
    Rpc { code: i32, message: String, data: Option<Value> },
    /// `McpCallError::InputRequired`: the call ends as the server's question to the caller.
    #[error("the MCP server {} needs input for {}", .0.server_id, .0.tool)]
    InputRequired(InputAsked),
    /// `McpCallError::Task`: the call goes on as the server's task, which the caller follows.
    #[error("the MCP server {} made a task of {}", .0.server_id, .0.tool)]
    Task(TaskMade),
}

/// What the host's session allows a call (from `initialize`).
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub abilities: HostAbilities,
    pub approval_timeout: Duration,
}

impl Settings {
    /// How long a gated call waits for the user when neither face's configuration says
    /// (`timeouts.approvalMs`, `gateway.approvalTimeoutMs`): the same five minutes on both.
    pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);
}

/// Arguments that are ready to run, or why not.
pub enum Prepared {
    Ready { arguments: Value, repaired: Option<Repair> },
    /// The arguments break the schema and no repair fixed them.
    Invalid { errors: Vec<String> },
    /// The tool's schema does not compile: no call can ever pass it, so nothing was repaired.
    BadSchema { error: String },
}

/// The port through which a call reaches execution: the direct path (`route`) and
/// `tool_invoke` (`meta`) both use it, so both validate, repair, ask and run alike.
/// `service::pipeline::Runs` implements it over an `Executor`, with what every run gets
/// around it (its span and audit record, its usage count).
pub trait Execute: Sync {
    /// Validates, repairs when needed (deterministic fixes first, then the host once).
    /// Only a cancelled call fails.
    fn prepare(&self, tool: &Arc<Registered>, raw: Value) -> impl Future<Output = Result<Prepared, InvokeError>> + Send;
    /// Runs arguments that `prepare` accepted: defaults, approval, the owner's own property
    /// names (`Registered::restore`), execution.
    /// `reached`: how the call came to this tool, for the audit log.
    fn run_prepared(&self, tool: &Registered, arguments: Value, repaired: Option<Repair>, call_id: &str, reached: Reached) -> impl Future<Output = Result<Invoked, InvokeError>> + Send;
    /// Whether a call to `entry` waits for the user, decided now: the entry's own flag, or,
    /// for an MCP tool, its server's current configuration.
    fn asks_approval(&self, entry: &ToolEntry) -> bool;
    /// The call's cancellation.
    fn cancel(&self) -> &CancellationToken;
}

/// What the model reads when a tool's schema does not compile: the tool cannot run at all.
pub fn bad_schema(entry: &ToolEntry, error: &str) -> Invoked {
    Invoked::error(format!(
        "{} cannot be called: its input schema is invalid ({error}). This is a fault in the tool's definition, not in your arguments, so it was not run; do not retry it.",
        entry.name
    ))
}

/// Runs CPU-bound work on tokio's blocking pool, off the reactor threads that read and write
/// the pipes. A cancelled call stops waiting at once (the work finishes unobserved); a panic
/// in the work is a panic of the caller, which the server answers as an internal error.
pub async fn off_reactor<T: Send + 'static>(cancel: &CancellationToken, work: impl FnOnce() -> T + Send + 'static) -> Result<T, InvokeError> {
    let task = tokio::task::spawn_blocking(work);
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(InvokeError::Cancelled),
        r = task => match r {
            Ok(v) => Ok(v),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(InvokeError::Cancelled),
        },
    }
}

/// What `check_and_repair` concluded.
enum Checked {
    Done(Prepared),
    /// Invalid, and no deterministic candidate passes: the host may still repair it.
    Unrepaired { args: Value, errors: Vec<String> },
}

/// Validation (compiling the schema on its first use) and deterministic repair: CPU work of
/// any size, for the blocking pool. `known`: the errors of a check already made.
fn check_and_repair(validators: &Validators, tool: &Registered, args: Value, known: Option<Vec<String>>) -> Checked {
    let (key, schema) = (tool.content_hash, &tool.entry.input_schema);
    let errors = match known.map_or_else(|| validators.check(key, schema, &args), |e| Err(Invalid::Arguments(e))) {
        Ok(()) => return Checked::Done(Prepared::Ready { arguments: args, repaired: None }),
        Err(Invalid::Schema(error)) => return Checked::Done(Prepared::BadSchema { error }),
        Err(Invalid::Arguments(errors)) => errors,
    };
    for c in repair::candidates(&args, schema) {
        if validators.check(key, schema, &c.arguments).is_ok() {
            let repaired = Repair { by: "deterministic".into(), fixes: c.fixes, arguments: c.arguments.clone() };
            return Checked::Done(Prepared::Ready { arguments: c.arguments, repaired: Some(repaired) });
        }
    }
    Checked::Unrepaired { args, errors }
}

/// The host's repaired arguments, checked: as given, else through the same deterministic fixes
/// as the model's (a host's LLM wraps and encodes as a model does). `Ok` carries the arguments
/// the tool runs with and the fixes that made them; `Err` what the answer as given broke.
fn check_host_repair(validators: &Validators, tool: &Registered, fixed: Value) -> Result<(Value, Vec<String>), Invalid> {
    let (key, schema) = (tool.content_hash, &tool.entry.input_schema);
    let still = match validators.check(key, schema, &fixed) {
        Ok(()) => return Ok((fixed, Vec::new())),
        Err(Invalid::Schema(e)) => return Err(Invalid::Schema(e)),
        Err(still) => still,
    };
    repair::candidates(&fixed, schema)
        .into_iter()
        .find(|c| validators.check(key, schema, &c.arguments).is_ok())
        .map(|c| (c.arguments, c.fixes))
        .ok_or(still)
}

/// One call's access to execution: the two ports, the shared caches, the session's settings
/// and the call's cancellation. Reached only through `Execute` (`service::pipeline::Runs`).
pub struct Executor<'a, H, M> {
    host: &'a H,
    mcp: &'a M,
    validators: &'a Validators,
    approvals: &'a Arc<Approvals>,
    settings: Settings,
    cancel: CancellationToken,
    /// Where each run and approval is recorded, and who answers approvals (`audit`).
    audit: Audit,
    approver: &'static str,
    /// Remembered approvals, and the session this call is under (`approval::grants`).
    grants: Option<(&'a Grants, Option<String>)>,
    /// Which media of a result go to the model (`media`), for the call's plan and settings.
    media: crate::media::Media,
}

/// Fills in top-level `default`s the schema declares for missing properties.
fn apply_defaults(schema: &Value, args: &mut Value) {
    let (Some(props), Some(obj)) = (schema.get("properties").and_then(Value::as_object), args.as_object_mut()) else {
        return;
    };
    for (k, p) in props {
        if let Some(d) = p.get("default") {
            obj.entry(k.clone()).or_insert_with(|| d.clone());
        }
    }
}

impl<'a, H: HostPort, M: McpPort> Executor<'a, H, M> {
    pub fn new(host: &'a H, mcp: &'a M, validators: &'a Validators, approvals: &'a Arc<Approvals>, settings: Settings, cancel: CancellationToken) -> Self {
        Executor { host, mcp, validators, approvals, settings, cancel, audit: Audit::off(), approver: "", grants: None, media: Default::default() }
    }

    /// Records each tool this executor's call runs, and each approval, in `audit`;
    /// `approver` says who answers approvals (`host`, `client`, `config`).
    pub fn auditing(self, audit: Audit, approver: &'static str) -> Self {
        Executor { audit, approver, ..self }
    }

    /// Lets a remembered approval of `grants` spare the user a question, and remembers the
    /// approvals the user asks to; `session`: the call's (a plan's, a client's).
    pub fn remembering(self, grants: &'a Grants, session: Option<String>) -> Self {
        Executor { grants: Some((grants, session)), ..self }
    }

    /// Converts each result for a reader under `media` (default: every media part as media).
    pub fn media(self, media: crate::media::Media) -> Self {
        Executor { media, ..self }
    }
}

impl<H: HostPort, M: McpPort> Executor<'_, H, M> {
    /// `Execute::prepare` for the port's implementor (`service::pipeline::Runs`).
    pub async fn prepare(&self, tool: &Arc<Registered>, raw: Value) -> Result<Prepared, InvokeError> {
        if let Some(why) = &tool.refused {
            return Ok(Prepared::BadSchema { error: why.clone() });
        }
        let args = if raw.is_null() { json!({}) } else { raw };
        // The entry's content hash covers its schema: a bucket key that costs nothing per call.
        // A compiled schema is checked in place (microseconds, no thread hop per call).
        let known = match self.validators.check_compiled(tool.content_hash, &tool.entry.input_schema, &args) {
            Some(Ok(())) => return Ok(Prepared::Ready { arguments: args, repaired: None }),
            Some(Err(Invalid::Schema(error))) => return Ok(Prepared::BadSchema { error }),
            Some(Err(Invalid::Arguments(errors))) => Some(errors),
            None => None,
        };
        // Compiling a schema (its first call) and trying repair candidates take milliseconds
        // to seconds on a big schema: on the blocking pool, never on the runtime's threads.
        let (validators, t) = (self.validators.clone(), tool.clone());
        let (args, errors) = match off_reactor(&self.cancel, move || check_and_repair(&validators, &t, args, known)).await? {
            Checked::Done(prepared) => return Ok(prepared),
            Checked::Unrepaired { args, errors } => (args, errors),
        };
        let entry = &tool.entry;
        if self.settings.abilities.repair {
            match self.host.repair_tool_call(&entry.name, &entry.input_schema, &args, &errors.join("; ")).await {
                Ok(Some(fixed)) => {
                    let (validators, t) = (self.validators.clone(), tool.clone());
                    let verdict = off_reactor(&self.cancel, move || check_host_repair(&validators, &t, fixed)).await?;
                    match verdict {
                        Ok((fixed, more)) => {
                            let fixes = std::iter::once("repaired by the host".to_string()).chain(more).collect();
                            let repaired = Repair { by: "host".into(), fixes, arguments: fixed.clone() };
                            return Ok(Prepared::Ready { arguments: fixed, repaired: Some(repaired) });
                        }
                        Err(still) => {
                            let still = match still {
                                Invalid::Arguments(e) => e.join("; "),
                                Invalid::Schema(e) => e,
                            };
                            let mut errors = errors;
                            errors.push(format!("the host's repair was still invalid: {still}"));
                            return Ok(Prepared::Invalid { errors });
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(tool = %entry.name, "host repair failed: {e}"),
            }
        }
        Ok(Prepared::Invalid { errors })
    }

    /// `Execute::asks_approval`.
    pub fn asks_approval(&self, entry: &ToolEntry) -> bool {
        entry.approval
            || match &entry.source {
                // A server no longer configured: the call fails without running, nothing to ask.
                Source::Mcp { server_id, tool_name } => self.mcp.asks_approval(server_id, tool_name).unwrap_or(false),
                Source::Builtin | Source::Host => false,
            }
    }

    /// The call's cancellation.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Runs arguments that `prepare` accepted (`Execute::run_prepared` without what
    /// `service::pipeline` puts around it); `stopped` says why a refusal it returns did not
    /// run (held, denied), for the audit log.
    pub async fn run(&self, tool: &Registered, mut arguments: Value, repaired: Option<Repair>, call_id: &str, stopped: &mut Option<audit::Outcome>) -> Result<Invoked, InvokeError> {
        let entry = &tool.entry;
        apply_defaults(&entry.input_schema, &mut arguments);
        // A tool its pin holds (changed since synced) could not run: refuse before asking.
        if let Source::Mcp { server_id, tool_name } = &entry.source {
            if let Some(refusal) = self.mcp.held_refusal(server_id, tool_name) {
                *stopped = Some(audit::Outcome::Held);
                return Ok(Invoked::error(format!("{} could not run: {}", entry.name, crate::registry::hidden::visible(&refusal))));
            }
        }
        // Decided at call time: the host may have changed the server's approval rules since
        // the tool was synced, and every path (direct, tool_invoke, after repair) comes here.
        let gated = self.asks_approval(entry);
        // A grant the user made answers for them, even where this caller could not ask.
        let asked = gated.then(|| self.asked(entry)).flatten();
        let granted = asked.as_ref().is_some_and(|a| self.granted(a, entry, call_id));
        if gated && !granted && !self.settings.abilities.approval {
            *stopped = Some(audit::Outcome::Denied);
            return Ok(Invoked::error(format!(
                "{} needs the user's approval, but this host cannot ask for it, so it was not run.",
                entry.name
            )));
        }
        // Never ask the user to approve a call that could not run anyway.
        if matches!(entry.source, Source::Builtin | Source::Host) && !self.settings.abilities.host_tools {
            return Ok(Invoked::error(format!(
                "{} is executed by the host, but the host did not offer to execute tools.",
                entry.name
            )));
        }
        if gated && !granted {
            if let Some(refusal) = self.approve(entry, &arguments, call_id, asked.as_ref()).await? {
                *stopped = Some(audit::Outcome::Denied);
                return Ok(refusal);
            }
        }
        // Validated (and approved) as the model wrote them; sent as the owner names them.
        let arguments = match tool.restore(arguments) {
            Ok(a) => a,
            Err(e) => return Ok(Invoked::error(format!("{} was not run: {e}.", entry.name))),
        };
        let mut done = self.execute(entry, arguments, call_id).await?;
        done.repaired = repaired;
        let approved_by = match (gated, granted) {
            (false, _) => None,
            (true, true) => Some("grant"),
            (true, false) => Some(self.approver),
        };
        done.ran = Some(Ran { name: entry.name.clone(), approved_by });
        Ok(done)
    }

    /// The call as grants see it: the tool, its session, and the definition it would run
    /// (its approved pin, else its registered definition). `None` without grants.
    fn asked(&self, entry: &ToolEntry) -> Option<Asked> {
        let (_, session) = self.grants.as_ref()?;
        let (server_id, pin) = match &entry.source {
            Source::Mcp { server_id, tool_name } => (Some(server_id.clone()), self.mcp.pin_of(server_id, tool_name)),
            Source::Builtin | Source::Host => (None, None),
        };
        let binding = pin.map_or_else(|| grants::definition(&entry.name, &entry.description, &entry.input_schema), |p| grants::pinned(&p));
        Some(Asked { tool: entry.name.clone(), server_id, binding, session: session.clone() })
    }

    /// Whether a grant covers the call; recorded as an approval the grant answered.
    fn granted(&self, asked: &Asked, entry: &ToolEntry, call_id: &str) -> bool {
        let Some((grants, _)) = self.grants.as_ref() else { return false };
        if grants.covers(asked).is_none() {
            return false;
        }
        crate::telemetry::global().approval(audit::Decision::Approved);
        self.audit.record(audit::Event::ApprovalDecided {
            approval_id: format!("grant:{call_id}"),
            call_id: call_id.to_string(),
            tool: entry.name.clone(),
            decision: audit::Decision::Approved,
            answered_by: Some("grant".into()),
            waited_ms: 0,
        });
        true
    }

    /// `None` when approved; otherwise the result that says why the call did not run.
    /// `call`: the call as grants see it, where an approval the user asks to keep is kept.
    async fn approve(&self, entry: &ToolEntry, arguments: &Value, call_id: &str, call: Option<&Asked>) -> Result<Option<Invoked>, InvokeError> {
        if !self.settings.abilities.approval {
            return Ok(Some(Invoked::error(format!(
                "{} needs the user's approval, but this host cannot ask for it, so it was not run.",
                entry.name
            ))));
        }
        let pending = self.approvals.open(&self.cancel);
        // The model's arguments as it sent them: the host shows the user any hidden characters.
        self.host.approval_request(ApprovalRequest {
            approval_id: pending.id.clone(),
            call_id: call_id.to_string(),
            name: entry.name.clone(),
            arguments: arguments.clone(),
            reason: format!("{} is marked as needing approval before it runs", entry.name),
        });
        let approval_id = pending.id.clone();
        let asked = std::time::Instant::now();
        self.audit.record(audit::Event::ApprovalRequested { approval_id: approval_id.clone(), call_id: call_id.to_string(), tool: entry.name.clone() });
        let outcome = pending.wait(self.settings.approval_timeout, &self.cancel).await;
        let (decision, by) = match &outcome {
            Outcome::Approved { .. } => (audit::Decision::Approved, Some(self.approver.to_string())),
            Outcome::Denied { .. } => (audit::Decision::Denied, Some(self.approver.to_string())),
            Outcome::TimedOut(_) => (audit::Decision::TimedOut, None),
            Outcome::Cancelled => (audit::Decision::Cancelled, None),
        };
        crate::telemetry::global().approval(decision);
        self.audit.record(audit::Event::ApprovalDecided {
            approval_id: approval_id.clone(),
            call_id: call_id.to_string(),
            tool: entry.name.clone(),
            decision,
            answered_by: by,
            waited_ms: asked.elapsed().as_millis() as u64,
        });
        Ok(match outcome {
            Outcome::Approved { remember } => {
                // An `always` grant writes a small file here, once per answer of the user's.
                if let (Some((grants, _)), Some(call), Some(lasts)) = (self.grants.as_ref(), call, remember.lasts()) {
                    grants.remember(call, lasts);
                }
                None
            }
            Outcome::Denied { reason } => Some(Invoked::error(match reason {
                Some(r) => format!("The user denied this call to {} ({r}); it was not run.", entry.name),
                None => format!("The user denied this call to {}; it was not run.", entry.name),
            })),
            Outcome::TimedOut(t) => {
                self.host.approval_withdrawn(&approval_id, "timeout");
                Some(Invoked::error(format!(
                    "No approval for {} arrived within {} ms; it was not run.",
                    entry.name,
                    t.as_millis()
                )))
            }
            Outcome::Cancelled => {
                self.host.approval_withdrawn(&approval_id, "cancelled");
                return Err(InvokeError::Cancelled);
            }
        })
    }

    async fn execute(&self, entry: &ToolEntry, arguments: Value, call_id: &str) -> Result<Invoked, InvokeError> {
        if self.cancel.is_cancelled() {
            return Err(InvokeError::Cancelled);
        }
        let raw = match &entry.source {
            Source::Mcp { server_id, tool_name } => {
                let (tx, mut rx) = mpsc::unbounded_channel();
                let call = self.mcp.call_tool(server_id, tool_name, arguments, self.cancel.clone(), tx, call_id);
                tokio::pin!(call);
                let result = loop {
                    tokio::select! {
                        r = &mut call => break r,
                        Some(p) = rx.recv() => self.host.progress(call_id, p),
                    }
                };
                // Progress that was already delivered goes out before the result does.
                while let Ok(p) = rx.try_recv() {
                    self.host.progress(call_id, p);
                }
                match result {
                    Ok(v) => v,
                    Err(McpCallError::Cancelled) => return Err(InvokeError::Cancelled),
                    Err(McpCallError::Rpc { code, message, data }) => return Err(InvokeError::Rpc { code, message, data }),
                    Err(McpCallError::InputRequired(asked)) => return Err(InvokeError::InputRequired(asked)),
                    Err(McpCallError::Task(made)) => return Err(InvokeError::Task(made)),
                    Err(McpCallError::Failed(e)) => {
                        // May quote the server's own tool name: the model reads it shown.
                        let e = crate::registry::hidden::visible(&e);
                        return Ok(Invoked::error(format!("{} could not run: {e}", entry.name)));
                    }
                }
            }
            Source::Builtin | Source::Host => {
                if !self.settings.abilities.host_tools {
                    return Ok(Invoked::error(format!(
                        "{} is executed by the host, but the host did not offer to execute tools.",
                        entry.name
                    )));
                }
                let call = self.host.execute_tool(&entry.name, &arguments, call_id);
                let result = tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => return Err(InvokeError::Cancelled),
                    r = call => r,
                };
                match result {
                    Ok(v) => v,
                    Err(e) => return Ok(Invoked::error(format!("The host could not run {}: {e}", entry.name))),
                }
            }
        };
        Ok(Invoked::of_result(raw, &self.media))
    }
}
