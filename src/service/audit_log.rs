//! Reading the audit log back (`toolreg audit`) and its tool patterns, for the CLI and the
//! gateway's profiles.

use super::Service;
use serde_json::Value;
use std::path::Path;

impl Service {
    /// The records of the audit log at `file` (and its rotated files) written since `since`
    /// (an RFC 3339 time, or a number of seconds, minutes, hours or days before `now`) by tools
    /// matching `tool` (`*`, `?`).
    pub fn audit_records(file: &Path, since: Option<&str>, tool: Option<&str>, now: time::OffsetDateTime) -> Result<Vec<Value>, String> {
        use crate::audit::read;
        let query = read::Query { since: since.map(|s| read::since(s, now)).transpose()?, tool: tool.map(read::pattern).transpose()? };
        read::records(file, &query)
    }

    /// Records as a table a person reads.
    pub fn audit_table(records: &[Value]) -> String {
        crate::audit::read::table(records)
    }

    /// `*` any run of characters, `?` one, the rest literal; the whole name must match.
    pub fn tool_pattern(text: &str) -> Result<regex_lite::Regex, String> {
        crate::audit::read::pattern(text)
    }
}
