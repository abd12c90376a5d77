//! Bytes to messages and back. Knows no method names.
//!
//! `codec` frames bodies with `Content-Length`; `stdio` gives non-blocking pipes;
//! `record` tees every message of a session to a transcript file.

pub mod codec;
pub mod record;
pub mod stdio;

pub use codec::{ContentLengthCodec, Frame};

/// Default cap on one frame's body: a registry of ~10,000 real MCP tools registers in one
/// message of about 15 MB, so 64 MiB leaves room without letting a bad peer exhaust memory.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;
