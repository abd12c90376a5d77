//! MCP `CallToolResult` -> what the model reads.
//!
//! The shape follows the AI SDK's tool output (`text`, `json`, `error-text`, `error-json`,
//! `content`), so a TypeScript host passes it through. Text parts join with newlines in order;
//! text resources contribute their text; anything unknown is kept as JSON. Images and audio
//! (and image or audio embedded resources) go to the model as media parts (`content`) when the
//! call's `Media` policy lets them; otherwise, and for other blobs, a placeholder names their
//! type and size (and why, when the policy says). Structured content joins the output unless a
//! text part already is its JSON, and is the output when there is no content.

use crate::media::{Kind, Media};
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
    /// Text and media parts in order (AI SDK 6's names).
    Content(Vec<Part>),
}

/// One part of a `content` output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Part {
    Text { text: String },
    /// An image, base64.
    #[serde(rename_all = "camelCase")]
    ImageData { data: String, media_type: String },
    /// Any other file (audio), base64.
    #[serde(rename_all = "camelCase")]
    FileData {
        data: String,
        media_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<String>,
    },
}

impl Part {
    /// The text of a text part; `None` for media.
    pub fn text(&self) -> Option<&str> {
        match self {
            Part::Text { text } => Some(text),
            _ => None,
        }
    }

    pub fn is_media(&self) -> bool {
        self.text().is_none()
    }

    /// Bytes of a media part (decoded size of its base64).
    pub fn bytes(&self) -> usize {
        match self {
            Part::Text { .. } => 0,
            Part::ImageData { data, .. } | Part::FileData { data, .. } => b64_len(data),
        }
    }

    /// The placeholder a media part becomes, saying `why` when there is a reason.
    pub fn placeholder(&self, why: Option<&str>) -> Part {
        let text = match self {
            Part::Text { text } => return Part::Text { text: text.clone() },
            Part::ImageData { media_type, .. } => placeholder("image", media_type, self.bytes(), why),
            Part::FileData { media_type, .. } => placeholder(Kind::of(media_type).map_or("file", Kind::name), media_type, self.bytes(), why),
        };
        Part::Text { text }
    }
}

impl ModelOutput {
    pub fn error(message: impl Into<String>) -> ModelOutput {
        ModelOutput::ErrorText(message.into())
    }

    /// What the model reads as text: the text, the JSON, or a content's text parts joined.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            ModelOutput::Text(t) | ModelOutput::ErrorText(t) => t.into(),
            ModelOutput::Json(v) | ModelOutput::ErrorJson(v) => v.to_string().into(),
            ModelOutput::Content(parts) => parts.iter().filter_map(Part::text).collect::<Vec<_>>().join("\n").into(),
        }
    }

    /// The media parts of a `content` output.
    pub fn media(&self) -> &[Part] {
        match self {
            ModelOutput::Content(parts) => parts,
            _ => &[],
        }
    }

    /// `parts` as an output: `content` while a media part is left, else their text joined.
    pub fn of_parts(parts: Vec<Part>) -> ModelOutput {
        if parts.iter().any(Part::is_media) {
            return ModelOutput::Content(parts);
        }
        ModelOutput::Text(parts.iter().filter_map(Part::text).collect::<Vec<_>>().join("\n"))
    }
}

fn b64_len(s: &str) -> usize {
    s.trim_end_matches('=').len() * 3 / 4
}

fn b64_bytes(data: &Value) -> usize {
    data.as_str().map(b64_len).unwrap_or(0)
}

fn placeholder(kind: &str, mime: &str, bytes: usize, why: Option<&str>) -> String {
    match why {
        Some(why) => format!("[{kind}: {mime}, {bytes} bytes, not shown: {why}]"),
        None => format!("[{kind}: {mime}, {bytes} bytes, not shown]"),
    }
}

/// What the model reads of one MCP content part when it is not sent as media.
pub fn part_text(part: &Value) -> String {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
    let mime = part.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type");
    match kind {
        "text" => part.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
        "image" | "audio" => placeholder(kind, mime, b64_bytes(&part["data"]), None),
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

/// An MCP part as a media part, when it is an image or audio (or such an embedded resource)
/// that `media` lets through; otherwise its text (a placeholder saying why, for media).
fn part_for_model(part: &Value, media: &Media) -> Part {
    let text = || Part::Text { text: part_text(part) };
    let (data, mime, filename) = match part.get("type").and_then(Value::as_str) {
        Some("image" | "audio") => (&part["data"], part.get("mimeType"), None),
        Some("resource") => {
            let r = &part["resource"];
            let name = r.get("uri").and_then(Value::as_str).and_then(|u| u.rsplit('/').next()).filter(|n| !n.is_empty());
            (&r["blob"], r.get("mimeType"), name)
        }
        _ => return text(),
    };
    let (Some(data), Some(mime)) = (data.as_str(), mime.and_then(Value::as_str)) else { return text() };
    let Some(kind) = Kind::of(mime) else { return text() };
    let media_part = match kind {
        Kind::Image => Part::ImageData { data: data.to_string(), media_type: mime.to_string() },
        Kind::Audio => Part::FileData { data: data.to_string(), media_type: mime.to_string(), filename: filename.map(str::to_string) },
    };
    match media.refuse(kind, mime, b64_len(data)) {
        None => media_part,
        // Placeholder mode keeps today's text exactly (an embedded resource's names its uri).
        Some(None) => text(),
        Some(Some(why)) => media_part.placeholder(Some(&why)),
    }
}

/// Whether the text parts of `parts` already carry `structured`: one of them is its JSON, or
/// they hold each of its values (servers that repeat their text as `{content: text}`; a second,
/// JSON-escaped copy of a large file would only cost the model's context).
fn text_carries(parts: &[Value], structured: &Value) -> bool {
    let texts: Vec<&str> = parts.iter().filter(|p| p.get("type").and_then(Value::as_str) == Some("text")).filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    if texts.iter().any(|t| serde_json::from_str::<Value>(t.trim()).is_ok_and(|v| v == *structured)) {
        return true;
    }
    let mut leaves = Vec::new();
    scalar_leaves(structured, &mut leaves);
    !leaves.is_empty() && leaves.iter().all(|leaf| texts.iter().any(|t| t.contains(leaf.as_str())))
}

/// The scalar values of `v` as text (strings as they are).
fn scalar_leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|v| scalar_leaves(v, out)),
        Value::Array(a) => a.iter().for_each(|v| scalar_leaves(v, out)),
        Value::String(s) => out.push(s.clone()),
        Value::Null => {}
        other => out.push(other.to_string()),
    }
}

/// The structured content's JSON that joins a result's content parts, if it does (present, and
/// no text part already is it).
pub fn joined_structured(result: &Value) -> Option<String> {
    let parts = result.get("content").and_then(Value::as_array).filter(|p| !p.is_empty())?;
    let s = result.get("structuredContent").filter(|v| !v.is_null())?;
    (!text_carries(parts, s)).then(|| s.to_string())
}

/// Converts a result in the MCP `CallToolResult` shape (`{content, structuredContent?, isError?}`)
/// with every media part as media (`Media::default()`).
pub fn from_call_result(result: &Value) -> (ModelOutput, bool) {
    for_model(result, &Media::default())
}

/// Converts a result in the MCP `CallToolResult` shape for a reader whose `media` policy says
/// which parts go as media.
pub fn for_model(result: &Value, media: &Media) -> (ModelOutput, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let output = match result.get("content") {
        Some(Value::Array(parts)) if !parts.is_empty() => {
            let mut out: Vec<Part> = parts.iter().map(|p| part_for_model(p, media)).collect();
            // Beside content, structured data the text does not already carry is read too.
            if let Some(text) = joined_structured(result) {
                out.push(Part::Text { text });
            }
            match ModelOutput::of_parts(out) {
                // An error is read as text: media in it are named, not shown.
                ModelOutput::Content(parts) if is_error => {
                    let parts: Vec<Part> = parts.iter().map(|p| p.placeholder(None)).collect();
                    ModelOutput::ErrorText(ModelOutput::of_parts(parts).text().into_owned())
                }
                ModelOutput::Text(t) if is_error => ModelOutput::ErrorText(t),
                other => other,
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
    fn media_under_placeholder_keep_todays_text() {
        let r = json!({"content": [
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}},
            {"type": "mystery", "x": 1}
        ]});
        let placeholder = Media { mode: crate::media::MediaMode::Placeholder, reader: crate::media::Reader::Other };
        let (out, _) = for_model(&r, &placeholder);
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
    fn media_go_as_parts_by_default() {
        let r = json!({"content": [
            {"type": "text", "text": "a shot"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///x/voice.wav", "blob": "AAAA", "mimeType": "audio/wav"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}}
        ]});
        let other = Media { mode: crate::media::MediaMode::Model, reader: crate::media::Reader::Other };
        let (out, _) = for_model(&r, &other);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!({"type": "content", "value": [
                {"type": "text", "text": "a shot"},
                {"type": "image-data", "data": "aGVsbG8=", "mediaType": "image/png"},
                {"type": "file-data", "data": "AAAA", "mediaType": "audio/wav", "filename": "voice.wav"},
                {"type": "text", "text": "[resource file:///b.bin: application/octet-stream, 3 bytes, not shown]"}
            ]})
        );
        // Audio for no model: named, saying why; the image still goes.
        let (out, _) = from_call_result(&r);
        let ModelOutput::Content(parts) = out else { panic!("{out:?}") };
        assert!(parts[1].is_media());
        assert_eq!(parts[2].text(), Some("[audio: audio/wav, 3 bytes, not shown: the call's plan names no model that takes audio]"));
        // An error's media are named.
        let (out, _) = from_call_result(&json!({"content": [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}], "isError": true}));
        assert_eq!(out, ModelOutput::ErrorText("[image: image/png, 5 bytes, not shown]".into()));
    }

    #[test]
    fn structured_content_joins_unless_a_text_is_it() {
        let r = json!({"content": [{"type": "text", "text": "Answer"}, {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}], "structuredContent": {"answer": 42}});
        let (out, _) = from_call_result(&r);
        assert_eq!(out.text(), "Answer\n{\"answer\":42}");
        let r = json!({"content": [{"type": "text", "text": "{ \"answer\": 42 }"}], "structuredContent": {"answer": 42}});
        assert_eq!(from_call_result(&r).0, ModelOutput::Text("{ \"answer\": 42 }".into()));
        // A server that repeats its text as structured content: not read twice.
        let r = json!({"content": [{"type": "text", "text": "line 1\nline 2"}], "structuredContent": {"content": "line 1\nline 2"}});
        assert_eq!(from_call_result(&r).0, ModelOutput::Text("line 1\nline 2".into()));
        let r = json!({"content": [{"type": "text", "text": "total 42"}], "structuredContent": {"total": 42, "unit": "kg"}});
        assert_eq!(from_call_result(&r).0.text(), "total 42\n{\"total\":42,\"unit\":\"kg\"}");
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
