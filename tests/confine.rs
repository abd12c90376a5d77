//! Stdio servers in a sandbox (issue 40), through the sidecar: a confined fixture server tries
//! what a hostile one would (the user's keys, cloud credentials and browser cookies, a dotfile,
//! the network, 10,000 processes, 4 GiB, toolreg's environ, a signal to toolreg or to another
//! server) and is refused each time, visibly, while toolreg and the other servers carry on; a
//! server under `sandbox: false` does the same things unhindered (so the attempts are real);
//! a sandbox the kernel cannot give fails closed; a server that dies of its sandbox says so.
//! The gateway (`toolreg mcp`) confines its servers alike. The user's session sockets (an
//! ssh-agent, X11, the session bus, gpg-agent), an abstract socket, and what other programs
//! leave in /tmp are out of reach through both faces, unless `sandbox.sockets` names one.
//!
//! Every path these tests rely on being closed is where the profile closes it wherever the
//! checkout, `CARGO_TARGET_DIR` and `$TMPDIR` are: directly in the host's /tmp (the server sees
//! its own), or in a HOME of the test's own (the server sees an empty one).
mod support;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use support::*;

/// A HOME holding what a user's does: an SSH key, AWS credentials, a browser's cookies and a
/// `.bashrc`, and gpg-agent's socket (`Doors`). Closed to a confined server wherever it is: the
/// server sees an empty home (or, under /tmp, its own /tmp).
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

/// Why a confined server cannot read a file: Landlock refuses it, or it is not in the server's
/// mount namespace at all.
const KEPT_OUT: [&str; 2] = ["Permission denied", "No such file or directory"];

fn kept_out(text: &str, is_error: bool) -> bool {
    is_error && text.contains("refused") && KEPT_OUT.iter().any(|w| text.contains(w))
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
    assert!(sandbox["private"].as_array().unwrap().contains(&json!("/tmp")), "{jail}");
    assert!(sandbox.get("sockets").is_none(), "{jail}");
    let free = wait_state(&mut s, "free", "ready");
    assert_eq!(free["sandbox"]["state"], "off", "{free}");
    assert!(free["sandbox"]["notes"][0].as_str().unwrap().contains("sandbox: false"), "{free}");
    wait_state(&mut s, "other", "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));

    // The user's secrets: refused, and nothing of them in the answer.
    for file in [".ssh/id_ed25519", ".aws/credentials", ".config/google-chrome/Default/Cookies"] {
        let (text, is_error) = call(&mut s, "jail", "read_file", json!({"path": home.path(file)}));
        assert!(kept_out(&text, is_error) && !text.contains("secret"), "{text}");
    }
    let (text, is_error) = call(&mut s, "jail", "write_file", json!({"path": home.path(".bashrc")}));
    assert!(kept_out(&text, is_error), "{text}");
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
    // The home the server sees is empty: the key is not there, and the error says the sandbox hid it.
    let denied = KEPT_OUT.iter().any(|w| error.contains(&format!("{}: {w}", key.display())));
    assert!(error.contains("denied by its sandbox") && denied, "{needy}");
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
    for (tool, file) in [("read_file", ".ssh/id_ed25519"), ("write_file", ".bashrc")] {
        let r = c.call(&format!("mcp__jail__{}", camel(tool)), json!({"path": home.path(file)}));
        assert!(kept_out(&support::gateway::text(&r), r["isError"] == true), "{tool}: {r}");
    }
    assert_eq!(std::fs::read_to_string(home.path(".bashrc")).unwrap(), "# the user's own\n");
    let mut refused = |tool: &str, args: Value, why: &str| {
        let r = c.call(&format!("mcp__jail__{}", camel(tool)), args.clone());
        let text = support::gateway::text(&r);
        assert!(r["isError"] == true && text.contains("refused") && text.contains(why), "{tool} {args}: {r}");
    };
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

/// The doors a server could use to act as the user, each held open by the test: an ssh-agent
/// under `/tmp/ssh-*` (its path in the sidecar's `SSH_AUTH_SOCK`), an X server under
/// `/tmp/.X11-unix`, the session bus under `$XDG_RUNTIME_DIR`, gpg-agent under `~/.gnupg`, an
/// abstract socket; and a file another program left in /tmp. Each socket answers its name.
struct Doors {
    home: Home,
    _agent_dir: tempfile::TempDir,
    agent: PathBuf,
    x11: PathBuf,
    runtime: tempfile::TempDir,
    bus: PathBuf,
    gpg: PathBuf,
    abstract_name: String,
    left: PathBuf,
}

impl Doors {
    fn open() -> Doors {
        use std::os::linux::net::SocketAddrExt;
        let home = Home::new();
        let tag = format!("{}-{}", std::process::id(), DOORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let agent_dir = tempfile::Builder::new().prefix("ssh-").tempdir_in("/tmp").unwrap();
        let agent = agent_dir.path().join(format!("agent.{tag}"));
        let x11_dir = std::path::Path::new("/tmp/.X11-unix");
        if std::fs::create_dir(x11_dir).is_ok() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(x11_dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        }
        let x11 = x11_dir.join(format!("X-toolreg-{tag}"));
        let runtime = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let bus = runtime.path().join("bus");
        let gpg = home.path(".gnupg/S.gpg-agent");
        std::fs::create_dir_all(gpg.parent().unwrap()).unwrap();
        for (path, name) in [(&agent, "agent"), (&x11, "x11"), (&bus, "bus"), (&gpg, "gpg")] {
            answer(std::os::unix::net::UnixListener::bind(path).unwrap(), name);
        }
        let abstract_name = format!("toolreg-test-{tag}");
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        answer(std::os::unix::net::UnixListener::bind_addr(&addr).unwrap(), "abstract");
        let left = PathBuf::from(format!("/tmp/toolreg-left-{tag}.txt"));
        std::fs::write(&left, "another program's draft").unwrap();
        Doors { home, _agent_dir: agent_dir, agent, x11, runtime, bus, gpg, abstract_name, left }
    }

    /// The user's session as toolreg inherits it.
    fn env(&self) -> Vec<(&str, &str)> {
        vec![
            ("HOME", self.home.str()),
            ("SSH_AUTH_SOCK", self.agent.to_str().unwrap()),
            ("DISPLAY", ":4242"),
            ("XDG_RUNTIME_DIR", self.runtime.path().to_str().unwrap()),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus"),
        ]
    }

    fn sockets(&self) -> [&PathBuf; 4] {
        [&self.agent, &self.x11, &self.bus, &self.gpg]
    }

    /// Three servers: the default profile (`sandbox` absent), `sandbox: false`, and one widened
    /// by the agent's socket alone (with `SSH_AUTH_SOCK` in its own `env`).
    fn servers(&self) -> Value {
        let mut jail = escape_server("jail", json!(null), &[]);
        jail.as_object_mut().unwrap().remove("sandbox");
        let mut agent = escape_server("agent", json!({"sockets": [self.agent]}), &[]);
        agent["transport"]["env"] = json!({"SSH_AUTH_SOCK": self.agent});
        json!([jail, escape_server("free", json!(false), &[]), agent])
    }

    /// What each server must get, whichever face asks: `call(server, tool, args)`.
    fn probe(&self, mut call: impl FnMut(&str, &str, Value) -> (String, bool)) {
        let left_name = self.left.file_name().unwrap().to_str().unwrap();
        let agent_dir = self.agent.parent().unwrap().file_name().unwrap().to_str().unwrap();
        for server in ["jail", "agent"] {
            for socket in self.sockets() {
                let (text, is_error) = call(server, "connect_unix", json!({"path": socket}));
                if server == "agent" && socket == &self.agent {
                    assert!(!is_error && text.ends_with(": agent"), "{server} {socket:?}: {text}");
                } else {
                    assert!(is_error && text.starts_with("refused"), "{server} reached {socket:?}: {text}");
                }
            }
            let (text, is_error) = call(server, "connect_abstract", json!({"name": self.abstract_name}));
            assert!(is_error && text.starts_with("refused"), "{server} reached the abstract socket: {text}");
            let (text, is_error) = call(server, "read_file", json!({"path": self.left}));
            assert!(kept_out(&text, is_error) && !text.contains("draft"), "{server}: {text}");
            let (text, is_error) = call(server, "list_dir", json!({"path": "/tmp"}));
            // The widened server sees the one path to its socket, nothing else of the host's /tmp.
            let agent_seen = server == "agent" && text.contains(agent_dir);
            assert!(!is_error && !text.contains(left_name) && !text.contains(".X11-unix"), "{server}: {text}");
            assert_eq!(text.contains(agent_dir), agent_seen, "{server}: {text}");
            for var in ["DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"] {
                let (text, is_error) = call(server, "env", json!({"name": var}));
                assert!(is_error, "{server} was given {var}: {text}");
            }
        }
        // The variable passes only where the server's own `env` sets it.
        assert!(call("jail", "env", json!({"name": "SSH_AUTH_SOCK"})).1);
        assert_eq!(call("agent", "env", json!({"name": "SSH_AUTH_SOCK"})), (self.agent.to_str().unwrap().to_owned(), false));
        // Unconfined, every door opens: the refusals above are the sandbox's.
        for (socket, name) in self.sockets().into_iter().zip(["agent", "x11", "bus", "gpg"]) {
            let (text, is_error) = call("free", "connect_unix", json!({"path": socket}));
            assert!(!is_error && text.ends_with(&format!(": {name}")), "{socket:?}: {text}");
        }
        let (text, is_error) = call("free", "connect_abstract", json!({"name": self.abstract_name}));
        assert!(!is_error && text.ends_with(": abstract"), "{text}");
        let (text, is_error) = call("free", "read_file", json!({"path": self.left}));
        assert!(!is_error && text.contains("draft"), "{text}");
        let (text, is_error) = call("free", "list_dir", json!({"path": "/tmp"}));
        assert!(!is_error && text.contains(left_name) && text.contains(agent_dir), "{text}");
        assert_eq!(call("free", "env", json!({"name": "SSH_AUTH_SOCK"})), (self.agent.to_str().unwrap().to_owned(), false));
    }
}

impl Drop for Doors {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.x11);
        let _ = std::fs::remove_file(&self.left);
    }
}

static DOORS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Answers every connection with `name` and a newline, as long as the test runs.
fn answer(listener: std::os::unix::net::UnixListener, name: &'static str) {
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::Write;
            let _ = (&stream).write_all(format!("{name}\n").as_bytes());
        }
    });
}

#[test]
fn the_users_agents_and_other_programs_temp_files_are_out_of_reach_through_the_sidecar() {
    let doors = Doors::open();
    let mut s = Sidecar::spawn_with(&[], &doors.env());
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": doors.servers()}));
    let jail = wait_state(&mut s, "jail", "ready");
    assert_eq!(jail["sandbox"]["state"], "enforced", "{jail}");
    for dir in ["/tmp", "/var/tmp", "/dev/shm", "/run"] {
        assert!(jail["sandbox"]["private"].as_array().unwrap().contains(&json!(dir)), "{jail}");
    }
    assert!(jail["sandbox"].get("sockets").is_none(), "{jail}");
    let agent = wait_state(&mut s, "agent", "ready");
    assert_eq!(agent["sandbox"]["sockets"], json!([doors.agent]), "{agent}");
    wait_state(&mut s, "free", "ready");
    s.ok_past_notes("registry/syncMcp", json!({}));
    doors.probe(|server, tool, args| call(&mut s, server, tool, args));
    s.shutdown();
}

#[test]
fn the_users_agents_and_other_programs_temp_files_are_out_of_reach_through_the_gateway() {
    let doors = Doors::open();
    let config = json!({"servers": doors.servers(), "gateway": {"defer": "never", "warmupMs": 30000}});
    let path = support::gateway::write_config(doors.home.dir.path(), &config);
    let mut c = support::gateway::spawn(&path, &[], &doors.env());
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}));
    assert!(r.get("result").is_some(), "{r}");
    c.notify("notifications/initialized", json!({}));
    doors.probe(|server, tool, args| {
        let r = c.call(&format!("mcp__{server}__{}", camel(tool)), args);
        (support::gateway::text(&r), r["isError"] == true)
    });
    assert!(c.finish().success());
}
