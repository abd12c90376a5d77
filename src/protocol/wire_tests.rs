//! Types shared on the wire keep their JSON: the lists' one `Page`, and the timeouts a server's
//! own `timeouts` share with `initialize.timeouts`.

use super::*;
use serde_json::json;

#[test]
fn the_three_lists_are_one_page_with_their_own_key() {
    let page = ResourceTemplateList { items: ResourceTemplates { resource_templates: vec![] }, next_cursor: Some("c2".into()), pending: vec!["slow".into()] };
    let wire = json!({"resourceTemplates": [], "nextCursor": "c2", "pending": ["slow"]});
    assert_eq!(serde_json::to_value(&page).unwrap(), wire);
    assert_eq!(serde_json::from_value::<ResourceTemplateList>(wire).unwrap(), page);
    let empty = PromptList { items: Prompts { prompts: vec![] }, next_cursor: None, pending: vec![] };
    assert_eq!(serde_json::to_string(&empty).unwrap(), r#"{"prompts":[]}"#);
    let resources: ResourceList = serde_json::from_value(json!({"resources": [{"serverId": "s", "uri": "file:///a", "name": "a"}]})).unwrap();
    assert_eq!((resources.items.resources[0].uri.as_str(), resources.next_cursor, resources.pending.len()), ("file:///a", None, 0));
}

#[test]
fn a_servers_timeouts_are_the_global_ones_type() {
    let wire = json!({"connectMs": 1, "listMs": 2, "callMs": 3, "approvalMs": 4, "elicitationMs": 5});
    let global: Timeouts = serde_json::from_value(wire.clone()).unwrap();
    let servers = ServerTimeouts { connect_ms: Some(1), list_ms: Some(2), call_ms: Some(3) };
    assert_eq!((global.servers, global.approval_ms, global.elicitation_ms), (servers, Some(4), Some(5)));
    assert_eq!(serde_json::to_string(&global).unwrap(), wire.to_string());
    assert_eq!(serde_json::to_string(&Timeouts::default()).unwrap(), "{}");
    // A server's own: the same fields, the same type.
    let own: ServerTimeouts = serde_json::from_value(json!({"callMs": 3})).unwrap();
    assert_eq!(own.call(std::time::Duration::ZERO), std::time::Duration::from_millis(3));
    assert_eq!(serde_json::to_value(global.servers).unwrap(), json!({"connectMs": 1, "listMs": 2, "callMs": 3}));
}
