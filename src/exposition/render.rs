//! One plan, rendered for the provider the host is about to call.
//!
//! The policy (`plan`) decides what is deferred; this module only says it in a provider's terms:
//! - `portable`: the plan as it is (tool_search / tool_inspect / tool_invoke as functions).
//! - `anthropic`: Messages API tools; deferred ones carry `defer_loading: true`; search is the
//!   hosted BM25 tool or our `tool_search` as a client tool answered with `tool_reference` blocks.
//! - `openai`: Responses API tools; deferred functions (`defer_loading: true`) grouped into
//!   namespaces of fewer than 10; search is the hosted `tool_search` or a client-executed one
//!   answered with a `tool_search_output` item of whole definitions. With `strict`, every
//!   function whose schema has a strict form is sent `strict: true` in that form (`strict`).
//! - `gemini`: the portable plan as Gemini `functionDeclarations` (`render_gemini`).
//!
//! With `programmatic` (issue 27) the registered tools are also marked for the provider's own
//! code execution (`allowed_callers`) and its tool is added: Anthropic's `code_execution_*`, or
//! OpenAI's `programmatic_tool_calling`. Approval-gated tools, client tools and the meta-tools
//! are never marked: code the provider runs would call a gated tool out of the user's sight.
//!
//! Invariants: approval-gated and client tools are never deferred (the policy keeps them inline,
//! and rendering moves nothing) nor marked; the search tool is never deferred; no tool carries
//! `cache_control`; every name a search output references is one of the plan's deferred tools,
//! all of which are in the request. The ledger (`tokens.inline`) is what the model sees up
//! front in the rendering, counted with the plan's tokenizer.

use super::meta_defs::{self, Intro, INSPECT, INVOKE, SEARCH};
use super::programmatic::marked_inline;
pub use super::programmatic::{CodeExecution, Marking, Programmatic, ANTHROPIC_CODE_EXECUTION};
use super::rendered_pool::{self, RenderedPool};
use super::{render_gemini, strict};
use super::{count_cached, label_counts_of, Placement, Plan, Reason, ToolDefinition};
use crate::registry::{Registered, ToolEntry};
use serde_json::value::RawValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Anthropic refuses a request with more deferred tools than this.
pub const ANTHROPIC_MAX_DEFERRED: usize = 10_000;
/// OpenAI recommends fewer than 10 functions per namespace: bigger ones are split.
pub const OPENAI_NAMESPACE_SIZE: usize = 9;
/// The hosted search tool of the Anthropic rendering with `search: "provider"`.
pub const ANTHROPIC_BM25: (&str, &str) = ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25");

/// Which provider's request shape a plan is rendered in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rendering {
    /// The meta-tools as ordinary functions: every model.
    #[default]
    Portable,
    /// Anthropic Messages API with native deferral (`defer_loading`, tool search).
    Anthropic,
    /// OpenAI Responses API with native deferral (namespaces, `tool_search`).
    Openai,
    /// Gemini `functionDeclarations` with `parametersJsonSchema`; deferral through the meta-tools.
    Gemini,
}

impl Rendering {
    /// Whether the provider defers tools itself (a search loads definitions), rather than
    /// through the meta-tools.
    pub fn defers_natively(self) -> bool {
        matches!(self, Rendering::Anthropic | Rendering::Openai)
    }

    /// Who reads a call's result under a plan rendered so for `model`, as far as media go: a
    /// native rendering is its provider whatever the model; else the model says.
    pub fn reader(self, model: Option<&str>) -> crate::media::Reader {
        match self {
            Rendering::Anthropic => crate::media::Reader::Anthropic,
            Rendering::Openai => crate::media::Reader::Openai,
            Rendering::Portable | Rendering::Gemini => crate::media::Reader::of_model(model),
        }
    }
}

/// Who runs the search in a native rendering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchBy {
    /// toolreg's ranker, as a client-executed tool (`tool/invoke` of `tool_search`).
    #[default]
    Toolreg,
    /// The provider's hosted search.
    Provider,
}

/// The fragment to merge into the provider's request body, and headers it needs. Kept in
/// parts: the deferred definitions are the pool's shared text (`rendered_pool`), written into
/// the request only when it is sent.
pub struct Rendered {
    /// `tools` items before the deferred ones: the inline definitions, then the search tool.
    head: Vec<Value>,
    pool: Option<Arc<RenderedPool>>,
    /// `system` (Anthropic), `instructions` (OpenAI) or `systemInstruction` (Gemini): the
    /// DEFERRED_TOOLS section.
    prompt: Option<(&'static str, Value)>,
    pub headers: Option<BTreeMap<String, String>>,
}

impl Rendered {
    /// The request fragment as sent.
    pub fn request(&self) -> Box<RawValue> {
        serde_json::value::to_raw_value(&Request { r: self, whole: true }).expect("a request serialises")
    }

    /// The request with the pool's digest in place of its definitions: what `planHash` hashes.
    pub fn hash_basis(&self) -> Box<RawValue> {
        serde_json::value::to_raw_value(&Request { r: self, whole: false }).expect("a request serialises")
    }
}

struct Request<'a> {
    r: &'a Rendered,
    whole: bool,
}

impl Serialize for Request<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("tools", &Tools(self))?;
        if let Some((key, text)) = &self.r.prompt {
            m.serialize_entry(key, text)?;
        }
        m.end()
    }
}

struct Tools<'a>(&'a Request<'a>);

impl Serialize for Tools<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        for t in &self.0.r.head {
            seq.serialize_element(t)?;
        }
        if let Some(pool) = &self.0.r.pool {
            if self.0.whole {
                for item in &pool.items {
                    seq.serialize_element(item)?;
                }
            } else {
                seq.serialize_element(&format!("deferred:{}", pool.digest))?;
            }
        }
        seq.end()
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RenderError {
    #[error("the plan defers {deferred} tools and Anthropic accepts at most {max}: narrow the scope or use render \"portable\"")]
    TooManyDeferred { deferred: usize, max: usize },
    #[error("programmatic marks tools for a provider's code execution: it needs render \"anthropic\" or \"openai\"")]
    ProgrammaticNeedsNative,
    #[error("programmatic adds Anthropic's tool named {0:?}, and the plan already has a tool of that name")]
    NameTaken(&'static str),
    #[error("the client tool {0:?} breaks Gemini's name rule ^[A-Za-z_][A-Za-z0-9_.:-]{{0,63}}$: rename it")]
    GeminiName(String),
    #[error("strict is OpenAI's: it needs render \"openai\"")]
    StrictNeedsOpenai,
}

const NATIVE_SEARCH_DESCRIPTION: &str = "Search the tools that are available to you but not loaded yet \
(the namespaces in DEFERRED_TOOLS). Describe what you want to do in a few words, or give a tool name; \
the best matches are loaded into your tool definitions and you call them directly. If nothing fits, \
try other words or a namespace before concluding that no tool exists.";

fn native_search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do, or a tool name."},
            "namespace": {"type": "string", "description": "Only search this namespace, e.g. mcp:github."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Maximum number of tools to load (default 8)."}
        },
        "additionalProperties": false
    })
}

/// A JSON object from owned values: `json!` would copy each schema once more through the
/// serializer, and a native plan carries every deferred schema.
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// `allowed_callers`, last (after `defer_loading`), when the tool is marked.
fn with_callers(mut t: Value, callers: Option<&[&str]>) -> Value {
    if let Some(c) = callers {
        t["allowed_callers"] = json!(c);
    }
    t
}

fn anthropic_tool(name: &str, description: &str, schema: &Value, deferred: bool, callers: Option<&[&str]>) -> Value {
    let mut t = object([("name", name.into()), ("description", description.into()), ("input_schema", schema.clone())]);
    if deferred {
        t["defer_loading"] = Value::Bool(true);
    }
    with_callers(t, callers)
}

/// The parameters a function is sent with, and its `strict` flag: with `strict` asked, the
/// strict form when the schema has one (else why not); without, the schema as it is.
fn strict_parameters(schema: &Value, asked: bool) -> (Value, Option<bool>, Option<String>) {
    if !asked {
        return (schema.clone(), None, None);
    }
    match strict::convert(schema) {
        Ok(s) => (s, Some(true), None),
        Err(why) => (schema.clone(), Some(false), Some(format!("not strict: {why}"))),
    }
}

fn openai_function(d: &ToolDefinition, callers: Option<&[&str]>, strict: bool) -> (Value, Option<String>) {
    let (parameters, flag, note) = strict_parameters(&d.input_schema, strict);
    let t = object([
        ("type", "function".into()),
        ("name", d.name.as_str().into()),
        ("description", d.description.as_str().into()),
        ("parameters", parameters),
        ("strict", Value::Bool(flag.unwrap_or(false))),
    ]);
    (with_callers(t, callers), note)
}

fn openai_member(e: &ToolEntry, deferred: bool, callers: Option<&[&str]>, strict: bool) -> Value {
    let (parameters, flag, _) = strict_parameters(&e.input_schema, strict);
    let mut t = object([
        ("type", "function".into()),
        ("name", e.name.as_str().into()),
        ("description", e.description.as_str().into()),
        ("parameters", parameters),
    ]);
    if let Some(flag) = flag {
        t["strict"] = Value::Bool(flag);
    }
    if deferred {
        t["defer_loading"] = Value::Bool(true);
    }
    with_callers(t, callers)
}

/// The callers of a deferred entry: the plan's, unless the entry is approval-gated.
fn entry_callers<'c>(e: &ToolEntry, callers: Option<&'c [&'c str]>) -> Option<&'c [&'c str]> {
    callers.filter(|_| !e.approval)
}

/// One OpenAI namespace object: a name valid for the API and at most `OPENAI_NAMESPACE_SIZE`
/// members.
pub struct OpenaiNamespace<'a> {
    pub name: String,
    pub description: String,
    pub members: Vec<&'a ToolEntry>,
}

/// `[A-Za-z0-9_-]`, at most 64 characters (the function-name rule), never empty.
fn api_name(s: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    out.truncate(56); // room for a part and a uniqueness suffix
    if out.is_empty() {
        out.push_str("tools");
    }
    out
}

/// The deferred entries (in pool order) as OpenAI namespaces: by namespace, split into parts of
/// `OPENAI_NAMESPACE_SIZE`. Deterministic, so a search output names the request's namespaces.
pub fn openai_namespaces<'a>(deferred: &[&'a ToolEntry]) -> Vec<OpenaiNamespace<'a>> {
    let mut by_ns: BTreeMap<&str, Vec<&ToolEntry>> = BTreeMap::new();
    for &e in deferred {
        by_ns.entry(e.namespace.as_str()).or_default().push(e);
    }
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for (ns, members) in by_ns {
        let parts = members.len().div_ceil(OPENAI_NAMESPACE_SIZE);
        let label = members[0].namespace_label();
        for (i, chunk) in members.chunks(OPENAI_NAMESPACE_SIZE).enumerate() {
            let base = if parts == 1 { api_name(ns) } else { format!("{}_{}", api_name(ns), i + 1) };
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            let part = if parts == 1 { String::new() } else { format!(" (part {} of {parts})", i + 1) };
            let names: Vec<&str> = chunk.iter().map(|e| e.name.as_str()).collect();
            out.push(OpenaiNamespace {
                name,
                description: format!("{label} tools{part}: {}", names.join(", ")),
                members: chunk.to_vec(),
            });
        }
    }
    out
}

/// Renders `plan` (whole, before `Plan::lean`) for `rendering`: rewrites its tools, prompt,
/// placements and ledger in the provider's terms, and returns the request fragment. `active`
/// are the entries the plan was made from; `marking`, the tools' programmatic callers. Portable
/// plans are left as they are (and cannot be marked).
/// `strict` (OpenAI only): functions in their strict form where they have one.
pub fn render(plan: &mut Plan, active: &[Arc<Registered>], rendering: Rendering, search: SearchBy, strict: bool, marking: Option<&Marking>) -> Result<Option<Rendered>, RenderError> {
    if strict && rendering != Rendering::Openai {
        return Err(RenderError::StrictNeedsOpenai);
    }
    if !rendering.defers_natively() {
        if marking.is_some() {
            return Err(RenderError::ProgrammaticNeedsNative);
        }
        if rendering == Rendering::Gemini {
            let g = render_gemini::request(&plan.tools, plan.system_prompt.as_deref()).map_err(RenderError::GeminiName)?;
            let prompt = g.system.map(|s| ("systemInstruction", s));
            return Ok(Some(Rendered { head: vec![g.tools], pool: None, prompt, headers: None }));
        }
        return Ok(None);
    }
    let enc = plan.encoding;
    let deferred_names: BTreeSet<&str> = plan.deferred_names().collect();
    let pool: Vec<&Registered> = active.iter().map(|r| &**r).filter(|r| deferred_names.contains(r.entry.name.as_str())).collect();
    let deferred: Vec<&ToolEntry> = pool.iter().map(|r| &r.entry).collect();
    if rendering == Rendering::Anthropic && deferred.len() > ANTHROPIC_MAX_DEFERRED {
        return Err(RenderError::TooManyDeferred { deferred: deferred.len(), max: ANTHROPIC_MAX_DEFERRED });
    }
    // The portable meta-tools give way to the rendering's search tool.
    let meta: Vec<&str> = [SEARCH, INSPECT, INVOKE].into_iter().filter(|n| plan.placements.get(*n).is_some_and(|p| p.reason == Reason::Meta)).collect();
    let inline: Vec<ToolDefinition> = plan.tools.iter().filter(|t| !meta.contains(&t.name.as_str())).cloned().collect();
    for name in meta {
        plan.placements.remove(name);
    }
    let programmatic = marking.map(|m| m.programmatic);
    let callers = programmatic.map(|p| p.callers(rendering));
    let callers = callers.as_deref();
    let marked = match marking {
        Some(m) => marked_inline(plan, active, &inline, m),
        None => BTreeSet::new(),
    };
    // Anthropic's code execution tool has a fixed name, which no other tool may have.
    let taken = inline.iter().map(|d| d.name.as_str()).chain(deferred.iter().map(|e| e.name.as_str())).any(|n| n == ANTHROPIC_CODE_EXECUTION);
    if rendering == Rendering::Anthropic && marking.is_some() && taken {
        return Err(RenderError::NameTaken(ANTHROPIC_CODE_EXECUTION));
    }

    let mut tools: Vec<Value> = Vec::new();
    let mut up_front: u64 = 0;
    let mut overhead: u64 = 0;
    let count = |v: &Value| count_cached(enc, &v.to_string()) as u64;
    let any_deferred = !deferred.is_empty();
    let mut rendered_deferred = None;
    let search_name = match (rendering, search) {
        (Rendering::Anthropic, SearchBy::Provider) => ANTHROPIC_BM25.1,
        _ => SEARCH,
    };
    for d in &inline {
        let c = callers.filter(|_| marked.contains(d.name.as_str()));
        let t = if rendering == Rendering::Anthropic {
            anthropic_tool(&d.name, &d.description, &d.input_schema, false, c)
        } else {
            let (t, note) = openai_function(d, c, strict);
            if let Some(note) = note {
                add_note(plan, &d.name, note);
            }
            t
        };
        up_front += count(&t);
        tools.push(t);
    }
    if let Some(p) = &programmatic {
        // The provider's own tool: counted as its definition (the provider may add more).
        let t = p.tool(rendering);
        overhead += count(&t);
        tools.push(t);
    }
    if any_deferred {
        let search_tool = match (rendering, search) {
            (Rendering::Anthropic, SearchBy::Provider) => json!({"type": ANTHROPIC_BM25.0, "name": ANTHROPIC_BM25.1}),
            (Rendering::Anthropic, SearchBy::Toolreg) => {
                json!({"name": SEARCH, "description": NATIVE_SEARCH_DESCRIPTION, "input_schema": native_search_schema()})
            }
            (_, SearchBy::Provider) => json!({"type": "tool_search"}),
            (_, SearchBy::Toolreg) => json!({
                "type": "tool_search",
                "execution": "client",
                "description": NATIVE_SEARCH_DESCRIPTION,
                "parameters": native_search_schema()
            }),
        };
        overhead += count(&search_tool);
        tools.push(search_tool);
        plan.placements.insert(search_name.to_string(), Placement { namespace: None, reason: Reason::Meta, deferred: false, note: None, ui: None });
        let rendered = rendered_pool::get_or_render(rendering, programmatic, strict, enc, &pool, || deferred_items(rendering, &deferred, callers, strict, &count));
        overhead += rendered.overhead;
        for (name, note) in &rendered.notes {
            add_note(plan, name, note.clone());
        }
        rendered_deferred = Some(rendered);
    }

    plan.tools = inline;
    plan.system_prompt = None;
    let mut prompt = None;
    if any_deferred {
        let section = meta_defs::prompt_section(&label_counts_of(&deferred), Intro::Native(search_name), enc);
        overhead += count_cached(enc, &section) as u64;
        // Anthropic's Messages API takes `system`; OpenAI's Responses API `instructions`.
        let key = if rendering == Rendering::Anthropic { "system" } else { "instructions" };
        prompt = Some((key, Value::String(section.clone())));
        plan.system_prompt = Some(section);
    }
    plan.tokens.inline = up_front + overhead;
    plan.tokens.meta_overhead = overhead;
    Ok(Some(Rendered { head: tools, pool: rendered_deferred, prompt, headers: None }))
}

/// A tool's placement note, after any it had.
fn add_note(plan: &mut Plan, name: &str, note: String) {
    if let Some(p) = plan.placements.get_mut(name) {
        p.note = Some(match p.note.take() {
            Some(had) => format!("{had}; {note}"),
            None => note,
        });
    }
}

/// The deferred definitions as `tools` items, each serialised (from borrowed parts: no schema
/// is copied unless made strict), the tokens the model sees of them up front, and the
/// placement notes of the functions `strict` could not make strict. `callers`: the
/// programmatic callers of every entry no approval gates.
fn deferred_items(rendering: Rendering, deferred: &[&ToolEntry], callers: Option<&[&str]>, strict: bool, count: &dyn Fn(&Value) -> u64) -> rendered_pool::Built {
    fn raw(v: &impl Serialize) -> Box<RawValue> {
        serde_json::value::to_raw_value(v).expect("a definition serialises")
    }
    if rendering == Rendering::Anthropic {
        // Deferred definitions are sent but not shown to the model until a search loads them.
        let tool = |e: &&ToolEntry| {
            raw(&DeferredAnthropic { name: &e.name, description: &e.description, input_schema: &e.input_schema, defer_loading: true, allowed_callers: entry_callers(e, callers) })
        };
        return (deferred.iter().map(tool).collect(), 0, Vec::new());
    }
    let mut overhead = 0;
    let mut items = Vec::new();
    let mut notes = Vec::new();
    for ns in openai_namespaces(deferred) {
        // The model sees a namespace's name and description up front, not its members.
        overhead += count(&json!({"type": "namespace", "name": ns.name, "description": ns.description}));
        let tools: Vec<DeferredOpenai> = ns
            .members
            .iter()
            .map(|e| {
                let (parameters, flag) = if strict {
                    let (p, flag, note) = strict_parameters(&e.input_schema, true);
                    notes.extend(note.map(|n| (e.name.clone(), n)));
                    (std::borrow::Cow::Owned(p), flag)
                } else {
                    (std::borrow::Cow::Borrowed(&e.input_schema), None)
                };
                DeferredOpenai { kind: "function", name: &e.name, description: &e.description, parameters, strict: flag, defer_loading: true, allowed_callers: entry_callers(e, callers) }
            })
            .collect();
        items.push(raw(&OpenaiNamespaceItem { kind: "namespace", name: &ns.name, description: &ns.description, tools }));
    }
    (items, overhead, notes)
}

/// `anthropic_tool(.., true)`, borrowed: the same keys in the same order.
#[derive(Serialize)]
struct DeferredAnthropic<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    defer_loading: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_callers: Option<&'a [&'a str]>,
}

/// `openai_member(.., true)`, borrowed: the same keys in the same order.
#[derive(Serialize)]
struct DeferredOpenai<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: std::borrow::Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
    defer_loading: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_callers: Option<&'a [&'a str]>,
}

#[derive(Serialize)]
struct OpenaiNamespaceItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    tools: Vec<DeferredOpenai<'a>>,
}

/// What the host sends back to the provider for a `tool_search` call under a native rendering:
/// the Anthropic `tool_result` content (`tool_reference` blocks, or the text when nothing was
/// found), or the OpenAI `tool_search_output` item with the found tools' whole definitions.
/// `pool` is the plan's deferred pool in pool order (the OpenAI namespaces are cut from it),
/// `hits` the found entries, best first; `programmatic`, the plan's (the loaded definitions
/// carry the callers the request's deferred ones do). `None` for portable plans.
/// `strict`: the plan's (the loaded definitions are the strict forms the request's are).
pub fn search_output(rendering: Rendering, programmatic: Option<&Programmatic>, strict: bool, call_id: &str, pool: &[&ToolEntry], hits: &[&ToolEntry], text: &str) -> Option<Value> {
    let callers = programmatic.map(|p| p.callers(rendering));
    match rendering {
        Rendering::Portable | Rendering::Gemini => None,
        Rendering::Anthropic if hits.is_empty() => Some(json!([{"type": "text", "text": text}])),
        Rendering::Anthropic => Some(Value::Array(hits.iter().map(|e| json!({"type": "tool_reference", "tool_name": e.name})).collect())),
        Rendering::Openai => {
            let found: BTreeSet<&str> = hits.iter().map(|e| e.name.as_str()).collect();
            let tools: Vec<Value> = openai_namespaces(pool)
                .into_iter()
                .filter_map(|ns| {
                    let members: Vec<Value> = ns.members.iter().filter(|e| found.contains(e.name.as_str())).map(|e| openai_member(e, false, entry_callers(e, callers.as_deref()), strict)).collect();
                    (!members.is_empty()).then(|| {
                        object([("type", "namespace".into()), ("name", ns.name.into()), ("description", ns.description.into()), ("tools", Value::Array(members))])
                    })
                })
                .collect();
            Some(json!({"type": "tool_search_output", "call_id": call_id, "execution": "client", "status": "completed", "tools": tools}))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, ns: &str) -> ToolEntry {
        serde_json::from_value(json!({"name": name, "namespace": ns, "description": format!("Does {name}."), "inputSchema": {"type": "object"}})).unwrap()
    }

    #[test]
    fn namespaces_are_cut_below_ten_with_valid_unique_names() {
        let mut pool: Vec<ToolEntry> = (0..20).map(|i| entry(&format!("gh_{i:02}"), "mcp:github")).collect();
        pool.push(entry("one", "mcp_github_1")); // the name of the first part of mcp:github
        pool.push(entry("two", "mcp:github!"));
        let refs: Vec<&ToolEntry> = pool.iter().collect();
        let ns = openai_namespaces(&refs);
        let names: Vec<&str> = ns.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["mcp_github_1", "mcp_github_2", "mcp_github_3", "mcp_github_", "mcp_github_1_2"]);
        assert_eq!(ns.iter().map(|n| n.members.len()).collect::<Vec<_>>(), [9, 9, 2, 1, 1]);
        assert_eq!(ns[2].description, "mcp:github tools (part 3 of 3): gh_18, gh_19");
        let long = entry("x", &"n".repeat(200));
        assert!(openai_namespaces(&[&long])[0].name.len() <= 64);
    }

    #[test]
    fn deferred_items_are_the_definitions_a_search_output_would_give() {
        let pool: Vec<ToolEntry> = (0..11).map(|i| entry(&format!("t{i:02}"), "crm")).collect();
        let refs: Vec<&ToolEntry> = pool.iter().collect();
        let text = |items: Vec<Box<RawValue>>| items.iter().map(|i| serde_json::from_str::<Value>(i.get()).unwrap()).collect::<Vec<_>>();
        let (anthropic, none, _) = deferred_items(Rendering::Anthropic, &refs, None, false, &|_| 1);
        assert_eq!(none, 0);
        let expected: Vec<Value> = refs.iter().map(|e| anthropic_tool(&e.name, &e.description, &e.input_schema, true, None)).collect();
        assert_eq!(text(anthropic), expected);
        let (openai, headers, _) = deferred_items(Rendering::Openai, &refs, None, false, &|_| 5);
        assert_eq!(headers, 10, "two namespaces' headers counted");
        let openai = text(openai);
        assert_eq!(openai.len(), 2);
        assert_eq!(openai[1]["name"], "crm_2");
        assert_eq!(openai[1]["tools"][1], openai_member(&pool[10], true, None, false));
        // Key order as the `Value` forms have it (the request's bytes, and so planHash, depend on it).
        assert_eq!(serde_json::to_string(&openai[0]["tools"][0]).unwrap(), serde_json::to_string(&openai_member(&pool[0], true, None, false)).unwrap());
    }

    #[test]
    fn marked_definitions_carry_their_callers_last_and_gated_ones_none() {
        let p = Programmatic::default();
        let (a, o) = (p.callers(Rendering::Anthropic), p.callers(Rendering::Openai));
        assert_eq!((a.as_slice(), o.as_slice()), (&["direct", "code_execution_20250825"][..], &["direct", "programmatic"][..]));
        let only = Programmatic { code_execution: Some(CodeExecution::V20260120), direct: Some(false) };
        assert_eq!(only.callers(Rendering::Anthropic), ["code_execution_20260120"]);
        assert_eq!(only.tool(Rendering::Anthropic), json!({"type": "code_execution_20260120", "name": "code_execution"}));
        assert_eq!(only.tool(Rendering::Openai), json!({"type": "programmatic_tool_calling"}));
        let gated: ToolEntry = serde_json::from_value(json!({"name": "gated", "namespace": "crm", "description": "G.", "inputSchema": {"type": "object"}, "approval": true})).unwrap();
        let pool = [entry("t0", "crm"), gated];
        let refs: Vec<&ToolEntry> = pool.iter().collect();
        let (items, _, _) = deferred_items(Rendering::Anthropic, &refs, Some(&a), false, &|_| 1);
        assert_eq!(items[0].get(), serde_json::to_string(&anthropic_tool("t0", "Does t0.", &json!({"type": "object"}), true, Some(&a))).unwrap());
        assert!(items[0].get().ends_with(r#""defer_loading":true,"allowed_callers":["direct","code_execution_20250825"]}"#), "{}", items[0].get());
        assert!(!items[1].get().contains("allowed_callers"), "a gated tool is never marked");
        let (items, _, _) = deferred_items(Rendering::Openai, &refs, Some(&o), false, &|_| 1);
        let ns: Value = serde_json::from_str(items[0].get()).unwrap();
        assert_eq!(serde_json::to_string(&ns["tools"][0]).unwrap(), serde_json::to_string(&openai_member(&pool[0], true, Some(&o), false)).unwrap());
        assert_eq!(ns["tools"][0]["allowed_callers"], json!(["direct", "programmatic"]));
        assert!(ns["tools"][1].get("allowed_callers").is_none(), "{ns}");
        // A search loads them with the same callers.
        let out = search_output(Rendering::Openai, Some(&p), false, "c", &refs, &refs, "x").unwrap();
        assert_eq!(out["tools"][0]["tools"][0]["allowed_callers"], json!(["direct", "programmatic"]));
        assert!(out["tools"][0]["tools"][1].get("allowed_callers").is_none());
    }

    #[test]
    fn search_outputs_name_only_found_tools() {
        let pool: Vec<ToolEntry> = (0..12).map(|i| entry(&format!("t{i:02}"), "crm")).collect();
        let refs: Vec<&ToolEntry> = pool.iter().collect();
        let hits = [&pool[10], &pool[1]];
        assert_eq!(search_output(Rendering::Portable, None, false, "c", &refs, &hits, "x"), None);
        assert_eq!(
            search_output(Rendering::Anthropic, None, false, "c", &[], &hits, "x").unwrap(),
            json!([{"type": "tool_reference", "tool_name": "t10"}, {"type": "tool_reference", "tool_name": "t01"}])
        );
        assert_eq!(search_output(Rendering::Anthropic, None, false, "c", &[], &[], "nothing").unwrap(), json!([{"type": "text", "text": "nothing"}]));
        let o = search_output(Rendering::Openai, None, false, "call_1", &refs, &hits, "x").unwrap();
        assert_eq!(o["type"], "tool_search_output");
        assert_eq!(o["call_id"], "call_1");
        let tools = o["tools"].as_array().unwrap();
        assert_eq!(tools.iter().map(|t| t["name"].as_str().unwrap()).collect::<Vec<_>>(), ["crm_1", "crm_2"]);
        assert_eq!(tools[0]["tools"][0]["name"], "t01");
        assert_eq!(tools[1]["tools"][0]["name"], "t10");
        assert!(tools[0]["tools"][0].get("defer_loading").is_none(), "loaded, not deferred");
    }
}
