//! Where one tool call goes: a meta-tool to `meta` (scoped to its plan), any other name
//! straight to execution. The one module that knows both `invoke` and `meta`; below it calls
//! flow one way: `meta` reaches execution through the same `Execute` port as the direct path,
//! and `invoke` knows no meta-tools.

use crate::embed::Semantic;
use crate::exposition::plans::PlanStore;
use crate::invoke::{self, off_reactor, Call, Execute, InvokeError, Invoked, McpPort, Prepared};
use crate::meta::{self, MetaCall};
use crate::registry::Registry;
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
    match exec.prepare(tool, call.arguments).await? {
        Prepared::Ready { arguments, repaired } => exec.run_prepared(tool, arguments, repaired, &call.call_id).await,
        Prepared::BadSchema { error } => Ok(invoke::bad_schema(&tool.entry, &error)),
        Prepared::Invalid { errors } => {
            let tool = tool.clone();
            off_reactor(exec.cancel(), move || meta::invalid_arguments(&tool.entry, &errors)).await
        }
    }
}
