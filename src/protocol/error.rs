//! JSON-RPC error codes: the standard ones, LSP's, and toolreg's own server range.

use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

/// How much of a host-sent string an error message or a log line repeats.
pub const CLIP_CHARS: usize = 300;

/// Host input echoed into an error or a log is cut to `CLIP_CHARS` characters, so a 60 MB
/// method name cannot become a 60 MB (or, escaped, 125 MB) error frame.
pub fn clip(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(CLIP_CHARS) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes in all)", &text[..cut], text.len())),
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

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }
}
