use super::*;
use std::time::Duration;

fn settings(file: &std::path::Path) -> AuditSettings {
    AuditSettings { file: file.display().to_string(), ..AuditSettings::default() }
}

fn call(n: usize, arguments: Option<Value>) -> Event {
    Event::Call {
        call_id: format!("call-{n}"),
        tool: "mcp__fx__echo".into(),
        server: Some("fx".into()),
        upstream_tool: Some("echo".into()),
        reached: Reached::Direct,
        outcome: Outcome::Ok,
        duration_ms: 3,
        result_bytes: Some(42),
        arguments,
        result: None,
    }
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn records_are_lines_in_an_owner_only_file_in_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/dir/audit.jsonl");
    let audit = Audit::open(&settings(&path), Face::Gateway, Some("work".into())).unwrap();
    audit.record(call(1, None));
    audit.flush(Duration::from_secs(5));
    let got = lines(&path);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["event"], "call");
    assert_eq!(got[0]["face"], "gateway");
    assert_eq!(got[0]["host"], "work");
    assert_eq!(got[0]["reached"], "direct");
    assert_eq!(got[0]["resultBytes"], 42);
    assert!(got[0].get("arguments").is_none());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn rotation_keeps_max_files_of_about_max_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let s = AuditSettings { max_bytes: Some(4096), max_files: Some(3), ..settings(&path) };
    let audit = Audit::open(&s, Face::Sidecar, None).unwrap();
    for n in 0..400 {
        audit.record(call(n, None));
        if n % 50 == 0 {
            audit.flush(Duration::from_secs(5));
        }
    }
    audit.flush(Duration::from_secs(5));
    let files = read::files(&path);
    assert_eq!(files, vec![writer::rotated(&path, 2), writer::rotated(&path, 1), path.clone()]);
    assert!(!writer::rotated(&path, 3).exists());
    for f in &files {
        assert!(std::fs::metadata(f).unwrap().len() <= 4096, "{} is over maxBytes", f.display());
    }
    // Oldest first, in order, the newest last.
    let ids: Vec<u64> = read::records(&path, &read::Query::default()).unwrap().iter().map(|r| r["callId"].as_str().unwrap()[5..].parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] + 1 == w[1]), "{ids:?}");
    assert_eq!(*ids.last().unwrap(), 399);
}

#[test]
fn known_secrets_never_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let _known = crate::secret::redactor::Redactor::new(["sk-live-0123456789abcdef".to_string()]);
    let s = AuditSettings { arguments: true, ..settings(&path) };
    let audit = Audit::open(&s, Face::Sidecar, None).unwrap();
    assert!(audit.wants_arguments() && !audit.wants_results());
    audit.record(call(1, Some(serde_json::json!({"token": "sk-live-0123456789abcdef", "q": "weather"}))));
    audit.flush(Duration::from_secs(5));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-live-0123456789abcdef"), "{text}");
    assert!(text.contains("[redacted]") && text.contains("weather"), "{text}");
}

#[test]
fn a_file_that_takes_no_writes_loses_records_counted_never_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    // /dev/full: every write fails with ENOSPC, as a full disk does.
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let audit = Audit::open(&settings(&path), Face::Sidecar, None).unwrap();
    let started = std::time::Instant::now();
    for n in 0..5000 {
        audit.record(call(n, None));
    }
    assert!(started.elapsed() < Duration::from_secs(1), "recording waited on the file");
    audit.flush(Duration::from_secs(5));
    assert_eq!(audit.lost(), 5000, "every record is lost and counted");
}

#[test]
fn since_and_tool_filter_records() {
    let now = time::OffsetDateTime::parse("2026-12-03T16:00:00Z", &time::format_description::well_known::Rfc3339).unwrap();
    assert_eq!(read::since("30m", now).unwrap(), now - time::Duration::minutes(30));
    assert_eq!(read::since("2d", now).unwrap(), now - time::Duration::days(2));
    assert_eq!(read::since("2026-12-03T15:00:00Z", now).unwrap(), now - time::Duration::hours(1));
    assert!(read::since("yesterday", now).is_err());
    let q = read::Query { since: Some(now - time::Duration::hours(1)), tool: Some(read::pattern("fx/ec*").unwrap()) };
    let r = |ts: &str, tool: &str| serde_json::json!({"ts": ts, "event": "call", "tool": format!("mcp__fx__{tool}"), "server": "fx", "upstreamTool": tool});
    assert!(q.matches(&r("2026-12-03T15:30:00.000Z", "echo")));
    assert!(!q.matches(&r("2026-12-03T14:30:00.000Z", "echo")), "too old");
    assert!(!q.matches(&r("2026-12-03T15:30:00.000Z", "add")), "another tool");
    let table = read::table(&[r("2026-12-03T15:30:00.000Z", "echo")]);
    assert!(table.starts_with("TIME") && table.contains("mcp__fx__echo (fx/echo)"), "{table}");
}

fn call_ids(path: &std::path::Path) -> Vec<String> {
    read::records(path, &read::Query::default()).unwrap().iter().filter_map(|r| r["callId"].as_str().map(str::to_owned)).collect()
}

#[test]
fn writers_of_one_file_lose_nothing_and_keep_within_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let s = AuditSettings { max_bytes: Some(4096), max_files: Some(1000), ..settings(&path) };
    // Each `Audit` locks through a handle of its own, as another process would.
    let writers: Vec<Audit> = (0..3).map(|_| Audit::open(&s, Face::Gateway, None).unwrap()).collect();
    std::thread::scope(|scope| {
        for (w, audit) in writers.iter().enumerate() {
            scope.spawn(move || {
                for n in 0..300 {
                    audit.record(call(w * 1000 + n, None));
                    if n % 7 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                audit.flush(Duration::from_secs(10));
            });
        }
    });
    assert!(writers.iter().all(|a| a.lost() == 0));
    let files = read::files(&path);
    assert!(files.len() > 20, "rotated many times: {files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.len() <= 4096, "{} has {} bytes", f.display(), text.len());
        assert!(text.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()) && text.ends_with('\n'), "a torn line in {}", f.display());
    }
    let mut ids = call_ids(&path);
    assert_eq!(ids.len(), 900);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 900, "every record once");
}

#[test]
fn a_quiet_writer_beside_a_busy_one_keeps_its_newest_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let s = AuditSettings { max_bytes: Some(4096), max_files: Some(3), ..settings(&path) };
    let (quiet, busy) = (Audit::open(&s, Face::Sidecar, None).unwrap(), Audit::open(&s, Face::Gateway, None).unwrap());
    quiet.record(call(1, None));
    quiet.flush(Duration::from_secs(5));
    for n in 0..200 {
        busy.record(call(1000 + n, None));
    }
    busy.flush(Duration::from_secs(5));
    // The quiet writer's first file is long gone; its next record goes to the file of today.
    quiet.record(call(2, None));
    quiet.flush(Duration::from_secs(5));
    let in_current: Vec<Value> = lines(&path);
    assert_eq!(in_current.last().unwrap()["callId"], "call-2", "{in_current:?}");
    assert_eq!(read::files(&path).len(), 3);
}

#[test]
fn a_gap_in_the_numbers_hides_no_file_and_rotation_keeps_max_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let rec = |n: usize| line(Face::Gateway, None, None, SystemTime::now(), &call(n, None));
    std::fs::write(writer::rotated(&path, 3), rec(1)).unwrap();
    std::fs::write(writer::rotated(&path, 1), rec(2)).unwrap();
    std::fs::write(&path, rec(3)).unwrap();
    assert_eq!(call_ids(&path), ["call-1", "call-2", "call-3"], "oldest first, across the gap");
    let file = writer::File::new(path.clone(), MIN_MAX_BYTES, 3);
    // Too long to join FILE: it rotates, FILE.3 (past maxFiles) goes, FILE.1 moves up.
    file.append(&format!("{{\"pad\":\"{}\"}}\n", "x".repeat(4000))).unwrap();
    assert_eq!(read::files(&path), vec![writer::rotated(&path, 2), writer::rotated(&path, 1), path.clone()]);
    assert_eq!(call_ids(&path), ["call-2", "call-3"]);
}

#[test]
fn a_cut_last_line_gets_a_newline_before_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    std::fs::write(&path, "{\"ts\":\"2026-").unwrap();
    let audit = Audit::open(&settings(&path), Face::Gateway, None).unwrap();
    audit.record(call(7, None));
    audit.flush(Duration::from_secs(5));
    assert_eq!(call_ids(&path), ["call-7"]);
}
