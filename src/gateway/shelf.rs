//! Every upstream's resources, resource templates, prompts and skills as one set, with names
//! that never silently pick one server: the naming and routing rule of `toolreg mcp`.
//!
//! The rule (documented in docs/gateway.md, "Resources, prompts and completion"):
//! - A prompt name, resource URI or template URI that only one server offers is listed as is.
//! - One that two or more servers offer is listed once per server, qualified: a prompt as
//!   `mcp__<serverId>__<name>` (the tools' wire-name shape), a URI or URI template as
//!   `toolreg://<serverId>/<upstream URI>` (the id percent-encoded), which reverses exactly.
//!   A `ui://` URI (an MCP Apps view) keeps its scheme, since hosts fetch views by it:
//!   `ui://toolreg/<serverId>/<rest of the upstream URI>`. A tool's `_meta.ui.resourceUri`
//!   is listed in the form that reaches its own server (`listed_uri`). A `skill://` URI keeps
//!   its scheme as well (`skill://toolreg/<serverId>/<rest>`): clients expect skills there.
//!   Skills are named per skill, not per file (`skills.rs`).
//! - Any qualified URI of a known server reaches that server, listed or not (a template
//!   expanded by the client). An unqualified URI goes to the server listing it, else to the
//!   server of the listed skill whose directory holds it, else to the
//!   one server whose templates' literal prefix it matches, else to the only server with
//!   resources; a URI two servers could answer is refused with the qualified forms to use.
//!
//! Plain data: built from the catalog's last-known-good lists, never from a live server.

use std::collections::{BTreeMap, HashMap};

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::catalog::{Extras, Features};

mod skills;

pub use skills::Skills;

const SCHEME: &str = "toolreg://";
/// Schemes a qualified URI keeps, as `<scheme>toolreg/<id>/<rest>`: MCP Apps views (hosts
/// read only `ui://` URIs as views) and skills (`skill://`, where clients look for them).
const KEPT_SCHEMES: &[&str] = &["ui://", "skill://"];
/// Unreserved characters stay as they are in a server id; the rest is percent-encoded.
const ID_SET: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Where a listed name goes: the server and its own name for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub server: String,
    pub own: String,
}

/// Items as the gateway lists them, with the routes back.
#[derive(Debug, Default, PartialEq)]
pub struct Shelf {
    /// What any upstream offers (resources, subscribe, prompts, completions).
    pub features: Features,
    pub resources: Vec<Value>,
    pub templates: Vec<Value>,
    pub prompts: Vec<Value>,
    pub skills: Skills,
    prompt_routes: HashMap<String, Route>,
    resource_routes: HashMap<String, Route>,
    template_routes: HashMap<String, Route>,
    /// Own names offered by two or more servers, with those servers.
    shared_prompts: HashMap<String, Vec<String>>,
    shared_uris: HashMap<String, Vec<String>>,
    /// Each server's features, and its templates' literal prefixes.
    servers: BTreeMap<String, (Features, Vec<String>)>,
}

pub fn qualified_prompt(server: &str, name: &str) -> String {
    format!("mcp__{server}__{name}")
}

pub fn qualified_uri(server: &str, uri: &str) -> String {
    let id = utf8_percent_encode(server, ID_SET);
    match KEPT_SCHEMES.iter().find_map(|scheme| uri.strip_prefix(scheme).map(|rest| (scheme, rest))) {
        Some((scheme, rest)) => format!("{scheme}toolreg/{id}/{rest}"),
        None => format!("{SCHEME}{id}/{uri}"),
    }
}

/// `toolreg://<id>/<rest>` as (id, rest), `ui://toolreg/<id>/<rest>` as (id, `ui://<rest>`),
/// and so for the other kept schemes.
fn unqualify(uri: &str) -> Option<(String, String)> {
    let decode = |id: &str| percent_decode_str(id).decode_utf8().ok().map(|id| id.into_owned());
    for scheme in KEPT_SCHEMES {
        if let Some(qualified) = uri.strip_prefix(scheme).and_then(|r| r.strip_prefix("toolreg/")) {
            let (id, rest) = qualified.split_once('/')?;
            return Some((decode(id)?, format!("{scheme}{rest}")));
        }
    }
    let (id, rest) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    Some((decode(id)?, rest.to_owned()))
}

/// The part of a URI template before its first expression.
fn literal_prefix(template: &str) -> &str {
    template.split('{').next().unwrap_or_default()
}

impl Shelf {
    /// The set over `servers` (id and extras, in a stable order).
    pub fn build(servers: &[(String, Extras)]) -> Shelf {
        let mut shelf = Shelf::default();
        let owners = |pick: &dyn Fn(&Extras) -> Vec<String>| {
            let mut by: HashMap<String, Vec<String>> = HashMap::new();
            for (id, extras) in servers {
                for own in pick(extras) {
                    let ids = by.entry(own).or_default();
                    if !ids.contains(id) {
                        ids.push(id.clone());
                    }
                }
            }
            by
        };
        let names = |items: &[Value], key: &str| items.iter().filter_map(|i| i[key].as_str().map(str::to_owned)).collect::<Vec<_>>();
        let prompt_owners = owners(&|e| names(&e.prompts, "name"));
        let uri_owners = owners(&|e| names(&e.resources, "uri"));
        let template_owners = owners(&|e| names(&e.templates, "uriTemplate"));
        for (id, extras) in servers {
            let f = &extras.features;
            let any = &mut shelf.features;
            any.resources |= f.resources;
            any.subscribe |= f.subscribe;
            any.resources_list_changed |= f.resources_list_changed;
            any.prompts |= f.prompts;
            any.prompts_list_changed |= f.prompts_list_changed;
            any.completions |= f.completions;
            any.skills |= f.skills;
            any.directory_read |= f.directory_read;
            let prefixes = names(&extras.templates, "uriTemplate").iter().map(|t| literal_prefix(t).to_owned()).filter(|p| !p.is_empty()).collect();
            shelf.servers.insert(id.clone(), (*f, prefixes));
            place(&mut shelf.prompts, &mut shelf.prompt_routes, id, &extras.prompts, "name", &prompt_owners, qualified_prompt);
            place(&mut shelf.resources, &mut shelf.resource_routes, id, &extras.resources, "uri", &uri_owners, qualified_uri);
            place(&mut shelf.templates, &mut shelf.template_routes, id, &extras.templates, "uriTemplate", &template_owners, qualified_uri);
        }
        shelf.shared_prompts = prompt_owners.into_iter().filter(|(_, ids)| ids.len() > 1).collect();
        shelf.shared_uris = uri_owners.into_iter().filter(|(_, ids)| ids.len() > 1).collect();
        shelf.skills = Skills::build(servers);
        shelf
    }

    pub fn server_features(&self, server: &str) -> Features {
        self.servers.get(server).map(|(f, _)| *f).unwrap_or_default()
    }

    /// The server and own name of a listed (or qualified) prompt name.
    pub fn prompt(&self, name: &str) -> Result<Route, String> {
        if let Some(route) = self.prompt_routes.get(name) {
            return Ok(route.clone());
        }
        if let Some(ids) = self.shared_prompts.get(name) {
            let forms: Vec<String> = ids.iter().map(|id| qualified_prompt(id, name)).collect();
            return Err(format!("prompt {name:?} is offered by several servers ({}): get {}", ids.join(", "), forms.join(" or ")));
        }
        Err(format!("no upstream server offers a prompt named {name:?}; prompts/list has them"))
    }

    /// The server and own URI of a resource URI (listed, qualified, or a template's expansion).
    pub fn resource(&self, uri: &str) -> Result<Route, String> {
        if let Some((server, own)) = unqualify(uri).filter(|(id, _)| self.servers.contains_key(id)) {
            return Ok(Route { server, own });
        }
        if let Some(route) = self.resource_routes.get(uri) {
            return Ok(route.clone());
        }
        if let [server] = self.skills.holders(uri, false)[..] {
            return Ok(Route { server: server.to_owned(), own: uri.to_owned() });
        }
        let by_template: Vec<&String> =
            self.servers.iter().filter(|(_, (_, prefixes))| prefixes.iter().any(|p| uri.starts_with(p.as_str()))).map(|(id, _)| id).collect();
        let candidates: Vec<&String> = match self.shared_uris.get(uri) {
            Some(ids) => ids.iter().collect(),
            None if !by_template.is_empty() => by_template,
            None => self.servers.iter().filter(|(_, (f, _))| f.resources).map(|(id, _)| id).collect(),
        };
        match candidates.as_slice() {
            [one] => Ok(Route { server: (*one).clone(), own: uri.to_owned() }),
            [] => Err(format!("no upstream server offers resource {uri:?}")),
            many => {
                let forms: Vec<String> = many.iter().map(|id| qualified_uri(id, uri)).collect();
                Err(format!(
                    "resource {uri:?} may come from several servers ({}): read {}",
                    many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                    forms.join(" or ")
                ))
            }
        }
    }

    /// The server and own URI of a directory (`resources/directory/read`): a qualified URI's
    /// server, else the one server whose listed skills are in it or hold it, else as any
    /// resource URI is routed.
    pub fn directory(&self, uri: &str) -> Result<Route, String> {
        if let Some((server, own)) = unqualify(uri).filter(|(id, _)| self.servers.contains_key(id)) {
            return Ok(Route { server, own });
        }
        match self.skills.holders(uri, true)[..] {
            [] => self.resource(uri),
            [server] => Ok(Route { server: server.to_owned(), own: uri.to_owned() }),
            ref many => {
                let forms: Vec<String> = many.iter().map(|id| qualified_uri(id, uri)).collect();
                Err(format!("directory {uri:?} holds skills of several servers ({}): read {}", many.join(", "), forms.join(" or ")))
            }
        }
    }

    /// The URI under which `own`, a resource of `server`, reaches that server: as is when it
    /// does, else qualified (a URI another server lists too, or one only a tool names). What a
    /// tool's `_meta.ui.resourceUri` is listed as.
    pub fn listed_uri(&self, server: &str, own: &str) -> String {
        match self.resource(own) {
            Ok(route) if route.server == server && route.own == own => own.to_owned(),
            _ if self.servers.contains_key(server) => qualified_uri(server, own),
            _ => own.to_owned(),
        }
    }

    /// The server and own URI template of a listed (or qualified) template.
    pub fn template(&self, uri_template: &str) -> Result<Route, String> {
        if let Some(route) = self.template_routes.get(uri_template) {
            return Ok(route.clone());
        }
        if let Some((server, own)) = unqualify(uri_template).filter(|(id, _)| self.servers.contains_key(id)) {
            return Ok(Route { server, own });
        }
        // Completion may name a resource URI rather than a template: route it as one.
        self.resource(uri_template).map_err(|_| format!("no upstream server offers resource template {uri_template:?}"))
    }
}

/// Lists `items` of server `id` under their own `key` when only it offers that name, else
/// qualified, and records the route back.
fn place(
    out: &mut Vec<Value>,
    routes: &mut HashMap<String, Route>,
    id: &str,
    items: &[Value],
    key: &str,
    owners: &HashMap<String, Vec<String>>,
    qualify: fn(&str, &str) -> String,
) {
    for item in items {
        let Some(own) = item[key].as_str() else { continue };
        let listed = if owners.get(own).is_some_and(|ids| ids.len() > 1) { qualify(id, own) } else { own.to_owned() };
        if routes.contains_key(&listed) {
            continue;
        }
        routes.insert(listed.clone(), Route { server: id.to_owned(), own: own.to_owned() });
        let mut item = item.clone();
        item[key] = Value::String(listed);
        out.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn everything() -> Extras {
        Extras {
            features: Features { resources: true, subscribe: true, prompts: true, completions: true, ..Features::default() },
            resources: vec![json!({"uri": "demo://resource/static/document/a.md", "name": "a"})],
            templates: vec![json!({"uriTemplate": "demo://resource/dynamic/text/{id}", "name": "t"})],
            prompts: vec![json!({"name": "simple-prompt"})],
            skills: vec![],
        }
    }

    fn other() -> Extras {
        Extras {
            features: Features { resources: true, prompts: true, ..Features::default() },
            resources: vec![json!({"uri": "test://static-text", "name": "s"})],
            templates: vec![],
            prompts: vec![json!({"name": "test_simple_prompt"})],
            skills: vec![],
        }
    }

    #[test]
    fn unique_names_stay_shared_ones_are_qualified_and_route_back() {
        let shelf = Shelf::build(&[("a".into(), everything()), ("b".into(), everything()), ("c".into(), other())]);
        let prompts: Vec<&str> = shelf.prompts.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(prompts, ["mcp__a__simple-prompt", "mcp__b__simple-prompt", "test_simple_prompt"]);
        let uris: Vec<&str> = shelf.resources.iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert_eq!(uris, ["toolreg://a/demo://resource/static/document/a.md", "toolreg://b/demo://resource/static/document/a.md", "test://static-text"]);
        assert_eq!(shelf.prompt("mcp__b__simple-prompt").unwrap(), Route { server: "b".into(), own: "simple-prompt".into() });
        assert_eq!(shelf.prompt("test_simple_prompt").unwrap().server, "c");
        let err = shelf.prompt("simple-prompt").unwrap_err();
        assert!(err.contains("mcp__a__simple-prompt or mcp__b__simple-prompt"), "{err}");
        assert_eq!(shelf.resource("test://static-text").unwrap(), Route { server: "c".into(), own: "test://static-text".into() });
        assert_eq!(shelf.resource(&uris[1]).unwrap(), Route { server: "b".into(), own: "demo://resource/static/document/a.md".into() });
        // A shared URI, listed or a template's expansion, never resolves to one server alone.
        assert!(shelf.resource("demo://resource/static/document/a.md").unwrap_err().contains("toolreg://a/"));
        assert!(shelf.resource("demo://resource/dynamic/text/7").is_err());
        // Qualified templates expand to qualified URIs that reach their server.
        let template = shelf.templates[0]["uriTemplate"].as_str().unwrap();
        assert_eq!(template, "toolreg://a/demo://resource/dynamic/text/{id}");
        assert_eq!(shelf.template(template).unwrap().own, "demo://resource/dynamic/text/{id}");
        assert_eq!(shelf.resource("toolreg://a/demo://resource/dynamic/text/7").unwrap().server, "a");
        assert!(shelf.features.subscribe && shelf.features.completions);
    }

    #[test]
    fn a_template_expansion_of_one_server_routes_to_it_and_ids_are_encoded() {
        let shelf = Shelf::build(&[("a b".into(), everything()), ("c".into(), other())]);
        assert_eq!(shelf.resource("demo://resource/dynamic/text/7").unwrap().server, "a b");
        assert!(shelf.resource("nowhere://x").unwrap_err().contains("several servers"));
        let q = qualified_uri("a b", "x://y");
        assert_eq!(q, "toolreg://a%20b/x://y");
        assert_eq!(shelf.resource(&q).unwrap(), Route { server: "a b".into(), own: "x://y".into() });
        // An unknown server in a qualified URI is no route of its own.
        assert!(shelf.resource("toolreg://zz/x").is_err());
        let lone = Shelf::build(&[("c".into(), other())]);
        assert_eq!(lone.resource("test://anything").unwrap().server, "c");
    }

    fn app(view: &str) -> Extras {
        Extras {
            features: Features { resources: true, ..Features::default() },
            resources: vec![json!({"uri": view, "name": "view", "mimeType": "text/html;profile=mcp-app"})],
            templates: vec![],
            prompts: vec![],
            skills: vec![],
        }
    }

    #[test]
    fn colliding_views_keep_the_ui_scheme_and_each_tool_names_its_own() {
        let shelf = Shelf::build(&[("a".into(), app("ui://v/app.html")), ("b/2".into(), app("ui://v/app.html")), ("c".into(), app("ui://c/own.html"))]);
        let uris: Vec<&str> = shelf.resources.iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert_eq!(uris, ["ui://toolreg/a/v/app.html", "ui://toolreg/b%2F2/v/app.html", "ui://c/own.html"]);
        assert_eq!(shelf.resource(uris[1]).unwrap(), Route { server: "b/2".into(), own: "ui://v/app.html".into() });
        assert_eq!(shelf.listed_uri("a", "ui://v/app.html"), uris[0]);
        assert_eq!(shelf.listed_uri("b/2", "ui://v/app.html"), uris[1]);
        assert_eq!(shelf.listed_uri("c", "ui://c/own.html"), "ui://c/own.html");
        // A view only a tool names (unlisted) still reaches its own server.
        let unlisted = shelf.listed_uri("c", "ui://c/hidden.html");
        assert_eq!(unlisted, "ui://toolreg/c/c/hidden.html");
        assert_eq!(shelf.resource(&unlisted).unwrap(), Route { server: "c".into(), own: "ui://c/hidden.html".into() });
    }
}
