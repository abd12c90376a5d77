//! The meta-tools' definitions, as the model sees them, and the `<DEFERRED_TOOLS>` section.
//! Their cost is counted with the same tokenizer as every other definition: it is the price of
//! deferring, and the plan's overhead gate compares against it.

use super::ToolDefinition;
use serde_json::json;
use std::collections::BTreeMap;

pub const SEARCH: &str = "tool_search";
pub const INSPECT: &str = "tool_inspect";
pub const INVOKE: &str = "tool_invoke";

pub fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: SEARCH.into(),
            description: "Search the tools that are available to you but not listed in your tool \
definitions (the namespaces in DEFERRED_TOOLS). Describe what you want to do in a few words, or \
give a tool name; results are ranked best first, each with its exact name, namespace and a \
one-line summary. Call it with no query to browse the namespaces and how many tools each has. \
If nothing matches, try other words or a namespace before concluding that no tool exists."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do, or a tool name. Omit to browse namespaces."},
                    "namespace": {"type": "string", "description": "Only search this namespace, e.g. mcp:github."},
                    "verbose": {"type": "boolean", "description": "Include each result's full parameter signature."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Maximum number of results (default 8)."}
                },
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: INSPECT.into(),
            description: "Show the full signature of one tool found with tool_search: every \
parameter with its type, whether it is required, allowed values and its description. Always \
inspect a tool before the first tool_invoke of it in this conversation, and build the params \
from the signature exactly."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The exact tool name, as tool_search returned it."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: INVOKE.into(),
            description: "Run one tool found with tool_search, by its exact name, with params that \
match the signature tool_inspect showed, and return the tool's result. A tool that was not \
inspected yet answers with its signature instead of running: read it and call again. Tools \
listed directly in your tool definitions must be called directly, not through tool_invoke."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The exact tool name."},
                    "params": {"type": "object", "description": "The tool's arguments, matching its signature."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        },
    ]
}

/// The system-prompt section naming the deferred namespaces with their counts, in byte order
/// of the label so the prompt is identical for identical input.
pub fn prompt_section(namespaces: &BTreeMap<&str, usize>) -> String {
    let mut s = String::from(
        "<DEFERRED_TOOLS>\nMore tools are available than are listed in your tool definitions. \
To use one, find it with tool_search, read its parameters with tool_inspect, then call it with \
tool_invoke. Deferred namespaces (tool count):\n",
    );
    for (label, count) in namespaces {
        s.push_str(&format!("- {label} ({count})\n"));
    }
    s.push_str("</DEFERRED_TOOLS>");
    s
}
