//! The MCP tools' way into a registry, as both faces (and `toolreg plan`) take it: which tool
//! ids an assistant uses, the sync with its selection and overrides, the held tools a call may
//! name, and the vectors the synced tools want. One place, so a rule of the sync (a request's
//! scope, a quarantine) is wired once for every face.

use super::{Registry, Service, ToolEntry};
use crate::catalog::Catalog;
use crate::overrides::Overrides;
use crate::registry::Source;
use crate::sync::Mode;
use std::sync::Arc;

pub use crate::sync::{Snapshot, Synced};

/// What a face syncs: the tools an assistant selected (`None`: every listed tool), and the
/// overrides of what the model sees of them (the gateway's; the sidecar has none).
#[derive(Clone, Copy, Default)]
pub struct SyncAsk<'a> {
    pub selected: Option<&'a [String]>,
    pub overrides: Option<&'a Overrides>,
}

impl Service {
    /// The wire names of every enabled, cached tool of the servers `mode` and `server_ids`
    /// choose (`registry/resolve`).
    pub fn resolve(&self, registry: &Registry, catalog: &Catalog, mode: Mode, server_ids: &[String]) -> Vec<String> {
        crate::sync::resolve(registry, catalog, mode, server_ids)
    }

    /// The catalog's cached tools into `registry` (`sync::sync`): the selected ones come in,
    /// the registered ones are brought up to date, gone and held ones leave.
    pub fn sync(&self, registry: &mut Registry, catalog: &Catalog, ask: SyncAsk<'_>) -> Synced {
        crate::sync::sync(registry, catalog, ask.selected, ask.overrides)
    }

    /// A host setup file's registry (`toolreg plan`): the built-ins, `entries`, and the servers'
    /// last lists named and overridden as the sync does.
    pub fn snapshot_registry(entries: Vec<ToolEntry>, servers: &[Snapshot<'_>], overrides: &Overrides) -> Result<Registry, String> {
        let mut reg = Registry::with_builtins();
        reg.register(entries).map_err(|e| e.to_string())?;
        crate::sync::snapshots(&mut reg, servers, overrides)?;
        Ok(reg)
    }

    /// (server id, the server's own tool name) of the held tool a call by `wire` reaches: by its
    /// wire name in `registry`, or by the name `overrides` give it.
    pub fn held_tool(&self, registry: &Registry, catalog: &Catalog, wire: &str, overrides: Option<&Overrides>) -> Option<(String, String)> {
        crate::sync::held_named(registry, catalog, wire, overrides)
    }

    /// The text a model reads for a call of a held tool's wire name (its pin holds it).
    pub fn held_refusal(&self, registry: &Registry, catalog: &Catalog, wire: &str) -> Option<String> {
        crate::sync::held_refusal(registry, catalog, wire)
    }

    /// The work that asks vectors for `registry`'s MCP tools (after a sync, before a plan
    /// defers them), for the face to run off its request path; `None` without a semantic signal.
    pub fn mcp_vectors(&self, registry: Arc<Registry>) -> Option<impl FnOnce() + Send + 'static> {
        let semantic = self.semantic()?.clone();
        Some(move || {
            let mcp: Vec<_> = registry.iter().filter(|r| matches!(r.entry.source, Source::Mcp { .. })).cloned().collect();
            semantic.want(crate::meta::embedding_texts(&mcp));
        })
    }
}

impl Service {
    /// Refuses overrides that are wrong before any list is known (`overrides::check`): a key
    /// not `server/tool`, an unusable name, two overrides giving one name.
    pub fn check_overrides(overrides: &Overrides) -> Result<(), String> {
        crate::overrides::check(overrides)
    }
}
