//! Code mode: `tool_exec` offered in a plan, and one run of it. The script runs in the
//! `sandbox`; each host call it makes is answered by the caller's `answer` (which `route`
//! gives: the same path as a direct call, so validation, repair, pins and approval hold), and
//! the run's result is what the model reads: the returned JSON, the console, and each tool
//! call with its outcome and duration, all bounded.
//!
//! A run is one future: dropping it (the `tool/invoke` cancelled) drops the calls in flight
//! and stops the script (`sandbox::Run`'s drop).

use crate::exposition::meta_defs::{self, EXEC};
use crate::exposition::{Placement, Plan, Reason};
use crate::invoke::{InvokeError, Invoked};
use crate::meta::inspect;
use crate::output::ModelOutput;
use crate::registry::Registered;
use crate::sandbox::{self, Ended, Finished, Limits, Reply, Request};
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Adds `tool_exec` to `plan`, its description showing the signatures of the registered tools
/// the plan lists, and counts it in `tokens.inline`.
pub fn offer(plan: &mut Plan, active: &[Arc<Registered>], limits: &Limits) {
    let listed = |name: &str| plan.tools.iter().any(|t| t.name == name);
    let signatures: Vec<String> = active
        .iter()
        .filter(|r| listed(&r.entry.name))
        .map(|r| inspect::signature(&r.entry.name, &r.entry.description, &r.entry.input_schema))
        .collect();
    let def = meta_defs::exec_definition(&signatures, limits, plan.encoding);
    plan.tokens.inline += plan.encoding.name.count(&def.counted_text()) as u64;
    plan.tools.push(def);
    plan.placements.insert(EXEC.to_string(), Placement { namespace: None, reason: Reason::Meta, deferred: false, note: None, ui: None });
}

/// One tool call of the run, for the result.
struct Logged {
    name: String,
    ok: bool,
    took: Duration,
}

/// What a script's `tools.call` resolves to (or the message it throws): a tool error is an
/// exception; a result's structured content, else its JSON, else its text, is the value.
pub fn reply_of(done: Invoked) -> Reply {
    let text = |o: &ModelOutput| o.text().into_owned();
    if done.is_error {
        return Err(text(&done.output));
    }
    if let Some(s) = done.raw.as_ref().and_then(|r| r.get("structuredContent")).filter(|v| !v.is_null()) {
        return Ok(s.clone());
    }
    Ok(match done.output {
        ModelOutput::Json(v) => v,
        ModelOutput::Text(t) => serde_json::from_str(&t).unwrap_or(Value::String(t)),
        other => Value::String(text(&other)),
    })
}

/// A run's result with the media its tools returned, after its text (`content`).
pub fn with_media(mut done: Invoked, media: Vec<crate::output::Part>) -> Invoked {
    if media.is_empty() || done.is_error {
        return done;
    }
    let text = done.output.text().into_owned();
    done.output = ModelOutput::Content(std::iter::once(crate::output::Part::Text { text }).chain(media).collect());
    done
}

/// Runs `code` within `limits`; `answer(seq, request)` answers each host call (`seq` counts
/// them from 1). Only cancellation is an `Err`; a script's failure is an `isError` result.
pub async fn run<F, Fut>(code: String, limits: Limits, cancel: &CancellationToken, answer: F) -> Result<Invoked, InvokeError>
where
    F: Fn(u64, Request) -> Fut,
    Fut: Future<Output = Result<Reply, InvokeError>>,
{
    let mut run = match sandbox::start(code, limits) {
        Ok(run) => run,
        Err(e) => return Ok(Invoked::error(format!("tool_exec could not start its sandbox: {e}"))),
    };
    let mut inflight = FuturesUnordered::new();
    let mut log: Vec<Logged> = Vec::new();
    let mut seq = 0;
    let finished = loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(InvokeError::Cancelled),
            done = &mut run.done => match done {
                Ok(f) => break f,
                Err(_) => return Ok(Invoked::error("tool_exec's sandbox failed unexpectedly; the script did not finish")),
            },
            Some(call) = run.calls.recv() => {
                seq += 1;
                let name = match &call.request {
                    Request::Call { name, .. } => Some(name.clone()),
                    _ => None,
                };
                inflight.push(timed(call.id, name, answer(seq, call.request)));
            }
            Some((id, name, started, reply)) = inflight.next(), if !inflight.is_empty() => {
                let reply = match reply {
                    Ok(r) => r,
                    Err(InvokeError::Cancelled) => return Err(InvokeError::Cancelled),
                    Err(e) => Err(e.to_string()),
                };
                if let Some(name) = name {
                    log.push(Logged { name, ok: reply.is_ok(), took: started.elapsed() });
                }
                run.reply(id, reply);
            }
        }
    };
    Ok(result(finished, &log, &limits))
}

/// A host call's answer with its id, the tool's name (for `tools.call`) and when it started.
async fn timed(id: u64, name: Option<String>, reply: impl Future<Output = Result<Reply, InvokeError>>) -> (u64, Option<String>, Instant, Result<Reply, InvokeError>) {
    let started = Instant::now();
    (id, name, started, reply.await)
}

/// What the model reads: the value (or the error), then the console and the calls.
fn result(f: Finished, log: &[Logged], limits: &Limits) -> Invoked {
    let mut text = String::new();
    let (is_error, value) = match &f.ended {
        Ended::Returned { json: None, .. } => {
            text.push_str("The script returned nothing.");
            (false, Value::Null)
        }
        Ended::Returned { json: Some(j), total } if *total > j.len() => {
            text.push_str(&format!("Returned (cut: {} of {total} bytes shown, the limit):\n{j}", j.len()));
            (false, Value::String(j.clone()))
        }
        Ended::Returned { json: Some(j), .. } => {
            text.push_str(j);
            (false, serde_json::from_str(j).unwrap_or(Value::Null))
        }
        Ended::Failed(e) => {
            text.push_str(&format!("The script failed: {e}."));
            (true, Value::Null)
        }
    };
    if !f.console.is_empty() {
        let cut = if f.console_cut { format!(" (cut at {} bytes, the limit)", limits.max_output_bytes) } else { String::new() };
        text.push_str(&format!("\n\nConsole{cut}:\n{}", f.console.trim_end()));
    }
    if !log.is_empty() {
        text.push_str("\n\nTool calls:");
        for c in log {
            text.push_str(&format!("\n- {} {} ({} ms)", c.name, if c.ok { "ok" } else { "error" }, c.took.as_millis()));
        }
    }
    let calls: Vec<Value> = log.iter().map(|c| json!({"name": c.name, "ok": c.ok, "durationMs": c.took.as_millis() as u64})).collect();
    let error = match &f.ended {
        Ended::Failed(e) => Some(e.to_string()),
        Ended::Returned { .. } => None,
    };
    let raw = json!({
        "value": value,
        "valueCut": matches!(&f.ended, Ended::Returned { json: Some(j), total } if *total > j.len()),
        "error": error,
        "console": f.console,
        "consoleCut": f.console_cut,
        "calls": calls,
        "hostCalls": f.calls,
        "ranMs": f.ran.as_millis() as u64,
    });
    let output = if is_error { ModelOutput::ErrorText(text) } else { ModelOutput::Text(text) };
    Invoked { output, is_error, raw: Some(raw), repaired: None, provider_output: None, ran: None, cut: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_take_structured_content_then_json_then_text() {
        let structured = Invoked { raw: Some(json!({"structuredContent": {"n": 1}})), ..Invoked::text("ignored", None) };
        assert_eq!(reply_of(structured), Ok(json!({"n": 1})));
        assert_eq!(reply_of(Invoked::text("[1, 2]", None)), Ok(json!([1, 2])));
        assert_eq!(reply_of(Invoked::text("plain", None)), Ok(json!("plain")));
        assert_eq!(reply_of(Invoked::error("denied")), Err("denied".into()));
    }

    #[tokio::test]
    async fn a_run_logs_each_call_and_reports_the_value() {
        let cancel = CancellationToken::new();
        let code = "const a = await tools.call('one', {}); let e; try { await tools.call('two', {}); } catch (x) { e = x.message; } console.log('seen', a); return {a, e};";
        let done = run(code.into(), Limits::default(), &cancel, |_, r| async move {
            Ok(match r {
                Request::Call { name, .. } if name == "one" => Ok(json!(1)),
                _ => Err("no".to_string()),
            })
        })
        .await
        .unwrap();
        assert!(!done.is_error);
        let raw = done.raw.unwrap();
        assert_eq!(raw["value"], json!({"a": 1, "e": "no"}));
        assert_eq!(raw["calls"].as_array().unwrap().iter().map(|c| (c["name"].as_str().unwrap(), c["ok"].as_bool().unwrap())).collect::<Vec<_>>(), [("one", true), ("two", false)]);
        let ModelOutput::Text(text) = done.output else { panic!() };
        assert!(text.starts_with(r#"{"a":1,"e":"no"}"#) && text.contains("Console:\nseen 1") && text.contains("- two error"), "{text}");
    }

    #[tokio::test]
    async fn cancellation_ends_the_run() {
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        let done = run("await tools.call('hang', {});".into(), Limits::default(), &cancel, move |_, _| {
            c.cancel();
            std::future::pending()
        })
        .await;
        assert_eq!(done, Err(InvokeError::Cancelled));
    }
}
