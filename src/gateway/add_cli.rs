//! `toolreg add NAME --config FILE [--registry URL] [--version V] [--package N] [--set
//! KEY=VALUE]...`: a server of an MCP registry written into a gateway config in one step,
//! quarantined (its tools wait for `toolreg pins --approve`), its version pinned, under the
//! default sandbox. A secret never reaches the file or the terminal: a value given with
//! `--set` goes to an owner-only file beside the state (`<state dir>/secrets/`), referenced as
//! `{"file": PATH}`; one not given is read from an environment variable (`{"env": NAME}`).
//! The file need not exist; the rest of an existing file is kept as it is.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::service::{ResolvedServer, SecretRef, Service};
use crate::settings::McpRegistrySettings;

/// What the command was asked.
pub struct AddAsk<'a> {
    pub config: &'a Path,
    pub name: &'a str,
    pub registry: Option<&'a str>,
    pub version: Option<&'a str>,
    pub package: Option<usize>,
    pub set: &'a [String],
}

/// Runs the command: what it added and what the user still has to do, never a secret.
pub async fn add(ask: AddAsk<'_>) -> Result<String, String> {
    let mut doc: serde_json::Value = match std::fs::read(ask.config) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("{} is not JSON: line {} column {}", ask.config.display(), e.line(), e.column()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(format!("cannot read {}: {e}", ask.config.display())),
    };
    if !doc.is_object() {
        return Err(format!("{} is not a JSON object", ask.config.display()));
    }
    let mut values = BTreeMap::new();
    for pair in ask.set {
        let (k, v) = pair.split_once('=').ok_or_else(|| format!("--set {:?}: write KEY=VALUE", pair.split('=').next().unwrap_or_default()))?;
        values.insert(k.to_owned(), v.to_owned());
    }
    let mut source: McpRegistrySettings = doc.pointer("/gateway/mcpRegistry").map(|v| serde_json::from_value(v.clone())).transpose().map_err(|e| format!("gateway.mcpRegistry: {e}"))?.unwrap_or_default();
    if let Some(url) = ask.registry {
        source.url = Some(url.to_owned());
    }
    let taken: Vec<String> = doc.get("servers").and_then(|s| s.as_array()).into_iter().flatten().filter_map(|s| s.get("id")?.as_str().map(str::to_owned)).collect();
    let service = Service::new(Default::default(), "add");
    let resolved = service.resolve_registry_server(&source, ask.name, ask.version, ask.package, &taken).await.map_err(|e| e.to_string())?;
    let id = resolved.server.id.clone();
    let dir = secrets_dir(&doc);
    let mut keep = |key: &str, value: &str| -> Result<PathBuf, String> {
        let dir = dir.clone().ok_or("no per-user state directory ($TOOLREG_STATE_DIR, $XDG_STATE_HOME or $HOME) to keep the secret in")?;
        private_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let path = dir.join(format!("{id}.{key}"));
        crate::catalog::cache::write_private(&path, value.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    };
    let entry = service.registry_entry(&resolved, &values, &mut keep)?;
    let servers = doc.as_object_mut().expect("an object").entry("servers").or_insert_with(|| serde_json::json!([]));
    servers.as_array_mut().ok_or("the config's servers is not a list")?.push(entry.server.clone());
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    crate::catalog::cache::write_private(ask.config, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", ask.config.display()))?;
    Ok(report(&ask, &resolved, &entry.secrets))
}

/// Where given secrets are kept: `<gateway.cacheDir or the per-user state dir>/secrets`.
fn secrets_dir(doc: &serde_json::Value) -> Option<PathBuf> {
    let state = doc.pointer("/gateway/cacheDir").and_then(|d| d.as_str()).map(PathBuf::from).or_else(super::config::default_state_dir)?;
    Some(state.join("secrets"))
}

/// The directory, made the owner's alone when it is new.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

fn report(ask: &AddAsk, resolved: &ResolvedServer, secrets: &[crate::service::KeptSecret]) -> String {
    let s = &resolved.server;
    let config = ask.config.display();
    let mut out = format!("added {:?} ({}) to {config}\n", s.id, ask.name);
    if let crate::catalog::Transport::Stdio { command, args, .. } = &s.transport {
        let _ = writeln!(out, "  runs: {command} {}", args.join(" "));
    }
    for k in secrets {
        let _ = match &k.reference {
            SecretRef::File(path) => writeln!(out, "  {}: a secret, kept in {} (owner-only), not in the config", k.key, path.display()),
            SecretRef::Env(var) => match &k.shape {
                Some(shape) => writeln!(out, "  {}: a secret, read from ${var} at start: set it to {shape}", k.key),
                None => writeln!(out, "  {}: a secret, read from ${var} at start: set it before toolreg mcp runs", k.key),
            },
        };
    }
    for note in &resolved.notes {
        let _ = writeln!(out, "  {note}");
    }
    let _ = writeln!(out, "to approve its tools: toolreg pins --config {config} --approve {} (after `toolreg mcp --config {config} --check` has listed them)", s.id);
    out
}
