//! Wire names from arbitrary text: the input split at newlines into server label, server id and
//! tool name. Checks: every name passes every provider's rule (`wire_name::is_valid`), a name
//! with a digest ends with the digest of (id, tool), and the same input gives the same name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolreg::registry::wire_name::{camel_case, digest, is_valid, mcp_name};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\n');
    let label = parts.next().unwrap_or("");
    let id = parts.next().unwrap_or("");
    let tool = parts.next().unwrap_or("");

    assert!(camel_case(tool).bytes().all(|b| b.is_ascii_alphanumeric()));
    let plain = mcp_name(label, id, tool, false);
    assert!(is_valid(&plain), "invalid wire name {plain:?}");
    assert_eq!(plain, mcp_name(label, id, tool, false), "not deterministic");
    let forced = mcp_name(label, id, tool, true);
    assert!(is_valid(&forced), "invalid wire name {forced:?}");
    assert!(forced.ends_with(&digest(id, tool)), "{forced:?} lacks the digest");
});
