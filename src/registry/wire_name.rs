//! Wire names for MCP tools: `mcp__<camelCase(server)>__<camelCase(tool)>`.
//!
//! Every name must pass every major provider's rule (`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`).
//! Non-ASCII is transliterated (`数据库` -> `shuJuKu`), never deleted. A name that would be too
//! long, or that the caller reports as taken, carries a short digest of (server id, raw tool
//! name): stable across restarts and server renames, distinct for distinct tools. The registry
//! keeps the mapping back to (server id, raw name), so nothing ever parses a wire name.

use sha2::{Digest, Sha256};

pub const MAX_LEN: usize = 64;
const DIGEST_LEN: usize = 8;

/// Whether `name` is accepted by OpenAI, Anthropic and Gemini alike.
pub fn is_valid(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_LEN
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// lodash-style camelCase over a transliteration: words split at non-alphanumerics, at
/// lower-to-upper changes and at the end of an acronym (`HTTPServer` -> `http`, `server`).
pub fn camel_case(raw: &str) -> String {
    let ascii = any_ascii::any_ascii(raw);
    let mut words: Vec<String> = Vec::new();
    for chunk in ascii.split(|c: char| !c.is_ascii_alphanumeric()).filter(|s| !s.is_empty()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_ascii_lowercase());
            let boundary = (prev.is_ascii_lowercase() || prev.is_ascii_digit()) && cur.is_ascii_uppercase()
                || prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_lower;
            if boundary {
                words.push(chars[start..i].iter().collect());
                start = i;
            }
        }
        words.push(chars[start..].iter().collect());
    }
    let mut out = String::with_capacity(ascii.len());
    for (i, w) in words.iter().enumerate() {
        let lower = w.to_ascii_lowercase();
        if i == 0 {
            out.push_str(&lower);
        } else {
            let mut cs = lower.chars();
            if let Some(first) = cs.next() {
                out.push(first.to_ascii_uppercase());
                out.extend(cs);
            }
        }
    }
    out
}

/// Short stable digest of a tool's identity.
pub fn digest(server_id: &str, tool: &str) -> String {
    let mut h = Sha256::new();
    h.update(server_id.as_bytes());
    h.update([0]);
    h.update(tool.as_bytes());
    data_encoding::HEXLOWER.encode(&h.finalize()[..DIGEST_LEN / 2])
}

fn segment(raw: &str) -> String {
    let s = camel_case(raw);
    if s.is_empty() {
        "x".to_string()
    } else {
        s
    }
}

/// The wire name for an MCP tool. `server_label` is what the name shows (the server's display
/// name, or its id); `server_id` + `tool` is the identity the digest is taken from. With
/// `force_digest` (the plain name is taken by another tool) the digest is always added.
pub fn mcp_name(server_label: &str, server_id: &str, tool: &str, force_digest: bool) -> String {
    let server = segment(server_label);
    let tool_seg = segment(tool);
    let plain = format!("mcp__{server}__{tool_seg}");
    if plain.len() <= MAX_LEN && !force_digest {
        return plain;
    }
    // `mcp__` + server + `__` + tool prefix + `_` + digest, shortening the server segment to at
    // most 20 characters first so the tool keeps the most room.
    let d = digest(server_id, tool);
    let server: String = server.chars().take(20).collect();
    let fixed = "mcp__".len() + server.len() + "__".len() + 1 + d.len();
    let room = MAX_LEN - fixed;
    let prefix: String = tool_seg.chars().take(room).collect();
    format!("mcp__{server}__{prefix}_{d}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_cases_like_lodash() {
        assert_eq!(camel_case("create_branch"), "createBranch");
        assert_eq!(camel_case("my-server"), "myServer");
        assert_eq!(camel_case("GitHub"), "gitHub");
        assert_eq!(camel_case("HTTPServer"), "httpServer");
        assert_eq!(camel_case("TwilioApiV2010--UpdateMember"), "twilioApiV2010UpdateMember");
        assert_eq!(camel_case("API-post-search"), "apiPostSearch");
        // any_ascii gives "ShuJuKu": one word per syllable.
        assert_eq!(camel_case("数据库"), "shuJuKu");
        assert_eq!(camel_case("!!!"), "");
    }

    #[test]
    fn builds_names() {
        assert_eq!(mcp_name("gmail", "gmail", "send_message", false), "mcp__gmail__sendMessage");
        let a = mcp_name("mysql_报销", "a", "query", false);
        let b = mcp_name("mysql_电梯", "b", "query", false);
        assert_ne!(a, b);
        assert!(is_valid(&a) && is_valid(&b));
        assert_eq!(mcp_name("!!", "s", "?", false), "mcp__x__x");
    }

    #[test]
    fn long_and_forced_names_carry_a_digest() {
        let long = "a".repeat(80);
        let n = mcp_name("server", "id1", &long, false);
        assert!(is_valid(&n), "{n}");
        assert!(n.ends_with(&digest("id1", &long)));
        // The first 4 bytes of SHA-256("srv\0tool"), lowercase hex: names already given stay.
        assert_eq!(digest("srv", "tool"), "f4ed36a6");
        let forced = mcp_name("s", "id", "t", true);
        assert_eq!(forced, format!("mcp__s__t_{}", digest("id", "t")));
        // Stable: the digest depends on the id and raw name only, not the display name.
        assert!(mcp_name("renamed", "id", "t", true).ends_with(&digest("id", "t")));
    }

    #[test]
    fn validity_rule() {
        assert!(is_valid("web_search"));
        assert!(is_valid("_x-1"));
        assert!(!is_valid("1abc"));
        assert!(!is_valid("a.b"));
        assert!(!is_valid(""));
        assert!(!is_valid(&"a".repeat(65)));
        assert!(is_valid(&"a".repeat(64)));
    }
}
