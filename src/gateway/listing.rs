//! What `tools/list` shows: the plan over the registry said as MCP tools, in two forms, one
//! for clients that render MCP Apps views and one for the others (`views.rs`).
//!
//! Both come from one planning round over one registry snapshot: the plain plan (its id scopes
//! the meta-tools of every client), and, when `gateway.views` is on, a plan that keeps tools
//! with a view inline, followed by the app-only tools. Each listed MCP tool carries its
//! upstream's `_meta` (`views::listed_meta`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::shelf::Shelf;
use super::{config, pool_hash, views, Gateway, Listing, Lens};
use crate::service::{Pick, Service, TOOL_SEARCH};
use crate::service::{PlanAsk, PlanOptions, Plan, Registry, Source};

/// The upstream tools' `_meta`, by (server id, tool name), as the catalog has them now.
type Metas = HashMap<(String, String), Value>;

impl Gateway {
    /// The plan over the registry, said as MCP tools: the deferred section goes into
    /// `tool_search`'s description (an MCP server has no system prompt). `usage`: the tools to
    /// list for their use (`usage.rs`).
    pub(super) fn plan(&self, view: &Lens, registry: &Registry, usage: Option<&Pick>) -> Listing {
        let cfg = self.config();
        let settings = view.settings(&cfg);
        // `codeMode`: tool_exec listed too, within the file's limits.
        let code = settings.code_mode;
        let ask = PlanAsk { scope: &cfg.host.scope, context_window: cfg.host.context_window, model: cfg.host.model.as_deref(), client_tools: &[], usage, code: code.as_ref(), views: false, query: None };
        let service = &view.service;
        let crate::service::Planned { plan, active, .. } = service.plan(registry, &ask);
        let picks = Arc::new(Service::usage_picks(&plan));
        let scope = service.scope(&plan, &active, PlanOptions { usage_key: settings.usage_key, code, model: cfg.host.model.clone(), ..PlanOptions::default() });
        let (n_deferred, pool) = (scope.deferred.len(), pool_hash(&scope.deferred, registry));
        service.want_vectors(scope.deferred.iter().filter_map(|n| registry.get(n)));
        let views_on = cfg.gateway.views();
        let titles = Service::override_titles(registry, &cfg.gateway.overrides);
        let mut said = Said { registry, shown: self.shown_names(registry), metas: self.metas(), shelf: view.shelf(), views: views_on, aliases: HashMap::new(), titles, always_load: cfg.gateway.always_load() };
        let tools = said.tools(&plan);
        let rendering = if views_on {
            // The same round, for a client that renders: its tools with a view stay inline and
            // its app-only tools are listed (its host keeps them from the model).
            let rendering = service.plan(registry, &PlanAsk { views: true, ..ask }).plan;
            let mut tools = said.tools(&rendering);
            for r in views::app_only_tools(registry) {
                tools.push(said.tool(&r.entry.name, &r.entry.description, &r.entry.input_schema));
            }
            tools
        } else {
            tools.clone()
        };
        let aliases = said.aliases;
        Listing { tools, rendering, aliases, plan_id: scope.id.clone(), tokens: plan.tokens.inline, deferred: n_deferred, pool, picks }
    }

    /// Wire name to upstream name, for the MCP tools whose upstream name is unique among all
    /// servers, valid and no registry or meta-tool name (`toolNames: upstream`); else empty.
    fn shown_names<'r>(&self, registry: &'r Registry) -> HashMap<&'r str, &'r str> {
        if self.config().gateway.tool_names != config::ToolNames::Upstream {
            return HashMap::new();
        }
        Service::upstream_names(registry, &self.config().gateway.overrides)
    }

    /// Every upstream tool's `_meta`, from the catalog's last-known-good lists.
    fn metas(&self) -> Metas {
        let mut metas = Metas::new();
        for id in self.catalog.server_ids() {
            for t in self.catalog.list_tools(&id, false).map(|l| l.tools).unwrap_or_default() {
                if let Some(meta) = t.meta {
                    metas.insert((id.clone(), t.name), meta);
                }
            }
        }
        metas
    }
}

/// Saying planned tools as MCP tools, gathering the aliases of those listed under their
/// upstream name.
struct Said<'a> {
    registry: &'a Registry,
    shown: HashMap<&'a str, &'a str>,
    metas: Metas,
    shelf: Arc<Shelf>,
    /// `gateway.views`.
    views: bool,
    aliases: HashMap<String, String>,
    /// `gateway.overrides`' titles, by wire name.
    titles: HashMap<String, String>,
    /// `gateway.alwaysLoad`.
    always_load: bool,
}

/// The `_meta` key by which Claude Code loads a listed MCP tool up front rather than
/// deferring it behind its own tool search: the plan already chose what is listed.
pub const ALWAYS_LOAD: &str = "anthropic/alwaysLoad";

impl Said<'_> {
    fn tools(&mut self, plan: &Plan) -> Vec<Value> {
        plan.tools
            .iter()
            .map(|t| {
                let mut description = t.description.clone();
                if let (TOOL_SEARCH, Some(section)) = (t.name.as_str(), &plan.system_prompt) {
                    description = format!("{description}\n\n{section}");
                }
                self.tool(&t.name, &description, &t.input_schema)
            })
            .collect()
    }

    /// One tool, with the annotations, output schema and `_meta` of its registry entry, and
    /// `anthropic/alwaysLoad` unless `gateway.alwaysLoad` is off.
    fn tool(&mut self, wire: &str, description: &str, input_schema: &Value) -> Value {
        let mut tool = self.tool_as_registered(wire, description, input_schema);
        if self.always_load {
            if !tool["_meta"].is_object() {
                tool["_meta"] = json!({});
            }
            tool["_meta"][ALWAYS_LOAD] = json!(true);
        }
        tool
    }

    fn tool_as_registered(&mut self, wire: &str, description: &str, input_schema: &Value) -> Value {
        let name = match self.shown.get(wire) {
            Some(own) => {
                self.aliases.insert(own.to_string(), wire.to_owned());
                own.to_string()
            }
            None => wire.to_owned(),
        };
        let mut tool = json!({"name": name, "description": description, "inputSchema": input_schema});
        let Some(r) = self.registry.get(wire) else { return tool };
        if let Some(a) = &r.entry.annotations {
            tool["annotations"] = a.clone();
        }
        if let Some(o) = &r.entry.output_schema {
            tool["outputSchema"] = o.clone();
        }
        if let Some(title) = self.titles.get(wire) {
            tool["title"] = json!(title);
        }
        if let Source::Mcp { server_id, tool_name } = &r.entry.source {
            let meta = self.metas.get(&(server_id.clone(), tool_name.clone()));
            if let Some(meta) = meta.and_then(|m| views::listed_meta(m, server_id, &self.shelf, self.views)) {
                tool["_meta"] = meta;
            }
        }
        tool
    }
}
