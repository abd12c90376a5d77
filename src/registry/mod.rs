//! The registry: every tool the sidecar knows, keyed by wire name.
//!
//! Entries live in a `BTreeMap`, so every listing is in byte order of the wire name: the same
//! sequence on every host and platform. An entry is immutable once registered (replacing one
//! swaps the `Arc`), which lets per-entry caches such as token counts live on the entry.
//! Every entry is cleaned of hidden text (`hidden`) on the way in, whoever sends it, with the
//! property names that changed kept beside it (`Registered::restore` puts them back on the way
//! out); the entries that had some are named in `select_active`'s warnings, once each, and an
//! entry that cannot be cleaned without merging two keys is refused (inactive, named too).

pub mod builtin;
pub mod entry;
pub mod hidden;
pub mod mcp;
pub mod mcp_scope;
pub mod predicate;
pub mod wire_name;

pub use entry::{Defer, EntrySummary, Source, ToolEntry};
pub use predicate::Predicate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// Every object and array of `v` at its exact size. Parsing grows them as they fill (an
/// object's entries up to its hash table's capacity, ~30% more than it holds), and the registry
/// keeps thousands of schemas for the process's life (2,422 fixture tools: ~3 MiB of slack).
/// Keys, order and values are unchanged, so is every hash and rendering. Iterative: a deeply
/// nested schema must not overflow the stack.
fn compact(v: &mut Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => {
                items.shrink_to_fit();
                stack.extend(items.iter_mut());
            }
            Value::Object(map) => {
                let mut exact = serde_json::Map::with_capacity(map.len());
                exact.extend(std::mem::take(map));
                *map = exact;
                stack.extend(map.values_mut());
            }
            _ => {}
        }
    }
}

/// Names the sidecar keeps for its meta-tools.
pub const RESERVED: [&str; 5] = ["tool_search", "tool_inspect", "tool_invoke", "tool_exec", "tool_result_read"];

/// A registered entry plus what is derived from it once.
#[derive(Debug)]
pub struct Registered {
    pub entry: ToolEntry,
    /// Hash of the model-facing definition (name, description, schema): the token cache key.
    pub content_hash: u64,
    /// Token count per encoding, filled on first use (index = `tokenize::Encoding as usize`).
    pub tokens: [OnceLock<u32>; 2],
    /// Hidden characters removed from what the model reads (see `hidden`).
    pub hidden: usize,
    /// The input schema's property names that cleaning changed, to give the owner its own.
    pub renames: hidden::Renames,
    /// Why the entry is not offered (two keys that differ only in hidden characters).
    pub refused: Option<String>,
}

impl Registered {
    /// `entry` as given (already cleaned: `Registry::insert` cleans).
    pub fn new(entry: ToolEntry) -> Registered {
        Registered::cleaned(entry, hidden::Cleaning::default())
    }

    /// `arguments` as the tool's owner names them: the model sent the cleaned property names.
    pub fn restore(&self, mut arguments: Value) -> Result<Value, String> {
        self.renames.restore(&self.entry.input_schema, &mut arguments)?;
        Ok(arguments)
    }

    fn cleaned(entry: ToolEntry, c: hidden::Cleaning) -> Registered {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        entry.name.hash(&mut h);
        entry.description.hash(&mut h);
        // serde_json's Display of a Value is deterministic for a given value.
        entry.input_schema.to_string().hash(&mut h);
        Registered { entry, content_hash: h.finish(), tokens: Default::default(), hidden: c.removed, renames: c.renames, refused: c.refused }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RegistryError {
    #[error("invalid tool name {name:?}: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("the name {0:?} is reserved for a meta-tool")]
    Reserved(String),
    #[error("tool {name:?}: {reason}")]
    InvalidEntry { name: String, reason: String },
}

/// Something the host should know about an entry: a predicate that could not be evaluated
/// (the entry is inactive), or hidden characters removed from an active entry's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Warning {
    pub name: String,
    pub message: String,
}

#[derive(Clone, Debug, Default)]
pub struct Registry {
    entries: BTreeMap<String, Arc<Registered>>,
}

impl Registry {
    /// A registry holding the built-in host tools.
    pub fn with_builtins() -> Registry {
        let mut r = Registry::default();
        for mut e in builtin::entries() {
            e.source = Source::Builtin;
            r.insert(e);
        }
        r
    }

    fn check(e: &ToolEntry) -> Result<(), RegistryError> {
        if RESERVED.contains(&e.name.as_str()) {
            return Err(RegistryError::Reserved(e.name.clone()));
        }
        if !wire_name::is_valid(&e.name) {
            return Err(RegistryError::InvalidName {
                name: e.name.clone(),
                reason: "must match ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$".into(),
            });
        }
        if e.namespace.is_empty() {
            return Err(RegistryError::InvalidEntry { name: e.name.clone(), reason: "namespace is empty".into() });
        }
        if !(e.input_schema.is_object() || e.input_schema.is_boolean()) {
            return Err(RegistryError::InvalidEntry {
                name: e.name.clone(),
                reason: "inputSchema must be a JSON Schema object".into(),
            });
        }
        Ok(())
    }

    /// Registers host entries; all or nothing. A name that exists is replaced.
    pub fn register(&mut self, entries: Vec<ToolEntry>) -> Result<Vec<String>, RegistryError> {
        entries.iter().try_for_each(Self::check)?;
        Ok(entries
            .into_iter()
            .map(|mut e| {
                e.source = Source::Host;
                let name = e.name.clone();
                self.insert(e);
                name
            })
            .collect())
    }

    /// Inserts, cleaned of hidden text (the caller set `source`). Keeps the existing `Arc` when
    /// nothing changed, so cached counts survive an idempotent sync. Returns whether anything
    /// changed.
    pub fn insert(&mut self, mut e: ToolEntry) -> bool {
        let c = hidden::clean(&mut e);
        compact(&mut e.input_schema);
        if let Some(o) = &mut e.output_schema {
            compact(o);
        }
        if self.entries.get(&e.name).is_some_and(|old| old.entry == e && old.hidden == c.removed && old.renames == c.renames && old.refused == c.refused) {
            return false;
        }
        self.entries.insert(e.name.clone(), Arc::new(Registered::cleaned(e, c)));
        true
    }

    /// Places a registered entry anew. Not through `insert`: the entry is already cleaned, and
    /// cleaning it again would forget what the first cleaning found (renamed property names,
    /// a refusal).
    pub fn set_defer(&mut self, name: &str, defer: Defer) {
        let Some(old) = self.entries.get(name) else { return };
        if old.entry.defer == defer {
            return;
        }
        let entry = ToolEntry { defer, ..old.entry.clone() };
        let placed = Registered {
            entry,
            content_hash: old.content_hash,
            tokens: Default::default(),
            hidden: old.hidden,
            renames: old.renames.clone(),
            refused: old.refused.clone(),
        };
        self.entries.insert(name.to_string(), Arc::new(placed));
    }

    /// Keeps the entries `keep` says yes to (a gateway profile's view of the registry).
    pub fn retain(&mut self, keep: impl Fn(&Registered) -> bool) {
        self.entries.retain(|_, r| keep(r));
    }

    pub fn deregister(&mut self, names: &[String]) -> Vec<String> {
        names.iter().filter(|n| self.entries.remove(n.as_str()).is_some()).cloned().collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Registered>> {
        self.entries.get(name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Registered>> {
        self.entries.values()
    }

    /// Exact namespace and a case-insensitive substring over name, summary, description and
    /// namespace; both together mean AND.
    pub fn list(&self, namespace: Option<&str>, query: Option<&str>) -> Vec<EntrySummary> {
        let q = query.map(str::to_lowercase).filter(|q| !q.is_empty());
        self.iter()
            .map(|r| &r.entry)
            .filter(|e| namespace.is_none_or(|ns| e.namespace == ns))
            .filter(|e| {
                q.as_deref().is_none_or(|q| {
                    [e.name.as_str(), e.description.as_str(), e.namespace.as_str(), e.summary()]
                        .iter()
                        .any(|f| f.to_lowercase().contains(q))
                })
            })
            .map(EntrySummary::from)
            .collect()
    }

    /// Entries whose `applies` holds for `scope`, in byte order of the wire name; a synced MCP
    /// entry also needs its name in `scope.mcpToolIds` when the scope has that list
    /// (`mcp_scope`).
    pub fn select_active(&self, scope: &Value) -> (Vec<Arc<Registered>>, Vec<Warning>) {
        let mut active = Vec::new();
        let mut warnings = Vec::new();
        let mcp = mcp_scope::McpScope::of(scope);
        for r in self.iter() {
            let admitted = match &r.entry.source {
                Source::Mcp { .. } => mcp.admits(&r.entry.name),
                _ => Ok(true),
            };
            let applies = match admitted {
                Ok(true) => r.entry.applies.as_ref().map(|p| p.eval(scope, &r.entry.name)),
                other => Some(other),
            };
            match applies {
                None | Some(Ok(true)) => {
                    // One warning per entry, however many characters or places.
                    if let Some(why) = &r.refused {
                        warnings.push(Warning { name: r.entry.name.clone(), message: format!("not offered: {why}") });
                        continue;
                    }
                    if r.hidden > 0 {
                        warnings.push(Warning { name: r.entry.name.clone(), message: hidden_message(r) });
                    }
                    active.push(r.clone())
                }
                Some(Ok(false)) => {}
                Some(Err(message)) => warnings.push(Warning { name: r.entry.name.clone(), message }),
            }
        }
        (active, warnings)
    }

    /// Entries of one MCP server, by wire name.
    pub fn mcp_entries(&self, server_id: &str) -> Vec<&Arc<Registered>> {
        self.iter()
            .filter(|r| matches!(&r.entry.source, Source::Mcp { server_id: s, .. } if s == server_id))
            .collect()
    }
}

/// What the host reads about an entry that had hidden characters.
pub fn hidden_message(r: &Registered) -> String {
    let n = r.hidden;
    let s = if n == 1 { "" } else { "s" };
    let mut m = format!("{n} hidden character{s} (invisible or direction-changing) removed from the description or schema");
    match r.renames.len() {
        0 => {}
        1 => m.push_str("; 1 property name changed, and calls give the tool its own"),
        k => m.push_str(&format!("; {k} property names changed, and calls give the tool its own")),
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host(name: &str, ns: &str) -> ToolEntry {
        serde_json::from_value(json!({"name": name, "namespace": ns, "description": format!("{name} does things\nmore"), "inputSchema": {"type": "object"}})).unwrap()
    }

    #[test]
    fn compacting_a_schema_changes_nothing_it_says() {
        let text = r#"{"type":"object","properties":{"z":{"type":"string","enum":["b","a","c"]},"a":{"type":"integer"},"m":{"anyOf":[{"type":"null"},{"type":"object","properties":{"q":{},"p":{"examples":[1,2.5,"x",true]}}}]}},"required":["z","a"]}"#;
        let mut v: Value = serde_json::from_str(text).unwrap();
        compact(&mut v);
        // Same keys in the same order, same values: the text, and so every hash, is the same.
        assert_eq!(v.to_string(), text);
        assert_eq!(v, serde_json::from_str::<Value>(text).unwrap());
        let mut r = Registry::default();
        let e: ToolEntry = serde_json::from_value(json!({"name": "c", "namespace": "n", "description": "d", "inputSchema": serde_json::from_str::<Value>(text).unwrap()})).unwrap();
        let hash = Registered::new(e.clone()).content_hash;
        r.register(vec![e]).unwrap();
        assert_eq!(r.get("c").unwrap().entry.input_schema.to_string(), text);
        assert_eq!(r.get("c").unwrap().content_hash, hash);
    }

    #[test]
    fn register_replaces_and_orders_by_bytes() {
        let mut r = Registry::default();
        r.register(vec![host("b", "x"), host("B", "x"), host("a", "y")]).unwrap();
        r.register(vec![host("a", "z")]).unwrap();
        assert_eq!(r.len(), 3);
        let names: Vec<_> = r.list(None, None).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["B", "a", "b"]);
        assert_eq!(r.get("a").unwrap().entry.namespace, "z");
        assert_eq!(r.list(None, None)[1].summary, "a does things");
    }

    #[test]
    fn register_is_all_or_nothing() {
        let mut r = Registry::default();
        let err = r.register(vec![host("ok", "x"), host("bad name", "x")]).unwrap_err();
        assert!(matches!(err, RegistryError::InvalidName { .. }));
        assert!(r.is_empty());
        assert_eq!(r.register(vec![host("tool_search", "x")]), Err(RegistryError::Reserved("tool_search".into())));
    }

    #[test]
    fn deregister_reports_existing_only() {
        let mut r = Registry::default();
        r.register(vec![host("a", "x")]).unwrap();
        assert_eq!(r.deregister(&["a".into(), "zz".into()]), ["a"]);
        assert!(r.deregister(&["a".into()]).is_empty());
    }

    #[test]
    fn list_filters_and() {
        let mut r = Registry::default();
        r.register(vec![host("alpha", "x"), host("beta", "x"), host("gamma", "y")]).unwrap();
        let names = |v: Vec<EntrySummary>| v.into_iter().map(|s| s.name).collect::<Vec<_>>();
        assert_eq!(names(r.list(Some("x"), None)), ["alpha", "beta"]);
        assert_eq!(names(r.list(None, Some("GAMMA"))), ["gamma"]);
        assert_eq!(names(r.list(Some("x"), Some("gamma"))), Vec::<String>::new());
        assert_eq!(names(r.list(None, Some("y"))), ["gamma"], "namespace is matched too");
    }

    #[test]
    fn builtins_follow_the_scope() {
        let r = Registry::with_builtins();
        let (active, warnings) = r.select_active(&json!({"settings": {"enableWebSearch": true}, "knowledgeBaseIds": []}));
        let names: Vec<_> = active.iter().map(|e| e.entry.name.as_str()).collect();
        assert_eq!(names, ["web_fetch", "web_search"]);
        assert!(warnings.is_empty());
        let (active, warnings) = r.select_active(&json!({"knowledgeBaseIds": ["k"]}));
        let names: Vec<_> = active.iter().map(|e| e.entry.name.as_str()).collect();
        assert_eq!(names, ["kb_list", "kb_search"]);
        assert_eq!(warnings.len(), 2, "web tools cannot be evaluated without the flag: {warnings:?}");
    }

    #[test]
    fn synced_mcp_entries_follow_the_scopes_tool_ids_and_host_entries_do_not() {
        let mut r = Registry::default();
        let schema = json!({"type": "object"});
        for tool in ["search", "fork"] {
            let t = mcp::McpTool { server_id: "gh", server_name: "gh", tool_name: tool, title: None, description: "d", input_schema: &schema, output_schema: None, annotations: None, approval: false, ui: None };
            r.insert(mcp::entry(&t, format!("mcp__gh__{tool}")));
        }
        // The host's own entry in an `mcp:` namespace is not a synced one.
        r.register(vec![host("mcp__gh__own", "mcp:gh")]).unwrap();
        let names = |scope: Value| r.select_active(&scope).0.iter().map(|e| e.entry.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(json!({})), ["mcp__gh__fork", "mcp__gh__own", "mcp__gh__search"]);
        assert_eq!(names(json!({"mcpToolIds": ["mcp__gh__search"]})), ["mcp__gh__own", "mcp__gh__search"]);
        assert_eq!(names(json!({"mcpToolIds": ["mcp__gh__fork"]})), ["mcp__gh__fork", "mcp__gh__own"]);
        assert_eq!(names(json!({"mcpToolIds": []})), ["mcp__gh__own"]);
        // Not a list: no synced entry, each named (fail closed).
        let (active, warnings) = r.select_active(&json!({"mcpToolIds": "mcp__gh__fork"}));
        assert_eq!(active.len(), 1);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(warnings[0].message, "\"mcpToolIds\" is a string, not a list");
    }

    #[test]
    fn hidden_text_is_removed_on_the_way_in_and_active_entries_are_named() {
        let mut r = Registry::default();
        let mut e = host("sneaky", "x");
        e.description = "Adds numbers.\u{e0049}\u{e0067}\u{202e}".into();
        let mut gated = e.clone();
        gated.name = "gated".into();
        gated.applies = Some(Predicate::Flag("off".into()));
        r.register(vec![e.clone(), gated, host("plain", "x")]).unwrap();
        assert_eq!(r.get("sneaky").unwrap().entry.description, "Adds numbers.");
        assert_eq!(r.get("sneaky").unwrap().hidden, 3);
        let (active, warnings) = r.select_active(&json!({"settings": {"off": false}}));
        assert_eq!(active.len(), 2);
        let msg = "3 hidden characters (invisible or direction-changing) removed from the description or schema";
        assert_eq!(warnings, [Warning { name: "sneaky".into(), message: msg.into() }], "inactive entries are not named");
        // Two property names that clean to one: refused, named once with the reason, and the
        // renamed names of a clean tool are counted in its warning.
        let mut twins = host("twins", "x");
        twins.input_schema = json!({"type": "object", "properties": {"id": {}, "i\u{200b}d": {}}});
        let mut renamed = host("renamed", "x");
        renamed.input_schema = json!({"type": "object", "properties": {"i\u{200b}d": {}}});
        r.register(vec![twins, renamed]).unwrap();
        let (active, warnings) = r.select_active(&json!({"settings": {"off": false}}));
        assert!(!active.iter().any(|a| a.entry.name == "twins"));
        let named: Vec<&str> = warnings.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(named, ["renamed", "sneaky", "twins"]);
        assert!(warnings[0].message.ends_with("1 property name changed, and calls give the tool its own"), "{warnings:?}");
        assert!(warnings[2].message.starts_with("not offered: keys of its definition differ only in hidden characters (/inputSchema/properties/"), "{warnings:?}");
        assert_eq!(r.get("renamed").unwrap().restore(json!({"id": 1})).unwrap(), json!({"i\u{200b}d": 1}));
        // Placed anew, an entry keeps what its cleaning found.
        r.set_defer("renamed", Defer::Never);
        assert_eq!(r.get("renamed").unwrap().entry.defer, Defer::Never);
        assert_eq!(r.get("renamed").unwrap().restore(json!({"id": 1})).unwrap(), json!({"i\u{200b}d": 1}));
        r.set_defer("twins", Defer::Never);
        assert!(r.get("twins").unwrap().refused.is_some());
        // The same entry again is no change (cleaned before comparing), so counts survive.
        let mut again = e;
        again.source = Source::Host;
        assert!(!r.insert(again), "an unchanged entry keeps its Arc");
    }
}
