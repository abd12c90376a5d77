//! JSON-RPC error codes: the standard ones, LSP's, and toolreg's own server range.

use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

/// How much of a host-sent string an error message, its data or a log line repeats.
pub const CLIP_CHARS: usize = 300;

/// Host input echoed into an error or a log is cut to `CLIP_CHARS` characters, so a 60 MB
/// method name cannot become a 60 MB (or, escaped, 125 MB) error frame.
pub fn clip(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(CLIP_CHARS) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes in all)", &text[..cut], text.len())),
    }
}

/// How many items of a host-sent list error data repeats.
pub const CLIP_ITEMS: usize = 10;

/// Error `data` as it goes out: every string `clip`ped and every list cut to `CLIP_ITEMS`, its
/// length then given beside it as `<name>Total`. Data echoes host input (a server id, a plan id,
/// the tools of `catalog/approveTools`), so it is bounded like the message, whatever the call site.
fn bounded(data: Value) -> Value {
    match data {
        Value::String(s) if s.chars().nth(CLIP_CHARS).is_some() => Value::String(clip(&s).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().take(CLIP_ITEMS).map(bounded).collect()),
        Value::Object(fields) => {
            let mut out = serde_json::Map::new();
            for (k, v) in fields {
                let total = v.as_array().map(Vec::len).filter(|n| *n > CLIP_ITEMS);
                let k = clip(&k).into_owned();
                if let Some(n) = total {
                    out.insert(format!("{k}Total"), n.into());
                }
                out.insert(k, bounded(v));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// An open set of codes with named constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// LSP: a request arrived before `initialize`.
    pub const SERVER_NOT_INITIALIZED: ErrorCode = ErrorCode(-32002);
    /// LSP: the request was cancelled with `$/cancelRequest`.
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// A frame's Content-Length exceeds `--max-frame-bytes`; the body was skipped unread.
    pub const FRAME_TOO_LARGE: ErrorCode = ErrorCode(-32001);
    /// A name that no registry entry has.
    pub const UNKNOWN_TOOL: ErrorCode = ErrorCode(-32010);
    /// A plan id that was never issued or has expired.
    pub const UNKNOWN_PLAN: ErrorCode = ErrorCode(-32011);
    /// A server id that the catalog does not have.
    pub const UNKNOWN_SERVER: ErrorCode = ErrorCode(-32012);
    /// The registry refused an entry (bad name, reserved name, bad schema).
    pub const INVALID_ENTRY: ErrorCode = ErrorCode(-32013);
    /// `approval/respond` for an id no call waits for.
    pub const UNKNOWN_APPROVAL: ErrorCode = ErrorCode(-32014);
    /// The MCP server is disabled in the host's config.
    pub const SERVER_DISABLED: ErrorCode = ErrorCode(-32015);
    /// The MCP server does not offer what was asked (resources, prompts, completions,
    /// subscriptions): it did not declare the capability.
    pub const NOT_OFFERED: ErrorCode = ErrorCode(-32016);
    /// What was asked is held by the server's pins until the host approves it again (a view
    /// that changed since it was approved with its tools).
    pub const HELD: ErrorCode = ErrorCode(-32017);
    /// The MCP registry (`mcpRegistry`) is down, slow past its `timeoutMs`, or did not answer
    /// as the registry API does.
    pub const REGISTRY_UNREACHABLE: ErrorCode = ErrorCode(-32020);
    /// The registry's document cannot be installed as it is (a version not pinned, a kind
    /// toolreg does not run, a document that breaks the official `server.json` schema).
    pub const REGISTRY_REFUSED: ErrorCode = ErrorCode(-32021);
}

/// The one boundary type for errors on the wire: a code, a message, structured data.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i32,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// The message is clipped (`clip`): messages often repeat what the host sent.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        let message: String = message.into();
        let message = if message.chars().nth(CLIP_CHARS).is_some() { clip(&message).into_owned() } else { message };
        RpcError { code: code.0, message, data: None }
    }

    /// The data is bounded (`bounded`): data often repeats what the host sent.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(bounded(data));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_data_is_bounded_like_the_message() {
        let long = "s".repeat(1 << 20);
        let tools: Vec<String> = (0..1000).map(|i| format!("tool_{i}")).collect();
        let e = RpcError::new(ErrorCode::INVALID_PARAMS, "x").with_data(json!({"serverId": long, "tools": tools, "max": 3}));
        let data = e.data.unwrap();
        assert!(data["serverId"].as_str().unwrap().ends_with("… (1048576 bytes in all)"), "{data}");
        assert_eq!(data["tools"].as_array().unwrap().len(), CLIP_ITEMS);
        assert_eq!((&data["tools"][0], &data["toolsTotal"], &data["max"]), (&json!("tool_0"), &json!(1000), &json!(3)));
        assert!(data.to_string().len() < 1000, "{} bytes", data.to_string().len());
    }
}
