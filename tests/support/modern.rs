//! The fixture as a 2026-07-28 server (`--modern`), reached over stdio or Streamable HTTP, behind
//! a sidecar that has it ready and its tools registered: what the tests of calls that outlive
//! one request (tasks, multi round-trip) share.

use super::host::{call, method};
use super::{fixture_mcp, HttpFixture, Sidecar};
use serde_json::{json, Value};

/// How the sidecar reaches the fixture.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    Stdio,
    Http,
}

/// A host that must not be asked anything.
pub fn silent(_: &mut Sidecar, m: &Value) {
    assert!(!method(m).starts_with("host/"), "the host should not be asked: {m}");
}

/// The sidecar and the fixture, server `fx`.
pub struct Session {
    pub s: Sidecar,
    /// The registered names of the fixture's tools.
    pub names: Vec<String>,
    /// Where the fixture's files are (it is removed with the session).
    pub dir: tempfile::TempDir,
    _http: Option<HttpFixture>,
}

impl Session {
    /// The fixture with `--modern` and `flags` (made from the session's directory), reached
    /// `via`; the sidecar initialized with `initialize`, the server configured with `server`'s
    /// fields as well. The server must come up at 2026-07-28.
    pub fn start(via: Via, flags: impl FnOnce(&std::path::Path) -> Vec<String>, initialize: Value, server: Value) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let mut flags = flags(dir.path());
        flags.insert(0, "--modern".to_owned());
        let (transport, http) = match via {
            Via::Stdio => (json!({"type": "stdio", "command": fixture_mcp(), "args": flags}), None),
            Via::Http => {
                let args: Vec<&str> = flags.iter().map(String::as_str).collect();
                let f = HttpFixture::start(dir.path(), &args);
                (json!({"type": "http", "url": f.url.trim()}), Some(f))
            }
        };
        let mut s = Sidecar::spawn();
        s.ok("initialize", initialize);
        s.notify("initialized", json!({}));
        let mut config = json!({"id": "fx", "name": "fixture", "enabled": true, "transport": transport});
        for (k, v) in server.as_object().into_iter().flatten() {
            config[k] = v.clone();
        }
        call(&mut s, "catalog/setServers", json!({"servers": [config]}), &mut silent);
        let st = call(&mut s, "catalog/refresh", json!({"serverId": "fx"}), &mut silent);
        assert_eq!((&st["result"]["state"], &st["result"]["protocolVersion"]), (&json!("ready"), &json!("2026-07-28")), "{st}");
        let sync = call(&mut s, "registry/syncMcp", json!({}), &mut silent);
        let names = sync["result"]["registered"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned()).collect();
        Session { s, names, dir, _http: http }
    }

    /// The registered name of the fixture's `tool` (the registry renders it: `mcp__fixture__mrtrEndless`).
    pub fn wire(&self, tool: &str) -> String {
        let key = |n: &str| n.replace('_', "").to_lowercase();
        self.names.iter().find(|n| key(n.rsplit("__").next().unwrap()) == key(tool)).unwrap_or_else(|| panic!("no {tool} in {:?}", self.names)).clone()
    }
}
