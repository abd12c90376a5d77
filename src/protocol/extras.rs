//! The host contract for what a server offers beside tools (resources, resource templates,
//! prompts, completions) and for MCP Apps' views.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The host renders MCP Apps views (`initialize.capabilities.apps`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppsCapability {
    /// The view formats the host renders; `text/html;profile=mcp-app` when empty.
    #[serde(default)]
    pub mime_types: Vec<String>,
}

/// `tool/invoke` for a view: the server whose view asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppCall {
    pub server_id: String,
}

/// The view a host renders for a tool's result: read it with `catalog/readResource`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewRef {
    pub server_id: String,
    pub resource_uri: String,
}

/// `catalog/listResources`, `catalog/listResourceTemplates`, `catalog/listPrompts`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtrasListParams {
    /// One server's; absent: every enabled server that offers them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    /// `nextCursor` of the page before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A server's resource (MCP `Resource`) and the server it is read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerResource {
    pub server_id: String,
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A server's resource template (MCP `ResourceTemplate`) and its server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerResourceTemplate {
    pub server_id: String,
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A server's prompt (MCP `Prompt`) and its server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerPrompt {
    pub server_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MCP `PromptArgument`s: `{name, title?, description?, required?}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<Value>>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// One page of a list of the servers' items (`catalog/listResources`,
/// `catalog/listResourceTemplates`, `catalog/listPrompts`): the items under the list's own key,
/// and where the next page is.
// Named in the schemas after its items (`ResourceList`, ...), as before it was one type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "{L}List")]
pub struct Page<L> {
    #[serde(flatten)]
    pub items: L,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Servers that offer these items but whose list is not known yet (never listed, nothing
    /// cached): their items are missing, not absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

/// The items of a `ResourceList` (the schema names the list after the items).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Resource")]
pub struct Resources {
    pub resources: Vec<ServerResource>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "ResourceTemplate")]
pub struct ResourceTemplates {
    pub resource_templates: Vec<ServerResourceTemplate>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Prompt")]
pub struct Prompts {
    pub prompts: Vec<ServerPrompt>,
}

pub type ResourceList = Page<Resources>;
pub type ResourceTemplateList = Page<ResourceTemplates>;
pub type PromptList = Page<Prompts>;

/// `catalog/readResource`, `catalog/subscribeResource`, `catalog/unsubscribeResource`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceParams {
    pub server_id: String,
    pub uri: String,
}

/// `catalog/getPrompt`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptGetParams {
    pub server_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// `catalog/complete`: MCP `completion/complete` of one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompleteParams {
    pub server_id: String,
    /// `{type: "ref/prompt", name}` or `{type: "ref/resource", uri}`.
    #[serde(rename = "ref")]
    pub reference: Value,
    /// `{name, value}`: the argument being completed.
    pub argument: Value,
    /// `{arguments: {..}}`: the arguments already given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
}

/// MCP `CompleteResult`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompleteReply {
    /// `{values, total?, hasMore?}`.
    pub completion: Value,
}

/// MCP `ReadResourceResult` / `GetPromptResult`, as the server sent it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct McpResult(pub Value);

/// `catalog/resourcesChanged`, `catalog/promptsChanged`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerChanged {
    pub server_id: String,
}

/// `catalog/resourceUpdated`: subscribed with `catalog/subscribeResource`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUpdated {
    pub server_id: String,
    pub uri: String,
}

/// `catalog/listSkills`: the server's skills (SEP-2640) as its `skills/list` gave them, each
/// `{uri, frontmatter: {name, description, ...}, resources: [{uri, digest, size}] | "dynamic"}`.
/// Listing reads no skill file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillList {
    pub skills: Vec<Value>,
}

/// `catalog/loadSkill`: a skill read and verified (each file's size and digest, `SKILL.md`'s
/// frontmatter against the listing's): `SKILL.md` first, then its other files, each the
/// server's `resources/read` content item (`{uri, mimeType?, text | blob}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoadedSkill {
    pub uri: String,
    pub frontmatter: Value,
    pub files: Vec<Value>,
}
