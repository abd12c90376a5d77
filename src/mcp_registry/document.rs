//! A `server.json` document as the official MCP Registry publishes it: checked against the
//! official schema (`server.schema.json` beside this file, a copy of
//! modelcontextprotocol/registry's `internal/validators/schemas/2025-12-11.json`, `$id`
//! `https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json`), then read
//! into the few types resolution needs. Fields the schema allows and resolution does not use
//! (icons, repository, `_meta`) are not kept.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// The official schema, as published (never edited here: update it by copying a newer one).
pub const SCHEMA: &str = include_str!("server.schema.json");

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDoc {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    #[serde(default)]
    pub packages: Vec<Package>,
    #[serde(default)]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub registry_type: String,
    pub identifier: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub runtime_hint: Option<String>,
    pub transport: PackageTransport,
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<KeyValue>,
}

/// How a package speaks once started: only `stdio` is something toolreg can start itself.
#[derive(Debug, Clone, Deserialize)]
pub struct PackageTransport {
    #[serde(rename = "type")]
    pub kind: String,
}

/// A remote: `streamable-http` or `sse`, its URL template, headers and URL variables.
#[derive(Debug, Clone, Deserialize)]
pub struct Remote {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(default)]
    pub headers: Vec<KeyValue>,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// What the schema calls `Input`: a value, or what the user is asked for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    #[serde(default)]
    pub is_secret: bool,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub default: Option<String>,
}

/// An environment variable or a header (`KeyValueInput`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValue {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A positional or named (`--flag`) argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value_hint: Option<String>,
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

impl ServerDoc {
    /// What the document offers: its packages' registry types (`npm`, `pypi`, `oci`, `nuget`,
    /// `mcpb`, ...) then `remote`, each once.
    pub fn kinds(&self) -> Vec<String> {
        let mut kinds: Vec<String> = Vec::new();
        let all = self.packages.iter().map(|p| p.registry_type.to_ascii_lowercase()).chain((!self.remotes.is_empty()).then(|| "remote".to_owned()));
        for k in all {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        kinds
    }
}

/// `doc` checked against the official schema and read; the error says what is wrong (the
/// schema's first messages), never a value the document holds beyond its paths.
pub fn read(doc: &Value) -> Result<ServerDoc, String> {
    static SCHEMA_VALUE: OnceLock<Value> = OnceLock::new();
    static VALIDATORS: OnceLock<crate::validate::Validators> = OnceLock::new();
    let schema = SCHEMA_VALUE.get_or_init(|| serde_json::from_str(SCHEMA).expect("the committed server.json schema parses"));
    VALIDATORS.get_or_init(crate::validate::Validators::new).validate(schema, doc).map_err(|errors| errors.join("; "))?;
    serde_json::from_value(doc.clone()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_official_schema_accepts_a_real_document_and_refuses_a_broken_one() {
        let doc = json!({"$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": "io.github.example/weather", "description": "Weather", "version": "1.0.2",
            "packages": [{"registryType": "npm", "identifier": "@example/weather", "version": "1.0.2", "transport": {"type": "stdio"},
                "environmentVariables": [{"name": "API_KEY", "isSecret": true, "isRequired": true}]}],
            "remotes": [{"type": "streamable-http", "url": "https://weather.example.com/mcp"}]});
        let read = read(&doc).unwrap();
        assert_eq!(read.kinds(), ["npm", "remote"]);
        assert!(read.packages[0].environment_variables[0].input.is_secret);
        let no_version = json!({"name": "io.github.example/weather", "description": "Weather"});
        assert!(super::read(&no_version).unwrap_err().contains("version"));
        let latest = json!({"name": "a.b/c", "description": "d", "version": "1",
            "packages": [{"registryType": "npm", "identifier": "x", "version": "latest", "transport": {"type": "stdio"}}]});
        assert!(super::read(&latest).unwrap_err().contains("/packages/0/version"), "the schema's own `not latest`");
        let bad_name = json!({"name": "no-slash", "description": "d", "version": "1"});
        assert!(super::read(&bad_name).unwrap_err().contains("/name"));
    }
}
