//! Transcript recording (`serve --record FILE`).
//!
//! One JSON object per line: `{"dir": "in" | "out", "msg": <the message>}`; a body that is
//! not JSON is kept as `{"dir": "in", "raw": "<text>"}` so a replay can send the same bytes.
//! Lines are written as the messages pass, so a crash loses at most the line in flight.
//!
//! Transcripts get shared (bug reports, tests), so credentials are redacted before a line is
//! written: in any object under a `transport` key (an MCP server config, wherever it appears),
//! the values of `env` and `headers` and the userinfo, query and fragment values of `url`.
//! The first line says so: `{"transcript": "toolreg", "redacted": "..."}`; it has no `dir`, and
//! readers skip it. Redaction is by shape, not by method name: this layer knows no methods.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use crate::secret::{redact_url, redact_urls_in, REDACTED};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    In,
    Out,
}

pub struct Recorder {
    file: Mutex<BufWriter<File>>,
}

/// What the header line says is redacted.
pub const REDACTION_NOTE: &str =
    "values of transport.env and transport.headers, and userinfo, query and fragment values of transport.url; oauth's inline credentials (clientSecret, privateKey, assertion, idp.idToken, idp.clientSecret); saved OAuth records (a value holding credentials or a registration)";

impl Recorder {
    pub fn create(path: &Path) -> std::io::Result<Recorder> {
        let mut file = BufWriter::new(File::create(path)?);
        let header = serde_json::json!({"transcript": "toolreg", "redacted": REDACTION_NOTE});
        serde_json::to_writer(&mut file, &header)?;
        file.write_all(b"\n")?;
        file.flush()?;
        Ok(Recorder { file: Mutex::new(file) })
    }

    pub fn record(&self, dir: Direction, body: &[u8]) {
        let dir = match dir {
            Direction::In => "in",
            Direction::Out => "out",
        };
        let line = match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(mut msg) => {
                redact(&mut msg);
                serde_json::json!({ "dir": dir, "msg": msg })
            }
            // Not JSON, so no transport object to find; URLs in it are still redacted.
            Err(_) => serde_json::json!({ "dir": dir, "raw": redact_urls_in(&String::from_utf8_lossy(body)) }),
        };
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // A failing transcript must not take the session down; the log says why.
        let res = serde_json::to_writer(&mut *file, &line)
            .map_err(std::io::Error::from)
            .and_then(|_| file.write_all(b"\n"))
            .and_then(|_| file.flush());
        if let Err(e) = res {
            tracing::warn!("transcript write failed: {e}");
        }
    }
}

/// Redacts the credentials of every `transport` object in `v`, at any depth.
fn redact(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "transport" {
                    if let Value::Object(t) = value {
                        redact_transport(t);
                    }
                }
                if key == "oauth" {
                    if let Value::Object(o) = value {
                        // Inline credentials (`{"env"}` / `{"file"}` forms name no secret).
                        for field in ["clientSecret", "privateKey", "assertion"] {
                            if let Some(secret @ Value::String(_)) = o.get_mut(field) {
                                *secret = Value::String(REDACTED.into());
                            }
                        }
                        if let Some(Value::Object(idp)) = o.get_mut("idp") {
                            for field in ["idToken", "clientSecret"] {
                                if let Some(secret @ Value::String(_)) = idp.get_mut(field) {
                                    *secret = Value::String(REDACTED.into());
                                }
                            }
                        }
                    }
                }
                if key == "value" && holds_oauth_record(value) {
                    *value = Value::String(REDACTED.into());
                }
                redact(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// A saved OAuth record (`host/secrets/*` values): JSON text of an object with
/// `credentials` or `registration`, which hold tokens and client secrets.
fn holds_oauth_record(v: &Value) -> bool {
    let Value::String(text) = v else { return false };
    text.starts_with('{')
        && serde_json::from_str::<serde_json::Map<String, Value>>(text)
            .is_ok_and(|o| o.contains_key("credentials") || o.contains_key("registration") || o.contains_key("dpopKey"))
}

fn redact_transport(t: &mut serde_json::Map<String, Value>) {
    for key in ["env", "headers"] {
        if let Some(Value::Object(values)) = t.get_mut(key) {
            values.values_mut().for_each(|v| *v = Value::String(REDACTED.into()));
        }
    }
    if let Some(Value::String(url)) = t.get_mut("url") {
        *url = redact_url(url);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_redact_credentials_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let rec = Recorder::create(&path).unwrap();
        let set = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "catalog/setServers", "params": {"servers": [
            {"id": "a", "transport": {"type": "stdio", "command": "srv", "args": ["--v"], "env": {"KEY": "S1"}}},
            {"id": "b", "transport": {"type": "http", "url": "https://u:S2@h/mcp?t=S3", "headers": {"Authorization": "S4"}}}]}});
        rec.record(Direction::In, set.to_string().as_bytes());
        rec.record(Direction::In, b"not json https://u:S5@h/?k=S6");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["redacted"], REDACTION_NOTE);
        assert!(lines[0].get("dir").is_none());
        let servers = &lines[1]["msg"]["params"]["servers"];
        assert_eq!(servers[0]["transport"]["env"]["KEY"], REDACTED);
        assert_eq!(servers[0]["transport"]["args"][0], "--v");
        assert_eq!(servers[1]["transport"]["url"], "https://[redacted]@h/mcp?t=[redacted]");
        assert_eq!(servers[1]["transport"]["headers"]["Authorization"], REDACTED);
        for s in ["S1", "S2", "S3", "S4", "S5", "S6"] {
            assert!(!text.contains(s), "{s} in {text}");
        }
    }

    #[test]
    fn transcripts_redact_oauth_client_secrets_and_saved_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let rec = Recorder::create(&path).unwrap();
        let record = r#"{"credentials":{"token_response":{"access_token":"T1"}}}"#;
        let msgs = [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "catalog/setServers", "params": {"servers": [
                {"id": "a", "oauth": {"clientId": "app", "clientSecret": "T2", "privateKey": "T4", "assertion": "T5", "idp": {"tokenEndpoint": "https://idp/token", "idToken": "T6", "clientSecret": {"env": "IDP_SECRET"}}}, "transport": {"type": "http", "url": "https://h/mcp"}}]}}),
            serde_json::json!({"jsonrpc": "2.0", "id": "toolreg-1", "method": "host/secrets/set", "params": {"key": "toolreg/oauth/a", "value": record}}),
            serde_json::json!({"jsonrpc": "2.0", "id": "toolreg-2", "result": {"value": r#"{"registration":{"clientSecret":"T3"}}"#}}),
            // Not a saved record: kept.
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {"value": "{\"plain\": 1}"}}),
        ];
        for m in &msgs {
            rec.record(Direction::Out, m.to_string().as_bytes());
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for s in ["T1", "T2", "T3", "T4", "T5", "T6"] {
            assert!(!text.contains(s), "{s} in {text}");
        }
        assert!(text.contains("\"clientId\":\"app\"") && text.contains("plain") && text.contains("IDP_SECRET"), "{text}");
    }
}
