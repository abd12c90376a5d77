//! MCP `CallToolResult` -> what the model reads.
//!
//! The shape follows the AI SDK's tool output (`text`, `json`, `error-text`, `error-json`), so a
//! TypeScript host passes it through. Text parts join with newlines in order; images, audio and
//! blob resources become placeholders that name their type and size (the model cannot read the
//! bytes, but it can say what it got); text resources contribute their text; anything unknown
//! is kept as JSON. Structured content is used when there is no text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "value", rename_all = "kebab-case")]
pub enum ModelOutput {
    Text(String),
    Json(Value),
    ErrorText(String),
    ErrorJson(Value),
}

impl ModelOutput {
    pub fn error(message: impl Into<String>) -> ModelOutput {
        ModelOutput::ErrorText(message.into())
    }
}

fn b64_bytes(data: &Value) -> usize {
    data.as_str().map(|s| s.trim_end_matches('=').len() * 3 / 4).unwrap_or(0)
}

pub(crate) fn part_text(part: &Value) -> String {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
    let mime = part.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type");
    match kind {
        "text" => part.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
        "image" | "audio" => format!("[{kind}: {mime}, {} bytes, not shown]", b64_bytes(&part["data"])),
        "resource" => {
            let r = &part["resource"];
            let uri = r.get("uri").and_then(Value::as_str).unwrap_or("?");
            match r.get("text").and_then(Value::as_str) {
                Some(text) => text.to_string(),
                None => format!(
                    "[resource {uri}: {}, {} bytes, not shown]",
                    r.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type"),
                    b64_bytes(&r["blob"])
                ),
            }
        }
        "resource_link" => format!(
            "[resource link: {} ({})]",
            part.get("uri").and_then(Value::as_str).unwrap_or("?"),
            part.get("name").and_then(Value::as_str).unwrap_or("unnamed")
        ),
        _ => part.to_string(),
    }
}

/// Converts a result in the MCP `CallToolResult` shape (`{content, structuredContent?, isError?}`).
pub fn from_call_result(result: &Value) -> (ModelOutput, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let output = match result.get("content") {
        Some(Value::Array(parts)) if !parts.is_empty() => {
            let text = parts.iter().map(part_text).collect::<Vec<_>>().join("\n");
            if is_error {
                ModelOutput::ErrorText(text)
            } else {
                ModelOutput::Text(text)
            }
        }
        Some(Value::Array(_)) | None => match (structured, is_error) {
            (Some(s), false) => ModelOutput::Json(s.clone()),
            (Some(s), true) => ModelOutput::ErrorJson(s.clone()),
            (None, false) => ModelOutput::Text(String::new()),
            (None, true) => ModelOutput::ErrorText("the tool failed without saying why".into()),
        },
        // Not a list: pass it on as JSON rather than guess.
        Some(other) => {
            if is_error {
                ModelOutput::ErrorJson(other.clone())
            } else {
                ModelOutput::Json(other.clone())
            }
        }
    };
    (output, is_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_parts_join_in_order() {
        let r = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(from_call_result(&r), (ModelOutput::Text("a\nb".into()), false));
    }

    #[test]
    fn media_and_blobs_become_placeholders() {
        let r = json!({"content": [
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}},
            {"type": "mystery", "x": 1}
        ]});
        let (out, _) = from_call_result(&r);
        assert_eq!(
            out,
            ModelOutput::Text(
                "[image: image/png, 5 bytes, not shown]\n[audio: audio/wav, 0 bytes, not shown]\ninside\n\
[resource file:///b.bin: application/octet-stream, 3 bytes, not shown]\n{\"type\":\"mystery\",\"x\":1}"
                    .into()
            )
        );
    }

    #[test]
    fn errors_and_structured_content() {
        let r = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
        assert_eq!(from_call_result(&r), (ModelOutput::ErrorText("boom".into()), true));
        let r = json!({"content": [], "structuredContent": {"temp": 21}});
        assert_eq!(from_call_result(&r), (ModelOutput::Json(json!({"temp": 21})), false));
        let r = json!({"content": "not a list"});
        assert_eq!(from_call_result(&r), (ModelOutput::Json(json!("not a list")), false));
    }

    #[test]
    fn wire_shape() {
        assert_eq!(serde_json::to_value(ModelOutput::ErrorText("x".into())).unwrap(), json!({"type": "error-text", "value": "x"}));
    }
}
