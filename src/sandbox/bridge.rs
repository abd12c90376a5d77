//! The `tools` object: `tools.call(name, args)`, `tools.search(query)`, `tools.inspect(name)`.
//! Each returns a promise and sends a `HostCall` out; the engine's loop settles the promise
//! when the host's `Reply` comes back (`Pending::settle`). Values cross as JSON text, so no
//! engine object ever leaves the run.

use super::{HostCall, Reply, Request};
use rquickjs::function::Opt;
use rquickjs::{Ctx, Exception, Function, Object, Persistent, Promise, Value};
use serde_json::Value as Json;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tokio::sync::mpsc;

/// Promises waiting for the host, by call id.
#[derive(Default)]
pub struct Pending {
    next: u64,
    waiting: HashMap<u64, (Persistent<Function<'static>>, Persistent<Function<'static>>)>,
    /// Host calls made so far.
    pub made: u32,
    /// Set when a call was refused for `maxCalls`.
    pub over_limit: bool,
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Resolves or rejects the promise of call `id` (unknown ids are ignored).
    pub fn settle<'js>(&mut self, ctx: &Ctx<'js>, id: u64, reply: Reply) -> rquickjs::Result<()> {
        let Some((resolve, reject)) = self.waiting.remove(&id) else { return Ok(()) };
        let (resolve, reject) = (resolve.restore(ctx)?, reject.restore(ctx)?);
        match reply {
            Ok(v) => {
                let value = ctx.json_parse(serde_json::to_string(&v).unwrap_or_else(|_| "null".into()))?;
                resolve.call::<_, ()>((value,))
            }
            Err(message) => reject.call::<_, ()>((Exception::from_message(ctx.clone(), &message)?,)),
        }
    }

    /// Drops every waiting promise (before the runtime goes: nothing may outlive it).
    pub fn clear(&mut self) {
        self.waiting.clear();
    }
}

/// A JS value as JSON (`undefined` as `null`).
fn to_json<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> rquickjs::Result<Json> {
    let text = match ctx.json_stringify(v)? {
        Some(s) => s.to_string()?,
        None => return Ok(Json::Null),
    };
    serde_json::from_str(&text).map_err(|e| Exception::throw_type(ctx, &format!("arguments are not JSON: {e}")))
}

/// Sends `request` out and returns the promise its reply settles.
fn ask<'js>(ctx: &Ctx<'js>, pending: &RefCell<Pending>, out: &mpsc::UnboundedSender<HostCall>, max: u32, request: Request) -> rquickjs::Result<Promise<'js>> {
    let mut p = pending.borrow_mut();
    if p.made >= max {
        p.over_limit = true;
        return Err(Exception::throw_range(ctx, &format!("tool call limit reached: a script may make {max} calls")));
    }
    p.made += 1;
    let (promise, resolve, reject) = ctx.promise()?;
    p.next += 1;
    let id = p.next;
    p.waiting.insert(id, (Persistent::save(ctx, resolve), Persistent::save(ctx, reject)));
    if out.send(HostCall { id, request }).is_err() {
        return Err(Exception::throw_internal(ctx, "the host is gone"));
    }
    Ok(promise)
}

/// Installs `tools` on the context's globals.
pub fn install<'js>(ctx: &Ctx<'js>, pending: Rc<RefCell<Pending>>, out: mpsc::UnboundedSender<HostCall>, max_calls: u32) -> rquickjs::Result<()> {
    let tools = Object::new(ctx.clone())?;
    let (p, o) = (pending.clone(), out.clone());
    let call = Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: String, args: Opt<Value<'js>>| {
        let arguments = match args.0 {
            Some(v) => to_json(&ctx, v)?,
            None => Json::Object(Default::default()),
        };
        ask(&ctx, &p, &o, max_calls, Request::Call { name, arguments })
    })?;
    let (p, o) = (pending.clone(), out.clone());
    let search = Function::new(ctx.clone(), move |ctx: Ctx<'js>, query: String| ask(&ctx, &p, &o, max_calls, Request::Search { query }))?;
    let inspect = Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: String| ask(&ctx, &pending, &out, max_calls, Request::Inspect { name }))?;
    tools.set("call", call)?;
    tools.set("search", search)?;
    tools.set("inspect", inspect)?;
    ctx.globals().set("tools", tools)
}
