//! The skills extension (SEP-2640) through `toolreg mcp`: the fixture server's skills
//! (`--conformance`: `skill://release-notes/SKILL.md` with a subdirectory, and
//! `skill://code-review/SKILL.md`, listed a page a skill) reach the gateway's client. The
//! gateway declares the extension with `directoryRead`, lists and gets the skills from the
//! upstream's last-known-good listing, reads their files through `resources/read` (each
//! file's bytes the listed digest and size), routes `resources/directory/read` (reading every
//! page of the upstream's answer into the gateway's own pages), answers
//! -32602 for an unknown skill or a file read as a directory, qualifies a skill two upstreams
//! share (every URI of its entry) and shows a profile only its servers' skills.
//! The conformance suite's `sep-2640-skills-*` scenarios check the wire shapes
//! (scripts/conformance-server.sh).

mod support;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};
use support::gateway::{fixture, spawn, write_config, McpClient};

const SKILLS: &str = "io.modelcontextprotocol/skills";

/// `toolreg mcp` over stdio (`extra`: e.g. `--profile`), initialized; the capabilities it
/// declared (after the warm-up: the upstreams have listed).
fn start(path: &str, extra: &[&str]) -> (McpClient, Value) {
    let mut c = spawn(path, extra, &[]);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "toolreg-test", "version": "0"}}));
    let caps = r["result"]["capabilities"].clone();
    assert!(caps.is_object(), "initialize failed: {r}");
    c.notify("notifications/initialized", json!({}));
    (c, caps)
}

/// `skills/list` until it has `n` skills (the upstreams list in the background).
fn skills_until(c: &mut McpClient, n: usize) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let r = c.ok("skills/list", json!({}));
        let skills = r["skills"].as_array().cloned().unwrap_or_default();
        if skills.len() >= n {
            assert!(r.get("nextCursor").is_none(), "one page: {r}");
            return skills;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "never {n} skills: {r}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn uris(list: &[Value]) -> Vec<&str> {
    list.iter().map(|s| s["uri"].as_str().unwrap()).collect()
}

fn config(dir: &std::path::Path, servers: Value) -> String {
    // A long warm-up: the capabilities say skills once the upstreams listed.
    write_config(dir, &json!({"servers": servers, "gateway": {"defer": "never", "warmupMs": 60000,
        "profiles": {"only-a": {"servers": ["a"]}, "plain": {"servers": ["plain"]}}}}))
}

/// Each listed file of `skill` read through the gateway: its bytes are the listed size and
/// digest, and `SKILL.md` is markdown whose frontmatter is the entry's.
fn read_every_file(c: &mut McpClient, skill: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    for file in skill["resources"].as_array().unwrap() {
        let uri = file["uri"].as_str().unwrap();
        let read = c.ok("resources/read", json!({"uri": uri}));
        let content = &read["contents"][0];
        assert_eq!(content["uri"], uri, "{read}");
        let text = content["text"].as_str().unwrap_or_else(|| panic!("{read}"));
        assert_eq!(text.len() as u64, file["size"].as_u64().unwrap(), "{uri}");
        assert_eq!(format!("sha256:{:x}", Sha256::digest(text.as_bytes())), file["digest"].as_str().unwrap(), "{uri}");
        if uri == skill["uri"] {
            assert_eq!(content["mimeType"], "text/markdown", "{read}");
            let fm = &skill["frontmatter"];
            let head = format!("---\nname: {}\ndescription: {}\n---\n", fm["name"].as_str().unwrap(), fm["description"].as_str().unwrap());
            assert!(text.starts_with(&head), "{text}");
        }
        texts.push(text.to_owned());
    }
    texts
}

#[test]
fn one_upstreams_skills_are_listed_got_read_and_their_directories_walked() {
    let dir = tempfile::tempdir().unwrap();
    // `--page-size 1`: the upstream pages its directories a child at a time.
    let path = config(dir.path(), json!([fixture("a", &["--conformance", "--page-size", "1"]), fixture("plain", &["--tools", "1"])]));
    let (mut c, caps) = start(&path, &[]);
    assert_eq!(caps["extensions"][SKILLS], json!({"directoryRead": true}), "{caps}");
    assert!(caps["resources"].is_object(), "skills are resources: {caps}");

    // Both pages of the upstream's listing, as one.
    let skills = skills_until(&mut c, 2);
    assert_eq!(uris(&skills), ["skill://release-notes/SKILL.md", "skill://code-review/SKILL.md"]);
    let notes = skills[0].clone();
    assert_eq!(notes["frontmatter"]["name"], "release-notes");
    assert_eq!(uris(notes["resources"].as_array().unwrap()), ["skill://release-notes/SKILL.md", "skill://release-notes/templates/entry.md"]);

    let got = c.ok("skills/get", json!({"uri": "skill://release-notes/SKILL.md"}));
    assert_eq!(got["skill"], notes, "{got}");
    assert!(got.get("nextCursor").is_none(), "{got}");
    let texts = read_every_file(&mut c, &notes);
    assert_eq!(texts[1], "- **{kind}**: {summary} ({pr})\n");
    read_every_file(&mut c, &skills[1]);

    // SKILL.md is listed as a resource named and described as its frontmatter says.
    let listed = c.ok("resources/list", json!({}));
    let md = listed["resources"].as_array().unwrap().iter().find(|r| r["uri"] == "skill://release-notes/SKILL.md").unwrap_or_else(|| panic!("{listed}"));
    assert_eq!((&md["name"], &md["description"]), (&notes["frontmatter"]["name"], &notes["frontmatter"]["description"]), "{md}");

    // The skill's directory (both of the upstream's pages, as the gateway's one), and its
    // subdirectory.
    let top = c.ok("resources/directory/read", json!({"uri": "skill://release-notes"}));
    assert_eq!(top["resources"], json!([
        {"uri": "skill://release-notes/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
        {"uri": "skill://release-notes/templates", "name": "templates", "mimeType": "inode/directory"}
    ]), "{top}");
    assert!(top.get("nextCursor").is_none(), "{top}");
    let sub = c.ok("resources/directory/read", json!({"uri": "skill://release-notes/templates"}));
    assert_eq!(uris(sub["resources"].as_array().unwrap()), ["skill://release-notes/templates/entry.md"], "{sub}");

    // An unknown skill, and a file read as a directory: the client's error.
    let r = c.request("skills/get", json!({"uri": "skill://no-such-skill/SKILL.md"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request("resources/directory/read", json!({"uri": "skill://release-notes/SKILL.md"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[test]
fn a_skill_two_upstreams_share_is_qualified_whole_and_a_profile_sees_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let servers = json!([fixture("a", &["--conformance"]), fixture("b", &["--conformance"]), fixture("plain", &["--tools", "1"])]);
    let path = config(dir.path(), servers);
    let (mut c, _) = start(&path, &[]);
    let skills = skills_until(&mut c, 4);
    assert_eq!(uris(&skills), [
        "skill://toolreg/a/release-notes/SKILL.md", "skill://toolreg/a/code-review/SKILL.md",
        "skill://toolreg/b/release-notes/SKILL.md", "skill://toolreg/b/code-review/SKILL.md"
    ]);
    // Every URI of a qualified entry is qualified alike, and reads from its own server.
    let b_notes = &skills[2];
    assert_eq!(uris(b_notes["resources"].as_array().unwrap()), ["skill://toolreg/b/release-notes/SKILL.md", "skill://toolreg/b/release-notes/templates/entry.md"]);
    read_every_file(&mut c, b_notes);
    let top = c.ok("resources/directory/read", json!({"uri": "skill://toolreg/b/release-notes"}));
    assert_eq!(uris(top["resources"].as_array().unwrap()), ["skill://toolreg/b/release-notes/SKILL.md", "skill://toolreg/b/release-notes/templates"], "{top}");
    // The bare URI names two skills: refused with the forms to use, as a shared prompt is.
    let r = c.request("skills/get", json!({"uri": "skill://release-notes/SKILL.md"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("skill://toolreg/a/release-notes/SKILL.md"), "{r}");
    let r = c.request("resources/directory/read", json!({"uri": "skill://release-notes"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    drop(c);

    // A profile of `a` alone: its skills keep their own URIs; `b`'s are not there.
    let (mut p, caps) = start(&path, &["--profile", "only-a"]);
    assert_eq!(caps["extensions"][SKILLS], json!({"directoryRead": true}), "{caps}");
    let skills = skills_until(&mut p, 2);
    assert_eq!(uris(&skills), ["skill://release-notes/SKILL.md", "skill://code-review/SKILL.md"]);
    let r = p.request("skills/get", json!({"uri": "skill://toolreg/b/release-notes/SKILL.md"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    drop(p);

    // A profile whose server offers no skills declares no extension: rmcp answers -32601.
    let (mut p, caps) = start(&path, &["--profile", "plain"]);
    assert!(caps.get("extensions").and_then(|e| e.get(SKILLS)).is_none(), "{caps}");
    let r = p.request("skills/list", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
}
