//! The gateway's config file: the host setup JSON that `toolreg plan` reads (model, context
//! window, scope, servers), with each server's `transport` (as `catalog/setServers` takes it)
//! now used to reach it, plus a `gateway` block for what only a gateway needs.
//!
//! The host's own `entries` are ignored: a gateway has no host to run them.

use crate::catalog::ServerConfig;
use crate::hostconfig::HostConfig;
use crate::service::Defer;
use serde::Deserialize;
use std::path::PathBuf;

/// The file read twice: as the `HostConfig` that `toolreg plan` reads (so one file serves
/// both), and for what the gateway adds.
#[derive(Debug)]
pub struct GatewayConfig {
    /// Model, context window and scope to plan for; its `entries` are skipped, its
    /// `gateway.overrides` moved to `gateway.overrides`.
    pub host: HostConfig,
    pub servers: Vec<ServerConfig>,
    pub gateway: Gateway,
    /// `tool_search`'s semantic signal, as `initialize` takes it (`search.rs`); fixed at start.
    pub search: Option<crate::settings::SearchSettings>,
    /// The file this was read from (absolute), for the commands the gateway tells a user to
    /// run (`toolreg pins --config <path> --approve ...`, `toolreg auth --config ...`); `None`
    /// when parsed from text.
    pub path: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Added {
    #[serde(default)]
    servers: Vec<ServerConfig>,
    #[serde(default)]
    gateway: Gateway,
    #[serde(default)]
    search: Option<crate::settings::SearchSettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gateway {
    /// Overrides every upstream tool's placement: `always` defers them all behind the
    /// meta-tools, `never` lists them all; `auto` (default) lets the plan's gates decide.
    #[serde(default)]
    pub defer: Option<Defer>,
    /// The same by server id, over `defer`: e.g. `{"github": "always", "notes": "never"}`.
    #[serde(default)]
    pub defer_servers: std::collections::BTreeMap<String, Defer>,
    /// `upstream`: list an upstream tool under its own name when no other server has a tool of
    /// that name (else, and by default, `mcp__<server>__<tool>`). For clients that add their own
    /// server prefix; `tool_search` and `tool_invoke` keep the full names.
    #[serde(default)]
    pub tool_names: ToolNames,
    /// Run approval-gated tools without asking. For clients that ask their user before every
    /// tool call anyway; otherwise a client without elicitation gets gated calls refused.
    #[serde(default)]
    pub trusted_client: bool,
    /// Where the upstream servers' last-known-good lists (and pins) persist across runs.
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// At start, how long the first `tools/list` may wait for servers with no cached list to
    /// answer their first `tools/list` (default 5000). Never waited on again.
    #[serde(default)]
    pub warmup_ms: Option<u64>,
    /// How long a gated call waits for the user's answer (default 300000).
    #[serde(default)]
    pub approval_timeout_ms: Option<u64>,
    /// List `tool_exec` (code mode: a script that calls the listed and deferred tools, in the
    /// sandbox): `true` with the default limits, or the limits as `initialize.codeMode` takes
    /// them (`{memoryMb, timeoutMs, maxCalls, maxOutputBytes}`, each optional). `None`: off.
    #[serde(default, deserialize_with = "code_mode")]
    pub code_mode: Option<crate::service::Limits>,
    /// `--http` only: a tool call still running after this many milliseconds has its SSE stream
    /// closed with a `retry` hint, and the client resumes it with `Last-Event-ID` (SEP-1699
    /// polling, `sse_poll.rs`). Off when absent: a client that does not resume would lose the
    /// answer of a long call (one waiting on a person's approval, say).
    #[serde(default)]
    pub sse_poll_after_ms: Option<u64>,
    /// List the most used deferred tools inline (`{maxTools?, budgetTokens?}`; `{}` takes the
    /// defaults). Off when absent. Picked per gateway session (`usage.rs`).
    #[serde(default)]
    pub usage: Option<crate::settings::UsagePolicy>,
    /// The key the gateway's calls are counted under in the state dir's usage counts (default
    /// `gateway`): gateways that share a state dir share their counts unless they differ.
    #[serde(default)]
    pub usage_key: Option<String>,
    /// MCP Apps (`views.rs`): `true` (default) declares the `io.modelcontextprotocol/ui`
    /// extension to every upstream and serves views to the clients that declare it; `false`
    /// declares nothing, strips `_meta.ui` from listed tools and treats every client as one
    /// that does not render. What upstreams are told is fixed at start (their sessions are).
    #[serde(default)]
    pub views: Option<bool>,
    /// `true` (default): every listed tool carries `_meta["anthropic/alwaysLoad"]: true`, so
    /// a client that defers MCP tools behind its own search (Claude Code) loads what the plan
    /// chose to list instead of deferring it a second time (docs/gateway.md); `false` leaves
    /// the key out.
    #[serde(default)]
    pub always_load: Option<bool>,
    /// The token budget of one tool result (`{maxTokens?, keepBytes?}`, as `initialize.results`;
    /// also read at the top level of the file). A cut result is kept for its MCP session only.
    #[serde(default)]
    pub results: Option<crate::settings::ResultSettings>,
    /// What clients and the model see of upstream tools, by `"<server>/<tool>"`: `{name?,
    /// title?, description?, descriptionAppend?, hidden?, arguments?: {defaults}, annotations?}`
    /// (issue 43). Applied after pinning; a renamed tool still calls its upstream name.
    /// Parsed once, as the `HostConfig` reads them (`toolreg plan` shows them), and moved here.
    #[serde(skip)]
    pub overrides: crate::service::Overrides,
    /// The audit log (`{file, maxBytes?, maxFiles?, arguments?, results?}`): every call,
    /// approval, pin hold and approval, OAuth flow, server start and exit and config reload,
    /// one JSON line each (`toolreg audit` reads it). Opened at start; a change waits for a
    /// restart.
    #[serde(default)]
    pub audit: Option<crate::service::AuditSettings>,
    /// Named views of the same servers, each at `/mcp/<name>` (`profile.rs`, `lens.rs`).
    #[serde(default)]
    pub profiles: std::collections::BTreeMap<String, super::profile::Profile>,
    /// Tags of upstream tools by `server/tool` pattern, beside their servers' `tags`, for
    /// profiles' tag expressions.
    #[serde(default)]
    pub tool_tags: std::collections::BTreeMap<String, Vec<String>>,
    /// OpenTelemetry export over OTLP/HTTP (`{endpoint?, headers?, serviceName?, ...}`):
    /// spans and metrics of every request and tool run. Started at start; a change waits for a
    /// restart.
    #[serde(default)]
    pub telemetry: Option<crate::service::TelemetrySettings>,    /// Where stdio servers' commands are found, as `initialize.spawn` takes it
    /// (`{shellEnv?: "auto" | "never", paths?: [dir]}`).
    #[serde(default)]
    pub spawn: Option<crate::catalog::SpawnSettings>,
    /// The MCP registry `toolreg add` reads (`{url?, timeoutMs?}`, as `initialize.mcpRegistry`).
    #[serde(default)]
    pub mcp_registry: Option<crate::settings::McpRegistrySettings>,
}

impl Gateway {
    /// Whether MCP Apps pass through (`views`, default on).
    pub fn views(&self) -> bool {
        self.views.unwrap_or(true)
    }

    /// Whether listed tools carry `anthropic/alwaysLoad` (`alwaysLoad`, default on).
    pub fn always_load(&self) -> bool {
        self.always_load.unwrap_or(true)
    }
}

/// `gateway.codeMode`: a bool, or the limits (checked as `initialize` checks them; a key that
/// is not one of them is refused, so a misspelt limit is not silently the default).
pub(super) fn code_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<crate::service::Limits>, D::Error> {
    use serde::de::Error;
    use crate::settings::CodeModeLimits;
    const KEYS: [&str; 4] = ["memoryMb", "timeoutMs", "maxCalls", "maxOutputBytes"];
    let shape = || D::Error::custom("gateway.codeMode must be true, false or an object {memoryMb, timeoutMs, maxCalls, maxOutputBytes}");
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Bool(on) => Ok(on.then(crate::service::Limits::default)),
        serde_json::Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(D::Error::custom(format!("gateway.codeMode has no limit named {k}; the limits are {}", KEYS.join(", "))));
            }
            let limits: CodeModeLimits = serde_json::from_value(serde_json::Value::Object(m)).map_err(|e| D::Error::custom(format!("gateway.codeMode: {e}")))?;
            limits.limits().map(Some).map_err(|(field, why)| D::Error::custom(format!("gateway.codeMode.{field} {why}")))
        }
        _ => Err(shape()),
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolNames {
    #[default]
    Wire,
    Upstream,
}

impl GatewayConfig {
    /// The result budget: the `gateway` block's `results`, else the top level's, else the default.
    pub fn budget(&self) -> Result<crate::service::Budget, String> {
        match self.gateway.results.as_ref().or(self.host.results.as_ref()) {
            Some(r) => r.budget().map_err(|(field, why)| format!("results.{field} {why}")),
            None => Ok(crate::service::Budget::default()),
        }
    }

    pub fn parse(text: &str) -> Result<GatewayConfig, String> {
        let mut host: HostConfig = serde_json::from_str(text).map_err(|e| masked(&e))?;
        let read = read_secret_refs(text)?;
        let mut added: Added = serde_json::from_str(read.as_deref().unwrap_or(text)).map_err(|e| masked(&e))?;
        added.gateway.overrides = std::mem::take(&mut host.gateway.overrides);
        let cfg = GatewayConfig { host, servers: added.servers, gateway: added.gateway, search: added.search, path: None };
        if let Some(search) = &cfg.search {
            super::search::check(search)?;
        }
        cfg.budget()?;
        if let Some(spawn) = &cfg.gateway.spawn {
            spawn.check().map_err(|e| format!("gateway.{e}"))?;
        }
        crate::service::Service::check_overrides(&cfg.gateway.overrides)?;
        for k in cfg.gateway.overrides.keys() {
            let server = k.split_once('/').map_or(k.as_str(), |(s, _)| s);
            if !cfg.servers.iter().any(|s| s.id == server) {
                return Err(format!("gateway.overrides: {k:?} names no configured server {server:?}"));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &cfg.servers {
            if s.id.is_empty() || !seen.insert(s.id.as_str()) {
                return Err(format!("server ids must be unique and non-empty: {:?}", s.id));
            }
        }
        for (name, profile) in &cfg.gateway.profiles {
            let bad = |why: String| format!("gateway.profiles.{name}: {why}");
            super::profile::check_name(name).map_err(bad)?;
            cfg.selection(name).map_err(bad)?;
            if let Some(search) = &profile.search {
                super::search::check(search).map_err(bad)?;
            }
        }
        Ok(cfg)
    }

    /// What profile `name` selects; the error says why it cannot select anything.
    pub fn selection(&self, name: &str) -> Result<super::profile::Selection, String> {
        let profile = self.gateway.profiles.get(name).ok_or_else(|| format!("no profile is named {name:?} in gateway.profiles"))?;
        super::profile::Selection::compile(profile, &self.servers, &self.gateway.tool_tags)
    }

    /// The config in the file at `path`.
    pub fn read(path: &std::path::Path) -> Result<GatewayConfig, String> {
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        GatewayConfig::from_file(&bytes, path)
    }

    /// The config in `bytes`, read from `path`, which it remembers (absolute, so that a command
    /// naming it, as a held tool's refusal does, works from any directory).
    pub fn from_file(bytes: &[u8], path: &std::path::Path) -> Result<GatewayConfig, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
        let mut cfg = GatewayConfig::parse(text)?;
        cfg.path = Some(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
        Ok(cfg)
    }

    /// Where the gateway keeps what must outlive a run (last-known-good lists, pins, upstream
    /// OAuth tokens): `gateway.cacheDir`, else a per-user directory, so that pins never live in
    /// memory only. `$TOOLREG_STATE_DIR` overrides the per-user default (tests use it).
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.gateway.cache_dir.clone().or_else(default_state_dir)
    }
}

/// The text with every server's `env` and `headers` values given as a reference (`{"env":
/// "NAME"}`, `{"file": "PATH"}`, `secret::reference`) replaced by the secret it names; `None`
/// when there is none (the text is parsed as it is, so its errors keep their lines). An
/// unreadable reference refuses the file, naming the server, the key and what is missing.
fn read_secret_refs(text: &str) -> Result<Option<String>, String> {
    use crate::secret::reference::SecretRef;
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else { return Ok(None) };
    let mut found = false;
    for server in doc.get_mut("servers").and_then(|s| s.as_array_mut()).into_iter().flatten() {
        let id = server.get("id").and_then(|i| i.as_str()).unwrap_or_default().to_owned();
        for key in ["env", "headers"] {
            let Some(map) = server.pointer_mut(&format!("/transport/{key}")).and_then(|m| m.as_object_mut()) else { continue };
            for (name, value) in map.iter_mut() {
                let Some(reference) = SecretRef::of(value) else { continue };
                let why = |e: String| format!("server {id:?}: transport.{key}.{name}: {e}");
                *value = reference.map_err(why)?.read().map_err(why)?.expose().into();
                found = true;
            }
        }
    }
    Ok(found.then(|| doc.to_string()))
}

/// serde's reason with the values it quotes masked (`invalid type: string "<a token>"`): the
/// reason is logged, and the file holds credentials. Field names stay: they are the help.
fn masked(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if ["missing field", "unknown field", "duplicate field"].iter().any(|p| text.starts_with(p)) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut first_tick = true;
    while let Some(c) = chars.next() {
        out.push(c);
        // Strings are quoted as Rust debug strings; other values (numbers, variants) in the
        // first backtick pair, the later ones being the expected names.
        let close = match c {
            '"' => '"',
            '`' if first_tick => '`',
            _ => continue,
        };
        first_tick &= c != '`';
        let mut escaped = false;
        for d in chars.by_ref() {
            if d == close && !escaped {
                break;
            }
            escaped = !escaped && d == '\\';
        }
        out.push('…');
        out.push(close);
    }
    out
}

/// The per-user state directory: `$TOOLREG_STATE_DIR`, else `$XDG_STATE_HOME/toolreg`, else
/// `~/.local/state/toolreg` (`%LOCALAPPDATA%\toolreg` on Windows). None without a home.
pub fn default_state_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("TOOLREG_STATE_DIR") {
        return Some(dir);
    }
    if cfg!(windows) {
        return var("LOCALAPPDATA").map(|d| d.join("toolreg"));
    }
    var("XDG_STATE_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("state"))).map(|d| d.join("toolreg"))
}

#[cfg(test)]
mod tests {
    use super::GatewayConfig;

    #[test]
    fn a_reason_names_fields_but_never_a_value() {
        let err = |text: &str| GatewayConfig::parse(text).err().unwrap();
        let leak = err(r#"{"servers": [{"id": "a", "transport": {"type": "stdio", "command": "x", "env": "sk-\"secret"}}]}"#);
        assert!(!leak.contains("sk-") && !leak.contains("secret") && leak.contains("line 1"), "{leak}");
        let number = err(r#"{"gateway": {"warmupMs": "sk-secret"}}"#);
        assert!(!number.contains("sk-secret"), "{number}");
        let variant = err(r#"{"gateway": {"defer": "sk-secret"}}"#);
        assert!(!variant.contains("sk-secret") && variant.contains("`always`"), "{variant}");
        assert!(err(r#"{"servers": [{"transport": {"type": "stdio", "command": "x"}}]}"#).contains("missing field `id`"));
        assert!(err(r#"{"servers": [}"#).contains("line 1 column 14"));
    }

    #[test]
    fn env_and_header_values_may_be_references_read_at_parse_and_named_never_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "file-s3cret\n").unwrap();
        let text = serde_json::json!({"servers": [
            {"id": "a", "name": "a", "transport": {"type": "stdio", "command": "x", "env": {"KEY": {"file": file}, "PLAIN": "p"}}},
            {"id": "b", "name": "b", "transport": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": {"env": "PATH"}}}}]})
        .to_string();
        let cfg = GatewayConfig::parse(&text).unwrap();
        let crate::catalog::Transport::Stdio { env, .. } = &cfg.servers[0].transport else { panic!() };
        assert_eq!((env["KEY"].expose(), env["PLAIN"].expose()), ("file-s3cret", "p"));
        let crate::catalog::Transport::Http { headers, .. } = &cfg.servers[1].transport else { panic!() };
        assert_eq!(headers["Authorization"].expose(), std::env::var("PATH").unwrap());
        let unset = text.replace("\"PATH\"", "\"TOOLREG_TEST_SURELY_UNSET\"");
        let err = GatewayConfig::parse(&unset).unwrap_err();
        assert_eq!(err, "server \"b\": transport.headers.Authorization: $TOOLREG_TEST_SURELY_UNSET is not set");
    }

    #[test]
    fn code_mode_is_a_bool_or_limits_checked_as_initialize_checks_them() {
        use crate::service::Limits;
        let cm = |v: &str| GatewayConfig::parse(&format!(r#"{{"gateway": {{"codeMode": {v}}}}}"#)).map(|c| c.gateway.code_mode);
        assert_eq!(GatewayConfig::parse("{}").unwrap().gateway.code_mode, None);
        assert_eq!(cm("false").unwrap(), None);
        assert_eq!(cm("true").unwrap(), Some(Limits::default()));
        assert_eq!(cm("{}").unwrap(), Some(Limits::default()));
        let l = cm(r#"{"timeoutMs": 500, "memoryMb": 8, "maxCalls": 3, "maxOutputBytes": 1000}"#).unwrap().unwrap();
        assert_eq!(l, Limits { memory_bytes: 8 << 20, timeout: std::time::Duration::from_millis(500), max_calls: 3, max_output_bytes: 1000 });
        assert!(cm(r#"{"memoryMb": 2048}"#).unwrap_err().contains("gateway.codeMode.memoryMb must be 1 to 1024"));
        assert!(cm(r#"{"timeoutMs": 0}"#).unwrap_err().contains("gateway.codeMode.timeoutMs must be above 0"));
        assert!(cm(r#"{"timeoutMS": 5}"#).unwrap_err().contains("no limit named timeoutMS"));
        assert!(cm(r#""sk-secret""#).unwrap_err().contains("must be true, false or an object"));
        assert!(!cm(r#"{"memoryMb": "sk-secret"}"#).unwrap_err().contains("sk-secret"));
    }
}
