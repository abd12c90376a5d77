//! Text normalisation for `tool_search`: identifier-aware tokenising, English stop words,
//! Snowball stemming and a small generic verb synonym table.
//!
//! Tool names are identifiers (`getMergeRequestDiffs`, `TwilioApiV2010--UpdateMember`,
//! `stories-add-task`) while queries are prose, so both go through the same splitter: separators,
//! punctuation, camelCase humps and letter/digit boundaries all cut. Everything is lowercased and
//! stemmed so that "deleting issues" meets `delete_issue`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rust_stemmers::{Algorithm, Stemmer};

use super::search_cjk::is_cjk;
use serde_json::Value;

/// Splits `text` into lowercase word pieces (not yet stemmed or stop-filtered) and calls `f` on each.
///
/// Cuts on every non-alphanumeric character, on lower->Upper (`mergeRequest`), on the last capital
/// of a run followed by lowercase (`HTTPServer` -> http server), between letters and digits
/// (`V2010` -> v 2010) and where a CJK run begins or ends (`在GitHub上` -> 在 git hub 上): a CJK
/// run comes out whole, for `search_cjk` to cut.
pub fn split_words(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    let mut prev: Option<char> = None;
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if !c.is_alphanumeric() {
            if !buf.is_empty() {
                f(&buf);
                buf.clear();
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || is_cjk(p) != is_cjk(c)
                || (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic())
                || (p.is_uppercase()
                    && c.is_uppercase()
                    && it.peek().is_some_and(|n| n.is_lowercase()));
            if boundary && !buf.is_empty() {
                f(&buf);
                buf.clear();
            }
        }
        if c.is_ascii() {
            buf.push(c.to_ascii_lowercase());
        } else {
            buf.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    if !buf.is_empty() {
        f(&buf);
    }
}

/// Extensions that mark a bare token as a file name (`report.md`, `clock.png`).
const FILE_EXTENSIONS: &[&str] = &[
    "bib", "bmp", "c", "cpp", "css", "csv", "doc", "docx", "gif", "go", "html", "ipynb", "java",
    "jpeg", "jpg", "js", "json", "jsx", "log", "md", "mov", "mp3", "mp4", "pdf", "png", "ppt",
    "pptx", "py", "rs", "svg", "toml", "ts", "tsx", "txt", "wav", "webp", "xls", "xlsx", "xml",
    "yaml", "yml", "zip",
];

/// What a query word came from: plain prose, a filesystem path or file name, or a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordOrigin {
    Prose,
    Path,
    Url,
}

/// Splits a query like [`split_words`], but reads paths and URLs as what they are. A path
/// (`/root/markdown/report.md`, `~/x`, `./x`, or a bare `name.ext` with a known extension) is a
/// location, not a topic: its directory components are dropped, its base name and extension are
/// kept (the extension names the format), and the caller learns that a file is involved. A URL
/// keeps its words minus the scheme and `www`. Everything else goes through [`split_words`].
pub fn query_words(text: &str, mut f: impl FnMut(&str, WordOrigin)) {
    for tok in text.split_whitespace() {
        let t =
            tok.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '~' && c != '.');
        let t = t.trim_end_matches('.');
        let lower = t.to_ascii_lowercase();
        if lower.contains("://") || lower.starts_with("www.") {
            split_words(t, |w| {
                if !matches!(w, "http" | "https" | "www") {
                    f(w, WordOrigin::Url)
                }
            });
            continue;
        }
        let base = t.rsplit('/').next().unwrap_or(t);
        let ext = base
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .filter(|e| FILE_EXTENSIONS.contains(&e.as_str()));
        let is_path = t.starts_with('/')
            || t.starts_with("~/")
            || t.starts_with("./")
            || (ext.is_some() && !base.starts_with('.'));
        if is_path && !base.is_empty() {
            split_words(base, |w| f(w, WordOrigin::Path));
            continue;
        }
        split_words(tok, |w| f(w, WordOrigin::Prose));
    }
}

/// FxHash (rustc's hasher): the index hashes many short strings and `u32`s, where SipHash's
/// DoS resistance buys nothing (keys come from the catalog, not from the network).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// English stop words plus filler common in requests to an assistant ("please", "my", "want").
/// Sorted for binary search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "each", "else", "etc", "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
    "just", "let", "ll", "me", "might", "mine", "more", "most", "must", "my", "myself", "need",
    "of", "on", "once", "one", "only", "onto", "or", "other", "our", "ours", "out", "own",
    "please", "re", "s", "same", "shall", "she", "should", "so", "some", "such", "t", "than",
    "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "us", "ve", "very", "via", "want", "was", "we",
    "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your", "yours",
];

/// Words that frame a request to an assistant rather than name what it needs ("help me make",
/// "tell me", "give me a list"). Dropped from long queries only; sorted for binary search.
const REQUEST_BOILERPLATE: &[&str] = &[
    "able", "based", "could", "give", "help", "kindly", "know", "like", "provide", "tell", "thank",
    "thanks",
];

pub fn is_request_boilerplate(w: &str) -> bool {
    REQUEST_BOILERPLATE.binary_search(&w).is_ok()
}

pub fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_ok()
}

/// Generic verb/noun equivalence classes (plain words, stemmed when the analyzer is built).
/// Deliberately domain-free: they bridge how people ask ("remove", "fetch") and how APIs name
/// things ("delete", "get"). They expand the query at reduced weight, never the documents.
const SYNONYMS: &[&[&str]] = &[
    &[
        "delete",
        "remove",
        "uninstall",
        "drop",
        "destroy",
        "erase",
        "purge",
        "wipe",
    ],
    &["create", "add", "new", "make", "insert", "generate"],
    &["list", "enumerate", "show"],
    &[
        "get", "fetch", "retrieve", "read", "view", "show", "obtain", "download",
    ],
    &[
        "update", "modify", "edit", "change", "set", "patch", "alter",
    ],
    &["search", "find", "query", "lookup", "look", "discover"],
    &["send", "post", "publish", "emit", "fire", "push"],
    &[
        "start", "run", "launch", "trigger", "execute", "begin", "invoke",
    ],
    &[
        "stop",
        "halt",
        "cancel",
        "abort",
        "terminate",
        "kill",
        "end",
    ],
    &["copy", "duplicate", "clone"],
    &["rename", "move"],
    &["upload", "attach"],
    &["save", "write", "store", "persist", "download"],
    &["wait", "block", "poll"],
    &["repo", "repository"],
    &["user", "member", "account", "colleague", "person", "people"],
    &["email", "mail", "message"],
    &["ticket", "issue"],
    &["pr", "pull"],
    &["doc", "document"],
    &["flag", "toggle", "feature"],
    &["screenshot", "capture", "snapshot"],
    &["record", "capture"],
    &["click", "press", "tap", "hit"],
    &["navigate", "go", "open", "visit", "browse"],
    &["stats", "statistics", "metrics"],
    &["config", "configuration", "settings"],
    &["install", "deploy"],
    &["multiple", "several", "many", "batch", "bulk"],
    &["permission", "access", "acl"],
    &["folder", "directory", "dir"],
    &["picture", "image", "photo", "img"],
    &["chart", "graph", "plot", "diagram", "visualization"],
    &["price", "pricing", "cost", "quote"],
    &["meeting", "event", "appointment"],
    // File formats and the documents they hold.
    &["ppt", "pptx", "powerpoint", "presentation", "slide"],
    &["md", "markdown"],
    &["xlsx", "xls", "excel", "spreadsheet", "workbook"],
    &["docx", "doc", "document"],
];

/// Tokeniser with its stemmer; build one and reuse it.
pub struct Analyzer {
    stemmer: Stemmer,
    /// stem -> other stems of every synonym class it belongs to (sorted, deduplicated).
    synonyms: HashMap<String, Vec<String>>,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzer {
    pub fn new() -> Self {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut synonyms: HashMap<String, Vec<String>> = HashMap::new();
        for group in SYNONYMS {
            let stems: Vec<String> = group.iter().map(|w| stemmer.stem(w).into_owned()).collect();
            for s in &stems {
                let e = synonyms.entry(s.clone()).or_default();
                e.extend(stems.iter().filter(|o| *o != s).cloned());
            }
        }
        for v in synonyms.values_mut() {
            v.sort();
            v.dedup();
        }
        Analyzer { stemmer, synonyms }
    }

    /// Stems equivalent to `stem` under the generic synonym table (empty if none).
    pub fn synonyms_of(&self, stem: &str) -> &[String] {
        self.synonyms.get(stem).map_or(&[], |v| v.as_slice())
    }

    /// Stem of one lowercase word from [`split_words`], or None for a stop word.
    pub fn stem_word(&self, w: &str) -> Option<String> {
        if is_stop_word(w) {
            None
        } else {
            Some(self.stemmer.stem(w).into_owned())
        }
    }

    /// Stems of `text`'s words, stop words dropped, in order (duplicates kept).
    pub fn terms(&self, text: &str, mut f: impl FnMut(&str)) {
        split_words(text, |w| {
            if is_stop_word(w) {
                return;
            }
            let s = self.stemmer.stem(w);
            f(&s);
        });
    }

    pub fn terms_vec(&self, text: &str) -> Vec<String> {
        let mut v = Vec::new();
        self.terms(text, |t| v.push(t.to_string()));
        v
    }
}

/// First sentence of a description: up to the first ". ", newline or `max_words` words.
pub fn lead(desc: &str, max_words: usize) -> &str {
    let mut desc = desc.trim_start();
    if let Some((p, _)) = desc
        .char_indices()
        .filter(|(_, c)| c.is_whitespace())
        .nth(max_words)
    {
        desc = &desc[..p];
    }
    let mut end = desc.len();
    for pat in [". ", ".\n", "\n"] {
        if let Some(p) = desc.find(pat) {
            end = end.min(p);
        }
    }
    &desc[..end]
}

/// Lowercase, alphanumerics only: "Git_Clone" and "git clone" both give "gitclone".
pub fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Lowercase and collapse whitespace runs to one space.
pub fn norm_literal(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Collect parameter names and parameter text of a JSON Schema, bounded in depth.
pub fn walk_schema(
    v: &Value,
    depth: usize,
    max_depth: usize,
    names: &mut String,
    text: &mut String,
) {
    if depth > max_depth {
        return;
    }
    let Value::Object(map) = v else {
        if let Value::Array(a) = v {
            for x in a {
                walk_schema(x, depth + 1, max_depth, names, text);
            }
        }
        return;
    };
    if let Some(Value::Object(props)) = map.get("properties") {
        for (k, p) in props {
            names.push_str(k);
            names.push(' ');
            if let Value::Object(pm) = p {
                for key in ["description", "title"] {
                    if let Some(Value::String(s)) = pm.get(key) {
                        text.push_str(s);
                        text.push(' ');
                    }
                }
                if let Some(Value::Array(e)) = pm.get("enum") {
                    for x in e.iter().take(32) {
                        if let Value::String(s) = x {
                            text.push_str(s);
                            text.push(' ');
                        }
                    }
                }
            }
            walk_schema(p, depth + 1, max_depth, names, text);
        }
    }
    for key in [
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "additionalProperties",
        "$defs",
        "definitions",
    ] {
        if let Some(x) = map.get(key) {
            if key == "$defs" || key == "definitions" {
                if let Value::Object(defs) = x {
                    for d in defs.values() {
                        walk_schema(d, depth + 1, max_depth, names, text);
                    }
                }
            } else {
                walk_schema(x, depth + 1, max_depth, names, text);
            }
        }
    }
}
