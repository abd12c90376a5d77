//! The host contract as plain types: one marker type per method with its params and result.
//!
//! This is the single source of the wire format: `protocol/*.schema.json` and the clients'
//! types are generated from it (`schema.rs`), and a test fails when the committed files drift.
//! Domain types that travel as they are (`ToolEntry`, `Plan`, ...) are re-used, not copied.

mod definitions;
pub mod error;
mod extras;
mod grants;
mod mcp_registry;
pub mod schema;
mod types;
mod usage;

pub use definitions::*;
pub use error::{ErrorCode, RpcError};
pub use crate::catalog::{ListToolsResult, ServerConfig, ServerStatus, ServerTimeouts};
// Settings both faces read travel as they are (`crate::settings`).
pub use crate::settings::{AuditSettings, CodeModeLimits, EmbeddingSource, McpRegistrySettings, ResultSettings, SearchSettings, TelemetrySettings, UsagePolicy, MAX_TIMEOUT_MS};
pub use extras::*;
pub use grants::*;
pub use mcp_registry::*;
pub use types::*;
pub use usage::*;

/// The version this build speaks; hosts may send theirs in `initialize`.
pub const PROTOCOL_VERSION: &str = "0.3";

pub trait Request {
    const METHOD: &'static str;
    type Params: serde::de::DeserializeOwned + schemars::JsonSchema;
    type Result: serde::Serialize + schemars::JsonSchema;
}

pub trait Notification {
    const METHOD: &'static str;
    type Params: schemars::JsonSchema;
}

macro_rules! request {
    ($marker:ident, $method:literal, $params:ty, $result:ty) => {
        pub enum $marker {}
        impl Request for $marker {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($marker:ident, $method:literal, $params:ty) => {
        pub enum $marker {}
        impl Notification for $marker {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}

request!(Initialize, "initialize", InitializeParams, InitializeResult);
request!(Shutdown, "shutdown", NoParams, Null);
request!(RegistryRegister, "registry/register", RegisterParams, RegisterResult);
request!(RegistryDeregister, "registry/deregister", DeregisterParams, DeregisterResult);
request!(RegistryList, "registry/list", ListParams, ListResult);
request!(RegistrySelectActive, "registry/selectActive", SelectActiveParams, SelectActiveResult);
request!(ExpositionPlan, "exposition/plan", PlanParams, PlanReply);
request!(ExpositionDefinitions, "exposition/definitions", DefinitionsParams, Definitions);
request!(RegistryResolveMcpToolIds, "registry/resolveMcpToolIds", ResolveParams, ResolveResult);
request!(RegistrySyncMcp, "registry/syncMcp", SyncParams, SyncResult);
request!(ToolInvoke, "tool/invoke", InvokeParams, InvokeResult);
request!(CatalogSetServers, "catalog/setServers", SetServersParams, Empty);
request!(CatalogListTools, "catalog/listTools", ListToolsParams, ListToolsResult);
request!(CatalogRefresh, "catalog/refresh", ServerIdParams, ServerStatus);
request!(CatalogRestart, "catalog/restart", ServerIdParams, ServerStatus);
request!(CatalogStatus, "catalog/status", NoParams, CatalogStatusResult);
request!(CatalogPins, "catalog/pins", ServerIdParams, PinsResult);
request!(CatalogApproveTools, "catalog/approveTools", ApproveToolsParams, PinsResult);
request!(CatalogSearchRegistry, "catalog/searchRegistry", SearchRegistryParams, RegistryPage);
request!(CatalogResolveRegistryServer, "catalog/resolveRegistryServer", ResolveRegistryServerParams, ResolvedServer);
request!(CatalogListResources, "catalog/listResources", ExtrasListParams, ResourceList);
request!(CatalogListResourceTemplates, "catalog/listResourceTemplates", ExtrasListParams, ResourceTemplateList);
request!(CatalogReadResource, "catalog/readResource", ResourceParams, McpResult);
request!(CatalogSubscribeResource, "catalog/subscribeResource", ResourceParams, Empty);
request!(CatalogUnsubscribeResource, "catalog/unsubscribeResource", ResourceParams, Empty);
request!(CatalogListPrompts, "catalog/listPrompts", ExtrasListParams, PromptList);
request!(CatalogGetPrompt, "catalog/getPrompt", PromptGetParams, McpResult);
request!(CatalogComplete, "catalog/complete", CompleteParams, CompleteReply);
request!(CatalogListSkills, "catalog/listSkills", ServerIdParams, SkillList);
request!(CatalogLoadSkill, "catalog/loadSkill", ResourceParams, LoadedSkill);
request!(ApprovalRespond, "approval/respond", ApprovalRespondParams, Empty);
request!(ApprovalGrants, "approval/grants", NoParams, GrantsResult);
request!(ApprovalRevoke, "approval/revoke", RevokeParams, RevokeResult);
request!(UsageList, "usage/list", UsageKeyParams, UsageListResult);
request!(UsageReset, "usage/reset", UsageKeyParams, UsageResetResult);

// Sidecar to host.
request!(HostExecuteTool, "host/executeTool", ExecuteToolParams, CallToolResult);
request!(HostRepairToolCall, "host/repairToolCall", RepairToolCallParams, Option<RepairToolCallResult>);
request!(HostElicit, "host/elicit", ElicitParams, ElicitResult);
request!(HostSample, "host/sample", SampleParams, CreateMessageResult);
request!(HostRoots, "host/roots", RootsParams, RootsResult);
request!(HostEmbed, "host/embed", EmbedParams, EmbedResult);
request!(HostOpenUrl, "host/openUrl", OpenUrlParams, Empty);
request!(HostSecretsGet, "host/secrets/get", SecretKeyParams, SecretValue);
request!(HostSecretsSet, "host/secrets/set", SecretSetParams, Empty);
request!(HostSecretsDelete, "host/secrets/delete", SecretKeyParams, Empty);

// Test hooks, registered only when TOOLREG_DEBUG_METHODS is set; not part of the contract.
request!(DebugSleep, "debug/sleep", DebugSleepParams, Null);
request!(DebugPanic, "debug/panic", NoParams, Null);
request!(DebugOutgoing, "debug/outgoing", NoParams, OutgoingStats);
request!(DebugUsageClock, "debug/usageClock", DebugUsageClockParams, Null);

notification!(Initialized, "initialized", NoParams);
notification!(Exit, "exit", NoParams);
notification!(CancelRequest, "$/cancelRequest", CancelParams);
notification!(Progress, "$/progress", ProgressParams);
notification!(LogMessage, "window/logMessage", LogMessageParams);
notification!(CatalogDidChange, "catalog/didChange", DidChangeParams);
notification!(CatalogResourcesChanged, "catalog/resourcesChanged", ServerChanged);
notification!(CatalogPromptsChanged, "catalog/promptsChanged", ServerChanged);
notification!(CatalogResourceUpdated, "catalog/resourceUpdated", ResourceUpdated);
notification!(ApprovalRequestNotification, "approval/request", ApprovalRequestParams);
notification!(ApprovalWithdrawn, "approval/withdrawn", ApprovalWithdrawnParams);

#[cfg(test)]
#[path = "wire_tests.rs"]
mod wire_tests;
