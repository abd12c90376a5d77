//! The three processes of a row: a sidecar and two stdio gateways over one state directory and
//! one fixture MCP server config (started directly, no shell: the rows run under Wine too).

use crate::support::gateway::{spawn, write_config, McpClient};
use crate::support::Sidecar;
use serde_json::{json, Value};
use std::path::Path;

pub struct Three {
    pub sidecar: Sidecar,
    pub gateways: [McpClient; 2],
    /// The gateways' config, for `toolreg` commands over the same state.
    pub config: String,
}

/// The fixture server `fx` with `args`, and `extra` fields (approval, trust).
pub fn server(args: &[&str], extra: Value) -> Value {
    let mut s = json!({"id": "fx", "name": "fx", "transport": {"type": "stdio", "command": crate::support::fixture_mcp(), "args": args}});
    s.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    s
}

/// Starts the three over `state`: every tool listed inline (`defer: never`), `gateway` merged
/// into the gateways' settings; the sidecar synced and ready, the gateways initialized with
/// form elicitation (how they ask for approval).
pub fn start(work: &Path, state: &Path, server: Value, gateway: Value) -> Three {
    let mut g = json!({"defer": "never"});
    g.as_object_mut().unwrap().extend(gateway.as_object().unwrap().clone());
    let config = write_config(work, &json!({"servers": [server.clone()], "gateway": g}));
    let dir = state.to_str().unwrap();
    let gateways = [0, 1].map(|_| {
        let mut c = spawn(&config, &[], &[("TOOLREG_STATE_DIR", dir)]);
        let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "processes-test", "version": "0"}}));
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        c.notify("notifications/initialized", json!({}));
        c
    });
    let mut s = Sidecar::spawn();
    s.ok_past_notes("initialize", json!({"cacheDir": dir, "capabilities": {"approval": true}, "timeouts": {"connectMs": 10000, "listMs": 10000}}));
    s.ok_past_notes("catalog/setServers", json!({"servers": [server]}));
    s.until_first_ready();
    s.ok_past_notes("registry/syncMcp", json!({}));
    Three { sidecar: s, gateways, config }
}

impl Three {
    /// Ends all three (each flushes what it holds at exit).
    pub fn finish(self) {
        let [a, b] = self.gateways;
        assert!(a.finish().success() && b.finish().success(), "a gateway failed at exit");
        self.sidecar.shutdown();
    }
}
