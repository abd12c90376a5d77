//! A credential the OAuth client hands on (a private key, a workload's identity token, an ID
//! token): given inline (the sidecar's host passes it in `catalog/setServers`, as a client
//! secret), or named: an environment variable or a file, read each time it is used, so a
//! workload token a platform rotates on disk (Kubernetes' projected tokens) is always current
//! (the gateway's config file then holds no secret).
//!
//! Invariant: the value is a `Secret` from the moment it is read; an error names the variable or
//! the path, never the value.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secret::Secret;

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum Credential {
    /// The value itself.
    Inline(Secret),
    /// `{"env": "NAME"}`: the value of an environment variable of this process.
    Env { env: String },
    /// `{"file": "/path"}`: a file's contents, surrounding whitespace removed.
    File { file: String },
}

impl Credential {
    /// The value, read now.
    pub fn read(&self) -> Result<Secret, String> {
        let value = match self {
            Credential::Inline(s) => return Ok(s.clone()),
            Credential::Env { env } => std::env::var(env).map_err(|_| format!("the environment variable {env} is not set"))?,
            Credential::File { file } => std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {}", e.kind()))?,
        };
        let value = value.trim();
        if value.is_empty() {
            return Err(match self {
                Credential::Env { env } => format!("the environment variable {env} is empty"),
                Credential::File { file } => format!("{file} is empty"),
                Credential::Inline(_) => unreachable!(),
            });
        }
        Ok(Secret::new(value))
    }

    /// The inline value, for the redactor (a named one is not known until read).
    pub fn inline(&self) -> Option<&Secret> {
        match self {
            Credential::Inline(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_reads_and_a_missing_source_is_named_not_quoted() {
        let inline: Credential = serde_json::from_value(serde_json::json!("v1")).unwrap();
        assert_eq!(inline.read().unwrap().expose(), "v1");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "  t2\n").unwrap();
        let file: Credential = serde_json::from_value(serde_json::json!({"file": path})).unwrap();
        assert_eq!(file.read().unwrap().expose(), "t2");
        std::fs::write(&path, "\n").unwrap();
        assert!(file.read().err().unwrap().ends_with("is empty"));
        let env: Credential = serde_json::from_value(serde_json::json!({"env": "TOOLREG_TEST_NO_SUCH_VARIABLE"})).unwrap();
        assert_eq!(env.read().err().unwrap(), "the environment variable TOOLREG_TEST_NO_SUCH_VARIABLE is not set");
        assert_eq!(format!("{inline:?}"), "Inline([redacted])");
    }
}
