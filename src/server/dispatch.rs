//! The method table: for each method, its typed handler and how it runs relative to the main
//! loop. Params are deserialised once, from the raw slice of the body, into the method's type.
//!
//! A table of our own rather than jsonrpsee's `RpcModule`: `RpcModule::raw_json_request`
//! takes the request as text and parses it again (after our probe), its `Id` has no negative
//! integers (`-5` was answered -32600), and its response comes back as a `String` to copy. Here
//! a request costs one shallow probe, one params parse, one result serialisation.

use super::handlers;
use super::handlers_tools as tools;
use super::handlers_approvals as approvals;
use super::handlers_extras as extras;
use super::message::{self, Id};
use super::Ctx;
use crate::protocol::error::clip;
use crate::protocol::{self as p, ErrorCode, Request, RpcError};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::json;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// How a request runs relative to the messages after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Runs to completion before the next message is read: the methods that change state, so
    /// a request sent after them sees their effect.
    Ordered,
    /// `Ordered`, for a method that is CPU-bound or reads files (`catalog/setServers` reads
    /// the cacheDir): it runs on tokio's blocking pool, and the main loop reads no later
    /// message until it is done, so later requests see its effect as with `Ordered`, while the
    /// runtime's threads stay free for the requests and writes already under way.
    Serial,
    /// `Serial`, for a method that changes the registry and nothing else (`registry/syncMcp`
    /// of thousands of tools): meanwhile the main loop still answers `Inline` requests, which
    /// read no registry, so their answers are the same as after it. It stops reading at the
    /// first message of any other kind, which waits for the end.
    SerialRegistry,
    /// A cheap read (microseconds): answered by the main loop itself, without a thread hop.
    /// Reads no registry (see `SerialRegistry`).
    Inline,
    /// Reads the whole registry: inline while it is small, on the work pool once it is big
    /// (`Ctx::is_big`), so the main loop never spends milliseconds on one request.
    Scan,
    /// CPU-bound (token counting): always on the work pool.
    Heavy,
    /// Waits on something (an MCP server, the host): a task on the runtime.
    Concurrent,
}

/// A response body, and whether it is a success (only the lifecycle methods need to know).
pub struct Answer {
    pub body: Bytes,
    pub ok: bool,
}

pub type SyncFn = dyn Fn(&Ctx, &Id, Option<&[u8]>) -> Answer + Send + Sync;
pub type AsyncFn = dyn Fn(Arc<Ctx>, Id, Option<Bytes>) -> BoxFuture<'static, Answer> + Send + Sync;

pub enum Handler {
    Sync(Box<SyncFn>),
    Async(Box<AsyncFn>),
}

pub struct Method {
    pub kind: Kind,
    pub handler: Handler,
}

#[derive(Default)]
pub struct Table(HashMap<&'static str, Method>);

impl Table {
    pub fn get(&self, method: &str) -> Option<&Method> {
        self.0.get(method)
    }

    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.0.keys().map(|s| s.to_string()).collect();
        names.sort();
        names
    }

    fn sync<R: Request>(&mut self, kind: Kind, f: fn(&Ctx, R::Params) -> Result<R::Result, RpcError>)
    where
        R::Params: 'static,
        R::Result: 'static,
    {
        let call = move |ctx: &Ctx, id: &Id, params: Option<&[u8]>| answer(id, parse::<R::Params>(params).and_then(|p| f(ctx, p)));
        let old = self.0.insert(R::METHOD, Method { kind, handler: Handler::Sync(Box::new(call)) });
        assert!(old.is_none(), "method names are unique");
    }

    fn concurrent<R, F, Fut>(&mut self, f: F)
    where
        R: Request,
        R::Params: Send + 'static,
        R::Result: 'static,
        F: Fn(Arc<Ctx>, R::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Result, RpcError>> + Send + 'static,
    {
        let f = Arc::new(f);
        // Params are parsed in the task, not on the main loop (tool arguments can be large).
        let call = move |ctx: Arc<Ctx>, id: Id, params: Option<Bytes>| {
            let f = f.clone();
            async move {
                let result = match parse::<R::Params>(params.as_deref()) {
                    Ok(params) => f(ctx, params).await,
                    Err(e) => Err(e),
                };
                answer(&id, result)
            }
            .boxed()
        };
        let old = self.0.insert(R::METHOD, Method { kind: Kind::Concurrent, handler: Handler::Async(Box::new(call)) });
        assert!(old.is_none(), "method names are unique");
    }
}

fn answer<T: serde::Serialize>(id: &Id, result: Result<T, RpcError>) -> Answer {
    let failed = |e: &RpcError| Answer { body: message::failure(Some(id), e), ok: false };
    match result {
        Ok(v) => match message::success(id, &v) {
            Ok(body) => Answer { body, ok: true },
            Err(e) => failed(&RpcError::new(ErrorCode::INTERNAL_ERROR, format!("the result does not serialise: {e}"))),
        },
        Err(e) => failed(&e),
    }
}

/// Params absent or `null` mean `{}`; positional params are refused.
pub fn parse<T: serde::de::DeserializeOwned>(params: Option<&[u8]>) -> Result<T, RpcError> {
    let text = params.unwrap_or(b"{}");
    if text.first() == Some(&b'[') {
        return Err(RpcError::new(ErrorCode::INVALID_PARAMS, "params must be an object (by name), not a list"));
    }
    serde_json::from_slice(text).map_err(|e| {
        // serde's messages quote the offending value: clipped, like every echo of host input.
        let message = e.to_string();
        RpcError::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {message}"))
            .with_data(json!({"error": clip(&message), "line": e.line(), "column": e.column()}))
    })
}

pub fn table() -> Table {
    use Kind::*;
    let mut t = Table::default();
    t.sync::<p::Initialize>(Ordered, handlers::handle_initialize);
    t.sync::<p::Shutdown>(Ordered, handlers::handle_shutdown);
    t.sync::<p::RegistryRegister>(Ordered, handlers::handle_register);
    t.sync::<p::RegistryDeregister>(Ordered, handlers::handle_deregister);
    t.sync::<p::RegistrySyncMcp>(SerialRegistry, tools::handle_sync);
    t.sync::<p::CatalogSetServers>(Serial, tools::handle_set_servers);
    t.sync::<p::ApprovalRespond>(Ordered, approvals::handle_approval_respond);
    // Read (and, to revoke, write) the cacheDir's store: off the main loop.
    t.sync::<p::ApprovalGrants>(Serial, approvals::handle_grants);
    t.sync::<p::ApprovalRevoke>(Serial, approvals::handle_revoke);
    // Writes the approval to the state database before answering: off the main loop.
    t.sync::<p::CatalogApproveTools>(Serial, super::handlers_pins::handle_approve_tools);
    t.sync::<p::CatalogPins>(Inline, super::handlers_pins::handle_pins);
    t.sync::<p::RegistryList>(Scan, handlers::handle_list);
    t.sync::<p::RegistrySelectActive>(Scan, handlers::handle_select_active);
    t.sync::<p::RegistryResolveMcpToolIds>(Scan, tools::handle_resolve);
    // Copies and serialises a server's whole list (some list 35 MB): never on the main loop.
    t.sync::<p::CatalogListTools>(Heavy, tools::handle_list_tools);
    t.sync::<p::CatalogStatus>(Inline, tools::handle_status);
    t.sync::<p::ExpositionPlan>(Heavy, handlers::handle_plan);
    // A pool's definitions can be megabytes of JSON: off the main loop.
    t.sync::<p::ExpositionDefinitions>(Heavy, handlers::handle_definitions);
    t.sync::<p::UsageList>(Serial, super::handlers_usage::handle_usage_list);
    t.sync::<p::UsageReset>(Serial, super::handlers_usage::handle_usage_reset);
    t.concurrent::<p::CatalogRefresh, _, _>(tools::handle_refresh);
    // Wait on the MCP registry (bounded by `mcpRegistry.timeoutMs`), never on the main loop.
    t.concurrent::<p::CatalogSearchRegistry, _, _>(super::handlers_registry::handle_search_registry);
    t.concurrent::<p::CatalogResolveRegistryServer, _, _>(super::handlers_registry::handle_resolve_registry_server);
    t.concurrent::<p::CatalogRestart, _, _>(tools::handle_restart);
    t.concurrent::<p::ToolInvoke, _, _>(tools::handle_invoke);
    // What a server offers beside tools: lists from memory (copied and serialised off the
    // main loop, as catalog/listTools), the rest from the server.
    t.sync::<p::CatalogListResources>(Heavy, extras::handle_list_resources);
    t.sync::<p::CatalogListResourceTemplates>(Heavy, extras::handle_list_templates);
    t.sync::<p::CatalogListPrompts>(Heavy, extras::handle_list_prompts);
    t.concurrent::<p::CatalogReadResource, _, _>(extras::handle_read_resource);
    t.concurrent::<p::CatalogGetPrompt, _, _>(extras::handle_get_prompt);
    t.concurrent::<p::CatalogComplete, _, _>(extras::handle_complete);
    t.concurrent::<p::CatalogListSkills, _, _>(extras::handle_list_skills);
    t.concurrent::<p::CatalogLoadSkill, _, _>(extras::handle_load_skill);
    t.concurrent::<p::CatalogSubscribeResource, _, _>(extras::handle_subscribe);
    t.concurrent::<p::CatalogUnsubscribeResource, _, _>(extras::handle_unsubscribe);
    if std::env::var_os("TOOLREG_DEBUG_METHODS").is_some() {
        debug_methods(&mut t);
    }
    t
}

/// `debug/sleep {ms}`, `debug/panic`, `debug/outgoing` and `debug/usageClock`: only with `TOOLREG_DEBUG_METHODS`
/// set, so the test suite can reach the cancellation, panic and backpressure paths of the real
/// binary.
fn debug_methods(t: &mut Table) {
    t.concurrent::<p::DebugSleep, _, _>(|_, params: p::DebugSleepParams| async move {
        let cancel = super::current_cancel();
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_millis(params.ms)) => {}
            _ = cancel.cancelled() => {}
        }
        Ok(p::Null)
    });
    t.sync::<p::DebugPanic>(Kind::Inline, |_, _| panic!("debug/panic was called"));
    t.sync::<p::DebugOutgoing>(Kind::Inline, |ctx, _| Ok(ctx.out.stats()));
    t.sync::<p::DebugUsageClock>(Kind::Ordered, |ctx, params: p::DebugUsageClockParams| {
        ctx.service.usage.advance_clock(params.advance_secs);
        Ok(p::Null)
    });
}
