//! The four built-in host tools. The sidecar owns their definitions; the host executes them.

use super::entry::{Defer, Source, ToolEntry};
use super::predicate::Predicate;
use serde_json::json;

fn entry(name: &str, namespace: &str, description: &str, schema: serde_json::Value, applies: Predicate) -> ToolEntry {
    ToolEntry {
        name: name.into(),
        namespace: namespace.into(),
        description: description.into(),
        input_schema: schema,
        summary: None,
        namespace_label: None,
        output_schema: None,
        defer: Defer::Auto,
        approval: false,
        applies: Some(applies),
        annotations: Some(json!({"readOnlyHint": true})),
        ui: None,
        source: Source::Builtin,
    }
}

pub fn entries() -> Vec<ToolEntry> {
    let web = || Predicate::Flag("enableWebSearch".into());
    let kb = || Predicate::NonEmpty("knowledgeBaseIds".into());
    vec![
        entry(
            "web_search",
            "web",
            "Search the web and return the most relevant results with titles, URLs and snippets.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "maxResults": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many results to return (default 5)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            web(),
        ),
        entry(
            "web_fetch",
            "web",
            "Fetch a web page by URL and return its main content as text or markdown.",
            json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string", "format": "uri", "description": "The page to fetch."},
                    "format": {"type": "string", "enum": ["markdown", "text", "html"], "description": "Output format (default markdown)."}
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            web(),
        ),
        entry(
            "kb_search",
            "kb",
            "Search the active knowledge bases for passages relevant to a query.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "knowledgeBaseIds": {"type": "array", "items": {"type": "string"}, "description": "Restrict to these knowledge bases (default: all active ones)."},
                    "topK": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many passages to return (default 5)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            kb(),
        ),
        entry(
            "kb_list",
            "kb",
            "List the active knowledge bases and the documents they hold.",
            json!({
                "type": "object",
                "properties": {
                    "knowledgeBaseId": {"type": "string", "description": "List the documents of this knowledge base only."}
                },
                "additionalProperties": false
            }),
            kb(),
        ),
    ]
}
