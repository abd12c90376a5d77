//! A secret kept out of a config file: `{"env": "NAME"}` (an environment variable of the
//! process that reads the file) or `{"file": "PATH"}` (the file's text, its trailing newline
//! dropped; `toolreg add` writes such files owner-only), as the gateway's profile tokens are.
//! The gateway reads `env` and `headers` values of its servers in either form; an error names
//! the variable or the path, never a value.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::Secret;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretRef {
    Env(String),
    File(PathBuf),
}

impl SecretRef {
    /// The reference `value` is: `None` for a plain string (the secret itself), an error for
    /// another shape.
    pub fn of(value: &Value) -> Option<Result<SecretRef, String>> {
        let map = value.as_object()?;
        let one = |k: &str| map.get(k).and_then(Value::as_str).filter(|v| !v.is_empty() && map.len() == 1);
        Some(match (one("env"), one("file")) {
            (Some(name), _) => Ok(SecretRef::Env(name.to_owned())),
            (_, Some(path)) => Ok(SecretRef::File(PathBuf::from(path))),
            _ => Err("a value must be a string, {\"env\": \"NAME\"} or {\"file\": \"PATH\"}".to_owned()),
        })
    }

    pub fn to_value(&self) -> Value {
        match self {
            SecretRef::Env(name) => json!({"env": name}),
            SecretRef::File(path) => json!({"file": path}),
        }
    }

    /// The secret, or why it cannot be read.
    pub fn read(&self) -> Result<Secret, String> {
        let text = match self {
            SecretRef::Env(name) => std::env::var(name).map_err(|_| format!("${name} is not set"))?,
            SecretRef::File(path) => std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {}", path.display(), e.kind()))?,
        };
        Ok(Secret::new(text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_read_from_the_environment_or_a_file_and_errors_name_no_value() {
        assert_eq!(SecretRef::of(&json!("plain")), None);
        assert_eq!(SecretRef::of(&json!({"env": "X"})), Some(Ok(SecretRef::Env("X".into()))));
        assert!(SecretRef::of(&json!({"env": "X", "file": "y"})).unwrap().is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret-value\n").unwrap();
        assert_eq!(SecretRef::File(path.clone()).read().unwrap().expose(), "s3cret-value");
        assert!(SecretRef::Env("TOOLREG_TEST_SURELY_UNSET".into()).read().unwrap_err().contains("$TOOLREG_TEST_SURELY_UNSET is not set"));
        let missing = SecretRef::File(dir.path().join("none")).read().unwrap_err();
        assert!(missing.contains("cannot read") && missing.contains("none"), "{missing}");
    }
}
