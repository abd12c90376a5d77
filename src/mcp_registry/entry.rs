//! A resolved server as a config file's entry (`toolreg add`): its inputs filled from the
//! user's values (else their defaults), and every secret kept out of the file as a reference
//! (`secret::reference`): a value the user gave goes to a file the caller writes owner-only
//! (`{"file": PATH}`), a value not given is read from an environment variable at start
//! (`{"env": NAME}`). A secret that would sit in the command line or the URL, where no
//! reference can stand, is refused rather than written.

use std::collections::BTreeMap;

use serde_json::Value;

use super::resolve::{fill, InputPlace, RegistryInput, Resolved};
use crate::secret::reference::SecretRef;

/// How one secret is kept: the env or header key it is the value of, and the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptSecret {
    /// `env.NAME` or `headers.NAME`.
    pub key: String,
    pub reference: SecretRef,
    /// What the variable must hold when the value is more than the secret (`Bearer <token>`).
    pub shape: Option<String>,
}

/// The entry to write and how its secrets are kept.
#[derive(Debug, Clone)]
pub struct Entry {
    pub server: Value,
    pub secrets: Vec<KeptSecret>,
}

/// `resolved` filled with `values` (by input name). `keep(key, value)` stores a secret value
/// the user gave and returns the path it is kept at. Unknown names, required inputs left
/// without a value and secrets outside `env` and `headers` are errors naming the input.
pub fn entry(resolved: &Resolved, values: &BTreeMap<String, String>, keep: &mut dyn FnMut(&str, &str) -> Result<std::path::PathBuf, String>) -> Result<Entry, String> {
    let names: Vec<&str> = resolved.inputs.iter().map(|i| i.name.as_str()).collect();
    if let Some(unknown) = values.keys().find(|k| !names.contains(&k.as_str())) {
        return Err(format!("{unknown:?} is not an input of this server (its inputs: {})", if names.is_empty() { "none".to_owned() } else { names.join(", ") }));
    }
    let mut server = serde_json::to_value(&resolved.server).map_err(|e| e.to_string())?;
    let (secrets, plain): (Vec<&RegistryInput>, Vec<&RegistryInput>) = resolved.inputs.iter().partition(|i| i.is_secret);
    for input in plain {
        match values.get(&input.name).or(input.default.as_ref()) {
            Some(v) => fill(&mut server, input, v),
            None => return Err(format!("input {} is required: add --set {}=VALUE", input.name, input.name)),
        }
    }
    let mut kept = Vec::new();
    for input in secrets {
        let key = match input.place {
            InputPlace::Env => "env",
            InputPlace::Header => "headers",
            _ => return Err(format!("the secret input {} goes into the command line or the URL, where it would be written in the config: add this server by hand", input.name)),
        };
        let mark = format!("{{{}}}", input.name);
        let Some(map) = server.pointer_mut(&format!("/transport/{key}")).and_then(Value::as_object_mut) else { continue };
        if !map.values().any(|v| v.as_str().is_some_and(|t| t.contains(&mark))) {
            if values.contains_key(&input.name) || input.is_required {
                map.insert(input.name.clone(), mark.clone().into());
            } else {
                continue;
            }
        }
        for (name, value) in map.iter_mut() {
            let Some(template) = value.as_str().filter(|t| t.contains(&mark)).map(str::to_owned) else { continue };
            let reference = match values.get(&input.name) {
                Some(secret) => SecretRef::File(keep(&format!("{key}.{name}"), &template.replace(&mark, secret))?),
                None => SecretRef::Env(if key == "env" { name.clone() } else { env_name(&input.name) }),
            };
            let shape = (template != mark).then(|| template.replace(&mark, &format!("<{}>", input.name)));
            kept.push(KeptSecret { key: format!("{key}.{name}"), reference: reference.clone(), shape });
            *value = reference.to_value();
        }
    }
    Ok(Entry { server, secrets: kept })
}

/// An input's name as an environment variable: upper case, `_` for anything else.
fn env_name(input: &str) -> String {
    input.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resolved(transport: Value, inputs: Value) -> Resolved {
        serde_json::from_value(json!({"server": {"id": "w", "name": "W", "quarantine": true, "transport": transport}, "inputs": inputs})).unwrap()
    }

    #[test]
    fn secrets_become_references_and_plain_inputs_are_filled() {
        let r = resolved(
            json!({"type": "http", "url": "https://{tenant}.example.com/mcp", "headers": {"Authorization": "Bearer {token}"}}),
            json!([{"name": "tenant", "isSecret": false, "isRequired": true, "where": "url"},
                   {"name": "token", "isSecret": true, "isRequired": true, "where": "header"}]),
        );
        let mut stored = Vec::new();
        let values = BTreeMap::from([("tenant".to_owned(), "acme".to_owned()), ("token".to_owned(), "s3cret".to_owned())]);
        let e = entry(&r, &values, &mut |key, v| {
            stored.push((key.to_owned(), v.to_owned()));
            Ok("/kept/token".into())
        })
        .unwrap();
        assert_eq!(e.server["transport"]["url"], "https://acme.example.com/mcp");
        assert_eq!(e.server["transport"]["headers"]["Authorization"], json!({"file": "/kept/token"}));
        assert_eq!(stored, [("headers.Authorization".to_owned(), "Bearer s3cret".to_owned())]);
        assert!(!e.server.to_string().contains("s3cret"));
        // Not given: read from an environment variable, whose shape is said.
        let e = entry(&r, &BTreeMap::from([("tenant".to_owned(), "acme".to_owned())]), &mut |_, _| unreachable!()).unwrap();
        assert_eq!(e.server["transport"]["headers"]["Authorization"], json!({"env": "TOKEN"}));
        assert_eq!(e.secrets[0].shape.as_deref(), Some("Bearer <token>"));
        assert!(entry(&r, &BTreeMap::new(), &mut |_, _| unreachable!()).unwrap_err().contains("--set tenant=VALUE"));
        assert!(entry(&r, &BTreeMap::from([("nope".to_owned(), "x".to_owned())]), &mut |_, _| unreachable!()).unwrap_err().contains("tenant, token"));
    }

    #[test]
    fn a_secret_argument_is_refused() {
        let r = resolved(json!({"type": "stdio", "command": "npx", "args": ["--key={key}"]}), json!([{"name": "key", "isSecret": true, "isRequired": true, "where": "argument"}]));
        assert!(entry(&r, &BTreeMap::new(), &mut |_, _| unreachable!()).unwrap_err().contains("add this server by hand"));
    }
}
