//! `gateway.profiles`: named views of the same connected servers (issue 43 §1). A profile picks
//! servers by id or by a tag expression over their `tags`, narrows tools by `server/tool`
//! patterns, and may set its own plan settings; it is served at `/mcp/<name>` (and by
//! `toolreg mcp --profile NAME`), optionally behind a bearer token of its own.
//!
//! This module is the profile as the config says it and the selection it compiles to; the view
//! that serves it is `lens.rs`.
//!
//! A tool is in a profile when its server is selected (`servers` names it, or `tags` matches
//! the server's tags; neither given: every server), or when `tags` matches the server's tags
//! together with the tool's (`gateway.toolTags`); and then only if `tools.allow` (when given)
//! matches it and `tools.deny` does not. A server's resources and prompts are in a profile when
//! the server is selected.

use crate::catalog::ServerConfig;
use crate::secret::Secret;
use crate::service::Defer;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// One profile as the config writes it.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// Server ids: each one's tools, resources and prompts.
    #[serde(default)]
    pub servers: Option<Vec<String>>,
    /// A tag expression (`and`, `or`, `not`, parentheses) over server (and tool) tags.
    #[serde(default)]
    pub tags: Option<String>,
    #[serde(default)]
    pub tools: ToolPatterns,
    /// Plan settings; each absent one is the `gateway` block's.
    #[serde(default)]
    pub defer: Option<Defer>,
    #[serde(default)]
    pub defer_servers: Option<BTreeMap<String, Defer>>,
    /// `true`, `false` or limits, as `gateway.codeMode`; absent: the gateway's.
    #[serde(default, deserialize_with = "some_code_mode")]
    pub code_mode: Option<Option<crate::service::Limits>>,
    #[serde(default)]
    pub usage: Option<crate::settings::UsagePolicy>,
    /// Where the profile's calls are counted (default `profile:<name>`).
    #[serde(default)]
    pub usage_key: Option<String>,
    /// `tool_search`'s semantic signal for this profile; absent: the file's `search`.
    #[serde(default)]
    pub search: Option<crate::settings::SearchSettings>,
    /// A bearer token that opens this profile only (`--http`).
    #[serde(default)]
    pub token: Option<TokenSource>,
}

/// `tools: {allow?, deny?}`: `server/tool` patterns (`*` any run, `?` one character), on the
/// upstream names.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolPatterns {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// Where a profile's token is read: an environment variable or a file (its first line).
#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum TokenSource {
    Env(String),
    File(std::path::PathBuf),
}

fn some_code_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<crate::service::Limits>>, D::Error> {
    super::config::code_mode(d).map(Some)
}

impl TokenSource {
    /// The token, or why there is none (never the token itself).
    pub fn read(&self) -> Result<Secret, String> {
        let token = match self {
            TokenSource::Env(name) => std::env::var(name).map_err(|_| format!("${name} is not set"))?,
            TokenSource::File(path) => std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        };
        let token = token.lines().next().unwrap_or_default().trim().to_string();
        if token.len() < 16 {
            return Err("the token is shorter than 16 characters".into());
        }
        Ok(Secret::new(token))
    }
}

/// A tag expression, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum TagExpr {
    Tag(String),
    Not(Box<TagExpr>),
    And(Box<TagExpr>, Box<TagExpr>),
    Or(Box<TagExpr>, Box<TagExpr>),
}

impl TagExpr {
    /// `and` binds tighter than `or`, `not` tighter than both; `&&`, `||` and `!` are the same.
    pub fn parse(text: &str) -> Result<TagExpr, String> {
        let tokens = lex(text)?;
        let mut p = Parser { tokens: &tokens, at: 0 };
        let e = p.or()?;
        match p.tokens.get(p.at) {
            None => Ok(e),
            Some(t) => Err(format!("unexpected {t:?} at word {}", p.at + 1)),
        }
    }

    pub fn matches(&self, tags: &BTreeSet<&str>) -> bool {
        match self {
            TagExpr::Tag(t) => tags.contains(t.as_str()),
            TagExpr::Not(e) => !e.matches(tags),
            TagExpr::And(a, b) => a.matches(tags) && b.matches(tags),
            TagExpr::Or(a, b) => a.matches(tags) || b.matches(tags),
        }
    }
}

fn lex(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | '!' => {
                chars.next();
                out.push(if c == '!' { "not".into() } else { c.to_string() });
            }
            '&' | '|' => {
                chars.next();
                if chars.next() != Some(c) {
                    return Err(format!("{c} alone: write {c}{c} or {}", if c == '&' { "and" } else { "or" }));
                }
                out.push(if c == '&' { "and".into() } else { "or".into() });
            }
            c if is_tag_char(c) => {
                let mut word = String::new();
                while let Some(&c) = chars.peek().filter(|c| is_tag_char(**c)) {
                    word.push(c);
                    chars.next();
                }
                out.push(word);
            }
            c => return Err(format!("{c:?} is not part of a tag expression (tags are letters, digits and _ - . :)")),
        }
    }
    if out.is_empty() {
        return Err("the expression is empty".into());
    }
    Ok(out)
}

fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

struct Parser<'t> {
    tokens: &'t [String],
    at: usize,
}

impl Parser<'_> {
    fn next_is(&self, word: &str) -> bool {
        self.tokens.get(self.at).is_some_and(|t| t == word)
    }

    fn or(&mut self) -> Result<TagExpr, String> {
        let mut e = self.and()?;
        while self.next_is("or") {
            self.at += 1;
            e = TagExpr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<TagExpr, String> {
        let mut e = self.not()?;
        while self.next_is("and") {
            self.at += 1;
            e = TagExpr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<TagExpr, String> {
        if self.next_is("not") {
            self.at += 1;
            return Ok(TagExpr::Not(Box::new(self.not()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<TagExpr, String> {
        let Some(t) = self.tokens.get(self.at) else { return Err("the expression ends where a tag or ( was expected".into()) };
        self.at += 1;
        match t.as_str() {
            "(" => {
                let e = self.or()?;
                if !self.next_is(")") {
                    return Err("a ( is not closed".into());
                }
                self.at += 1;
                Ok(e)
            }
            ")" | "and" | "or" => Err(format!("unexpected {t:?} at word {}", self.at)),
            tag => Ok(TagExpr::Tag(tag.to_string())),
        }
    }
}

/// A profile compiled against the config: what it selects.
#[derive(Debug)]
pub struct Selection {
    servers: Option<BTreeSet<String>>,
    tags: Option<TagExpr>,
    allow: Vec<regex_lite::Regex>,
    deny: Vec<regex_lite::Regex>,
    /// Each server's tags, by id.
    server_tags: BTreeMap<String, Vec<String>>,
    /// `gateway.toolTags`: `server/tool` pattern and its tags.
    tool_tags: Vec<(regex_lite::Regex, Vec<String>)>,
}

impl Selection {
    /// The selection of `profile` over `servers`; the error names what is wrong.
    pub fn compile(profile: &Profile, servers: &[ServerConfig], tool_tags: &BTreeMap<String, Vec<String>>) -> Result<Selection, String> {
        let known: BTreeSet<&str> = servers.iter().map(|s| s.id.as_str()).collect();
        if let Some(ids) = &profile.servers {
            if let Some(unknown) = ids.iter().find(|id| !known.contains(id.as_str())) {
                return Err(format!("servers names {unknown:?}, which is no configured server"));
            }
        }
        if let Some(unknown) = profile.defer_servers.iter().flatten().map(|(id, _)| id).find(|id| !known.contains(id.as_str())) {
            return Err(format!("deferServers names {unknown:?}, which is no configured server"));
        }
        let tags = profile.tags.as_deref().map(TagExpr::parse).transpose().map_err(|e| format!("tags {:?}: {e}", profile.tags.as_deref().unwrap_or_default()))?;
        let patterns = |what: &str, list: &[String]| list.iter().map(|p| pattern(p).map_err(|e| format!("tools.{what}: {e}"))).collect::<Result<Vec<_>, _>>();
        Ok(Selection {
            servers: profile.servers.as_ref().map(|ids| ids.iter().cloned().collect()),
            tags,
            allow: patterns("allow", &profile.tools.allow)?,
            deny: patterns("deny", &profile.tools.deny)?,
            server_tags: servers.iter().map(|s| (s.id.clone(), s.tags.clone())).collect(),
            tool_tags: tool_tags.iter().map(|(p, tags)| Ok((pattern(p)?, tags.clone()))).collect::<Result<_, String>>()?,
        })
    }

    /// Whether the server's tools (unless narrowed), resources and prompts are in the profile.
    pub fn server(&self, id: &str) -> bool {
        if self.servers.is_none() && self.tags.is_none() {
            return true;
        }
        let tags: BTreeSet<&str> = self.server_tags.get(id).into_iter().flatten().map(String::as_str).collect();
        self.servers.as_ref().is_some_and(|s| s.contains(id)) || self.tags.as_ref().is_some_and(|e| e.matches(&tags))
    }

    /// Whether upstream tool `tool` of server `id` is in the profile.
    pub fn tool(&self, id: &str, tool: &str) -> bool {
        let key = format!("{id}/{tool}");
        let picked = self.server(id)
            || self.tags.as_ref().is_some_and(|e| {
                let mut tags: BTreeSet<&str> = self.server_tags.get(id).into_iter().flatten().map(String::as_str).collect();
                tags.extend(self.tool_tags.iter().filter(|(p, _)| p.is_match(&key)).flat_map(|(_, t)| t.iter().map(String::as_str)));
                e.matches(&tags)
            });
        picked && (self.allow.is_empty() || self.allow.iter().any(|p| p.is_match(&key))) && !self.deny.iter().any(|p| p.is_match(&key))
    }
}

/// `*` any run of characters, `?` one, the rest literal; the whole name must match.
fn pattern(text: &str) -> Result<regex_lite::Regex, String> {
    crate::service::Service::tool_pattern(text).map_err(|e| e.replace("--tool ", "pattern "))
}

/// Profile names go into a URL path (`/mcp/<name>`) and a usage key.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!("profile name {name:?}: use 1 to 64 letters, digits, - and _ (it is a URL path segment)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tags(list: &[&'static str]) -> BTreeSet<&'static str> {
        list.iter().copied().collect()
    }

    #[test]
    fn expressions_bind_not_then_and_then_or() {
        let e = TagExpr::parse("web or files and not private").unwrap();
        assert!(e.matches(&tags(&["web", "private"])), "or binds loosest");
        assert!(e.matches(&tags(&["files"])));
        assert!(!e.matches(&tags(&["files", "private"])));
        let p = TagExpr::parse("(web || files) && !private").unwrap();
        assert!(!p.matches(&tags(&["web", "private"])));
        assert!(p.matches(&tags(&["web"])));
        for bad in ["", "web and", "(web", "web)", "web & files", "or web", "web files", "we$b"] {
            assert!(TagExpr::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }

    fn servers() -> Vec<ServerConfig> {
        let s = |id: &str, tags: &[&str]| -> ServerConfig {
            serde_json::from_value(json!({"id": id, "name": id, "tags": tags, "transport": {"type": "stdio", "command": "x"}})).unwrap()
        };
        vec![s("fs", &["files", "local"]), s("web", &["web"]), s("notes", &[])]
    }

    fn selection(profile: serde_json::Value) -> Result<Selection, String> {
        let p: Profile = serde_json::from_value(profile).map_err(|e| e.to_string())?;
        let tool_tags = BTreeMap::from([("notes/read_*".to_string(), vec!["files".to_string()])]);
        Selection::compile(&p, &servers(), &tool_tags)
    }

    #[test]
    fn a_profile_selects_servers_by_id_and_tags_and_tools_by_pattern() {
        let all = selection(json!({})).unwrap();
        assert!(all.server("notes") && all.tool("web", "fetch"));
        let files = selection(json!({"tags": "files and not web"})).unwrap();
        assert!(files.server("fs") && !files.server("web") && !files.server("notes"));
        assert!(files.tool("notes", "read_note"), "a tool's own tags count with its server's");
        assert!(!files.tool("notes", "write_note"));
        let named = selection(json!({"servers": ["web"], "tools": {"deny": ["web/delete*"]}})).unwrap();
        assert!(named.tool("web", "fetch") && !named.tool("web", "delete_page") && !named.tool("fs", "read"));
        let allowed = selection(json!({"tools": {"allow": ["fs/read_?"]}})).unwrap();
        assert!(allowed.tool("fs", "read_a") && !allowed.tool("fs", "read_ab") && allowed.server("web"));
    }

    #[test]
    fn unknown_servers_and_bad_expressions_are_refused_by_name() {
        assert!(selection(json!({"servers": ["nope"]})).unwrap_err().contains("\"nope\""));
        assert!(selection(json!({"deferServers": {"nope": "always"}})).unwrap_err().contains("\"nope\""));
        assert!(selection(json!({"tags": "files and"})).unwrap_err().contains("tags \"files and\""));
        assert!(selection(json!({"tools": {"allo": []}})).unwrap_err().contains("unknown field"));
        assert!(check_name("ops-team_1").is_ok() && check_name("a/b").is_err() && check_name("").is_err());
    }
}
