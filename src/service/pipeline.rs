//! What happens to every tool call, in order, written once. A call is what a face hands the
//! service (the sidecar's `tool/invoke`, the gateway's `tools/call`); it runs one registered
//! tool (the direct path, a view's call), a meta-tool (whose `tool_invoke` runs one) or a
//! `tool_exec` script (whose `tools.call`s each run one). Each concern is one step here, as
//! each is one layer of a tower `ServiceBuilder`; a new concern is one new step, placed once.
//! Plain functions, not a `Layer` trait: a step borrows the call as it is, and the order reads
//! top to bottom.
//!
//! Around the call (`call`), once per request, in this order:
//!  1. results read  `tool_result_read` is answered from the shelf: nothing runs (`results::read`).
//!  2. route         the core: `route::call` sends the call where it goes (a view's or a plan's
//!                   scope checked there), and every tool it runs passes through `Runs` below.
//!  3. span          the request's telemetry span is named after the tool, failed or not.
//!  4. held          a held tool's call (no registered tool by that name) is audited `held`.
//!  5. media budget  images are fitted to the result budget by the reader's token rule.
//!  6. cut           text over what the images left is cut, its whole kept for its owner.
//!  7. native media  a native plan's media go to its provider in the provider's own shape.
//!
//! A task's result (`task_result`): the result a server's task (SEP-2663) ends with, inlined in
//! a completed task's `tasks/get` answer, takes the steps after the route that a direct call's
//! takes (media budget, cut), so it reaches the caller as that call's result would.
//!
//! Around each run (`Runs::run_prepared`): every tool a call runs (itself, `tool_invoke`'s, a
//! script's `tools.call`s), after `prepare` validated and repaired its arguments:
//!  1. observe       a telemetry span and the audit log's call record, with how it ended.
//!  2. count         the usage book, under the request's key, when the tool ran.
//!  3. execution     `invoke::Executor::run`: a tool its pin holds is refused, a gated one is
//!                   let through by a remembered grant or asked of the user (each approval
//!                   audited there, as it happens), then its owner runs it and the result is
//!                   converted under the call's media policy.

use super::{CallAsk, Service};
use crate::audit::{self, Audit, Reached};
use crate::exposition::plans::PlanScope;
use crate::invoke::{Execute, Executor, HostPort, InvokeError, Invoked, McpPort, Prepared, Repair};
use crate::media::{Media, Reader};
use crate::output::ModelOutput;
use crate::registry::{Registered, Source, ToolEntry};
use crate::results::Budget;
use crate::usage::book::Book;
use crate::usage::Via;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One call through every step, in the order the module's docs list.
pub(super) async fn call<H: HostPort>(service: &Service, ask: CallAsk<'_, H>) -> Result<Invoked, InvokeError> {
    let budget = service.budget();
    let plan = ask.call.plan_id.as_deref().and_then(|id| service.plans.get(id));
    let (owner, readers) = owners(ask.results_owner, plan.as_deref());
    if let Some(page) = read_result(service, budget, &readers, &ask.call) {
        return Ok(page);
    }
    let (tool, call_id, cancel) = (ask.call.name.clone(), ask.call.call_id.clone(), ask.cancel.clone());
    let reader = plan.as_deref().map_or(Reader::Unknown, |p| p.render.reader(p.model.as_deref()));
    let session = ask.session.or_else(|| plan.as_ref().and_then(|p| p.session.as_ref()).map(|s| format!("plan:{s}")));
    let audit = service.audit();
    let exec = Executor::new(ask.host, ask.mcp, &service.validators, &service.approvals, ask.settings, ask.cancel)
        .media(Media { mode: budget.media, reader })
        .auditing(audit.clone(), ask.approver)
        .remembering(&service.grants, session);
    let runs = Runs { exec, audit, usage: (&service.usage, &ask.usage_key), plan: plan.as_deref() };
    let routed = crate::route::call(&runs, ask.mcp, ask.registry, &service.plans, service.semantic(), ask.call).await;
    note_span(&tool, &call_id, &routed);
    let mut done = match routed {
        Ok(done) => done,
        Err(InvokeError::UnknownTool(name)) => {
            audit_held(service, ask.mcp, ask.registry, &call_id, &name);
            return Err(InvokeError::UnknownTool(name));
        }
        Err(e) => return Err(e),
    };
    let left = fit_media(&mut done, reader, budget);
    cut(service, &mut done, left, plan.as_deref(), &owner, &tool, &cancel).await?;
    native_media(&mut done, plan.as_deref(), &call_id);
    Ok(done)
}

/// A task's result (`CallToolResult` JSON) of `tool`, through the media budget and the cut,
/// its whole kept for `owner` when cut. No plan: a task is the gateway's, whose clients have none.
pub(super) async fn task_result(service: &Service, raw: Value, owner: &str, tool: &str, cancel: &CancellationToken) -> Result<Invoked, InvokeError> {
    let budget = service.budget();
    let mut done = Invoked::of_result(raw, &Media { mode: budget.media, reader: Reader::Unknown });
    let left = fit_media(&mut done, Reader::Unknown, budget);
    cut(service, &mut done, left, None, owner, tool, cancel).await?;
    Ok(done)
}

/// Where a cut result is kept (its owner) and whose results a call may read: the face's own
/// owner (a gateway session), else the plan's session, else the plan; any plan also reads
/// what the host's calls made under no plan left (`results::shelf`).
fn owners(face: Option<String>, plan: Option<&PlanScope>) -> (String, Vec<String>) {
    use crate::results::shelf::HOST;
    let owner = match (face, plan) {
        (Some(o), _) => return (o.clone(), vec![o]),
        (None, Some(p)) => p.session.as_ref().map_or_else(|| format!("plan:{}", p.id), |s| format!("session:{s}")),
        (None, None) => HOST.to_string(),
    };
    let readers = if owner == HOST { vec![owner.clone()] } else { vec![owner.clone(), HOST.to_string()] };
    (owner, readers)
}

/// Results read: `tool_result_read` reads the shelf, never a tool (answered only while a
/// budget is on: otherwise no result was cut and the name is an unknown tool's).
fn read_result(service: &Service, budget: Budget, readers: &[String], call: &crate::invoke::Call) -> Option<Invoked> {
    if !budget.is_on() || call.name != crate::results::read::READ {
        return None;
    }
    let readers: Vec<&str> = readers.iter().map(String::as_str).collect();
    let page = crate::results::read::page(&service.results, &readers, &call.arguments, budget);
    let output = if page.is_error { ModelOutput::ErrorText(page.text) } else { ModelOutput::Text(page.text) };
    Some(Invoked { output, is_error: page.is_error, raw: page.raw, repaired: None, provider_output: None, ran: None, cut: None })
}

/// Span: the request this task serves called `tool` (telemetry), an error unless it answered.
fn note_span(tool: &str, call_id: &str, routed: &Result<Invoked, InvokeError>) {
    match routed {
        Ok(done) => crate::telemetry::note_tool(tool, call_id, done.is_error),
        Err(InvokeError::UnknownTool(name)) => crate::telemetry::note_tool(name, call_id, true),
        Err(_) => crate::telemetry::note_tool(tool, call_id, true),
    }
}

/// Held: a held MCP tool is not registered; the face says why, the audit log says held.
fn audit_held(service: &Service, mcp: &crate::upstream::Mcp<'_>, registry: &crate::registry::Registry, call_id: &str, name: &str) {
    let catalog = mcp.0.filter(|_| service.audit().is_on());
    if let Some((server, upstream)) = catalog.and_then(|c| crate::sync::held_tool(registry, c, name)) {
        service.audit_held(call_id, name, &server, &upstream);
    }
}

impl Service {
    /// A call of a held tool, refused before it ran (its pin holds it): by the held step, or
    /// by a face that finds one before routing (the gateway puts it before the person).
    pub fn audit_held(&self, call_id: &str, tool: &str, server: &str, upstream_tool: &str) {
        self.audit().record(audit::Event::Call {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            server: Some(server.to_string()),
            upstream_tool: Some(upstream_tool.to_string()),
            reached: Reached::Direct,
            outcome: audit::Outcome::Held,
            duration_ms: 0,
            result_bytes: None,
            arguments: None,
            result: None,
        });
    }
}

/// Media budget: the images count against the budget by the reader's rule; the budget the
/// text is left.
fn fit_media(done: &mut Invoked, reader: Reader, mut budget: Budget) -> Budget {
    if budget.is_on() && !done.output.media().is_empty() {
        let (output, used) = crate::results::media_budget::fit(std::mem::replace(&mut done.output, ModelOutput::Text(String::new())), reader, budget.max_tokens);
        done.output = output;
        budget.max_tokens = budget.max_tokens.saturating_sub(u32::try_from(used).unwrap_or(u32::MAX));
    }
    budget
}

/// Cut: an answer over `budget` is cut at a token boundary and its whole kept on the shelf for
/// `owner`. A natively rendered search answers the provider, not the model's text: never cut.
async fn cut(service: &Service, done: &mut Invoked, budget: Budget, plan: Option<&PlanScope>, owner: &str, tool: &str, cancel: &CancellationToken) -> Result<(), InvokeError> {
    if done.provider_output.is_some() || !crate::results::may_exceed(&done.output, budget) {
        return Ok(());
    }
    let enc = plan.map_or_else(|| service.budget.read().unwrap_or_else(|e| e.into_inner()).1, |p| p.encoding);
    // Tokenizing megabytes takes up to seconds: on the blocking pool, off the reactor.
    let (output, raw, is_error, reference) = (done.output.clone(), done.raw.clone(), done.is_error, crate::results::shelf::new_ref());
    let cut = crate::invoke::off_reactor(cancel, move || crate::results::cut(&output, raw.as_ref(), is_error, budget, enc, &reference)).await?;
    if let Some(cut) = cut {
        let (output, cut) = crate::results::keep(&service.results, owner, tool, cut, budget);
        done.output = output;
        done.cut = Some(cut);
    }
    Ok(())
}

/// Native media: a native plan's provider takes the media its own way.
fn native_media(done: &mut Invoked, plan: Option<&PlanScope>, call_id: &str) {
    if let (None, Some(plan)) = (&done.provider_output, plan) {
        done.provider_output = crate::exposition::native_media::provider_output(plan.render, call_id, &done.output);
    }
}

/// Each tool a call runs, around its execution: what `route` and `meta` reach execution
/// through (the `Execute` port), so the direct path, `tool_invoke` and a script's
/// `tools.call` are observed and counted alike, each once.
struct Runs<'a, H, M> {
    exec: Executor<'a, H, M>,
    audit: Audit,
    /// The usage book and the request's key.
    usage: (&'a Arc<Book>, &'a str),
    /// The call's plan: whether `tool_invoke`'s tool was one its search found.
    plan: Option<&'a PlanScope>,
}

impl<H: HostPort, M: McpPort> Execute for Runs<'_, H, M> {
    async fn prepare(&self, tool: &Arc<Registered>, raw: Value) -> Result<Prepared, InvokeError> {
        self.exec.prepare(tool, raw).await
    }

    async fn run_prepared(&self, tool: &Registered, arguments: Value, repaired: Option<Repair>, call_id: &str, reached: Reached) -> Result<Invoked, InvokeError> {
        let watch = Watch::start(&self.audit, &arguments);
        let mut stopped = None;
        let done = self.exec.run(tool, arguments, repaired, call_id, &mut stopped).await;
        if let Some(watch) = watch {
            watch.observe(&self.audit, tool, call_id, reached, &done, stopped);
        }
        if let Ok(done) = &done {
            self.count(done, reached);
        }
        done
    }

    fn asks_approval(&self, entry: &ToolEntry) -> bool {
        self.exec.asks_approval(entry)
    }

    fn cancel(&self) -> &CancellationToken {
        self.exec.cancel()
    }
}

impl<H, M> Runs<'_, H, M> {
    /// Count: the tool that ran, and how the call reached it; a refusal counts nothing.
    fn count(&self, done: &Invoked, reached: Reached) {
        let Some(ran) = &done.ran else { return };
        let via = match (reached, self.plan) {
            (Reached::ToolInvoke, Some(plan)) if plan.found.lock().unwrap_or_else(|e| e.into_inner()).contains(&ran.name) => Via::Search,
            (Reached::ToolInvoke, _) => Via::Invoke,
            (Reached::Direct | Reached::ToolExec | Reached::App, _) => Via::Direct,
        };
        let (book, key) = self.usage;
        book.count(key, &ran.name, via);
    }
}

/// Observe: one run's clock, and its arguments when the audit log keeps them.
struct Watch {
    started: std::time::Instant,
    at: std::time::SystemTime,
    arguments: Option<Value>,
}

impl Watch {
    /// `None` when neither the audit log nor telemetry is on: nothing to observe.
    fn start(audit: &Audit, arguments: &Value) -> Option<Watch> {
        if !audit.is_on() && !crate::telemetry::global().is_on() {
            return None;
        }
        Some(Watch { started: std::time::Instant::now(), at: std::time::SystemTime::now(), arguments: audit.wants_arguments().then(|| arguments.clone()) })
    }

    /// The run's telemetry span, then its audit record. `stopped`: why a refusal did not run.
    fn observe(self, audit: &Audit, tool: &Registered, call_id: &str, reached: Reached, done: &Result<Invoked, InvokeError>, stopped: Option<audit::Outcome>) {
        let outcome = match (done, stopped) {
            (Ok(_), Some(stop)) => stop,
            (Ok(d), None) if d.is_error => audit::Outcome::Error,
            (Ok(_), None) => audit::Outcome::Ok,
            (Err(InvokeError::Cancelled), _) => audit::Outcome::Cancelled,
            (Err(_), _) => audit::Outcome::Error,
        };
        let raw = done.as_ref().ok().and_then(|d| d.raw.as_ref());
        let (server, upstream_tool) = match &tool.entry.source {
            Source::Mcp { server_id, tool_name } => (Some(server_id.clone()), Some(tool_name.clone())),
            Source::Builtin | Source::Host => (None, None),
        };
        crate::telemetry::global().ran(crate::telemetry::Run {
            tool: &tool.entry.name,
            upstream: server.as_deref().zip(upstream_tool.as_deref()),
            call_id,
            reached,
            outcome,
            failure: match done {
                Err(InvokeError::Rpc { code, .. }) => Some(code.to_string()),
                Err(InvokeError::InputRequired(_)) => Some("input_required".into()),
                Err(InvokeError::Task(_)) => Some("task".into()),
                Err(InvokeError::UnknownTool(_) | InvokeError::PlanRequired(_) | InvokeError::UnknownPlan(_)) => Some("unknown_tool".into()),
                _ => None,
            },
            started: self.at,
            took: self.started.elapsed(),
        });
        if !audit.is_on() {
            return;
        }
        audit.record(audit::Event::Call {
            call_id: call_id.to_string(),
            tool: tool.entry.name.clone(),
            server,
            upstream_tool,
            reached,
            outcome,
            duration_ms: self.started.elapsed().as_millis() as u64,
            result_bytes: raw.map(json_len),
            arguments: self.arguments,
            result: raw.filter(|_| audit.wants_results()).cloned(),
        });
    }
}

/// The length of `v` as JSON, counted without building the text.
fn json_len(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}
