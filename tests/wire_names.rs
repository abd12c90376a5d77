//! Every tool of the 97 fixture catalogs (2,422 tools) through the wire-name builder, the way
//! a sync registers them: valid for every provider, unique, and mapped back without parsing.
mod support;
use serde_json::json;
use std::collections::HashMap;
use toolreg::registry::{mcp, wire_name, Registry, Source};

#[test]
fn all_fixture_tools_get_valid_unique_reversible_names() {
    let mut reg = Registry::default();
    let mut count = 0;
    let mut digested = 0;
    let mut expected: HashMap<String, (String, String)> = HashMap::new();
    for (server, t) in support::catalogs::catalog_tools() {
        let server = server.as_str();
        let tool = t["name"].as_str().unwrap();
        let wire = reg.mcp_wire_name(server, server, tool);
        assert!(wire_name::is_valid(&wire), "{server}/{tool} -> {wire}");
        assert!(!expected.contains_key(&wire), "{wire} given twice");
        digested += (wire.len() > 12 && wire.ends_with(&wire_name::digest(server, tool))) as usize;
        expected.insert(wire.clone(), (server.to_string(), tool.to_string()));
        reg.insert(support::catalogs::mcp_entry(server, &t, wire));
        count += 1;
    }
    assert_eq!(count, 2422);
    assert_eq!(reg.len(), 2422, "no entry replaced another");
    for (wire, (server, tool)) in &expected {
        match &reg.get(wire).unwrap().entry.source {
            Source::Mcp { server_id, tool_name } => assert_eq!((server_id, tool_name), (server, tool)),
            other => panic!("{wire}: {other:?}"),
        }
        // Asking again gives the same name: a re-sync keeps names stable.
        assert_eq!(&reg.mcp_wire_name(server, server, tool), wire);
    }
    // Twilio's long names overflow 64 characters and must have been shortened with a digest.
    assert!(digested >= 20, "only {digested} names carry a digest");
}

#[test]
fn colliding_names_get_distinct_digests() {
    let mut reg = Registry::default();
    let schema = json!({"type": "object"});
    let mut add = |server: &str, tool: &str| {
        let wire = reg.mcp_wire_name(server, "My Server", tool);
        reg.insert(mcp::entry(
            &mcp::McpTool { server_id: server, server_name: "My Server", tool_name: tool, title: None, description: "d", input_schema: &schema, output_schema: None, annotations: None, approval: false, ui: None },
            wire.clone(),
        ));
        wire
    };
    let a = add("s1", "create-branch");
    let b = add("s1", "create_branch");
    let c = add("s2", "create_branch");
    assert_eq!(a, "mcp__myServer__createBranch");
    assert_eq!(b, format!("mcp__myServer__createBranch_{}", wire_name::digest("s1", "create_branch")));
    assert_eq!(c, format!("mcp__myServer__createBranch_{}", wire_name::digest("s2", "create_branch")));
}
