//! `toolreg audit`: the records of an audit file and its rotated files, oldest first, filtered by
//! time (`--since`: RFC 3339, or a duration back from now: `90s`, `30m`, `1h`, `7d`) and by tool
//! (`--tool`: a pattern with `*` and `?`, matched against the wire name, the upstream tool
//! name and `server/tool`), as a table a person reads or as the JSON lines themselves.

use super::writer::{lock_path, numbered};
use serde_json::Value;
use std::path::Path;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

#[derive(Default)]
pub struct Query {
    pub since: Option<OffsetDateTime>,
    pub tool: Option<regex_lite::Regex>,
}

/// `--since`: an RFC 3339 time, or a whole number of seconds, minutes, hours or days before `now`.
pub fn since(text: &str, now: OffsetDateTime) -> Result<OffsetDateTime, String> {
    if let Ok(t) = OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(t);
    }
    let bad = || format!("--since {text:?}: give an RFC 3339 time (2026-12-03T15:00:00Z) or a duration (90s, 30m, 1h, 7d)");
    let unit = text.chars().last().ok_or_else(bad)?;
    let n: i64 = text[..text.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(bad()),
    };
    Ok(now - time::Duration::seconds(n.saturating_mul(secs)))
}

/// `--tool`: `*` any run of characters, `?` one, the rest literal; the whole name must match.
pub fn pattern(text: &str) -> Result<regex_lite::Regex, String> {
    let mut re = String::from("^");
    for c in text.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex_lite::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex_lite::Regex::new(&re).map_err(|e| format!("--tool {text:?}: {e}"))
}

/// The audit file's rotated files and itself, oldest first, those that exist: every number
/// found in the directory, so a gap in the numbers hides nothing.
pub fn files(path: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = numbered(path).unwrap_or_default().into_iter().map(|(_, p)| p).collect();
    if path.exists() {
        out.push(path.to_path_buf());
    }
    out
}

/// The records that match, oldest first. A line that does not parse is skipped (a crash may
/// have cut the last one). The files are read under the writers' lock, shared, so no rotation
/// moves a file between listing and reading (no record missed or read twice).
pub fn records(path: &Path, q: &Query) -> Result<Vec<Value>, String> {
    let texts = {
        // A log no locking writer has touched has no lock file: nothing to wait for.
        let lock = std::fs::File::open(lock_path(path)).ok();
        let _shared = lock.as_ref().map(|l| l.lock_shared());
        let mut texts = Vec::new();
        for file in files(path) {
            match std::fs::read_to_string(&file) {
                Ok(text) => texts.push(text),
                // Rotated away meanwhile by a writer that takes no lock (an older version).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
            }
        }
        texts
    };
    let lines = texts.iter().flat_map(|t| t.lines());
    Ok(lines.filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|r| q.matches(r)).collect())
}

impl Query {
    pub fn matches(&self, r: &Value) -> bool {
        if let Some(since) = self.since {
            match r["ts"].as_str().and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok()) {
                Some(t) if t >= since => {}
                _ => return false,
            }
        }
        match &self.tool {
            None => true,
            Some(re) => names(r).iter().any(|n| re.is_match(n)),
        }
    }
}

/// The tool names a record is about, in every form `--tool` may name them.
fn names(r: &Value) -> Vec<String> {
    let server = r["server"].as_str();
    let mut out: Vec<String> = Vec::new();
    let mut add = |t: &str| {
        out.push(t.to_string());
        if let Some(s) = server {
            out.push(format!("{s}/{t}"));
        }
    };
    for key in ["tool", "upstreamTool"] {
        if let Some(t) = r[key].as_str() {
            add(t);
        }
    }
    for key in ["tools", "changedTools", "newTools"] {
        for t in r[key].as_array().into_iter().flatten().filter_map(Value::as_str) {
            add(t);
        }
    }
    out
}

/// The records as a table: time, face, event, what it was about, how it ended, and the rest.
pub fn table(records: &[Value]) -> String {
    let mut rows = vec![["TIME", "FACE", "EVENT", "TOOL / SERVER", "OUTCOME", "DETAIL"].map(String::from).to_vec()];
    for r in records {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        let subject = match (r["tool"].as_str(), r["server"].as_str(), r["upstreamTool"].as_str()) {
            (Some(t), Some(srv), Some(up)) => format!("{t} ({srv}/{up})"),
            (Some(t), _, _) => t.to_string(),
            (None, Some(srv), _) => srv.to_string(),
            _ => String::new(),
        };
        let (outcome, detail) = match s("event").as_str() {
            "call" => (s("outcome"), format!("{} {} ms{}", s("reached"), r["durationMs"], r["resultBytes"].as_u64().map(|b| format!(", {b} B")).unwrap_or_default())),
            "approvalRequested" => (String::new(), format!("{} for {}", s("approvalId"), s("callId"))),
            "approvalDecided" => (s("decision"), format!("by {} after {} ms", r["answeredBy"].as_str().unwrap_or("nobody"), r["waitedMs"])),
            "pinsHeld" => ("held".into(), format!("changed {}, new {}", r["changedTools"], r["newTools"])),
            "pinsApproved" => ("approved".into(), format!("{} by {}", r["tools"], s("by"))),
            "server" => (s("state"), r["toolCount"].as_u64().map(|n| format!("{n} tools")).unwrap_or_default()),
            "oauth" => (s("phase"), String::new()),
            "reload" => (if r["applied"] == true { "applied".into() } else { "refused".into() }, r["reason"].as_str().map_or_else(|| r["servers"].as_u64().map(|n| format!("{n} servers")).unwrap_or_default(), str::to_string)),
            "lost" => (String::new(), format!("{} records lost", r["count"])),
            _ => (String::new(), String::new()),
        };
        let face = match (r["host"].as_str(), r["profile"].as_str()) {
            (_, Some(p)) => format!("{} /{p}", s("face")),
            (Some(h), None) => format!("{} {h}", s("face")),
            (None, None) => s("face"),
        };
        rows.push(vec![s("ts"), face, s("event"), subject, outcome, detail]);
    }
    let widths: Vec<usize> = (0..6).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
