//! The upstreams' skills (SEP-2640) on the shelf: one listing, with the routes back.
//!
//! - A skill whose `SKILL.md` URI only one server lists keeps its entry as the server sent it.
//!   One that two or more servers list is listed once per server with every URI of its entry
//!   (its own and its files') qualified as resources are (`skill://toolreg/<serverId>/<rest>`
//!   for a `skill://` URI), so an entry stays within its skill's directory and each of its
//!   files reads through `resources/read` from the server that listed it.
//! - An entry that breaks the extension's rules (rmcp's `Skill::validate`) is left out and
//!   logged: one bad skill never fails the whole listing.
//! - A file or directory URI within a listed skill's directory routes to that skill's server.

use std::collections::HashMap;

use rmcp::model::Skill;
use serde_json::Value;

use super::{qualified_uri, Route};
use crate::catalog::Extras;

const SKILL_MD: &str = "/SKILL.md";

#[derive(Debug, Default, PartialEq)]
pub struct Skills {
    /// The entries as the gateway lists them.
    pub listed: Vec<Value>,
    /// By listed `SKILL.md` URI: the server and its own URI, and the entry's index in `listed`.
    routes: HashMap<String, (Route, usize)>,
    /// Own `SKILL.md` URIs listed by two or more servers, with those servers.
    shared: HashMap<String, Vec<String>>,
    /// Each listed skill's directory (its URI without `/SKILL.md`) and server.
    roots: Vec<(String, String)>,
}

/// The entry's `SKILL.md` URI when the entry is valid.
fn valid(server: &str, entry: &Value) -> Option<String> {
    let checked = serde_json::from_value::<Skill>(entry.clone()).map_err(|e| e.to_string()).and_then(|s| s.validate().map(|()| s.uri).map_err(|e| e.to_string()));
    checked.inspect_err(|why| tracing::warn!(server, "a skill of MCP server {server} is left out: {why}")).ok()
}

/// The entry with `rename` applied to its URI and its files'.
fn renamed(entry: &Value, rename: impl Fn(&str) -> String) -> Value {
    let mut item = entry.clone();
    if let Some(uri) = entry["uri"].as_str() {
        item["uri"] = Value::String(rename(uri));
    }
    for file in item.get_mut("resources").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(uri) = file["uri"].as_str().map(&rename) {
            file["uri"] = Value::String(uri);
        }
    }
    item
}

impl Skills {
    pub(super) fn build(servers: &[(String, Extras)]) -> Skills {
        let valid_entries: Vec<(&String, &Value, String)> =
            servers.iter().flat_map(|(id, e)| e.skills.iter().filter_map(move |s| valid(id, s).map(|uri| (id, s, uri)))).collect();
        let mut owners: HashMap<String, Vec<String>> = HashMap::new();
        for (id, _, uri) in &valid_entries {
            let ids = owners.entry(uri.clone()).or_default();
            if !ids.contains(id) {
                ids.push((*id).clone());
            }
        }
        let mut skills = Skills::default();
        for (id, entry, own) in valid_entries {
            let item = if owners[&own].len() > 1 { renamed(entry, |u| qualified_uri(id, u)) } else { entry.clone() };
            let Some(listed) = item["uri"].as_str().map(str::to_owned) else { continue };
            if skills.routes.contains_key(&listed) {
                continue;
            }
            let root = listed.strip_suffix(SKILL_MD).unwrap_or(&listed).to_owned();
            skills.roots.push((root, id.clone()));
            skills.routes.insert(listed, (Route { server: id.clone(), own }, skills.listed.len()));
            skills.listed.push(item);
        }
        skills.shared = owners.into_iter().filter(|(_, ids)| ids.len() > 1).collect();
        skills
    }

    /// The listed entry whose `SKILL.md` is `uri`.
    pub fn get(&self, uri: &str) -> Result<&Value, String> {
        if let Some((_, i)) = self.routes.get(uri) {
            return Ok(&self.listed[*i]);
        }
        if let Some(ids) = self.shared.get(uri) {
            let forms: Vec<String> = ids.iter().map(|id| qualified_uri(id, uri)).collect();
            return Err(format!("skill {uri:?} is offered by several servers ({}): get {}", ids.join(", "), forms.join(" or ")));
        }
        Err(format!("no upstream server offers a skill at {uri:?}; skills/list has them"))
    }

    /// The servers of the listed skills whose directory holds `uri` (a file or directory in
    /// it, or the directory itself), and, with `above`, of those under a directory `uri`.
    pub(super) fn holders(&self, uri: &str, above: bool) -> Vec<&str> {
        let dir = uri.trim_end_matches('/');
        let within = |root: &str| dir == root || dir.strip_prefix(root).is_some_and(|r| r.starts_with('/'));
        let under = |root: &str| root.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
        let mut ids: Vec<&str> = Vec::new();
        for (root, id) in &self.roots {
            if (within(root) || (above && under(root))) && !ids.contains(&id.as_str()) {
                ids.push(id);
            }
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Features;
    use serde_json::json;

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn skill(name: &str) -> Value {
        let uri = format!("skill://{name}/SKILL.md");
        json!({"uri": uri, "frontmatter": {"name": name, "description": "d"},
            "resources": [{"uri": uri, "digest": DIGEST, "size": 1}, {"uri": format!("skill://{name}/refs/a.md"), "digest": DIGEST, "size": 2}]})
    }

    fn server(skills: Vec<Value>) -> Extras {
        Extras { features: Features { resources: true, skills: true, directory_read: true, ..Features::default() }, skills, ..Extras::default() }
    }

    #[test]
    fn a_shared_skill_is_qualified_whole_and_a_bad_one_left_out() {
        let bad = json!({"uri": "skill://Bad Name/SKILL.md", "frontmatter": {"name": "Bad Name", "description": "d"}, "resources": "dynamic"});
        let s = Skills::build(&[("a".into(), server(vec![skill("pdf"), skill("notes")])), ("b".into(), server(vec![skill("pdf"), bad]))]);
        let uris: Vec<&str> = s.listed.iter().map(|e| e["uri"].as_str().unwrap()).collect();
        assert_eq!(uris, ["skill://toolreg/a/pdf/SKILL.md", "skill://notes/SKILL.md", "skill://toolreg/b/pdf/SKILL.md"]);
        // Every URI of a qualified entry is, so the entry stays valid (within its directory).
        assert_eq!(s.listed[2]["resources"][1]["uri"], "skill://toolreg/b/pdf/refs/a.md");
        for e in &s.listed {
            serde_json::from_value::<Skill>(e.clone()).unwrap().validate().unwrap();
        }
        assert_eq!(s.get("skill://notes/SKILL.md").unwrap(), &skill("notes"));
        assert!(s.get("skill://pdf/SKILL.md").unwrap_err().contains("skill://toolreg/a/pdf/SKILL.md or skill://toolreg/b/pdf/SKILL.md"));
        assert!(s.get("skill://nope/SKILL.md").is_err());
        assert_eq!(s.holders("skill://notes/refs", false), ["a"]);
        assert_eq!(s.holders("skill://notes", false), ["a"]);
        assert!(s.holders("skill://notesx", false).is_empty());
        assert!(s.holders("skill:/", false).is_empty());
    }

    #[test]
    fn files_and_directories_route_to_the_server_of_their_skill() {
        let shelf = super::super::Shelf::build(&[("a".into(), server(vec![skill("pdf")])), ("b".into(), server(vec![skill("notes")]))]);
        // Neither server lists the files as resources: the skill's directory says whose they are.
        assert_eq!(shelf.resource("skill://pdf/refs/a.md").unwrap().server, "a");
        assert_eq!(shelf.directory("skill://notes/refs").unwrap(), Route { server: "b".into(), own: "skill://notes/refs".into() });
        assert!(shelf.directory("skill://").unwrap_err().contains("several servers"));
        let q = qualified_uri("a", "skill://pdf/refs");
        assert_eq!(q, "skill://toolreg/a/pdf/refs");
        assert_eq!(shelf.directory(&q).unwrap(), Route { server: "a".into(), own: "skill://pdf/refs".into() });
        assert_eq!(shelf.resource(&q).unwrap().server, "a");
        assert!(shelf.features.skills && shelf.features.directory_read);
    }
}
