//! Params and results of every method and notification (camelCase on the wire).

pub use crate::catalog::{ElicitAction, ElicitMode, ElicitParams, ElicitResult, Root, RootsParams, RootsResult, SampleParams};
use super::extras::{AppCall, AppsCapability, ViewRef};
use crate::catalog::{ServerConfig, ServerState, ServerStatus, ServerTimeouts, ToolPin};
use crate::exposition::render::{Programmatic, Rendering, SearchBy};
use crate::exposition::{Include, Plan, ToolDefinition};
use super::grants::Remember;
use crate::invoke::{ApprovalRequest, Repair};
use crate::output::ModelOutput;
use crate::registry::{EntrySummary, ToolEntry, Warning};
use crate::settings::{AuditSettings, CodeModeLimits, McpRegistrySettings, ResultSettings, SearchSettings, TelemetrySettings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Methods without params accept none, `null` or `{}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoParams {}

/// A `null` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(with = "()")]
pub struct Null;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogSettings {
    /// Write logs to this file (appended) instead of stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `error`, `warn`, `info`, `debug` or `trace`, or a tracing filter such as `toolreg=debug`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

/// What the host can do for the sidecar.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostCapabilities {
    /// The host answers `approval/request` with `approval/respond`.
    #[serde(default)]
    pub approval: bool,
    /// The host answers `host/executeTool`.
    #[serde(default)]
    pub host_tools: bool,
    /// The host answers `host/repairToolCall`.
    #[serde(default)]
    pub repair: bool,
    /// The host answers `host/elicit` (MCP elicitation, form and URL modes). Without it, MCP
    /// servers are not offered elicitation and one that asks anyway is declined.
    #[serde(default)]
    pub elicitation: bool,
    /// The host answers `host/sample` (MCP sampling). Without it, MCP servers are not offered
    /// sampling and a request is refused (`-32601`).
    #[serde(default)]
    pub sampling: bool,
    /// The host answers `host/roots` (the directories MCP servers may work in). Without it,
    /// MCP servers are not offered roots; a 2025-11-25 server that asks gets `-32601`, and a
    /// 2026-07-28 call whose server needs them fails.
    #[serde(default)]
    pub roots: bool,
    /// The host answers `host/openUrl` (shows the user an OAuth authorization page). Without
    /// it an MCP server that needs authorization stays `needsAuth`.
    #[serde(default)]
    pub open_url: bool,
    /// The host answers `host/secrets/get|set|delete` (keeps OAuth tokens, e.g. in the OS
    /// keychain). Without it tokens live in the sidecar's memory only.
    #[serde(default)]
    pub secrets: bool,
    /// The host renders MCP Apps views. Only then are servers told the client renders them
    /// (extension `io.modelcontextprotocol/ui`), and tools with a view never deferred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apps: Option<AppsCapability>,
}

impl HostCapabilities {
    /// The host renders MCP Apps views of the one format servers send.
    pub fn renders_views(&self) -> bool {
        self.apps.as_ref().is_some_and(|a| a.mime_types.is_empty() || a.mime_types.iter().any(|m| m == crate::apps::VIEW_MIME))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<ClientInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Where the MCP tool cache is kept across restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogSettings>,
    #[serde(default)]
    pub capabilities: HostCapabilities,
    /// Bounds on waiting; every field is optional.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// Bounds on what MCP servers send; every field is optional.
    #[serde(default)]
    pub mcp: McpLimits,
    /// `tool_search`'s semantic signal; absent: lexical only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSettings>,
    /// Limits of `tool_exec`'s sandbox (code mode, issue 27); every field is optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_mode: Option<CodeModeLimits>,
    /// The token budget of one tool result (default 25,000) and what is kept beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<ResultSettings>,
    /// The audit log (`{file, maxBytes?, maxFiles?, arguments?, results?}`): one JSON line per
    /// tool call, approval, pin hold or approval, OAuth flow and server start or exit, in an
    /// owner-only file rotated by size. Off when absent. A second `initialize` cannot change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSettings>,
    /// OpenTelemetry export over OTLP/HTTP (`{endpoint?, tracesEndpoint?, metricsEndpoint?,
    /// headers?, serviceName?, exportIntervalMs?, timeoutMs?}`): a span per request and per tool
    /// run, metrics of calls, errors, latency, approvals and deferred tokens. Off when absent;
    /// fields left out come from the `OTEL_EXPORTER_OTLP_*` variables. A second `initialize`
    /// cannot change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetrySettings>,
    /// Where stdio servers' commands are found (`{shellEnv?: "auto" | "never", paths?: [dir]}`):
    /// `paths` first (and at the front of each server's `PATH`), then the inherited `PATH`,
    /// then with `shellEnv: auto` (default on Linux and macOS) the login shell's `PATH` and
    /// the usual runtime folders (nvm, fnm, Volta, asdf, mise, Homebrew, `~/.local/bin`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawn: Option<crate::catalog::SpawnSettings>,
    /// The MCP registry `catalog/searchRegistry` and `catalog/resolveRegistryServer` read
    /// (`{url?, timeoutMs?}`; default the official registry, 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_registry: Option<McpRegistrySettings>,
}

/// `exposition/plan`'s `codeMode`: `sandbox` adds `tool_exec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CodeMode {
    Sandbox,
}


/// `host/embed`: vectors for texts, from the host's embedding model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmbedParams {
    pub texts: Vec<String>,
    /// `query` for a tool_search query, `document` for tool definitions.
    pub purpose: EmbedPurpose,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EmbedPurpose {
    Query,
    Document,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmbedResult {
    /// One vector per text, in order, all of one length.
    pub vectors: Vec<Vec<f32>>,
    /// The model's name: vectors of different models are never compared.
    pub model: String,
}

/// Bytes. Defaults: message 16,777,216 (16 MiB), result 8,388,608 (8 MiB; the model reads it
/// within `results.maxTokens`, by page).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpLimits {
    /// The largest single message read from a stdio MCP server. A response over it fails its
    /// request at once, with an error that names this setting; it is never buffered whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_message_bytes: Option<u64>,
    /// The largest MCP tool result passed on. Text over it is cut and ends with
    /// `[... truncated: N of M bytes shown]`; other parts that do not fit become placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result_bytes: Option<u64>,
}

/// Milliseconds. Defaults: connect 30,000, list 30,000, call 300,000, approval 300,000,
/// elicitation 300,000.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Timeouts {
    /// `connectMs`, `listMs`, `callMs`: every MCP server's (a server's own `timeouts` are
    /// the same fields).
    #[serde(flatten)]
    pub servers: ServerTimeouts,
    /// Waiting for `approval/respond`; no answer in time means the call does not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_ms: Option<u64>,
    /// Waiting for the host's answer to `host/elicit` or `host/sample`; no answer in time is
    /// `cancel` for the MCP server (an error for sampling), and the request is withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// What this sidecar offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Methods this build answers.
    pub methods: Vec<String>,
    /// Token encodings available to `exposition/plan`.
    pub encodings: Vec<String>,
    /// The largest frame body accepted.
    pub max_frame_bytes: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub server_info: ServerInfo,
    pub protocol_version: String,
    pub capabilities: ServerCapabilities,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegisterParams {
    pub entries: Vec<ToolEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegisterResult {
    pub registered: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeregisterParams {
    pub names: Vec<String>,
}

/// The names that existed and were removed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeregisterResult {
    pub removed: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListParams {
    /// Exact namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Case-insensitive substring of name, summary, description or namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListResult {
    pub entries: Vec<EntrySummary>,
}

/// The request scope predicates read. Open: any other field is kept and readable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Settings read by `flag` predicates, e.g. `{"enableWebSearch": true}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge_base_ids: Option<Vec<String>>,
    /// The synced MCP tools (wire names) this request sees; absent, every synced one. Tools
    /// the host registered itself follow their own `applies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tool_ids: Option<Vec<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelectActiveParams {
    #[serde(default)]
    pub scope: Scope,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelectActiveResult {
    pub entries: Vec<EntrySummary>,
    /// Entries whose predicate could not be evaluated (and so are inactive).
    pub warnings: Vec<Warning>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanParams {
    #[serde(default)]
    pub scope: Scope,
    /// The model's context window in tokens; absent, 0 or negative means 32,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<i64>,
    /// The model id, which picks the tokenizer (e.g. `gpt-4o`, `claude-sonnet-4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The host's own tools for this request; never deferred.
    #[serde(default)]
    pub client_tools: Vec<ToolDefinition>,
    // --- issue 10: provider-native renderings and lean plans ---
    /// The provider shape of `request` (default `portable`: the meta-tools as functions).
    #[serde(default)]
    pub render: Rendering,
    /// Who runs the search in a native rendering (default `toolreg`).
    #[serde(default)]
    pub search: SearchBy,
    /// `render: "openai"` only: every function whose schema has a strict form is sent
    /// `strict: true` in that form (else `strict: false`, `placements[name].note` says why), and
    /// calls under the plan have their arguments put back in the server's shape.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// The parts that grow with the whole pool: `perTool` (`tokens.perTool`), `deferred`
    /// (`deferred` and the deferred tools' `placements`). Default: neither.
    #[serde(default)]
    pub include: Vec<Include>,
    /// A `planHash` the host holds: when the result would be the same, the answer is
    /// `{planId, planHash, unchanged: true}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_none_match: Option<String>,
    // --- issue 27: code mode ---
    /// `sandbox`: offer `tool_exec`, which runs a short script that calls this plan's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_mode: Option<CodeMode>,
    /// Native renderings only: mark the registered tools no approval gates for the
    /// provider's own code execution (`allowed_callers`: Anthropic's `code_execution_*`,
    /// OpenAI's `programmatic`) and add its tool to `request.tools`. `{}` takes the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub programmatic: Option<Programmatic>,
    // --- issue 28: usage-aware plans ---
    /// Keep the most used deferred tools inline (absent: usage plays no part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::UsagePolicy>,
    /// The host's conversation id: the first plan of a session fixes its usage-driven tools,
    /// and later plans of the same session reuse them, so the tool list does not move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Where this plan's calls are counted and whose counts it reads (default: derived from
    /// `scope`; `default` for an empty scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_key: Option<String>,
    // --- issue 41: plans that already hold the tool the user asked for ---
    /// The user's message: the deferred tools that best match it (as `tool_search` would find
    /// them) go inline for this plan, `placements[name].reason: "query"`, within usage's budget.
    /// Only the first 2,000 characters are searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// How many of `query`'s matches may go inline (default 5, at most 50; 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_tools: Option<u32>,
}

/// `exposition/plan`'s answer: the plan, or that it is the one the host holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PlanReply {
    Unchanged(PlanUnchanged),
    Plan(Box<PlanResult>),
}

/// The plan is the one whose `planHash` the host sent in `ifNoneMatch`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanUnchanged {
    /// A new plan id (its own inspect ledger) over the same tools.
    pub plan_id: String,
    pub plan_hash: String,
    /// Always true.
    pub unchanged: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanResult {
    /// Names this plan's deferred pool and inspect ledger for the meta-tools.
    pub plan_id: String,
    /// A content hash of this result, everything but `planId`: send it as `ifNoneMatch`.
    pub plan_hash: String,
    #[serde(flatten)]
    pub plan: Plan,
    /// Native renderings: the fragment to merge into the provider's request body (`tools`, and
    /// `system` for Anthropic or `instructions` for OpenAI when something is deferred).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RawJson>,
    /// HTTP headers the provider needs for `request`, when it needs any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// Entries whose predicate could not be evaluated.
    pub warnings: Vec<Warning>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelParams {
    /// The id of the request to cancel.
    pub id: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgressParams {
    pub token: Value,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogMessageParams {
    /// 1 error, 2 warning, 3 info, 4 log (LSP's MessageType).
    #[serde(rename = "type")]
    pub kind: u8,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DebugSleepParams {
    pub ms: u64,
}

/// `debug/outgoing`: bytes waiting for the host to read stdout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutgoingStats {
    pub queued_bytes: usize,
    /// The most ever queued at once.
    pub peak_queued_bytes: usize,
    /// Above this, the sidecar stops reading stdin until the host reads.
    pub max_queued_bytes: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SetServersParams {
    pub servers: Vec<ServerConfig>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Empty {}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsParams {
    pub server_id: String,
    /// Include the tools the server config disables.
    #[serde(default)]
    pub include_disabled: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerIdParams {
    pub server_id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogStatusResult {
    pub servers: Vec<ServerStatus>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpMode {
    /// No MCP tools.
    Disabled,
    /// Every enabled server.
    Auto,
    /// The servers in `mcpServerIds` only: the default since 0.3 (least privilege: an
    /// assistant draws on the servers linked to it).
    #[default]
    Manual,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Assistant {
    #[serde(default)]
    pub mcp_mode: McpMode,
    #[serde(default)]
    pub mcp_server_ids: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolveParams {
    #[serde(default)]
    pub assistant: Assistant,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveResult {
    /// Wire names, in byte order.
    pub tool_ids: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncParams {
    /// Wire names (from `registry/resolveMcpToolIds`) to register. Absent: every tool of every
    /// enabled server. A selection evicts nothing another selection may need: a request's
    /// `scope.mcpToolIds` says which synced tools it sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_tool_ids: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SyncResult {
    /// Entries added or replaced (an unchanged entry is not listed).
    pub registered: Vec<String>,
    pub evicted: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvokeParams {
    pub name: String,
    /// The arguments as the model sent them (an object, or a string the model produced).
    #[serde(default)]
    pub arguments: Value,
    /// The model's tool-call id; echoed in approval requests, host requests and progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Required for the meta-tools: the plan of the request this call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// A call from a view (MCP Apps), not from the model: it reaches only that server's tools
    /// whose visibility has `"app"`, app-only ones included; approval still applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppCall>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvokeResult {
    pub output: ModelOutput,
    pub is_error: bool,
    /// The result as the tool returned it (for the UI), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
    /// Present when the arguments were repaired before the tool ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired: Option<Repair>,
    /// `tool_search` under a natively rendered plan: the exact value to send back to the
    /// provider (Anthropic: the `tool_result` content; OpenAI: the `tool_search_output` item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_output: Option<Value>,
    /// The view to render for this result (MCP Apps), when the tool that ran names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<ViewRef>,
    /// The answer was over the result budget (`initialize.results`): `output` holds its first
    /// `shownTokens` and a note; `raw` stays whole. The model reads on with `tool_result_read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<ResultCut>,
    /// A gated tool ran: `host` when the host approved this call, `grant` when an approval the
    /// user asked to remember let it run without a question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
}

/// How a tool result was cut to the budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultCut {
    /// What `tool_result_read` reads the whole by; absent when the whole was larger than
    /// `results.keepBytes` and was not kept.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    pub shown_tokens: u64,
    pub total_tokens: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalDecision {
    Approve,
    Deny,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRespondParams {
    pub approval_id: String,
    pub decision: ApprovalDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long an approval lasts (absent: `once`). `session`: every call of the tool under
    /// plans of the same `session` (or, for a call with none, every call with none) for the
    /// rest of this run; `always`: every call, kept in `cacheDir` until `approval/revoke`.
    /// Bound to the tool's definition: a changed definition asks again. A denial is never kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<Remember>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeParams {
    pub server_id: String,
    pub status: ServerState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<usize>,
    /// The tools of this server held because their definition differs from the approved one
    /// (names as the server calls them). Sent, with `newTools`, whenever the held set changes
    /// (an empty list: nothing is held any more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_tools: Option<Vec<String>>,
    /// The tools held because they appeared after the server's first (baseline) list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_tools: Option<Vec<String>>,
}

/// `catalog/pins` result: every tool of the server's current list with its pin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PinsResult {
    pub tools: Vec<ToolPin>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApproveToolsParams {
    pub server_id: String,
    /// Tool names as the server calls them; each must be in the current list.
    pub tools: Vec<String>,
    /// For each tool the user reviewed, the `fingerprint` `catalog/pins` showed: a tool whose
    /// definition has changed since is refused (fail closed), and nothing is approved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fingerprints: BTreeMap<String, String>,
}

/// `approval/request` (a notification): answer with `approval/respond`.
pub type ApprovalRequestParams = ApprovalRequest;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteToolParams {
    pub name: String,
    pub arguments: Value,
    pub call_id: String,
}

/// The MCP `CallToolResult` shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepairToolCallParams {
    pub name: String,
    pub input_schema: Value,
    pub arguments: Value,
    /// What the validator said.
    pub error: String,
}

/// `null` when the host gives up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepairToolCallResult {
    pub arguments: Value,
}

/// `approval/withdrawn`: an `approval/request` that no longer needs an answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalWithdrawnParams {
    pub approval_id: String,
    /// `timeout` or `cancelled`.
    pub reason: String,
}

/// `host/sample` result: the MCP `CreateMessageResult` (`{role, content, model, stopReason?}`),
/// passed to the MCP server as the host gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// `assistant`.
    pub role: String,
    /// One MCP content block (`{"type": "text", "text": ...}`), or a list of them.
    pub content: Value,
    /// The model that produced it.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// `host/openUrl`: show the user `url` (an OAuth authorization page for MCP server
/// `serverId`), e.g. in the system browser. Answer `{}` once it is shown, not when the user is
/// done: the sidecar learns that from the redirect to its loopback listener.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenUrlParams {
    pub url: String,
    pub server_id: String,
    /// Why, in words for the user.
    pub reason: String,
}

/// `host/secrets/get` and `host/secrets/delete`. Keys look like `toolreg/oauth/<serverId>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyParams {
    pub key: String,
}

/// `host/secrets/get` result: the stored value, `null` when there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretValue {
    pub value: Option<String>,
}

/// `host/secrets/set`: store `value` (opaque JSON text holding tokens) under `key`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretSetParams {
    pub key: String,
    pub value: String,
}

/// A JSON value kept as its text: written out as is (a native plan's request carries megabytes
/// of definitions serialised once, `exposition::rendered_pool`). Any JSON value in the schema.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawJson(pub Box<serde_json::value::RawValue>);

impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.0.get() == other.0.get()
    }
}

impl JsonSchema for RawJson {
    fn inline_schema() -> bool {
        Value::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Value::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Value::json_schema(generator)
    }
}
