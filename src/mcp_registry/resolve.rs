//! A `server.json` document to a `ServerConfig` the host can store: one package or remote
//! chosen, its command pinned to the document's exact version, its arguments, environment,
//! headers and URL variables as the document defines them, and the inputs the user still has
//! to fill. Each input stays in the configuration as `{name}` where it goes (an env or header
//! value, an argument, the URL) until the host (or `toolreg add`, `fill`) puts its value there.
//!
//! Invariants: the version is always pinned (a missing version, `latest`, a range, an OCI image
//! without a tag or digest or tagged `latest` is refused with the reason); every resolved
//! server is `quarantine: true` (its tools wait for the user's approval); a stdio package
//! runs under the default sandbox (`sandbox: true`, so a kernel that cannot give it refuses
//! to start it), except an OCI image, which runs in its own container outside it (said in the
//! notes and in `catalog/status`). A secret input's default is never echoed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::document::{Argument, Input, KeyValue, Package, Remote, ServerDoc};
use crate::catalog::ServerConfig;

/// Where an input's value goes.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InputPlace {
    Env,
    Header,
    Argument,
    Url,
}

/// One value the user provides: `{name}` in the resolved configuration is where it goes.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RegistryInput {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub is_secret: bool,
    pub is_required: bool,
    /// Never given for a secret input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(rename = "where")]
    pub place: InputPlace,
}

/// A document resolved: the configuration, its inputs, and what the user should know.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    pub server: ServerConfig,
    pub inputs: Vec<RegistryInput>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What a package or remote is, for the choice and the refusals.
enum Choice<'a> {
    Package(&'a Package),
    Remote(&'a Remote),
}

/// `doc` resolved with its `index`-th package or remote (packages first, then remotes), or by
/// default the first stdio package whose runtime `runnable` finds (`npx`, `uvx`, `docker`),
/// else the first remote, else the first package. `taken`: the host's server ids, which the
/// derived id avoids.
pub fn resolve(doc: &ServerDoc, index: Option<usize>, taken: &[String], runnable: &dyn Fn(&str) -> bool) -> Result<Resolved, String> {
    let choices: Vec<Choice> = doc.packages.iter().map(Choice::Package).chain(doc.remotes.iter().map(Choice::Remote)).collect();
    if choices.is_empty() {
        return Err(format!("{} lists no package and no remote to install", doc.name));
    }
    let picked = match index {
        Some(i) => choices.get(i).ok_or_else(|| format!("{} has {} packages and remotes (0 to {}); there is no {i}", doc.name, choices.len(), choices.len() - 1))?,
        None => choices
            .iter()
            .find(|c| matches!(c, Choice::Package(p) if p.transport.kind == "stdio" && runtime(p).is_some_and(runnable)))
            .or_else(|| choices.iter().find(|c| matches!(c, Choice::Remote(_))))
            .unwrap_or(&choices[0]),
    };
    let mut inputs = Inputs::default();
    let (transport, sandbox, mut notes) = match picked {
        Choice::Package(p) => package(doc, p, &mut inputs)?,
        Choice::Remote(r) => remote(r, &mut inputs)?,
    };
    notes.insert(0, "Quarantined: every tool it lists waits for the user's approval (catalog/pins, catalog/approveTools, toolreg pins).".to_owned());
    let mut server = serde_json::json!({
        "id": server_id(&doc.name, taken),
        "name": doc.title.clone().unwrap_or_else(|| doc.name.clone()),
        "transport": transport,
        "quarantine": true,
    });
    if let Some(sandbox) = sandbox {
        server["sandbox"] = sandbox.into();
    }
    let server: ServerConfig = serde_json::from_value(server).map_err(|e| format!("{}: {e}", doc.name))?;
    Ok(Resolved { server, inputs: inputs.0, notes })
}

/// The command a package's registry type runs under, when toolreg can run it.
fn runtime(p: &Package) -> Option<&'static str> {
    match p.registry_type.to_ascii_lowercase().as_str() {
        "npm" => Some("npx"),
        "pypi" => Some("uvx"),
        "oci" => Some("docker"),
        _ => None,
    }
}

/// A version the document pins exactly, or why not.
fn pinned(what: &str, version: Option<&str>) -> Result<String, String> {
    let Some(v) = version.map(str::trim).filter(|v| !v.is_empty()) else {
        return Err(format!("{what} has no version: toolreg installs only a pinned version"));
    };
    let ranged = v.eq_ignore_ascii_case("latest")
        || v.contains(['^', '~', '>', '<', '=', '*', ' ', '|'])
        || v.split('.').any(|part| part.eq_ignore_ascii_case("x"));
    if ranged {
        return Err(format!("{what} is at version {v:?}, not one exact version: toolreg installs only a pinned version"));
    }
    Ok(v.to_owned())
}

type Transport = (serde_json::Value, Option<bool>, Vec<String>);

fn package(doc: &ServerDoc, p: &Package, inputs: &mut Inputs) -> Result<Transport, String> {
    let kind = p.registry_type.to_ascii_lowercase();
    let what = format!("{kind} package {}", p.identifier);
    let Some(program) = runtime(p) else {
        return Err(format!("{} is a {kind} package, which toolreg cannot install (it runs npm, pypi and oci packages, and remotes)", doc.name));
    };
    if p.transport.kind != "stdio" {
        return Err(format!("{what} serves {} itself once started; toolreg starts only stdio packages (start it yourself and add its URL)", p.transport.kind));
    }
    let runtime_args = inputs.arguments(&p.runtime_arguments);
    let package_args = inputs.arguments(&p.package_arguments);
    let env = inputs.key_values(&p.environment_variables, InputPlace::Env);
    let mut notes = Vec::new();
    let (args, sandbox) = match program {
        "npx" => {
            let version = pinned(&what, p.version.as_deref())?;
            ([vec!["-y".to_owned()], runtime_args, vec![format!("{}@{version}", p.identifier)], package_args].concat(), true)
        }
        "uvx" => {
            let version = pinned(&what, p.version.as_deref())?;
            ([runtime_args, vec![format!("{}=={version}", p.identifier)], package_args].concat(), true)
        }
        _ => {
            oci_pinned(&p.identifier)?;
            notes.push("Runs as a Docker container, outside toolreg's sandbox (the container is its confinement).".to_owned());
            let passed = env.keys().flat_map(|k| ["-e".to_owned(), k.clone()]);
            ([vec!["run".to_owned(), "--rm".to_owned(), "-i".to_owned()], runtime_args, passed.collect(), vec![p.identifier.clone()], package_args].concat(), false)
        }
    };
    let transport = serde_json::json!({"type": "stdio", "command": program, "args": args, "env": env});
    Ok((transport, Some(sandbox), notes))
}

/// An OCI image reference with a tag other than `latest`, or a digest.
fn oci_pinned(image: &str) -> Result<(), String> {
    if image.contains("@sha256:") {
        return Ok(());
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) if !tag.is_empty() && !tag.eq_ignore_ascii_case("latest") => Ok(()),
        _ => Err(format!("oci image {image} has no tag or digest, or is tagged latest: toolreg installs only a pinned image")),
    }
}

fn remote(r: &Remote, inputs: &mut Inputs) -> Result<Transport, String> {
    let kind = match r.kind.as_str() {
        "streamable-http" => "http",
        "sse" => "sse",
        other => return Err(format!("a remote of type {other:?} is not one toolreg speaks (streamable-http, sse)")),
    };
    inputs.variables(&r.variables, InputPlace::Url);
    let headers = inputs.key_values(&r.headers, InputPlace::Header);
    Ok((serde_json::json!({"type": kind, "url": r.url, "headers": headers}), None, Vec::new()))
}

/// The inputs gathered while the configuration is written, each once.
#[derive(Default)]
struct Inputs(Vec<RegistryInput>);

impl Inputs {
    fn add(&mut self, name: &str, input: &Input, place: InputPlace) {
        if self.0.iter().any(|i| i.name == name) {
            return;
        }
        self.0.push(RegistryInput {
            name: name.to_owned(),
            description: input.description.clone(),
            is_secret: input.is_secret,
            is_required: input.is_required,
            default: input.default.clone().filter(|_| !input.is_secret),
            place,
        });
    }

    fn variables(&mut self, variables: &BTreeMap<String, Input>, place: InputPlace) {
        for (name, input) in variables {
            self.add(name, input, place);
        }
    }

    /// A value as the document fixes it (its `{variables}` inputs), or `{name}`, an input.
    fn value(&mut self, name: &str, input: &Input, variables: &BTreeMap<String, Input>, place: InputPlace) -> Option<String> {
        if let Some(value) = &input.value {
            self.variables(variables, place);
            return Some(value.clone());
        }
        if !input.is_required && input.default.is_none() {
            // Optional and unset: left out, as a client that asks nothing would.
            return None;
        }
        self.add(name, input, place);
        Some(format!("{{{name}}}"))
    }

    fn key_values(&mut self, kvs: &[KeyValue], place: InputPlace) -> BTreeMap<String, String> {
        kvs.iter().filter_map(|kv| Some((kv.name.clone(), self.value(&kv.name, &kv.input, &kv.variables, place)?))).collect()
    }

    fn arguments(&mut self, args: &[Argument]) -> Vec<String> {
        let mut out = Vec::new();
        for a in args {
            let flag = a.name.as_deref().unwrap_or_default();
            let label = a.value_hint.clone().unwrap_or_else(|| flag.trim_start_matches('-').to_owned());
            let value = self.value(&label, &a.input, &a.variables, InputPlace::Argument);
            match (a.kind.as_str(), value) {
                ("named", Some(v)) => out.push(format!("{flag}={v}")),
                ("named", None) if a.input.is_required => out.push(flag.to_owned()),
                (_, Some(v)) => out.push(v),
                _ => {}
            }
        }
        out
    }
}

/// The name's last segment as a server id (lowercase letters, digits, `-` and `_`: a valid
/// `server/tool` key), made unique among `taken` with `-2`, `-3`...
pub fn server_id(name: &str, taken: &[String]) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let mut id: String = last.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' }).collect();
    id = id.trim_matches('-').to_owned();
    if id.is_empty() {
        id = "server".to_owned();
    }
    let mut out = id.clone();
    let mut n = 2;
    while taken.iter().any(|t| *t == out) {
        out = format!("{id}-{n}");
        n += 1;
    }
    out
}

/// `config` with `value` put where `{name}` is (env and header values, arguments, the URL);
/// an env or header input that was left out goes in as `name: value`.
pub fn fill(config: &mut serde_json::Value, input: &RegistryInput, value: &str) {
    let mark = format!("{{{}}}", input.name);
    let put = |s: &mut serde_json::Value| {
        if let Some(text) = s.as_str().filter(|t| t.contains(&mark)) {
            *s = text.replace(&mark, value).into();
        }
    };
    let t = &mut config["transport"];
    for key in ["env", "headers"] {
        if let Some(map) = t.get_mut(key).and_then(|m| m.as_object_mut()) {
            map.values_mut().for_each(put);
        }
    }
    if let Some(args) = t.get_mut("args").and_then(|a| a.as_array_mut()) {
        args.iter_mut().for_each(put);
    }
    if let Some(url) = t.get_mut("url") {
        put(url);
    }
    let key = match input.place {
        InputPlace::Env => "env",
        InputPlace::Header => "headers",
        _ => return,
    };
    if let Some(map) = t.get_mut(key).and_then(|m| m.as_object_mut()) {
        map.entry(input.name.clone()).or_insert_with(|| value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: serde_json::Value) -> ServerDoc {
        super::super::document::read(&v).unwrap()
    }

    #[test]
    fn ids_are_the_last_segment_made_unique() {
        assert_eq!(server_id("io.github.example/Weather.API", &[]), "weather-api");
        assert_eq!(server_id("a.b/notes", &["notes".into(), "notes-2".into()]), "notes-3");
    }

    #[test]
    fn a_range_or_latest_or_an_unpinned_image_is_refused() {
        for v in ["^1.2.3", "1.x", ">=1", "*", "latest"] {
            assert!(pinned("npm package x", Some(v)).unwrap_err().contains("not one exact version"), "{v}");
        }
        assert!(pinned("x", None).unwrap_err().contains("has no version"));
        assert!(oci_pinned("ghcr.io/a/b").is_err() && oci_pinned("b:latest").is_err());
        assert!(oci_pinned("ghcr.io/a/b:1.2").is_ok() && oci_pinned("b@sha256:00").is_ok());
        assert!(oci_pinned("localhost:5000/b").is_err(), "a registry port is not a tag");
    }

    #[test]
    fn npm_with_arguments_and_a_secret_env() {
        let d = doc(json!({"name": "io.github.example/weather", "description": "d", "version": "1.0.2",
            "packages": [{"registryType": "npm", "identifier": "@example/weather", "version": "1.0.2", "transport": {"type": "stdio"},
                "packageArguments": [{"type": "positional", "valueHint": "dir", "isRequired": true},
                                     {"type": "named", "name": "--units", "default": "metric", "description": "Units"}],
                "environmentVariables": [{"name": "API_KEY", "isSecret": true, "isRequired": true, "default": "sk-never-shown"},
                                         {"name": "OPTIONAL"}]}]}));
        let r = resolve(&d, None, &[], &|p| p == "npx").unwrap();
        let v = serde_json::to_value(&r.server).unwrap();
        assert_eq!(v["transport"]["command"], "npx");
        assert_eq!(v["transport"]["args"], json!(["-y", "@example/weather@1.0.2", "{dir}", "--units={units}"]));
        assert_eq!(v["transport"]["env"], json!({"API_KEY": "{API_KEY}"}));
        assert_eq!((v["quarantine"].clone(), v["sandbox"].clone()), (json!(true), json!(true)));
        let secret = r.inputs.iter().find(|i| i.name == "API_KEY").unwrap();
        assert!(secret.is_secret && secret.default.is_none() && secret.place == InputPlace::Env);
        assert!(!serde_json::to_string(&r).unwrap().contains("sk-never-shown"));
        let units = r.inputs.iter().find(|i| i.name == "units").unwrap();
        assert_eq!(units.default.as_deref(), Some("metric"));
        let mut filled = v.clone();
        fill(&mut filled, secret, "s3cret");
        fill(&mut filled, units, "si");
        assert_eq!(filled["transport"]["env"]["API_KEY"], "s3cret");
        assert_eq!(filled["transport"]["args"][3], "--units=si");
    }

    #[test]
    fn pypi_oci_remote_and_the_refused_kinds() {
        let d = doc(json!({"name": "a.b/multi", "description": "d", "version": "2",
            "packages": [
                {"registryType": "nuget", "identifier": "Multi", "version": "2.0.0", "transport": {"type": "stdio"}},
                {"registryType": "pypi", "identifier": "multi-mcp", "version": "2.0.0", "transport": {"type": "stdio"}},
                {"registryType": "oci", "identifier": "ghcr.io/a/multi:2.0.0", "transport": {"type": "stdio"},
                    "environmentVariables": [{"name": "TOKEN", "isSecret": true, "isRequired": true}]}],
            "remotes": [{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                "variables": {"tenant": {"isRequired": true}},
                "headers": [{"name": "Authorization", "value": "Bearer {token}", "variables": {"token": {"isSecret": true, "isRequired": true}}}]}]}));
        assert!(resolve(&d, Some(0), &[], &|_| true).unwrap_err().contains("nuget package"));
        let py = resolve(&d, None, &[], &|p| p == "uvx").unwrap();
        assert_eq!(serde_json::to_value(&py.server).unwrap()["transport"]["args"], json!(["multi-mcp==2.0.0"]));
        let oci = serde_json::to_value(resolve(&d, Some(2), &[], &|_| true).unwrap().server).unwrap();
        assert_eq!(oci["transport"]["args"], json!(["run", "--rm", "-i", "-e", "TOKEN", "ghcr.io/a/multi:2.0.0"]));
        assert_eq!(oci["sandbox"], false);
        let remote = resolve(&d, None, &[], &|_| false).unwrap();
        let v = serde_json::to_value(&remote.server).unwrap();
        assert_eq!(v["transport"], json!({"type": "http", "url": "https://{tenant}.example.com/mcp", "headers": {"Authorization": "Bearer {token}"}}));
        let names: Vec<(&str, InputPlace)> = remote.inputs.iter().map(|i| (i.name.as_str(), i.place)).collect();
        assert_eq!(names, [("tenant", InputPlace::Url), ("token", InputPlace::Header)]);
        assert!(resolve(&d, Some(9), &[], &|_| true).unwrap_err().contains("there is no 9"));
    }
}
