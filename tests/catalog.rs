//! The MCP catalog over the real binary, against the project's fixture MCP server (its faults
//! chosen by flags): warm-up, sync, never-blocking reads beside hanging and crashing servers,
//! list_changed, persistence across restarts, a corrupt cache, pagination, eviction rules, and
//! no orphan process after the sidecar is SIGKILLed.
mod support;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

fn fixture() -> &'static str {
    fixture_mcp()
}

fn server(id: &str, args: &[&str]) -> Value {
    json!({"id": id, "name": id, "enabled": true, "transport": {"type": "stdio", "command": fixture(), "args": args}})
}

fn init(s: &mut Sidecar, cache_dir: Option<&std::path::Path>) {
    let mut p = json!({"timeouts": {"connectMs": 3000, "listMs": 3000}, "capabilities": {"hostTools": true}});
    if let Some(d) = cache_dir {
        p["cacheDir"] = json!(d.to_str().unwrap());
    }
    s.ok("initialize", p);
}

/// Request/response while notifications (catalog/didChange, $/progress) may arrive: they are
/// collected, not treated as errors.
fn call(s: &mut Sidecar, method: &str, params: Value, notes: &mut Vec<Value>) -> Value {
    s.call_noting(method, params, notes)
}

fn state(s: &mut Sidecar, id: &str) -> String {
    let st = s.ok_past_notes("catalog/status", json!({}));
    st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).map(|x| x["state"].as_str().unwrap().to_string()).unwrap_or_default()
}

fn wait_state(s: &mut Sidecar, id: &str, want: &str) {
    let start = Instant::now();
    while state(s, id) != want {
        assert!(start.elapsed() < TIMEOUT, "{id} never became {want}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn names(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn quit(mut s: Sidecar) {
    let mut notes = Vec::new();
    let r = call(&mut s, "shutdown", Value::Null, &mut notes);
    assert_eq!(r["result"], Value::Null);
    s.notify("exit", Value::Null);
    assert_eq!(s.wait().code(), Some(0));
}

#[test]
fn warm_up_sync_and_plan() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    // A cold server is cold, never waited for.
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("alpha", &["--tools", "3"]), server("beta-server", &["--tools", "2"])]}));
    wait_state(&mut s, "alpha", "ready");
    wait_state(&mut s, "beta-server", "ready");
    let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "alpha"}));
    assert_eq!(list["state"], "ready");
    let tools: Vec<&str> = list["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    // In the order the server listed them.
    assert_eq!(tools, ["echo", "stats", "tool_0", "tool_1", "tool_2"]);
    assert!(list["refreshedAt"].as_str().unwrap().ends_with('Z'));

    let ids = s.ok_past_notes("registry/resolveMcpToolIds", json!({"assistant": {"mcpMode": "auto"}}));
    let ids = names(&ids["toolIds"]);
    assert_eq!(ids.len(), 9);
    assert!(ids.contains(&"mcp__betaServer__tool_1".replace("tool_1", "tool1")), "{ids:?}");
    let manual = s.ok_past_notes("registry/resolveMcpToolIds", json!({"assistant": {"mcpMode": "manual", "mcpServerIds": ["alpha"]}}));
    assert_eq!(manual["toolIds"].as_array().unwrap().len(), 5);
    let none = s.ok_past_notes("registry/resolveMcpToolIds", json!({"assistant": {"mcpMode": "disabled"}}));
    assert_eq!(none["toolIds"], json!([]));

    let synced = s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": ids}));
    assert_eq!(names(&synced["registered"]).len(), 9);
    // Idempotent: nothing changes the second time.
    assert_eq!(s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": ids})), json!({"registered": [], "evicted": []}));
    let listed = s.ok_past_notes("registry/list", json!({"namespace": "mcp:alpha"}));
    assert_eq!(listed["entries"].as_array().unwrap().len(), 5);
    assert_eq!(listed["entries"][0]["source"], json!({"kind": "mcp", "serverId": "alpha", "toolName": "echo"}));
    assert_eq!(listed["entries"][0]["namespaceLabel"], "mcp:alpha");

    let plan = s.ok_past_notes("exposition/plan", json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 2000}));
    // Nine small tools cost less than the meta-tools would: all inline, counted per tool.
    assert_eq!(plan["decision"]["gate"], "metaOverhead", "{}", plan["tokens"]);
    assert_eq!(plan["tools"].as_array().unwrap().len(), 10, "nine and tool_result_read");
    assert_eq!(plan["tokens"]["perNamespace"]["mcp:alpha"]["tools"], 5);
    quit(s);
}

#[test]
fn hanging_and_crashing_servers_delay_nothing() {
    let mut s = Sidecar::spawn();
    let t = Instant::now();
    init(&mut s, None);
    let init_time = t.elapsed();
    s.ok_past_notes("catalog/setServers", json!({"servers": [
        server("hang", &["--hang-list"]),
        server("slow", &["--slow-start-ms", "60000"]),
        server("crash", &["--crash-on-call", "echo", "--tools", "1"]),
        server("good", &["--tools", "2"]),
    ]}));
    wait_state(&mut s, "good", "ready");
    // The healthy server is usable while the others are still stuck.
    assert_eq!(state(&mut s, "hang"), "connecting");
    assert_eq!(state(&mut s, "slow"), "connecting");
    assert_eq!(s.ok_past_notes("catalog/listTools", json!({"serverId": "good"}))["state"], "ready");
    assert_eq!(s.ok_past_notes("catalog/listTools", json!({"serverId": "hang"}))["state"], "cold");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let plan = s.ok_past_notes("exposition/plan", json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "include": ["deferred"]}));
    assert!(plan["placements"].as_object().unwrap().contains_key("mcp__good__tool0"), "{}", plan["placements"]);
    assert_eq!(state(&mut s, "slow"), "connecting", "the plan was answered while a server was still starting");

    // A crash mid-call: the call fails readably, the server goes to error, the others go on.
    wait_state(&mut s, "crash", "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__crash__echo", "arguments": {"x": 1}}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(s.ok_past_notes("catalog/listTools", json!({"serverId": "good"}))["state"], "ready");
    // The crashed server keeps its last-known-good list, so its entries stay.
    let crash_list = s.ok_past_notes("catalog/listTools", json!({"serverId": "crash"}));
    assert_eq!(crash_list["tools"].as_array().unwrap().len(), 3);
    let again = s.ok_past_notes("registry/syncMcp", json!({}));
    assert!(names(&again["evicted"]).iter().all(|n| !n.starts_with("mcp__crash__")), "{again}");
    eprintln!("initialize answered in {init_time:?}");
    quit(s);
}

#[test]
fn list_changed_reaches_the_registry_after_the_next_sync() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    // `trust: auto`: a tool that appears is taken as it is (pinned, it would be held; tests/pins.rs).
    let mut live = server("live", &["--tools", "2", "--change-after-ms", "700"]);
    live["trust"] = json!("auto");
    s.ok_past_notes("catalog/setServers", json!({"servers": [live]}));
    wait_state(&mut s, "live", "ready");
    let first = s.ok_past_notes("registry/syncMcp", json!({}));
    assert!(names(&first["registered"]).contains(&"mcp__live__tool0".to_string()));
    // Wait for the server's tools/list_changed to be picked up.
    let start = Instant::now();
    loop {
        let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "live"}));
        if list["tools"].as_array().unwrap().iter().any(|t| t["name"] == "tool_added") {
            break;
        }
        assert!(start.elapsed() < TIMEOUT, "list_changed never refreshed the list");
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(second, json!({"registered": ["mcp__live__toolAdded"], "evicted": ["mcp__live__tool0"]}));
    quit(s);
}

#[test]
fn did_change_is_notified_and_not_for_an_unchanged_refresh() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    let mut notes = Vec::new();
    call(&mut s, "catalog/setServers", json!({"servers": [server("n", &["--tools", "1"])]}), &mut notes);
    let start = Instant::now();
    while !notes.iter().any(|n| n["method"] == "catalog/didChange" && n["params"]["status"] == "ready") {
        assert!(start.elapsed() < TIMEOUT);
        if let Some(m) = s.try_recv(Duration::from_millis(100)) {
            notes.push(m);
        }
    }
    let ready = notes.iter().find(|n| n["method"] == "catalog/didChange" && n["params"]["status"] == "ready").unwrap();
    assert_eq!(ready["params"], json!({"serverId": "n", "status": "ready", "toolCount": 3}));
    assert!(notes.iter().any(|n| n["method"] == "$/progress"), "warming reports progress");
    let mut after = Vec::new();
    let r = call(&mut s, "catalog/refresh", json!({"serverId": "n"}), &mut after);
    assert_eq!(r["result"]["state"], "ready");
    while let Some(m) = s.try_recv(Duration::from_millis(200)) {
        after.push(m);
    }
    assert!(!after.iter().any(|n| n["method"] == "catalog/didChange"), "an unchanged refresh is silent: {after:?}");
    quit(s);
}

#[test]
fn pagination_is_followed() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("paged", &["--tools", "30", "--page-size", "7"])]}));
    wait_state(&mut s, "paged", "ready");
    let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "paged"}));
    assert_eq!(list["tools"].as_array().unwrap().len(), 32);
    quit(s);
}

/// A first run that leaves server `cached`'s list (the fixture's `--tools 4`) in `cache`.
/// The server is one transport (so one cache identity) whose flags the test switches by
/// writing `flags`. Returns its config and that list as the first run served it.
fn first_run(flags: &std::path::Path, cache: &std::path::Path) -> (Value, Value) {
    let script = format!("exec '{}' $(cat '{}')", fixture(), flags.display());
    let cfg = json!({"id": "cached", "name": "Cached", "enabled": true, "transport": {"type": "stdio", "command": "sh", "args": ["-c", script]}});
    std::fs::write(flags, "--tools 4").unwrap();
    let mut s = Sidecar::spawn();
    init(&mut s, Some(cache));
    s.ok_past_notes("catalog/setServers", json!({"servers": [cfg.clone()]}));
    wait_state(&mut s, "cached", "ready");
    let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "cached"}));
    quit(s);
    (cfg, list)
}

#[test]
fn a_restarted_sidecar_answers_from_its_persisted_cache_and_survives_a_corrupt_one() {
    let dir = tempfile::tempdir().unwrap();
    let (flags, cache) = (dir.path().join("flags"), dir.path().join("cache"));
    let (cfg, _) = first_run(&flags, &cache);
    // One list file per server (the pins are in the state database beside them).
    let files: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("mcp-"))
        .collect();
    assert_eq!(files.len(), 1, "one file per server: {files:?}");

    // Restart with the server now hanging: the tools are there at once, from disk.
    std::fs::write(&flags, "--hang-list").unwrap();
    let mut s = Sidecar::spawn();
    init(&mut s, Some(&cache));
    s.ok_past_notes("catalog/setServers", json!({"servers": [cfg.clone()]}));
    // The file is read off the async threads: the list shows up as soon as it is loaded.
    let start = Instant::now();
    let list = loop {
        let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "cached"}));
        if list["state"] != "cold" || start.elapsed() > TIMEOUT {
            break list;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(list["state"], "ready");
    assert_eq!(list["tools"].as_array().unwrap().len(), 6);
    assert_ne!(state(&mut s, "cached"), "ready", "the server itself has not answered");
    let synced = s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(names(&synced["registered"]).len(), 6);
    quit(s);

    // A corrupt file is ignored (logged), never fatal, and rebuilt.
    std::fs::write(&files[0], b"{\"version\": 1, \"tools\": [trunc").unwrap();
    std::fs::write(&flags, "--tools 1").unwrap();
    let mut s = Sidecar::spawn();
    init(&mut s, Some(&cache));
    s.ok_past_notes("catalog/setServers", json!({"servers": [cfg]}));
    let list = s.ok_past_notes("catalog/listTools", json!({"serverId": "cached"}));
    assert_ne!(list["tools"].as_array().unwrap().len(), 6, "the corrupt file was not trusted");
    wait_state(&mut s, "cached", "ready");
    assert_eq!(s.ok_past_notes("catalog/listTools", json!({"serverId": "cached"}))["tools"].as_array().unwrap().len(), 3);
    quit(s);
    let rebuilt = std::fs::read_to_string(&files[0]).unwrap();
    assert!(serde_json::from_str::<Value>(&rebuilt).is_ok(), "rewritten atomically as valid JSON");
}

/// A host that plans at once after a restart: `catalog/setServers`, `catalog/listTools`,
/// `registry/syncMcp` and `exposition/plan` in one write, the server slow to start. The list
/// persisted by the first run is served from the first answer on (read before setServers
/// answers), not `cold` until a background read lands.
#[test]
fn a_restarted_sidecar_serves_its_persisted_list_from_the_first_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (flags, cache) = (dir.path().join("flags"), dir.path().join("cache"));
    let (cfg, first) = first_run(&flags, &cache);

    std::fs::write(&flags, "--tools 4 --slow-start-ms 2000").unwrap();
    let mut s = Sidecar::spawn();
    init(&mut s, Some(&cache));
    let plan = json!({"scope": {"settings": {"enableWebSearch": false}, "knowledgeBaseIds": []}, "contextWindow": 2000});
    let requests = [
        ("catalog/setServers", json!({"servers": [cfg]})),
        ("catalog/listTools", json!({"serverId": "cached"})),
        ("registry/syncMcp", json!({})),
        ("exposition/plan", plan),
        ("catalog/status", json!({})),
    ];
    let mut bytes = Vec::new();
    for (i, (method, params)) in requests.iter().enumerate() {
        bytes.extend(frame(&json!({"jsonrpc": "2.0", "id": 100 + i, "method": method, "params": params}).to_string()));
    }
    s.send_raw(&bytes);
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < requests.len() {
        let m = s.recv();
        if let (Some(id), None) = (m.get("id").and_then(Value::as_u64), m.get("method")) {
            answers.insert(id, m.get("result").cloned().unwrap_or_else(|| panic!("request {id} failed: {m}")));
        }
    }
    let list = &answers[&101];
    assert_eq!(list["state"], "ready", "{list}");
    assert_eq!(list["tools"], first["tools"], "the persisted list, whole");
    assert_eq!(list["refreshedAt"], first["refreshedAt"], "as of the first run's refresh");
    let status = answers[&104]["servers"][0].clone();
    assert_eq!(status["cached"], true, "{status}");
    assert_ne!(status["state"], "ready", "the server itself has not answered yet: {status}");
    let registered = names(&answers[&102]["registered"]);
    assert_eq!(registered.len(), 6, "{registered:?}");
    let planned: Vec<String> = answers[&103]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    for name in &registered {
        assert!(planned.contains(name), "{name} is not in the plan: {planned:?}");
    }
    quit(s);
}

#[test]
fn eviction_rules() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    let a = server("a", &["--tools", "1"]);
    let b = server("b", &["--tools", "1"]);
    s.ok_past_notes("registry/register", json!({"entries": [{"name": "host_tool", "namespace": "h", "description": "d", "inputSchema": {"type": "object"}}]}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [a.clone(), b.clone()]}));
    wait_state(&mut s, "a", "ready");
    wait_state(&mut s, "b", "ready");
    assert_eq!(names(&s.ok_past_notes("registry/syncMcp", json!({}))["registered"]).len(), 6);

    // A selection evicts nothing (issue 52: another conversation's selection may need the
    // rest; each request's scope.mcpToolIds narrows): its server's and the others' entries stay.
    let r = s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": ["mcp__a__tool0"]}));
    assert_eq!(r, json!({"registered": [], "evicted": []}));
    assert_eq!(s.ok_past_notes("registry/list", json!({"namespace": "mcp:a"}))["entries"].as_array().unwrap().len(), 3);
    assert_eq!(s.ok_past_notes("registry/list", json!({"namespace": "mcp:b"}))["entries"].as_array().unwrap().len(), 3);
    // An empty selection registers nothing.
    assert_eq!(s.ok_past_notes("registry/syncMcp", json!({"selectedToolIds": []})), json!({"registered": [], "evicted": []}));

    // A disabled server's entries go; a removed server's too; host entries never.
    let mut b_off = b.clone();
    b_off["enabled"] = json!(false);
    s.ok_past_notes("catalog/setServers", json!({"servers": [a.clone(), b_off]}));
    let r = s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(names(&r["evicted"]), ["mcp__b__echo", "mcp__b__stats", "mcp__b__tool0"]);
    assert_eq!(state(&mut s, "b"), "disabled");
    s.ok_past_notes("catalog/setServers", json!({"servers": []}));
    // Before the next sync the entry is still there, but a call never reaches a removed server.
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__a__echo", "arguments": {}}));
    assert_eq!(r["isError"], true);
    assert!(r["output"]["value"].as_str().unwrap().contains("unknown MCP server: a"), "{r}");
    let r = s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(names(&r["evicted"]), ["mcp__a__echo", "mcp__a__stats", "mcp__a__tool0"]);
    assert_eq!(names(&s.ok_past_notes("registry/list", json!({"namespace": "h"}))["entries"].as_array().unwrap().iter().map(|e| e["name"].clone()).collect::<Value>()), ["host_tool"]);

    // Per-server approvalTools make entries approval-gated (never deferred); disabledTools hide them.
    let mut c = server("c", &["--tools", "2"]);
    c["approvalTools"] = json!(["tool_0"]);
    c["disabledTools"] = json!(["tool_1"]);
    s.ok_past_notes("catalog/setServers", json!({"servers": [c]}));
    wait_state(&mut s, "c", "ready");
    let r = s.ok_past_notes("registry/syncMcp", json!({}));
    assert_eq!(names(&r["registered"]), ["mcp__c__echo", "mcp__c__stats", "mcp__c__tool0"]);
    let l = s.ok_past_notes("registry/list", json!({"namespace": "mcp:c"}));
    let gated = l["entries"].as_array().unwrap().iter().find(|e| e["name"] == "mcp__c__tool0").unwrap().clone();
    assert_eq!((gated["approval"].clone(), gated["defer"].clone()), (json!(true), json!("never")));
    let echo = l["entries"].as_array().unwrap().iter().find(|e| e["name"] == "mcp__c__echo").unwrap().clone();
    assert_eq!((echo["approval"].clone(), echo["defer"].clone()), (json!(false), json!("auto")));
    let all = s.ok_past_notes("catalog/listTools", json!({"serverId": "c", "includeDisabled": true}));
    assert_eq!(all["tools"].as_array().unwrap().len(), 4);
    quit(s);
}

#[test]
fn unknown_servers_and_bad_configs_are_clear_errors() {
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    let mut notes = Vec::new();
    let r = call(&mut s, "catalog/listTools", json!({"serverId": "nope"}), &mut notes);
    assert_eq!(r["error"]["code"], -32012);
    assert_eq!(r["error"]["data"]["serverId"], "nope");
    let r = call(&mut s, "catalog/setServers", json!({"servers": [server("x", &[]), server("x", &[])]}), &mut notes);
    assert_eq!(r["error"]["code"], -32602);
    let r = call(&mut s, "catalog/setServers", json!({"servers": [{"id": "y", "name": "y", "transport": {"type": "carrier-pigeon"}}]}), &mut notes);
    assert_eq!(r["error"]["code"], -32602);
    // A command that does not exist: an error status with a message, no crash, no secret.
    let bad = json!({"id": "missing", "name": "m", "enabled": true, "transport": {"type": "stdio", "command": "/nonexistent/server", "env": {"API_KEY": "sk-very-secret"}}});
    s.ok_past_notes("catalog/setServers", json!({"servers": [bad]}));
    wait_state(&mut s, "missing", "error");
    let st = s.ok_past_notes("catalog/status", json!({}));
    let text = st.to_string();
    assert!(text.contains("/nonexistent/server") || text.contains("spawn"), "{text}");
    assert!(!text.contains("sk-very-secret"));
    quit(s);
}

#[test]
fn no_mcp_server_survives_a_sigkilled_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("p", &["--pid-file", pid_file.to_str().unwrap()])]}));
    wait_state(&mut s, "p", "ready");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| !st.split_whitespace().nth(2).is_some_and(|state| state == "Z"))
    };
    assert!(alive(pid));
    unsafe { libc::kill(s.child.id() as i32, libc::SIGKILL) };
    s.wait();
    let start = Instant::now();
    while alive(pid) {
        assert!(start.elapsed() < Duration::from_secs(10), "MCP server {pid} outlived the sidecar");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn init_with(s: &mut Sidecar, params: Value) {
    s.ok("initialize", params);
}

fn pid_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|st| !st.split_whitespace().nth(2).is_some_and(|state| state == "Z"))
}

fn read_pid(path: &std::path::Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(start.elapsed() < TIMEOUT, "no pid in {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Servers that ignore stdin EOF and SIGTERM, started directly and behind a shell that forks
/// (no `exec`): none survives a SIGKILLed sidecar. The first dies by PDEATHSIG, the second
/// (a grandchild, which PDEATHSIG does not reach) by the reaper killing its process group.
#[test]
fn stubborn_mcp_servers_die_with_a_sigkilled_sidecar_even_behind_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let direct = dir.path().join("direct");
    let nested = dir.path().join("nested");
    let stubborn = ["--ignore-eof", "--ignore-sigterm", "--pid-file"];
    let script = format!("'{}' --ignore-eof --ignore-sigterm --pid-file '{}'; exit $?", fixture(), nested.display());
    let mut s = Sidecar::spawn();
    init(&mut s, None);
    s.ok_past_notes("catalog/setServers", json!({"servers": [
        server("direct", &[stubborn[0], stubborn[1], stubborn[2], direct.to_str().unwrap()]),
        {"id": "nested", "name": "nested", "transport": {"type": "stdio", "command": "sh", "args": ["-c", script]}},
    ]}));
    wait_state(&mut s, "direct", "ready");
    wait_state(&mut s, "nested", "ready");
    let pids = [read_pid(&direct), read_pid(&nested)];
    assert!(pids.iter().all(|p| pid_alive(*p)));
    // The nested server really is a grandchild: its parent is the shell, not the sidecar.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pids[1])).unwrap();
    let ppid: u32 = stat.rsplit(')').next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_ne!(ppid, s.child.id(), "the shell exec'd the server; this test needs a grandchild");
    unsafe { libc::kill(s.child.id() as i32, libc::SIGKILL) };
    s.wait();
    let start = Instant::now();
    while pids.iter().any(|p| pid_alive(*p)) {
        if start.elapsed() > Duration::from_secs(10) {
            let survivors: Vec<_> = pids.iter().filter(|p| pid_alive(**p)).copied().collect();
            for p in &survivors {
                unsafe { libc::kill(*p, libc::SIGKILL) };
            }
            panic!("MCP servers {survivors:?} outlived the sidecar (direct {}, nested {})", pids[0], pids[1]);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A response over the message limit fails its request at once, naming the limit, instead of
/// being dropped while the request waits out its timeout (callMs / listMs are 60 s here, far
/// beyond the harness's read deadline).
#[test]
fn oversized_mcp_messages_fail_fast_and_name_the_limit() {
    let mut s = Sidecar::spawn();
    // No token budget: the byte limit alone is under test (tests/result_budget.rs has the budget).
    init_with(&mut s, json!({"timeouts": {"connectMs": 20000, "listMs": 60000, "callMs": 60000},
        "mcp": {"maxResultBytes": 100000}, "results": {"maxTokens": 0}}));
    // 17 MiB: over the default limit (16 MiB). The list of 20,000 tools goes to a sidecar-wide
    // limit lowered to 1 MB below (a second sidecar), so it stays cheap.
    s.ok_past_notes("catalog/setServers", json!({"servers": [
        server("huge", &["--big-result-bytes", "17825792"]),
        server("large", &["--big-result-bytes", "300000"]),
    ]}));
    wait_state(&mut s, "huge", "ready");
    wait_state(&mut s, "large", "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__huge__big", "arguments": {}}));
    assert_eq!(r["isError"], true, "{r}");
    let text = r["output"]["value"].as_str().unwrap();
    assert!(text.contains("over the limit of 16777216 bytes (maxMessageBytes)"), "{text}");
    // The session survives: the next call on the same server answers.
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__huge__echo", "arguments": {"a": 1}}));
    assert_eq!(r["isError"], false, "{r}");

    // Under the message limit but over maxResultBytes: cut, with a note saying so.
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__large__big", "arguments": {}}));
    assert_eq!(r["isError"], false, "{r}");
    let text = r["output"]["value"].as_str().unwrap();
    assert!(text.ends_with("\n[... truncated: 100000 of 300000 bytes shown]"), "{}", &text[text.len().saturating_sub(200)..]);
    assert!(text.starts_with("0123456789abcdef") && text.len() < 100_100, "{}", text.len());
    quit(s);

    let mut s = Sidecar::spawn();
    init_with(&mut s, json!({"timeouts": {"connectMs": 20000, "listMs": 60000}, "mcp": {"maxMessageBytes": 1000000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("many", &["--tools", "20000"]), server("few", &["--tools", "3"])]}));
    wait_state(&mut s, "few", "ready");
    wait_state(&mut s, "many", "error");
    let st = s.ok_past_notes("catalog/status", json!({}));
    let many = st["servers"].as_array().unwrap().iter().find(|x| x["id"] == "many").unwrap().clone();
    assert!(many["error"].as_str().unwrap().contains("over the limit of 1000000 bytes (maxMessageBytes)"), "{many}");
    quit(s);
}

fn vm_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key} in {status}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// 200 MB of stderr without a newline: the sidecar reads it in bounded chunks (its peak RSS
/// stays far below the flood) and goes on answering.
#[test]
fn an_mcp_server_flooding_stderr_does_not_grow_the_sidecar() {
    let mut s = Sidecar::spawn();
    init_with(&mut s, json!({"timeouts": {"connectMs": 60000, "listMs": 60000}}));
    // The flood is written before the server answers `initialize`, so `ready` means read.
    s.ok_past_notes("catalog/setServers", json!({"servers": [server("loud", &["--stderr-flood-bytes", "200000000", "--tools", "1"])]}));
    wait_state(&mut s, "loud", "ready");
    let peak_kb = vm_kb(s.child.id(), "VmHWM:");
    assert!(peak_kb < 100 * 1024, "sidecar peak RSS {peak_kb} kB after a 200 MB stderr line");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__loud__echo", "arguments": {"still": "here"}}));
    assert_eq!(r["isError"], false, "{r}");
    quit(s);
}

fn list_count(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
}

/// Reads of a cold server while its (slow) warm-up refresh runs start no other `tools/list`;
/// explicit refreshes asked at once share one; a server warmed with an empty list is not
/// cold, so reading it starts nothing.
#[test]
fn refreshes_are_single_flight_and_reads_start_none() {
    let dir = tempfile::tempdir().unwrap();
    let slow = dir.path().join("slow");
    let empty = dir.path().join("empty");
    let mut s = Sidecar::spawn();
    init_with(&mut s, json!({"timeouts": {"connectMs": 20000, "listMs": 60000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [
        server("slow", &["--slow-list-ms", "3000", "--list-count-file", slow.to_str().unwrap()]),
        server("empty", &["--empty-list", "--list-count-file", empty.to_str().unwrap()]),
    ]}));
    let mut cold_reads = 0;
    while list_count(&slow) == 0 || cold_reads < 5 {
        let l = s.ok_past_notes("catalog/listTools", json!({"serverId": "slow"}));
        assert_eq!(l["state"], "cold", "the warm-up list takes 3 s; this machine is too slow for the test");
        cold_reads += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    // Five explicit refreshes at once, while the warm-up refresh is still listing.
    let ids: Vec<Value> = (0..5)
        .map(|_| {
            let id = s.next_id();
            s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "catalog/refresh", "params": {"serverId": "slow"}}));
            json!(id)
        })
        .collect();
    let mut answered = 0;
    while answered < ids.len() {
        let m = s.recv();
        if m.get("method").is_none() && ids.contains(&m["id"]) {
            assert_eq!(m["result"]["state"], "ready", "{m}");
            answered += 1;
        }
    }
    assert_eq!(list_count(&slow), 1, "one tools/list for the warm-up, the cold reads and five refreshes");
    wait_state(&mut s, "empty", "ready");
    for _ in 0..5 {
        let l = s.ok_past_notes("catalog/listTools", json!({"serverId": "empty"}));
        assert_eq!((l["state"].as_str(), l["tools"].as_array().unwrap().len()), (Some("ready"), 0));
        s.ok_past_notes("catalog/listTools", json!({"serverId": "slow"}));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!((list_count(&slow), list_count(&empty)), (1, 1), "reads of a warmed server start no refresh");
    // A refresh asked after the last one finished is a new one.
    s.ok_past_notes("catalog/refresh", json!({"serverId": "slow"}));
    assert_eq!(list_count(&slow), 2);
    quit(s);
}

/// A server stuck in its handshake holds no lock that others need: status, reads, another
/// server's refresh and calls answer; and restarting the stuck server abandons its connect at
/// once instead of waiting it out (connectMs is 60 s here, beyond the harness's read deadline).
#[test]
fn a_hanging_connect_delays_no_one_and_a_restart_abandons_it() {
    let dir = tempfile::tempdir().unwrap();
    let flags = dir.path().join("flags");
    std::fs::write(&flags, "--slow-start-ms 600000").unwrap();
    let script = format!("exec '{}' $(cat '{}')", fixture(), flags.display());
    let mut s = Sidecar::spawn();
    init_with(&mut s, json!({"timeouts": {"connectMs": 60000, "listMs": 60000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [
        {"id": "stuck", "name": "stuck", "transport": {"type": "stdio", "command": "sh", "args": ["-c", script]}},
        server("good", &["--tools", "2"]),
    ]}));
    wait_state(&mut s, "good", "ready");
    assert_eq!(state(&mut s, "stuck"), "connecting");
    assert_eq!(s.ok_past_notes("catalog/listTools", json!({"serverId": "stuck"}))["state"], "cold");
    assert_eq!(s.ok_past_notes("catalog/refresh", json!({"serverId": "good"}))["state"], "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": "mcp__good__echo", "arguments": {}}));
    assert_eq!(r["isError"], false, "{r}");
    // The next start of `stuck` is quick: the restart must not wait for the first one.
    std::fs::write(&flags, "--tools 1").unwrap();
    let st = s.ok_past_notes("catalog/restart", json!({"serverId": "stuck"}));
    assert_eq!((st["state"].as_str(), st["toolCount"].as_u64()), (Some("ready"), Some(3)), "{st}");
    quit(s);
}
