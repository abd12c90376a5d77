//! The crate's modules form a DAG in one fixed order (ARCHITECTURE.md, "Invariants"): a module
//! may reference only modules before it. This test reads every file under `src/`, finds its
//! `crate::` references (and `super::` paths that climb to the crate root) outside comments
//! and string literals, and fails on any reference that points up or sideways out of order.
//! Beyond the order: domain code never names the boundary, the catalog only the leaves, and the
//! MCP face (`gateway`) never the sidecar's (`server`) nor its wire types (`protocol`); the faces
//! (`server`, `gateway`, `hostconfig` and the CLI, `main.rs`) reach the domain only through
//! `service` (`FACE_MAY_NAME` says what else they may name, and why), and through its types and
//! the methods of `Service`: `service` re-exports types only, and a face names of it a type or a
//! constant, of the catalog its types (`face_paths`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lowest first. A module may reference only modules to its left.
const ORDER: &[&str] = &[
    "secret",
    "invisible",
    "os",
    // The state many processes share (issue 63): records in transactions; knows no caller.
    "store",
    "confine",
    // Which media of a result go to the model: the policy `output` converts under.
    "media",
    "output",
    "validate",
    "repair",
    "tokenize",
    "results",
    "sandbox",
    "settings",
    "audit",
    "telemetry",
    "apps",
    "logging",
    "catalog",
    // A registry's server.json to a catalog `ServerConfig` (issue 56).
    "mcp_registry",
    "embed",
    "usage",
    // Upstream tasks handed on under ids of ours: knows no other module.
    "tasks",
    // Grants read and write their file as the catalog's cache does (`catalog::cache`).
    "approval",
    "registry",
    "overrides",
    "sync",
    "exposition",
    "invoke",
    "upstream",
    "meta",
    "code_mode",
    "route",
    "service",
    // The host setup file `toolreg plan` and the gateway read: a face over the service.
    "hostconfig",
    "protocol",
    "transport",
    "server",
    "gateway",
];

/// Plain domain code: never the host contract, the server or the transport.
const DOMAIN: &[&str] = &[
    "registry", "overrides", "exposition", "tokenize", "results", "media", "catalog", "embed", "sync", "invoke", "upstream", "meta", "code_mode", "route", "approval", "repair", "validate", "output", "sandbox", "usage", "tasks", "audit", "telemetry", "mcp_registry",
];
const BOUNDARY: &[&str] = &["protocol", "server", "transport", "gateway"];
/// The two faces over the core: neither reaches into the other; what both need sits below them.
const FACES: (&str, &str) = ("server", "gateway");
/// Every module that is a face: the two, and the host setup file (`toolreg plan`'s, the
/// gateway's config). The CLI (`main.rs`) is one too, checked as the crate's user it is.
const FACE_MODULES: &[&str] = &["server", "gateway", "hostconfig"];
/// The leaves the catalog may name: secrets, hidden text, the confinement of the servers it
/// starts (`confine`), and what a tool's `_meta` says of its view (`apps`, plain data read
/// from a server's list).
const CATALOG_MAY_NAME: &[&str] = &["secret", "invisible", "store", "confine", "apps"];
/// What a face may name besides the service (`service`), through which it reaches the domain:
/// - `catalog`: the connection to the servers, which each face configures from its own
///   settings and whose status, pins and authorization each presents in its own protocol;
/// - `settings`: plain data both faces read (`initialize`, the gateway's config file);
/// - `hostconfig`: the host part of a gateway config, the shape `toolreg plan` reads;
/// - `secret`, `invisible`, `os`, `logging`: leaves of the process, no domain (`invisible`
///   shows a person the hidden characters of what they review);
/// - `store`: the state directory's records, where the gateway keeps the OAuth records its
///   `AuthHost` serves (the host's secrets port, which the sidecar's host answers itself);
/// - the sidecar's own `protocol` and `transport` (the gateway never names them).
const FACE_MAY_NAME: &[&str] = &["service", "catalog", "settings", "hostconfig", "secret", "invisible", "os", "store", "logging", "protocol", "transport"];
/// The catalog's functions a face calls itself, each truly that face's: (file, path, why).
const FACE_MAY_CALL: &[(&str, &str, &str)] = &[
    (
        "gateway/token_file.rs",
        "catalog::cache::write_private",
        "the gateway's own OAuth token file, written owner-only as the catalog writes its cache",
    ),
    (
        "gateway/add_cli.rs",
        "catalog::cache::write_private",
        "`toolreg add`'s config file and secret files, written atomically and owner-only as the catalog writes its cache",
    ),
];

/// A reference that breaks the order: (file, from, to).
type Violation = (String, String, String);

fn rank(m: &str) -> Option<usize> {
    ORDER.iter().position(|o| *o == m)
}

/// The code of a Rust file with comments and the contents of string and char literals blanked.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += rest[j..].chars().next().map_or(1, char::len_utf8);
                }
            }
            i += j;
            out.push(' ');
        } else if let Some(hashes) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes + usize::from(rest.starts_with("br"));
            let end = rest[body..].find(&close).map_or(rest.len(), |e| body + e + close.len());
            i += end;
            out.push_str("\"\"");
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < b.len() - i && b[i + j] != b'"' {
                j += if b[i + j] == b'\\' { 2 } else { 1 };
            }
            i += (j + 1).min(b.len() - i);
            out.push_str("\"\"");
        } else if let Some(len) = char_literal_len(rest) {
            i += len;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `r"`, `r#"`, `br##"`...: the number of hashes.
fn raw_string_start(s: &str) -> Option<usize> {
    let s = s.strip_prefix('b').unwrap_or(s).strip_prefix('r')?;
    let hashes = s.len() - s.trim_start_matches('#').len();
    s[hashes..].starts_with('"').then_some(hashes)
}

/// `'a'`, `'\n'`, `'\''`, `'\u{1F600}'` (but not a lifetime `'a`): its length.
fn char_literal_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix('\'')?;
    if let Some(esc) = body.strip_prefix('\\') {
        let end = esc.char_indices().skip(1).find(|(_, c)| *c == '\'')?.0;
        return Some(2 + end + 1);
    }
    let c = body.chars().next()?;
    body[c.len_utf8()..].starts_with('\'').then(|| 2 + c.len_utf8())
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first path segments of the items in a `{...}` group (nested groups skipped).
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let (mut depth, mut start) = (0usize, 1usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    start = i + 1;
                }
            }
            ',' | '}' if depth == 1 => {
                let item = s[start..i].trim();
                let head = ident_at(item);
                if !head.is_empty() && head != "self" {
                    heads.push(head);
                }
                start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    heads
}

/// The top-level modules that `code` (a file `depth` modules below the crate root) names.
fn references(code: &str, depth: usize) -> Vec<String> {
    let mut refs = Vec::new();
    let mut add = |after: &str| {
        let after = after.trim_start();
        if after.starts_with('{') {
            refs.extend(group_heads(after).into_iter().map(str::to_string));
        } else {
            let head = ident_at(after);
            if !head.is_empty() {
                refs.push(head.to_string());
            }
        }
    };
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` or part of a longer name
        }
        add(&code[i + "crate::".len()..]);
    }
    // `super::super::x` from a file deep enough climbs to the crate root.
    let mut at = 0;
    while let Some(i) = code[at..].find("super::") {
        let start = at + i;
        let prev = code[..start].chars().next_back();
        let mut end = start;
        let mut supers = 0;
        while code[end..].starts_with("super::") {
            supers += 1;
            end += "super::".len();
        }
        at = end;
        if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if supers >= depth {
            let head = ident_at(&code[end..]);
            if rank(head).is_some() {
                refs.push(head.to_string());
            }
        }
    }
    refs
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Files included with `#[path = "..."]` belong to the module that includes them.
fn path_owners(files: &BTreeMap<PathBuf, String>) -> BTreeMap<PathBuf, PathBuf> {
    let mut owners = BTreeMap::new();
    for (file, src) in files {
        for (i, _) in src.match_indices("#[path = \"") {
            let rest = &src[i + "#[path = \"".len()..];
            let target = &rest[..rest.find('"').unwrap()];
            owners.insert(file.parent().unwrap().join(target), file.clone());
        }
    }
    owners
}

/// (top-level module, depth below the crate root) of a file under `src`; `None` for the crate root.
fn module_of(src_dir: &Path, file: &Path, owners: &BTreeMap<PathBuf, PathBuf>) -> Option<(String, usize)> {
    if let Some(owner) = owners.get(file) {
        let (m, d) = module_of(src_dir, owner, owners)?;
        return Some((m, d + 1));
    }
    let rel = file.strip_prefix(src_dir).unwrap();
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return None;
    }
    let depth = if parts.last().is_some_and(|p| p == "mod") { parts.len() - 1 } else { parts.len() };
    Some((parts[0].clone(), depth))
}

/// Checks a source tree given as (path under `src`, contents).
fn check(src_dir: &Path, files: &BTreeMap<PathBuf, String>) -> (Vec<Violation>, Vec<String>) {
    let owners = path_owners(files);
    let (mut bad, mut unplaced) = (Vec::new(), Vec::new());
    for (file, src) in files {
        let shown = file.strip_prefix(src_dir).unwrap().display().to_string();
        if shown == "main.rs" {
            bad.extend(cli_violations(&code_only(src)).into_iter().map(|to| (shown.clone(), "main".to_string(), to)));
            continue;
        }
        let Some((from, depth)) = module_of(src_dir, file, &owners) else { continue };
        if FACE_MODULES.contains(&from.as_str()) {
            bad.extend(face_paths(&shown, &code_only(src), "crate").into_iter().map(|to| (shown.clone(), from.clone(), to)));
        }
        if from == "service" {
            bad.extend(service_exports(&code_only(src)).into_iter().map(|to| (shown.clone(), from.clone(), to)));
        }
        let Some(from_rank) = rank(&from) else {
            unplaced.push(format!("{shown}: module {from:?} has no place in ORDER"));
            continue;
        };
        for to in references(&code_only(src), depth) {
            if to == from {
                continue;
            }
            match rank(&to) {
                None => unplaced.push(format!("{shown}: crate::{to} is not a module in ORDER")),
                Some(r) if r >= from_rank => bad.push((shown.clone(), from.clone(), to)),
                Some(_) if DOMAIN.contains(&from.as_str()) && BOUNDARY.contains(&to.as_str()) => bad.push((shown.clone(), from.clone(), to)),
                Some(_) if from == "catalog" && !CATALOG_MAY_NAME.contains(&to.as_str()) => bad.push((shown.clone(), from.clone(), to)),
                Some(_) if (from.as_str(), to.as_str()) == (FACES.1, FACES.0) => bad.push((shown.clone(), from.clone(), to)),
                // The MCP face never names the sidecar's wire types; settings both read sit in `settings`.
                Some(_) if from == FACES.1 && to == "protocol" => bad.push((shown.clone(), from.clone(), to)),
                // A face reaches the domain only through the service.
                Some(_) if FACE_MODULES.contains(&from.as_str()) && !FACE_MAY_NAME.contains(&to.as_str()) => bad.push((shown.clone(), from.clone(), to)),
                Some(_) => {}
            }
        }
    }
    (bad, unplaced)
}

/// Every path `code` names from `root` (`crate`, or `toolreg` in `main.rs`), its segments after
/// the root, `{...}` groups expanded: `crate::a::{B, c::D}` is `[a, B]` and `[a, c, D]`.
fn paths(code: &str, root: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let lead = format!("{root}::");
    for (i, _) in code.match_indices(&lead) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        tree(&code[i + lead.len()..], Vec::new(), &mut out);
    }
    out
}

/// The paths of a use tree or expression path at the start of `s`, after `prefix`.
fn tree(s: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = s.trim_start();
    loop {
        if rest.starts_with('{') {
            let (mut depth, mut start) = (0usize, 1usize);
            for (i, c) in rest.char_indices() {
                match c {
                    '{' => depth += 1,
                    ',' | '}' if depth == 1 => {
                        let item = rest[start..i].trim();
                        if item == "self" {
                            out.push(prefix.clone());
                        } else if !item.is_empty() {
                            tree(item, prefix.clone(), out);
                        }
                        start = i + 1;
                        if c == '}' {
                            break;
                        }
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            return;
        }
        let ident = ident_at(rest);
        if ident.is_empty() {
            break;
        }
        prefix.push(ident.to_string());
        match rest[ident.len()..].strip_prefix("::") {
            Some(more) => rest = more.trim_start(),
            None => break,
        }
    }
    out.push(prefix);
}

/// `Registry`, `CallAsk`: a type's name (a constant or a function's is not).
fn is_type(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase()) && name.chars().any(|c| c.is_ascii_lowercase())
}

/// `QUERY_TOOLS`: a constant's name.
fn is_const(name: &str) -> bool {
    name.len() > 1 && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// What a face (`file`) names of the service and the catalog past what it may: of `service`, only
/// a type or a constant (a step is a method of `Service` or of a type, never a function or a
/// module of the service); of `catalog`, only its types (or what `FACE_MAY_CALL` allows).
fn face_paths(file: &str, code: &str, root: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for p in paths(code, root) {
        let joined = p.join("::");
        let allowed = || FACE_MAY_CALL.iter().any(|(f, path, _)| *f == file && *path == joined);
        let bad_here = match p.first().map(String::as_str) {
            Some("service") => p.get(1).is_some_and(|s| !is_type(s) && !is_const(s)),
            Some("catalog") => !p.iter().skip(1).any(|s| is_type(s)) && !allowed(),
            _ => false,
        };
        if bad_here {
            bad.push(joined);
        }
    }
    bad
}

/// What the CLI (`main.rs`, a user of the library) names past a face's rules: `crate::` paths
/// (it names the library as `toolreg::`), modules no face may name, and functions of the service.
fn cli_violations(code: &str) -> Vec<String> {
    let mut bad: Vec<String> = paths(code, "crate").into_iter().map(|p| format!("crate::{}", p.join("::"))).collect();
    for p in paths(code, "toolreg") {
        let head = p.first().map_or("", String::as_str);
        if !FACE_MAY_NAME.contains(&head) && !FACE_MODULES.contains(&head) {
            bad.push(p.join("::"));
        }
    }
    bad.extend(face_paths("main.rs", code, "toolreg"));
    bad
}

/// What the service re-exports that is not a type (a function, a module, a constant):
/// `pub use` items whose name (or alias) is no type's.
fn service_exports(code: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for (i, _) in code.match_indices("pub use ") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let body = &code[i + "pub use ".len()..];
        let body = &body[..body.find(';').unwrap_or(body.len())];
        for leaf in use_leaves(body) {
            let name = leaf.rsplit(|c: char| c.is_whitespace() || c == ':').next().unwrap_or("");
            if !is_type(name) {
                bad.push(leaf);
            }
        }
    }
    bad
}

/// The leaves of a use tree as written (`a::b::C as D`), groups expanded.
fn use_leaves(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.to_string()] };
    let prefix = &tree[..open];
    let (mut depth, mut start, mut out) = (0usize, open + 1, Vec::new());
    for (i, c) in tree.char_indices().skip(open) {
        match c {
            '{' => depth += 1,
            ',' | '}' if depth == 1 => {
                let item = tree[start..i].trim();
                if !item.is_empty() {
                    let item = if item == "self" { prefix.trim_end_matches("::").to_string() } else { format!("{prefix}{item}") };
                    out.extend(use_leaves(&item));
                }
                start = i + 1;
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    out
}

fn source_tree() -> (PathBuf, BTreeMap<PathBuf, String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files = paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect();
    (src, files)
}

/// The tree with `line` added to `file`.
fn with_line(src: &Path, files: &BTreeMap<PathBuf, String>, file: &str, line: &str) -> BTreeMap<PathBuf, String> {
    let mut changed = files.clone();
    changed.get_mut(&src.join(file)).unwrap_or_else(|| panic!("{file} exists")).push_str(line);
    changed
}

#[test]
fn modules_reference_only_modules_before_them() {
    let (src, files) = source_tree();
    assert!(files.len() > 30, "read the crate: {} files", files.len());
    let (bad, unplaced) = check(&src, &files);
    assert!(unplaced.is_empty(), "place these in ORDER (and ARCHITECTURE.md):\n{}", unplaced.join("\n"));
    let lines: Vec<String> = bad.iter().map(|(f, from, to)| format!("{f}: {from} -> {to}")).collect();
    assert!(bad.is_empty(), "references against the module order {ORDER:?}:\n{}", lines.join("\n"));
}

#[test]
fn the_check_catches_a_reference_back_up_the_order() {
    let (src, files) = source_tree();
    // The cycles issue 8 removed, put back in each form a reference can take.
    let cases = [
        ("exposition/plans.rs", "use crate::meta;\n"),
        ("exposition/plans.rs", "pub struct S { index: std::sync::OnceLock<std::sync::Arc<crate::meta::PlanIndex>> }\n"),
        ("exposition/mod.rs", "use crate::{registry::Registered, meta::PlanIndex};\n"),
        ("exposition/meta_defs.rs", "use super::super::meta;\n"),
        ("invoke.rs", "fn f() { crate::meta::is_meta(\"x\"); }\n"),
        ("meta/mod.rs", "use crate::route;\n"),
        ("registry/mod.rs", "use crate::protocol::RpcError;\n"),
        ("catalog/mod.rs", "use crate::output;\n"),
        // The shared MCP adapter climbing back into a face (issue 22).
        ("upstream.rs", "use crate::server::Mcp;\n"),
        ("invoke.rs", "fn f(c: &crate::catalog::Catalog) { crate::upstream::Mcp(Some(c)); }\n"),
        ("gateway/session.rs", "fn f(c: &crate::catalog::Catalog) { crate::server::Mcp(Some(c)); }\n"),
        // The MCP face taking the sidecar's wire types (issue 38).
        ("gateway/search.rs", "use crate::protocol::SearchSettings;\n"),
        ("gateway/config.rs", "fn f(_: crate::protocol::UsagePolicy) {}\n"),
        // A face composing the domain itself instead of asking the service (issue 38).
        ("server/handlers_tools.rs", "fn f() { let _ = crate::route::call; }\n"),
        ("gateway/session.rs", "use crate::invoke::Executor;\n"),
        ("server/handlers.rs", "use crate::exposition::{self, PlanInput};\n"),
        // A face taking a domain step itself, by a function or module the service re-exported,
        // or by a catalog function (issue 51).
        ("server/handlers_tools.rs", "use crate::service::{sync_mcp, SyncMode};\n"),
        ("gateway/session.rs", "fn f() { crate::service::held_tool(); }\n"),
        ("gateway/listing.rs", "use crate::service::sessions::{self, Pick};\n"),
        ("server/mod.rs", "fn f() { crate::service::telemetry::is_on(); }\n"),
        ("gateway/client_host.rs", "fn f() { crate::catalog::canonical::canonical(); }\n"),
        ("server/handlers.rs", "use crate::catalog::{Catalog, cache::write_private};\n"),
        // The host setup file is a face: no domain module, no function of the service.
        ("hostconfig.rs", "use crate::exposition::Plan;\n"),
        ("hostconfig.rs", "fn f() { crate::service::preload_tokenizer(); }\n"),
        // The service re-exporting a function, a module or a constant.
        ("service/mod.rs", "pub use crate::sync::sync as sync_mcp;\n"),
        ("service/mod.rs", "pub use crate::exposition::{sessions, Plan};\n"),
        ("service/mod.rs", "pub use crate::usage::{self};\n"),
        ("service/mod.rs", "pub use crate::usage::DEFAULT_KEY;\n"),
        // The CLI: `toolreg::` paths only, through the service as the faces.
        ("main.rs", "fn f() { toolreg::meta::is_meta(\"x\"); }\n"),
        ("main.rs", "fn f() { toolreg::service::audit_read::pattern(\"x\"); }\n"),
        ("main.rs", "use crate::cli;\n"),
    ];
    for (file, line) in cases {
        let (bad, _) = check(&src, &with_line(&src, &files, file, line));
        assert!(bad.iter().any(|(f, _, _)| f == file), "{file} with {line:?} must fail the check: {bad:?}");
    }
    // Comments and strings are not references.
    let mut changed = files.clone();
    changed.get_mut(&src.join("exposition/plans.rs")).unwrap().push_str("// use crate::meta;\nconst S: &str = \"crate::meta\";\n/* crate::meta */\n");
    assert_eq!(check(&src, &changed).0, Vec::<Violation>::new());
}

#[test]
fn a_face_may_name_types_constants_and_methods_of_the_service() {
    let (src, files) = source_tree();
    let cases = [
        ("gateway/session.rs", "fn f() { crate::service::Service::new_reference(); let _ = crate::service::TOOL_INVOKE; }\n"),
        ("server/handlers.rs", "use crate::service::{self, Registry, Telemetry};\nuse crate::catalog::{Catalog, ApprovalHints};\nfn f() { crate::catalog::ApprovalHints::of(); }\n"),
        ("hostconfig.rs", "use crate::service::{Budget as B, Plan};\n"),
        ("main.rs", "fn f() { toolreg::service::Telemetry::global(); toolreg::gateway::check::check(); }\n"),
        ("service/mod.rs", "pub use crate::sync::{Mode as SyncMode, Synced};\n"),
    ];
    for (file, line) in cases {
        assert_eq!(check(&src, &with_line(&src, &files, file, line)).0, Vec::<Violation>::new(), "{file} with {line:?}");
    }
}

/// The hooks of a call's cross-cutting steps (issue 51 §2), and the modules that define them
/// (which may name their own): every other caller is the call pipeline, where the order of
/// the steps is written once.
const CALL_STEPS: &[(&str, &str)] = &[
    ("note_tool(", "telemetry/"),
    ("telemetry::Run {", "telemetry/"),
    ("Event::Call {", "audit/"),
    ("Via::Search", "usage/"),
    ("media_budget::fit(", "results/"),
    ("results::cut(", "results/"),
    ("results::keep(", "results/"),
    ("read::page(", "results/"),
    ("native_media::provider_output(", "exposition/native_media.rs"),
];
const PIPELINE: &str = "service/pipeline.rs";

#[test]
fn a_calls_cross_cutting_steps_are_called_from_the_call_pipeline_only() {
    let (src, files) = source_tree();
    let (mut stray, mut piped) = (Vec::new(), Vec::new());
    for (file, text) in &files {
        let rel = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let code = code_only(text);
        for (hook, owner) in CALL_STEPS.iter().filter(|(hook, _)| code.contains(hook)) {
            if rel == PIPELINE {
                piped.push(*hook);
            } else if !rel.starts_with(owner) {
                stray.push(format!("{rel}: {hook}"));
            }
        }
    }
    assert!(stray.is_empty(), "a call's step called outside {PIPELINE} (add it there, as a step):\n{}", stray.join("\n"));
    let gone: Vec<&str> = CALL_STEPS.iter().map(|(h, _)| *h).filter(|h| !piped.contains(h)).collect();
    assert!(gone.is_empty(), "{PIPELINE} no longer calls {gone:?}: keep CALL_STEPS with the pipeline");
}
