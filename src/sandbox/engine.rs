//! One run on its own thread: a fresh QuickJS runtime and context with the limits set, the
//! script evaluated as the body of an async function, then the job queue driven until the
//! function's promise settles, blocking on the host's replies whenever the script awaits them.

use super::bridge::{self, Pending};
use super::console::{self, Console};
use super::outcome::{cut, script_line, Ended, Finished, ScriptError};
use super::{HostCall, Limits, Reply, STACK_BYTES};
use rquickjs::context::intrinsic::{Date, Eval, Json, MapSet, Promise as PromiseIntrinsic, Proxy, RegExp, RegExpCompiler, TypedArrays};
use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Exception, Promise, Runtime, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The script's file name in stack traces (`script:LINE:COL`).
pub const FILENAME: &str = "script";

/// The standard objects a script gets: the language, no `performance` clock, no `WeakRef`
/// (whose timing would show the collector's), no DOM.
type Intrinsics = (Date, Eval, RegExpCompiler, RegExp, Json, Proxy, MapSet, TypedArrays, PromiseIntrinsic);

/// The script's running time: counted while JavaScript runs, paused while it waits for the
/// host. Read by the interrupt handler, which QuickJS calls every few thousand operations.
struct Clock {
    base: Instant,
    /// Nanoseconds after `base` at which the running script is stopped; `u64::MAX` while paused.
    deadline: AtomicU64,
    left: std::sync::Mutex<Duration>,
    /// Set by the handler when it stopped the script for time.
    expired: AtomicBool,
}

impl Clock {
    fn new(limit: Duration) -> Arc<Clock> {
        Arc::new(Clock { base: Instant::now(), deadline: AtomicU64::new(u64::MAX), left: std::sync::Mutex::new(limit), expired: AtomicBool::new(false) })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn resume(&self) {
        let left = *self.left.lock().unwrap_or_else(|e| e.into_inner());
        let left = u64::try_from(left.as_nanos()).unwrap_or(u64::MAX);
        self.deadline.store(self.now().saturating_add(left), Ordering::Relaxed);
    }

    fn pause(&self) {
        let deadline = self.deadline.swap(u64::MAX, Ordering::Relaxed);
        let left = Duration::from_nanos(deadline.saturating_sub(self.now()));
        *self.left.lock().unwrap_or_else(|e| e.into_inner()) = left;
    }

    fn over(&self) -> bool {
        let over = self.now() >= self.deadline.load(Ordering::Relaxed);
        if over {
            self.expired.store(true, Ordering::Relaxed);
        }
        over
    }
}

pub fn run(code: &str, limits: &Limits, stop: &Arc<AtomicBool>, out: mpsc::UnboundedSender<HostCall>, replies: std::sync::mpsc::Receiver<(u64, Reply)>) -> Finished {
    let clock = Clock::new(limits.timeout);
    let console = Rc::new(RefCell::new(Console::new(limits.max_output_bytes)));
    let pending = Rc::new(RefCell::new(Pending::default()));
    let ended = match Runtime::new() {
        Ok(rt) => {
            rt.set_memory_limit(limits.memory_bytes);
            rt.set_max_stack_size(STACK_BYTES);
            let (c, s) = (clock.clone(), stop.clone());
            rt.set_interrupt_handler(Some(Box::new(move || s.load(Ordering::Relaxed) || c.over())));
            let ended = match Context::custom::<Intrinsics>(&rt) {
                Ok(context) => {
                    let ended = context.with(|ctx| {
                        let ended = evaluate(&ctx, code, limits, &clock, stop, &console, &pending, out, &replies);
                        // Nothing of the engine may outlive its runtime.
                        pending.borrow_mut().clear();
                        ended
                    });
                    drop(context);
                    ended
                }
                Err(e) => Ended::Failed(ScriptError::Engine(e.to_string())),
            };
            drop(rt);
            ended
        }
        Err(e) => Ended::Failed(ScriptError::Engine(e.to_string())),
    };
    clock.pause();
    let ran = limits.timeout.saturating_sub(*clock.left.lock().unwrap_or_else(|e| e.into_inner()));
    let console = std::mem::take(&mut *console.borrow_mut());
    let calls = pending.borrow().made;
    Finished { ended, console: console.text, console_cut: console.cut, calls, ran }
}

#[allow(clippy::too_many_arguments)]
fn evaluate<'js>(
    ctx: &Ctx<'js>,
    code: &str,
    limits: &Limits,
    clock: &Clock,
    stop: &AtomicBool,
    console: &Rc<RefCell<Console>>,
    pending: &Rc<RefCell<Pending>>,
    out: mpsc::UnboundedSender<HostCall>,
    replies: &std::sync::mpsc::Receiver<(u64, Reply)>,
) -> Ended {
    let failed = |e: rquickjs::Error| Ended::Failed(error(ctx, e, limits, clock, stop, pending));
    if let Err(e) = console::install(ctx, console.clone()).and_then(|()| bridge::install(ctx, pending.clone(), out, limits.max_calls)) {
        return failed(e);
    }
    // The body on the wrapper's first line, so the script's line numbers are its own.
    let source = format!("(async function () {{{code}\n}})()");
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(FILENAME.into());
    clock.resume();
    let promise: Promise = match ctx.eval_with_options(source, options) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    loop {
        while ctx.execute_pending_job() {}
        if stop.load(Ordering::Relaxed) || clock.expired.load(Ordering::Relaxed) {
            return Ended::Failed(if clock.expired.load(Ordering::Relaxed) { ScriptError::Timeout { limit: limits.timeout } } else { ScriptError::Cancelled });
        }
        match promise.state() {
            PromiseState::Resolved => return returned(ctx, &promise, limits).unwrap_or_else(failed),
            PromiseState::Rejected => {
                let e = promise.result::<Value>().and_then(Result::err).unwrap_or(rquickjs::Error::Exception);
                return failed(e);
            }
            PromiseState::Pending if pending.borrow().is_empty() => return Ended::Failed(ScriptError::Stalled),
            PromiseState::Pending => {}
        }
        clock.pause();
        let Ok((id, reply)) = replies.recv() else {
            return Ended::Failed(ScriptError::Cancelled);
        };
        clock.resume();
        if let Err(e) = pending.borrow_mut().settle(ctx, id, reply) {
            return failed(e);
        }
    }
}

/// The resolved value as JSON, cut to the output bound.
fn returned<'js>(ctx: &Ctx<'js>, promise: &Promise<'js>, limits: &Limits) -> rquickjs::Result<Ended> {
    let value: Value = promise.result().unwrap_or_else(|| Ok(Value::new_undefined(ctx.clone())))?;
    let json = match ctx.json_stringify(value)? {
        Some(s) => s.to_string()?,
        None => return Ok(Ended::Returned { json: None, total: 0 }),
    };
    let total = json.len();
    Ok(Ended::Returned { json: Some(cut(&json, limits.max_output_bytes).to_string()), total })
}

/// What an engine error means: a limit (decided by what stopped it, not by the message the
/// script could imitate, where the engine says so), or the script's own exception.
fn error<'js>(ctx: &Ctx<'js>, e: rquickjs::Error, limits: &Limits, clock: &Clock, stop: &AtomicBool, pending: &RefCell<Pending>) -> ScriptError {
    if clock.expired.load(Ordering::Relaxed) {
        return ScriptError::Timeout { limit: limits.timeout };
    }
    if stop.load(Ordering::Relaxed) {
        return ScriptError::Cancelled;
    }
    if !matches!(e, rquickjs::Error::Exception) {
        let _ = ctx.catch();
        return match e {
            rquickjs::Error::Allocation => ScriptError::Memory { limit: limits.memory_bytes },
            other => ScriptError::Thrown { message: other.to_string(), line: None },
        };
    }
    let thrown = ctx.catch();
    let (message, stack) = describe(ctx, thrown);
    // The engine's own errors are InternalError / RangeError objects with fixed messages.
    if message == "InternalError: out of memory" || message == "RangeError: out of memory" {
        return ScriptError::Memory { limit: limits.memory_bytes };
    }
    if message.contains("stack overflow") || message.contains("Maximum call stack size exceeded") {
        return ScriptError::Stack;
    }
    if pending.borrow().over_limit && message.contains("tool call limit reached") {
        return ScriptError::Calls { limit: limits.max_calls };
    }
    ScriptError::Thrown { message, line: stack.as_deref().and_then(script_line) }
}

/// `Name: message` and the stack of a thrown value (anything else as its text).
fn describe<'js>(ctx: &Ctx<'js>, thrown: Value<'js>) -> (String, Option<String>) {
    if let Some(ex) = thrown.as_object().and_then(|o| Exception::from_object(o.clone())) {
        let name: Option<String> = ex.get("name").ok();
        let message = ex.message().unwrap_or_default();
        let text = match name {
            Some(n) if !n.is_empty() => format!("{n}: {message}"),
            _ => message,
        };
        return (text, ex.stack());
    }
    if let Some(s) = thrown.as_string() {
        return (s.to_string().unwrap_or_default(), None);
    }
    let text = ctx.json_stringify(thrown).ok().flatten().and_then(|s| s.to_string().ok()).unwrap_or_else(|| "a value that is not an Error".into());
    let _ = ctx.catch();
    (text, None)
}
