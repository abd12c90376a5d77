//! The sandbox on its own: limits, isolation, the bridge, with a host answered in the test.

use super::*;
use serde_json::json;

/// Runs `code`, answering each host call with `answer`.
fn run_with(code: &str, limits: Limits, answer: impl Fn(&Request) -> Reply) -> Finished {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut run = start(code.to_string(), limits).unwrap();
        loop {
            tokio::select! {
                done = &mut run.done => return done.unwrap(),
                Some(c) = run.calls.recv() => run.reply(c.id, answer(&c.request)),
            }
        }
    })
}

fn run(code: &str) -> Finished {
    run_with(code, Limits::default(), |_| Err("no host in this test".into()))
}

fn returned(f: &Finished) -> &str {
    match &f.ended {
        Ended::Returned { json: Some(j), .. } => j,
        other => panic!("not returned: {other:?} (console {:?})", f.console),
    }
}

fn failed(f: &Finished) -> &ScriptError {
    match &f.ended {
        Ended::Failed(e) => e,
        other => panic!("not failed: {other:?}"),
    }
}

#[test]
fn returns_json_and_captures_the_console() {
    let f = run("console.log('hi', 1, {a: [2]}); return {sum: [1, 2, 3].reduce((a, b) => a + b)};");
    assert_eq!(returned(&f), r#"{"sum":6}"#);
    assert_eq!(f.console, "hi 1 {\"a\":[2]}\n");
}

#[test]
fn no_files_network_processes_timers_or_modules() {
    for probe in ["std", "os", "require", "process", "fetch", "XMLHttpRequest", "WebSocket", "setTimeout", "setInterval", "performance", "Deno", "Bun", "WeakRef"] {
        let f = run(&format!("return typeof globalThis[{probe:?}];"));
        assert_eq!(returned(&f), "\"undefined\"", "{probe}");
    }
    // No module loader either: a dynamic import fails.
    let f = run("await import('os'); return 1;");
    assert!(matches!(failed(&f), ScriptError::Thrown { .. }), "{:?}", f.ended);
}

#[test]
fn a_spinning_script_stops_at_its_time_limit() {
    let limits = Limits { timeout: Duration::from_millis(200), ..Limits::default() };
    let t = std::time::Instant::now();
    let f = run_with("while (true) {}", limits, |_| Ok(json!(null)));
    assert_eq!(failed(&f), &ScriptError::Timeout { limit: Duration::from_millis(200) });
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // An exception handler cannot swallow the interrupt.
    let f = run_with("for (;;) { try { while (true) {} } catch (e) {} }", limits, |_| Ok(json!(null)));
    assert_eq!(failed(&f), &ScriptError::Timeout { limit: Duration::from_millis(200) });
}

#[test]
fn a_memory_bomb_stops_at_its_memory_limit() {
    let limits = Limits { memory_bytes: 8 << 20, ..Limits::default() };
    let f = run_with("const a = []; while (true) a.push('x'.repeat(1000) + a.length);", limits, |_| Ok(json!(null)));
    assert_eq!(failed(&f), &ScriptError::Memory { limit: 8 << 20 });
}

#[test]
fn deep_recursion_is_a_stack_error() {
    let f = run("function f(n) { return f(n + 1) + 1; } return f(0);");
    assert_eq!(failed(&f), &ScriptError::Stack);
}

#[test]
fn errors_carry_their_message_and_line() {
    let f = run("const a = 1;\nconst b = 2;\nnull.x;\n");
    match failed(&f) {
        ScriptError::Thrown { message, line } => {
            assert!(message.starts_with("TypeError"), "{message}");
            assert_eq!(*line, Some(3));
        }
        other => panic!("{other:?}"),
    }
    let f = run("throw new Error('boom');");
    assert_eq!(failed(&f), &ScriptError::Thrown { message: "Error: boom".into(), line: Some(1) });
    let f = run("return (;");
    assert!(matches!(failed(&f), ScriptError::Thrown { message, .. } if message.starts_with("SyntaxError")), "{:?}", f.ended);
}

#[test]
fn a_huge_return_value_is_cut_with_its_size() {
    let limits = Limits { max_output_bytes: 1000, ..Limits::default() };
    let f = run_with("return 'x'.repeat(5000000);", limits, |_| Ok(json!(null)));
    match &f.ended {
        Ended::Returned { json: Some(j), total } => {
            assert_eq!(j.len(), 1000);
            assert_eq!(*total, 5_000_002);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_console_is_bounded() {
    let limits = Limits { max_output_bytes: 100, ..Limits::default() };
    let f = run_with("for (let i = 0; i < 100000; i++) console.log('line', i); return 1;", limits, |_| Ok(json!(null)));
    assert!(f.console.len() <= 100 && f.console_cut, "{}", f.console.len());
}

#[test]
fn nothing_is_shared_between_runs() {
    let f = run("Object.prototype.polluted = 'yes'; Array.prototype.push = null; globalThis.leak = 1; return 1;");
    assert_eq!(returned(&f), "1");
    let f = run("return [({}).polluted === undefined, typeof [].push, typeof leak];");
    assert_eq!(returned(&f), r#"[true,"function","undefined"]"#);
}

#[test]
fn tools_calls_cross_as_json_and_refusals_are_exceptions() {
    let answer = |r: &Request| match r {
        Request::Call { name, arguments } if name == "add" => Ok(json!(arguments["a"].as_i64().unwrap() + arguments["b"].as_i64().unwrap())),
        Request::Call { name, .. } => Err(format!("{name} was denied")),
        Request::Search { query } => Ok(json!([{"name": query}])),
        Request::Inspect { name } => Ok(json!(format!("function {name}()"))),
    };
    let code = "const [x, y] = await Promise.all([tools.call('add', {a: 1, b: 2}), tools.call('add', {a: 10, b: 20})]);
let denied; try { await tools.call('rm', {}); } catch (e) { denied = e.message; }
const s = await tools.search('q'); const i = await tools.inspect('t');
return {x, y, denied, s, i};";
    let f = run_with(code, Limits::default(), answer);
    assert_eq!(returned(&f), r#"{"x":3,"y":30,"denied":"rm was denied","s":[{"name":"q"}],"i":"function t()"}"#);
    assert_eq!(f.calls, 5);
}

#[test]
fn calls_past_the_limit_are_refused() {
    let limits = Limits { max_calls: 3, ..Limits::default() };
    let f = run_with("for (let i = 0; i < 10; i++) await tools.call('t', {});", limits, |_| Ok(json!(1)));
    assert_eq!(failed(&f), &ScriptError::Calls { limit: 3 });
    assert_eq!(f.calls, 3);
}

#[test]
fn waiting_for_tools_does_not_count_against_the_time_limit() {
    let limits = Limits { timeout: Duration::from_millis(100), ..Limits::default() };
    let f = run_with("await tools.call('slow', {}); return 'done';", limits, |_| {
        std::thread::sleep(Duration::from_millis(300));
        Ok(json!(null))
    });
    assert_eq!(returned(&f), "\"done\"");
}

#[test]
fn awaiting_what_nothing_settles_ends_at_once() {
    let f = run("await new Promise(() => {}); return 1;");
    assert_eq!(failed(&f), &ScriptError::Stalled);
}

#[test]
fn dropping_the_run_cancels_the_script() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut run = start("await tools.call('t', {}); while (true) {}".into(), Limits::default()).unwrap();
        let call = run.calls.recv().await.unwrap();
        let done = std::mem::replace(&mut run.done, tokio::sync::oneshot::channel().1);
        drop(run);
        let f = tokio::time::timeout(Duration::from_secs(2), done).await.expect("ends at once").unwrap();
        assert_eq!(f.ended, Ended::Failed(ScriptError::Cancelled));
        drop(call);
    });
}
