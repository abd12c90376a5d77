//! The tools of a paginated `tools/list`, gathered page by page: the first tool of each name is
//! kept, the rest are dropped with one warning per page.
//!
//! A page is converted on tokio's blocking pool (`Pages::add`): a 3.5 MB page of 100 tools took
//! milliseconds to turn into `McpTool`s, and a server whose cursor never ends sends a thousand
//! pages, so it must not hold a runtime thread (`cargo bench --bench faults`). Names are looked
//! up in a set: checking each against the list kept was quadratic (10,000 tools, 50 million
//! comparisons).

use std::collections::HashSet;

use serde_json::Value;

use super::{CatalogError, McpTool};

#[derive(Default)]
pub(super) struct Pages {
    pub tools: Vec<McpTool>,
    names: HashSet<String>,
}

impl Pages {
    /// Adds one page's tools, converted off the runtime's threads.
    pub async fn add(self, page: Vec<rmcp::model::Tool>, server_id: &str) -> Result<Pages, CatalogError> {
        let server_id = server_id.to_owned();
        let mut pages = self;
        tokio::task::spawn_blocking(move || {
            pages.add_now(page, &server_id);
            pages
        })
        .await
        .map_err(|e| CatalogError::Mcp(format!("tools/list: reading a page failed: {e}")))
    }

    fn add_now(&mut self, page: Vec<rmcp::model::Tool>, server_id: &str) {
        let (mut duplicates, mut unnamed) = (Vec::new(), 0);
        for tool in page {
            match to_mcp_tool(serde_json::to_value(&tool).unwrap_or(Value::Null)) {
                Some(t) if self.names.contains(&t.name) => duplicates.push(t.name),
                Some(t) => {
                    self.names.insert(t.name.clone());
                    self.tools.push(t);
                }
                None => unnamed += 1,
            }
        }
        if let Some(first) = duplicates.first() {
            tracing::warn!(server = %server_id, count = duplicates.len(), first = %first, "duplicate tool names; keeping the first of each");
        }
        if unnamed > 0 {
            tracing::warn!(server = %server_id, count = unnamed, "tools without a name; skipped");
        }
    }
}

fn to_mcp_tool(v: Value) -> Option<McpTool> {
    let name = v.get("name")?.as_str()?.to_owned();
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let nonnull = |k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
    Some(McpTool {
        title: text("title"),
        description: text("description").unwrap_or_default(),
        input_schema: nonnull("inputSchema").unwrap_or_else(|| serde_json::json!({"type": "object"})),
        output_schema: nonnull("outputSchema"),
        annotations: nonnull("annotations"),
        ui: crate::apps::ToolUi::of(v.get("_meta")),
        meta: nonnull("_meta").filter(Value::is_object),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tool_of_each_name_is_kept() {
        let tool = |name: &str, description: &str| -> rmcp::model::Tool {
            serde_json::from_value(serde_json::json!({"name": name, "description": description, "inputSchema": {"type": "object"}})).unwrap()
        };
        let mut pages = Pages::default();
        pages.add_now(vec![tool("a", "first a"), tool("b", "b")], "s");
        pages.add_now(vec![tool("a", "second a"), tool("c", "c")], "s");
        let kept: Vec<(&str, &str)> = pages.tools.iter().map(|t| (t.name.as_str(), t.description.as_str())).collect();
        assert_eq!(kept, [("a", "first a"), ("b", "b"), ("c", "c")]);
    }
}
