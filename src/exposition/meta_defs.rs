//! The meta-tools' definitions, as the model sees them, and the `<DEFERRED_TOOLS>` section.
//! Their cost is counted with the same tokenizer as every other definition: it is the price of
//! deferring, and the plan's overhead gate compares against it.
//!
//! The section stays within `SECTION_BUDGET` tokens whatever the catalog: past it, the
//! remaining namespaces are summarised in one line (hosts with 1,000+ servers overflowed such
//! lists in other products).

use super::{count_cached, ToolDefinition};
use crate::tokenize::EncodingChoice;
use serde_json::json;
use std::collections::BTreeMap;

pub const SEARCH: &str = "tool_search";
pub const INSPECT: &str = "tool_inspect";
pub const INVOKE: &str = "tool_invoke";
/// Code mode's meta-tool: offered only when the plan asks (`codeMode: "sandbox"`).
pub const EXEC: &str = "tool_exec";

/// The most tokens `tool_exec`'s description spends on the inline tools' signatures; the rest
/// are named by count and reached with `tools.inspect`.
pub const EXEC_SIGNATURES_BUDGET: u32 = 1_500;

/// `tool_exec`'s definition: how to write the script, its limits, and `signatures` (of the
/// tools the model sees directly, TypeScript style) for as many as fit the budget.
pub fn exec_definition(signatures: &[String], limits: &crate::sandbox::Limits, enc: EncodingChoice) -> ToolDefinition {
    let mut description = format!(
        "Run a short JavaScript program that calls tools, and get back only what it returns: use it \
to chain several calls, loop, or filter and join large results before you read them. `code` is the \
body of an async function. `await tools.call(name, args)` runs any tool of this request (listed \
or deferred, by exact name) and resolves to its result (its structured content or JSON when it \
has some, else its text); a tool error, invalid arguments or a call the user denies throws an \
Error you can catch. `await tools.search(query)` resolves to [{{name, namespace}}] of deferred \
tools, `await tools.inspect(name)` to a tool's signature. `console.log` is captured. `return` a \
JSON value, as small as will do. There are no files, network, timers or imports. Limits: {} ms \
of running time, {} tool calls, {} bytes of output.",
        limits.timeout.as_millis(),
        limits.max_calls,
        limits.max_output_bytes
    );
    let mut spent = 0;
    let mut shown = 0;
    for sig in signatures {
        let cost = count_cached(enc, sig) + 1;
        if spent + cost > EXEC_SIGNATURES_BUDGET {
            break;
        }
        if shown == 0 {
            description.push_str("\n\nTools you can call:\n");
        }
        description.push_str(sig);
        description.push('\n');
        spent += cost;
        shown += 1;
    }
    if shown < signatures.len() {
        description.push_str(&format!("...and {} more: tools.inspect(name) shows any of them.\n", signatures.len() - shown));
    }
    ToolDefinition {
        name: EXEC.into(),
        description: description.trim_end().to_string(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The body of an async JavaScript function, e.g. const r = await tools.call('x', {a: 1}); return r.items.length;"}
            },
            "required": ["code"],
            "additionalProperties": false
        }),
    }
}

/// `tool_result_read`'s definition (`results::read`).
pub fn result_read_definition() -> ToolDefinition {
    let (name, description, input_schema) = crate::results::read::definition();
    ToolDefinition { name: name.into(), description: description.into(), input_schema }
}

/// Adds `tool_result_read` to `plan`, inline: every plan offers it while a result budget is
/// on, so a cut result can always be read on (its cost counts in the plan's inline tokens).
pub fn offer_result_read(plan: &mut super::Plan) {
    use super::{Placement, Reason};
    let def = result_read_definition();
    if plan.tools.iter().any(|t| t.name == def.name) {
        return;
    }
    plan.tokens.inline += u64::from(count_cached(plan.encoding, &def.counted_text()));
    plan.placements.insert(def.name.clone(), Placement { namespace: None, reason: Reason::Meta, deferred: false, note: None, ui: None });
    plan.tools.push(def);
}

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
parameter with its type, whether it is required, allowed values and its description. Inspect \
a tool before you first invoke it and build the params from the signature exactly."
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
match its signature (tool_inspect shows it), and return the tool's result. Params that do not \
match are not run: the answer says what was wrong and shows the signature, so you can call \
again. Tools listed directly in your tool definitions must be called directly, not through \
tool_invoke."
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

/// The most tokens the `<DEFERRED_TOOLS>` section may take.
pub const SECTION_BUDGET: u32 = 2_000;

/// How the section tells the model to reach a deferred tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intro<'a> {
    /// Through tool_search, tool_inspect and tool_invoke.
    Portable,
    /// Through a provider-native search tool of this name; found tools are called directly.
    Native(&'a str),
}

/// `12345` as `12,345`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The section with the first `shown` namespaces listed and the rest summarised.
fn section(namespaces: &BTreeMap<&str, usize>, shown: usize, intro: Intro) -> String {
    let search = match intro {
        Intro::Portable => SEARCH,
        Intro::Native(name) => name,
    };
    let mut s = match intro {
        Intro::Portable => String::from(
            "<DEFERRED_TOOLS>\nMore tools are available than are listed in your tool definitions. \
To use one, find it with tool_search, read its parameters with tool_inspect, then call it with \
tool_invoke. Deferred namespaces (tool count):\n",
        ),
        Intro::Native(name) => format!(
            "<DEFERRED_TOOLS>\nMore tools are available than are loaded in your tool definitions. \
To use one, find it with {name}; the tools it finds are loaded and you call them directly. \
Deferred namespaces (tool count):\n"
        ),
    };
    for (label, count) in namespaces.iter().take(shown) {
        s.push_str(&format!("- {label} ({count})\n"));
    }
    let rest = namespaces.len() - shown.min(namespaces.len());
    if rest > 0 {
        let tools: usize = namespaces.values().skip(shown).sum();
        s.push_str(&format!(
            "- and {} more namespaces, {} tools: find them with {search}\n",
            thousands(rest),
            thousands(tools)
        ));
    }
    s.push_str("</DEFERRED_TOOLS>");
    s
}

/// The system-prompt section naming the deferred namespaces with their counts, in byte order
/// of the label so the prompt is identical for identical input; within `SECTION_BUDGET`
/// tokens (counted with `enc`): as many namespaces as fit are listed, the rest summarised.
pub fn prompt_section(namespaces: &BTreeMap<&str, usize>, intro: Intro, enc: EncodingChoice) -> String {
    let full = section(namespaces, namespaces.len(), intro);
    if count_cached(enc, &full) <= SECTION_BUDGET {
        return full;
    }
    // The most namespaces that fit: with none listed the section is ~60 tokens, so `lo` fits.
    let (mut lo, mut hi) = (0, namespaces.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if count_cached(enc, &section(namespaces, mid, intro)) <= SECTION_BUDGET {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    section(namespaces, lo, intro)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize;

    #[test]
    fn tool_exec_shows_signatures_within_its_budget() {
        let enc = tokenize::for_model(None);
        let limits = crate::sandbox::Limits::default();
        let few = exec_definition(&["function a(x: string): unknown;".into()], &limits, enc);
        assert!(few.description.contains("function a(x: string)"), "{}", few.description);
        assert!(few.description.contains("10000 ms") && !few.description.contains("more:"));
        let many: Vec<String> = (0..500).map(|i| format!("/** Does thing {i}. */\nfunction tool_{i}(args: {{ path: string; depth?: number }}): unknown;")).collect();
        let d = exec_definition(&many, &limits, enc);
        let head = exec_definition(&[], &limits, enc);
        let spent = enc.name.count(&d.description) - enc.name.count(&head.description);
        assert!(spent <= EXEC_SIGNATURES_BUDGET as usize + 40, "{spent} tokens of signatures");
        let shown = d.description.matches("function tool_").count();
        assert!(shown > 10 && shown < 500, "{shown}");
        assert!(d.description.ends_with(&format!("...and {} more: tools.inspect(name) shows any of them.", 500 - shown)));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(412), "412");
        assert_eq!(thousands(9_811), "9,811");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn a_small_pool_is_listed_whole() {
        let ns: BTreeMap<&str, usize> = [("crm", 3), ("mcp:github", 40)].into_iter().collect();
        let s = prompt_section(&ns, Intro::Portable, tokenize::for_model(None));
        assert!(s.contains("- crm (3)\n- mcp:github (40)\n</DEFERRED_TOOLS>"), "{s}");
        assert!(!s.contains("more namespaces"));
    }

    #[test]
    fn five_thousand_namespaces_stay_within_the_budget() {
        let enc = tokenize::for_model(None);
        let names: Vec<String> = (0..5_000).map(|i| format!("mcp:server-number-{i:05}")).collect();
        let ns: BTreeMap<&str, usize> = names.iter().map(|n| (n.as_str(), 2)).collect();
        let s = prompt_section(&ns, Intro::Native("tool_search_tool_bm25"), enc);
        let tokens = enc.name.count(&s);
        assert!(tokens <= SECTION_BUDGET as usize, "{tokens} tokens");
        assert!(tokens > SECTION_BUDGET as usize * 9 / 10, "the budget is used, not wasted: {tokens}");
        let listed = s.lines().filter(|l| l.starts_with("- mcp:")).count();
        let summary = s.lines().find(|l| l.starts_with("- and ")).expect("a summary line");
        let rest = 5_000 - listed;
        assert_eq!(
            summary,
            format!("- and {} more namespaces, {} tools: find them with tool_search_tool_bm25", thousands(rest), thousands(rest * 2))
        );
        // One more namespace would not have fitted.
        assert!(enc.name.count(&section(&ns, listed + 1, Intro::Native("tool_search_tool_bm25"))) > SECTION_BUDGET as usize);
    }
}
