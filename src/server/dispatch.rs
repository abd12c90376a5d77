//! The method table: jsonrpsee's `RpcModule` parses params and builds the standard errors;
//! this file registers each handler and says how it runs relative to the main loop.

use super::handlers;
use super::handlers_tools as tools;
use super::Ctx;
use crate::protocol::{self as p, ErrorCode, Request, RpcError};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use jsonrpsee::RpcModule;
use serde_json::json;
use std::future::Future;
use std::sync::Arc;

/// How a request runs relative to the messages after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Runs to completion before the next message is read: the methods that change state, so
    /// a request sent after them sees their effect.
    Ordered,
    /// A cheap read (microseconds): answered by the main loop itself, without a task hop.
    Inline,
    /// Runs concurrently on a snapshot of the state.
    Concurrent,
}

pub fn kind(method: &str) -> Kind {
    match method {
        p::Initialize::METHOD
        | p::Shutdown::METHOD
        | p::RegistryRegister::METHOD
        | p::RegistryDeregister::METHOD
        | p::RegistrySyncMcp::METHOD
        | p::CatalogSetServers::METHOD
        | p::CatalogApproveTools::METHOD
        | p::ApprovalRespond::METHOD => Kind::Ordered,
        p::RegistryList::METHOD
        | p::RegistrySelectActive::METHOD
        | p::RegistryResolveMcpToolIds::METHOD
        | p::CatalogListTools::METHOD
        | p::CatalogStatus::METHOD => Kind::Inline,
        _ => Kind::Concurrent,
    }
}

/// Params absent or `null` mean `{}`; positional params are refused.
pub fn parse<T: serde::de::DeserializeOwned>(params: &Params) -> Result<T, ErrorObjectOwned> {
    let text = params.as_str().map(str::trim).filter(|s| *s != "null").unwrap_or("{}");
    if text.starts_with('[') {
        return Err(RpcError::new(ErrorCode::INVALID_PARAMS, "params must be an object (by name), not a list").into());
    }
    serde_json::from_str(text).map_err(|e| {
        RpcError::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}"))
            .with_data(json!({"error": e.to_string(), "line": e.line(), "column": e.column()}))
            .into()
    })
}

fn sync<R: Request>(m: &mut RpcModule<Ctx>, f: fn(&Ctx, R::Params) -> Result<R::Result, RpcError>)
where
    R::Params: 'static,
    R::Result: Clone + 'static,
{
    m.register_method(R::METHOD, move |params, ctx, _| {
        let params = parse::<R::Params>(&params)?;
        f(ctx, params).map_err(ErrorObjectOwned::from)
    })
    .expect("method names are unique");
}

fn asynchronous<R, F, Fut>(m: &mut RpcModule<Ctx>, f: F)
where
    R: Request,
    R::Params: Send + 'static,
    R::Result: Clone + 'static,
    F: Fn(Arc<Ctx>, R::Params) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Result, RpcError>> + Send + 'static,
{
    m.register_async_method(R::METHOD, move |params, ctx, _| {
        let f = f.clone();
        async move {
            let params = parse::<R::Params>(&params)?;
            f(ctx, params).await.map_err(ErrorObjectOwned::from)
        }
    })
    .expect("method names are unique");
}

pub fn module(ctx: Arc<Ctx>) -> RpcModule<Ctx> {
    let mut m = RpcModule::from_arc(ctx);
    sync::<p::Initialize>(&mut m, handlers::handle_initialize);
    sync::<p::Shutdown>(&mut m, handlers::handle_shutdown);
    sync::<p::RegistryRegister>(&mut m, handlers::handle_register);
    sync::<p::RegistryDeregister>(&mut m, handlers::handle_deregister);
    sync::<p::RegistryList>(&mut m, handlers::handle_list);
    sync::<p::RegistrySelectActive>(&mut m, handlers::handle_select_active);
    sync::<p::ExpositionPlan>(&mut m, handlers::handle_plan);
    sync::<p::RegistryResolveMcpToolIds>(&mut m, tools::handle_resolve);
    sync::<p::RegistrySyncMcp>(&mut m, tools::handle_sync);
    sync::<p::CatalogSetServers>(&mut m, tools::handle_set_servers);
    sync::<p::CatalogListTools>(&mut m, tools::handle_list_tools);
    sync::<p::CatalogStatus>(&mut m, tools::handle_status);
    sync::<p::CatalogPins>(&mut m, super::handlers_pins::handle_pins);
    sync::<p::CatalogApproveTools>(&mut m, super::handlers_pins::handle_approve_tools);
    asynchronous::<p::CatalogRefresh, _, _>(&mut m, tools::handle_refresh);
    asynchronous::<p::CatalogRestart, _, _>(&mut m, tools::handle_restart);
    asynchronous::<p::ToolInvoke, _, _>(&mut m, tools::handle_invoke);
    sync::<p::ApprovalRespond>(&mut m, tools::handle_approval_respond);
    if std::env::var_os("TOOLREG_DEBUG_METHODS").is_some() {
        debug_methods(&mut m);
    }
    m
}

/// `debug/sleep {ms}` and `debug/panic`: only with `TOOLREG_DEBUG_METHODS` set, so the test
/// suite can reach the cancellation and panic paths of the real binary.
fn debug_methods(m: &mut RpcModule<Ctx>) {
    asynchronous::<p::DebugSleep, _, _>(m, |_, params: p::DebugSleepParams| async move {
        tokio::time::sleep(std::time::Duration::from_millis(params.ms)).await;
        Ok(p::Null)
    });
    sync::<p::DebugPanic>(m, |_, _| panic!("debug/panic was called"));
}
