//! Where one tool call goes: a meta-tool to `meta` (scoped to its plan), `tool_exec` to
//! `code_mode`, any other name straight to execution. The one module that knows both `invoke`
//! and `meta`; below it calls flow one way: `meta` reaches execution through the same `Execute`
//! port as the direct path, and `invoke` knows no meta-tools. A script's `tools.call` comes
//! back here (`answer`) and takes the direct path, so every gate of a direct call holds.

use crate::audit::Reached;
use crate::embed::Semantic;
use crate::exposition::meta_defs::{EXEC, INSPECT, SEARCH};
use crate::exposition::plans::{PlanScope, PlanStore};
use crate::invoke::{self, off_reactor, Call, Execute, InvokeError, Invoked, McpPort, Prepared};
use crate::meta::{self, MetaCall};
use crate::registry::{Registered, Registry};
use crate::sandbox::{Reply, Request};
use serde_json::{json, Value};
use std::sync::Arc;

/// Runs `call` against a registry snapshot and the live plans.
/// `semantic`: tool_search's semantic signal, when the host configured one.
pub async fn call(
    exec: &impl Execute,
    mcp: &impl McpPort,
    registry: &Arc<Registry>,
    plans: &PlanStore,
    semantic: Option<&Arc<Semantic>>,
    call: Call,
) -> Result<Invoked, InvokeError> {
    if let Some(server) = &call.app {
        let tool = registry.get(&call.name).ok_or_else(|| InvokeError::UnknownTool(call.name.clone()))?;
        if let Some(why) = app_refusal(&tool.entry, server).or_else(|| out_of_plan(plans, call.plan_id.as_deref(), &call.name)) {
            return Ok(Invoked::error(why));
        }
        return direct(exec, tool, call.arguments, &call.call_id, Reached::App).await;
    }
    if call.name == EXEC {
        let plan_id = call.plan_id.ok_or_else(|| InvokeError::PlanRequired(call.name.clone()))?;
        let plan = plans.get(&plan_id).ok_or(InvokeError::UnknownPlan(plan_id))?;
        let Some(limits) = plan.code else {
            return Ok(Invoked::error("tool_exec is not offered in this request: only a plan made with codeMode \"sandbox\" has it."));
        };
        let code = match script(call.arguments) {
            Ok(code) => code,
            Err(why) => return Ok(Invoked::error(why)),
        };
        let ctx = Scripted { exec, mcp, registry, plan: &plan, semantic, run_id: &call.call_id, media: Default::default() };
        let done = crate::code_mode::run(code, limits, exec.cancel(), |seq, request| ctx.answer(seq, request)).await?;
        let media = std::mem::take(&mut *ctx.media.lock().unwrap_or_else(|e| e.into_inner()));
        return Ok(crate::code_mode::with_media(done, media));
    }
    if meta::is_meta(&call.name) {
        let plan_id = call.plan_id.ok_or_else(|| InvokeError::PlanRequired(call.name.clone()))?;
        let plan = plans.get(&plan_id).ok_or(InvokeError::UnknownPlan(plan_id))?;
        let meta_call = MetaCall {
            name: call.name,
            arguments: call.arguments,
            call_id: call.call_id,
            plan,
            registry: registry.clone(),
            cold_servers: mcp.cold_servers(),
            semantic: semantic.cloned(),
        };
        return meta::run(meta_call, exec).await;
    }
    let Some(tool) = registry.get(&call.name) else {
        return Err(InvokeError::UnknownTool(call.name));
    };
    if let Some(why) = out_of_plan(plans, call.plan_id.as_deref(), &call.name) {
        return Ok(Invoked::error(why));
    }
    if !crate::apps::model_may_call(tool.entry.ui.as_ref()) {
        return Ok(Invoked::error(format!("{} is offered to its server's view only (MCP Apps visibility without \"model\"), so it was not run.", call.name)));
    }
    // Arguments in a strict plan's form go to the server in its own shape.
    let strict = call.plan_id.as_deref().and_then(|id| plans.get(id)).is_some_and(|p| p.strict);
    let arguments = if strict { crate::exposition::strict::restore_call(call.arguments, &tool.entry.input_schema) } else { call.arguments };
    direct(exec, tool, arguments, &call.call_id, Reached::Direct).await
}

/// Why a call under the plan `plan_id` may not reach the registered tool `name`: its scope did
/// not make it active (say another conversation's MCP tool). A plan that is gone, or none, is
/// no limit: such a call reaches the registry as a call without a plan does.
fn out_of_plan(plans: &PlanStore, plan_id: Option<&str>, name: &str) -> Option<String> {
    let plan = plans.get(plan_id?)?;
    (!plan.reaches(name)).then(|| format!("{name} is not available in this request (its plan's scope does not include it), so it was not run."))
}

/// Why a view of `server` may not call `entry`, if it may not: a tool of another server (the
/// spec's rule: a view reaches its own server only), a host tool, or one whose visibility
/// lacks `"app"`.
fn app_refusal(entry: &crate::registry::ToolEntry, server: &str) -> Option<String> {
    let own = matches!(&entry.source, crate::registry::Source::Mcp { server_id, .. } if server_id == server);
    if !own {
        return Some(format!("{} is not a tool of MCP server {server:?}: a view may call its own server's tools only, so it was not run.", entry.name));
    }
    if !entry.ui.as_ref().is_none_or(crate::apps::ToolUi::for_app) {
        return Some(format!("{} is not offered to views (MCP Apps visibility without \"app\"), so it was not run.", entry.name));
    }
    None
}

/// The direct path of one registered tool (a script's `tools.call` too): prepare (validate,
/// repair), then run (pins, approval, the owner).
async fn direct(exec: &impl Execute, tool: &Arc<Registered>, arguments: Value, call_id: &str, reached: Reached) -> Result<Invoked, InvokeError> {
    match exec.prepare(tool, arguments).await? {
        Prepared::Ready { arguments, repaired } => exec.run_prepared(tool, arguments, repaired, call_id, reached).await,
        Prepared::BadSchema { error } => Ok(invoke::bad_schema(&tool.entry, &error)),
        Prepared::Invalid { errors } => {
            let tool = tool.clone();
            off_reactor(exec.cancel(), move || meta::invalid_arguments(&tool.entry, &errors)).await
        }
    }
}

/// `tool_exec`'s `code`: from `{code}`, or that object sent as a JSON string.
fn script(arguments: Value) -> Result<String, String> {
    let arguments = match arguments {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        other => other,
    };
    match arguments.get("code") {
        Some(Value::String(code)) => Ok(code.clone()),
        _ => Err("Invalid arguments for tool_exec: expected {\"code\": string}, the body of an async JavaScript function.".into()),
    }
}

/// What a script's host calls reach: the plan's tools by the direct path, the plan's search
/// and inspect by `meta`.
struct Scripted<'a, E, M> {
    exec: &'a E,
    mcp: &'a M,
    registry: &'a Arc<Registry>,
    plan: &'a Arc<PlanScope>,
    semantic: Option<&'a Arc<Semantic>>,
    run_id: &'a str,
    /// The media of the tools' results, in the order they came: the model sees them beside
    /// the script's text (a script's value holds only their text).
    media: std::sync::Mutex<Vec<crate::output::Part>>,
}

impl<E: Execute, M: McpPort> Scripted<'_, E, M> {
    async fn answer(&self, seq: u64, request: Request) -> Result<Reply, InvokeError> {
        let (meta_name, arguments) = match request {
            Request::Call { name, arguments } => return self.call(seq, name, arguments).await,
            Request::Search { query } => (SEARCH, json!({"query": query})),
            Request::Inspect { name } => (INSPECT, json!({"name": name})),
        };
        let meta_call = MetaCall {
            name: meta_name.into(),
            arguments,
            call_id: format!("{}::{seq}", self.run_id),
            plan: self.plan.clone(),
            registry: self.registry.clone(),
            cold_servers: self.mcp.cold_servers(),
            semantic: self.semantic.cloned(),
        };
        let done = meta::run(meta_call, self.exec).await?;
        if meta_name == SEARCH && !done.is_error {
            // The hits as data a script can loop over.
            let hits = done.raw.as_ref().and_then(|r| r.get("hits")).and_then(Value::as_array).cloned().unwrap_or_default();
            let hits: Vec<Value> = hits.into_iter().map(|h| json!({"name": h["name"], "namespace": h["namespace"]})).collect();
            return Ok(Ok(Value::Array(hits)));
        }
        Ok(crate::code_mode::reply_of(done))
    }

    /// A script's `tools.call`: any tool the plan offers (listed or deferred), by the direct
    /// path, under a call id derived from the run's.
    async fn call(&self, seq: u64, name: String, arguments: Value) -> Result<Reply, InvokeError> {
        if name == EXEC || meta::is_meta(&name) {
            return Ok(Err(format!("{name} cannot be called from a script: call tools directly, and use tools.search / tools.inspect")));
        }
        // A held MCP tool is not registered: the script hears why, as a direct call would.
        let held = || self.mcp.held_wire_refusal(self.registry, &name);
        if !self.plan.inline.contains(&name) && !self.plan.deferred.contains(&name) {
            return Ok(Err(held().unwrap_or_else(|| format!("Tool {name:?} is not available in this request. Use tools.search to find the exact name."))));
        }
        let Some(tool) = self.registry.get(&name) else {
            return Ok(Err(held().unwrap_or_else(|| format!("Tool {name:?} is no longer registered (removed since this plan was made), so it was not run."))));
        };
        let call_id = format!("{}::{seq}::{name}", self.run_id);
        let done = match direct(self.exec, tool, arguments, &call_id, Reached::ToolExec).await {
            Ok(done) => done,
            Err(InvokeError::Cancelled) => return Err(InvokeError::Cancelled),
            Err(e) => return Ok(Err(e.to_string())),
        };
        let media = done.output.media().iter().filter(|p| p.is_media()).cloned();
        self.media.lock().unwrap_or_else(|e| e.into_inner()).extend(media);
        Ok(crate::code_mode::reply_of(done))
    }
}
