//! Stdio servers in a sandbox (issue 40), through the sidecar: a confined fixture server tries
//! what a hostile one would (the user's keys, cloud credentials and browser cookies, a dotfile,
//! the network, 10,000 processes, 4 GiB, toolreg's environ, a signal to toolreg or to another
//! server) and is refused each time, visibly, while toolreg and the other servers carry on; a
//! server under `sandbox: false` does the same things unhindered (so the attempts are real);
//! a sandbox the kernel cannot give fails closed; a server that dies of its sandbox says so.
//! The gateway (`toolreg mcp`) confines its servers alike.
mod support;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use support::*;

/// A HOME holding what a user's does: an SSH key, AWS credentials, a browser's cookies and a
/// `.bashrc`. Made outside /tmp (writable in the default profile) so only the home rule decides.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        for (file, text) in [
            (".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY----- sshsecret"),
            (".aws/credentials", "[default]\naws_secret_access_key = awssecret"),
            (".config/google-chrome/Default/Cookies", "SQLite format 3 cookiesecret"),
            (".bashrc", "# the user's own\n"),
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Home { dir }
    }
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }
    pub fn str(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }
}

fn status(s: &mut Sidecar, id: &str) -> Value {
    let st = s.ok_past_notes("catalog/status", json!({}));
    st["servers"].as_array().unwrap().iter().find(|x| x["id"] == id).unwrap().clone()
}

fn wait_state(s: &mut Sidecar, id: &str, state: &str) -> Value {
    let start = Instant::now();
    loop {
        let me = status(s, id);
        if me["state"] == state {
            return me;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{id} not {state}: {me}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Calls `server`'s `tool`; the result's text and whether it is an error.
fn call(s: &mut Sidecar, server: &str, tool: &str, args: Value) -> (String, bool) {
    let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{server}__{}", camel(tool)), "arguments": args}));
    let text = r["output"]["value"].as_str().map(str::to_owned).unwrap_or_else(|| r["output"]["value"].to_string());
    (text, r["isError"] == true)
}

fn refused(s: &mut Sidecar, server: &str, tool: &str, args: Value, why: &str) -> String {
    let (text, is_error) = call(s, server, tool, args.clone());
    assert!(is_error && text.contains("refused") && text.contains(why), "{tool} {args}: {text}");
    text
}

fn escape_server(id: &str, sandbox: Value, extra: &[&str]) -> Value {
    let mut args = vec!["--escape"];
    args.extend(extra);
    json!({"id": id, "name": id, "transport": {"type": "stdio", "command": fixture_mcp(), "args": args}, "sandbox": sandbox})
}

#[test]
fn a_confined_server_is_refused_every_escape_and_harms_no_one() {
    let home = Home::new();
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("other.pid");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut s = Sidecar::spawn_with(&[], &[("HOME", home.str())]);
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [
        escape_server("jail", json!({"network": false}), &[]),
        escape_server("other", json!(true), &["--pid-file", pid_file.to_str().unwrap()]),
        escape_server("free", json!(false), &[]),
    ]}));
    let jail = wait_state(&mut s, "jail", "ready");
    let sandbox = &jail["sandbox"];
    assert_eq!((sandbox["state"].as_str(), sandbox["network"].as_bool()), (Some("enforced"), Some(false)), "{jail}");
    assert_eq!(sandbox["limits"], json!({"memoryMb": 2048, "processes": 256, "openFiles": 4096}), "{jail}");
    assert_eq!(sandbox["coreDumps"], false, "{jail}");
    assert!(sandbox["writable"].as_array().unwrap().contains(&json!("/tmp")), "{jail}");
    let free = wait_state(&mut s, "free", "ready");
    assert_eq!(free["sandbox"]["state"], "off", "{free}");
    assert!(free["sandbox"]["notes"][0].as_str().unwrap().contains("sandbox: false"), "{free}");
    wait_state(&mut s, "other", "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));

    // The user's secrets: refused, and nothing of them in the answer.
    for file in [".ssh/id_ed25519", ".aws/credentials", ".config/google-chrome/Default/Cookies"] {
        let text = refused(&mut s, "jail", "read_file", json!({"path": home.path(file)}), "Permission denied");
        assert!(!text.contains("secret"), "{text}");
    }
    refused(&mut s, "jail", "write_file", json!({"path": home.path(".bashrc")}), "Permission denied");
    assert_eq!(std::fs::read_to_string(home.path(".bashrc")).unwrap(), "# the user's own\n");
    // The network: a listener the test owns is never reached.
    refused(&mut s, "jail", "connect", json!({"addr": addr}), "connect");
    assert!(matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock), "the confined server connected");
    // The machine: processes and memory run out at the limits, not at the machine's.
    // Not by becoming root again either (when toolreg runs as root, its servers' real uid is
    // another one, so that the kernel counts their processes).
    refused(&mut s, "jail", "become_root", json!({}), "Operation not permitted");
    let forked = refused(&mut s, "jail", "fork_many", json!({"count": 10_000}), "Resource temporarily unavailable");
    let started: usize = forked.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(started < 256, "{forked}");
    refused(&mut s, "jail", "alloc", json!({"mib": 4096}), "allocating 4096 MiB");
    // toolreg itself: its environ and memory, a signal; and another server's process.
    let toolreg = s.child.id();
    refused(&mut s, "jail", "read_environ", json!({}), "Permission denied");
    refused(&mut s, "jail", "read_file", json!({"path": format!("/proc/{toolreg}/mem")}), "Permission denied");
    refused(&mut s, "jail", "signal", json!({}), "Operation not permitted");
    refused(&mut s, "jail", "ptrace", json!({}), "Operation not permitted");
    let other_pid: i64 = wait_for_file(&pid_file).trim().parse().unwrap();
    refused(&mut s, "jail", "signal", json!({"pid": other_pid}), "Operation not permitted");
    refused(&mut s, "jail", "ptrace", json!({"pid": other_pid}), "Operation not permitted");
    refused(&mut s, "other", "read_environ", json!({}), "Permission denied");

    // Unharmed: toolreg answers, every server is ready and still serves.
    for id in ["jail", "other", "free"] {
        assert_eq!(status(&mut s, id)["state"], "ready", "{id}");
    }
    assert_eq!(call(&mut s, "other", "echo", json!({"still": "here"})), (r#"{"still":"here"}"#.to_owned(), false));
    assert_eq!(call(&mut s, "jail", "whoami", json!({})).1, false);

    // The same attempts unconfined succeed: the refusals above are the sandbox's.
    let (text, is_error) = call(&mut s, "free", "read_file", json!({"path": home.path(".ssh/id_ed25519")}));
    assert!(!is_error && text.contains("sshsecret"), "{text}");
    let (text, is_error) = call(&mut s, "free", "connect", json!({"addr": addr}));
    assert!(!is_error, "{text}");
    let (text, is_error) = call(&mut s, "free", "read_environ", json!({}));
    assert!(!is_error, "{text}");
    s.shutdown();
}

#[test]
fn a_sandbox_the_kernel_cannot_give_fails_closed_and_the_default_says_it_is_off() {
    let home = Home::new();
    // As on a kernel without Landlock.
    let mut s = Sidecar::spawn_with(&[], &[("HOME", home.str()), ("TOOLREG_LANDLOCK_ABI_MAX", "0")]);
    s.ok("initialize", json!({}));
    let pid_file = home.path("asked.pid");
    let asked = escape_server("asked", json!(true), &["--pid-file", pid_file.to_str().unwrap()]);
    let mut default = escape_server("default", json!(null), &[]);
    default.as_object_mut().unwrap().remove("sandbox");
    s.ok("catalog/setServers", json!({"servers": [asked, default]}));
    let asked = wait_state(&mut s, "asked", "error");
    let error = asked["error"].as_str().unwrap();
    assert!(error.contains("sandbox refused") && error.contains("no Landlock"), "{asked}");
    assert_eq!(asked["sandbox"]["state"], "refused", "{asked}");
    assert!(!pid_file.exists(), "the server was started");
    let default = wait_state(&mut s, "default", "ready");
    assert_eq!(default["sandbox"]["state"], "off", "{default}");
    assert!(default["sandbox"]["notes"].to_string().contains("no Landlock"), "{default}");
    s.shutdown();
}

#[test]
fn a_server_that_dies_of_its_sandbox_says_what_was_denied() {
    let home = Home::new();
    let key = home.path(".ssh/id_ed25519");
    let mut s = Sidecar::spawn_with(&[], &[("HOME", home.str())]);
    s.ok("initialize", json!({}));
    // A server that needs a file the default profile keeps closed.
    let script = format!("cat \"$HOME/.ssh/id_ed25519\" >/dev/null && exec {}", fixture_mcp());
    s.ok("catalog/setServers", json!({"servers": [
        {"id": "needy", "name": "needy", "transport": {"type": "stdio", "command": "/bin/sh", "args": ["-c", script]}, "sandbox": true}
    ]}));
    let needy = wait_state(&mut s, "needy", "error");
    let error = needy["error"].as_str().unwrap();
    assert!(error.contains("denied by its sandbox") && error.contains(&format!("{}: Permission denied", key.display())), "{needy}");
    // Widened for that one path, it starts (the fixture's own path, named in the script, is open).
    s.ok("catalog/setServers", json!({"servers": [
        {"id": "needy", "name": "needy", "transport": {"type": "stdio", "command": "/bin/sh", "args": ["-c", script]},
         "sandbox": {"read": ["~/.ssh/id_ed25519"]}}
    ]}));
    let needy = wait_state(&mut s, "needy", "ready");
    assert!(needy["sandbox"]["readable"].as_array().unwrap().contains(&json!("~/.ssh/id_ed25519")), "{needy}");
    s.shutdown();
}

#[test]
fn the_gateway_confines_its_servers_alike() {
    let home = Home::new();
    let config = json!({"servers": [escape_server("jail", json!({"network": false}), &[])], "gateway": {"defer": "never"}});
    let path = support::gateway::write_config(home.dir.path(), &config);
    let mut c = support::gateway::spawn(&path, &[], &[("HOME", home.str())]);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "{r}");
    c.notify("notifications/initialized", json!({}));
    let mut refused = |tool: &str, args: Value, why: &str| {
        let r = c.call(&format!("mcp__jail__{}", camel(tool)), args.clone());
        let text = support::gateway::text(&r);
        assert!(r["isError"] == true && text.contains("refused") && text.contains(why), "{tool} {args}: {r}");
    };
    refused("read_file", json!({"path": home.path(".ssh/id_ed25519")}), "Permission denied");
    refused("write_file", json!({"path": home.path(".bashrc")}), "Permission denied");
    refused("read_environ", json!({}), "Permission denied");
    refused("signal", json!({}), "Operation not permitted");
    // The gateway lives on and the server still serves.
    let r = c.call("mcp__jail__echo", json!({"after": "all that"}));
    assert_eq!(r["isError"], false, "{r}");
    assert!(c.finish().success());
}

#[test]
fn a_server_killed_by_its_limits_mid_call_says_so() {
    let home = Home::new();
    let mut s = Sidecar::spawn_with(&[], &[("HOME", home.str())]);
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [escape_server("hog", json!({"limits": {"cpuSeconds": 1}}), &[])]}));
    let hog = wait_state(&mut s, "hog", "ready");
    assert_eq!(hog["sandbox"]["limits"]["cpuSeconds"], 1, "{hog}");
    s.ok_past_notes("registry/syncMcp", json!({}));
    // The kernel stops it at one CPU second: the answer says so, not a bare "connection closed".
    let r = s.request("tool/invoke", json!({"name": "mcp__hog__spin", "arguments": {"seconds": 60}}));
    let text = r.to_string();
    assert!(text.contains("SIGXCPU") && text.contains("it ran in a sandbox") && text.contains("1 CPU seconds"), "{r}");
    s.shutdown();
}

#[test]
fn the_process_limit_is_each_servers_own() {
    // Two confined servers holding 150 processes each at once: 300 together, over one server's
    // 256, so a limit that counted them together (or counted the user's other processes) would
    // refuse one of them.
    let home = Home::new();
    let mut s = Sidecar::spawn_with(&[], &[("HOME", home.str())]);
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [escape_server("a", json!(true), &[]), escape_server("b", json!(true), &[])]}));
    wait_state(&mut s, "a", "ready");
    wait_state(&mut s, "b", "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));
    let ids: Vec<i64> = ["a", "b"]
        .iter()
        .map(|server| {
            let id = s.next_id();
            let name = format!("mcp__{server}__forkMany");
            s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tool/invoke", "params": {"name": name, "arguments": {"count": 150, "hold_ms": 3000}}}));
            id
        })
        .collect();
    // The answers come in whichever order the calls finish.
    let mut answered = Vec::new();
    while answered.len() < ids.len() {
        let m = s.recv();
        if m.get("id").is_some_and(|id| ids.iter().any(|i| id == &json!(i))) {
            assert_eq!(m["result"]["output"]["value"], "started 150 processes", "{m}");
            answered.push(m["id"].clone());
        }
    }
    s.shutdown();
}
