//! Generates `protocol/*.schema.json` from the types in this module.
//!
//! One file per method or notification: `{"title": method, "properties": {"params", "result"},
//! "$defs"}`. `toolreg schema` writes them; a test regenerates them and fails on any drift.

use super::*;
use schemars::generate::SchemaSettings;
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn file_name(method: &str) -> String {
    format!("{}.schema.json", method.trim_start_matches("$/").replace('/', "."))
}

fn direction_id(direction: &str) -> &'static str {
    if direction.starts_with("host") {
        "hostToSidecar"
    } else {
        "sidecarToHost"
    }
}

fn request<R: Request>(out: &mut BTreeMap<String, Value>, direction: &str) {
    let mut gen = SchemaSettings::draft2020_12().into_generator();
    let params = gen.subschema_for::<R::Params>();
    let result = gen.subschema_for::<R::Result>();
    let defs = gen.take_definitions(true);
    out.insert(
        file_name(R::METHOD),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": R::METHOD,
            "description": format!("Request, {direction}."),
            "x-kind": "request",
            "x-direction": direction_id(direction),
            "type": "object",
            "properties": {"params": params, "result": result},
            "$defs": defs,
        }),
    );
}

fn notification<N: Notification>(out: &mut BTreeMap<String, Value>, direction: &str) {
    let mut gen = SchemaSettings::draft2020_12().into_generator();
    let params = gen.subschema_for::<N::Params>();
    let defs = gen.take_definitions(true);
    out.insert(
        file_name(N::METHOD),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": N::METHOD,
            "description": format!("Notification, {direction}."),
            "x-kind": "notification",
            "x-direction": direction_id(direction),
            "type": "object",
            "properties": {"params": params},
            "$defs": defs,
        }),
    );
}

/// Every schema file, by file name, as pretty JSON with a trailing newline.
pub fn generate() -> BTreeMap<String, String> {
    const TO: &str = "host to sidecar";
    const FROM: &str = "sidecar to host";
    let mut out = BTreeMap::new();
    request::<Initialize>(&mut out, TO);
    request::<Shutdown>(&mut out, TO);
    request::<RegistryRegister>(&mut out, TO);
    request::<RegistryDeregister>(&mut out, TO);
    request::<RegistryList>(&mut out, TO);
    request::<RegistrySelectActive>(&mut out, TO);
    request::<ExpositionPlan>(&mut out, TO);
    request::<ExpositionDefinitions>(&mut out, TO);
    request::<RegistryResolveMcpToolIds>(&mut out, TO);
    request::<RegistrySyncMcp>(&mut out, TO);
    request::<ToolInvoke>(&mut out, TO);
    request::<CatalogSetServers>(&mut out, TO);
    request::<CatalogListTools>(&mut out, TO);
    request::<CatalogRefresh>(&mut out, TO);
    request::<CatalogRestart>(&mut out, TO);
    request::<CatalogStatus>(&mut out, TO);
    request::<CatalogPins>(&mut out, TO);
    request::<CatalogApproveTools>(&mut out, TO);
    request::<CatalogSearchRegistry>(&mut out, TO);
    request::<CatalogResolveRegistryServer>(&mut out, TO);
    request::<CatalogListResources>(&mut out, TO);
    request::<CatalogListResourceTemplates>(&mut out, TO);
    request::<CatalogReadResource>(&mut out, TO);
    request::<CatalogSubscribeResource>(&mut out, TO);
    request::<CatalogUnsubscribeResource>(&mut out, TO);
    request::<CatalogListPrompts>(&mut out, TO);
    request::<CatalogGetPrompt>(&mut out, TO);
    request::<CatalogComplete>(&mut out, TO);
    request::<CatalogListSkills>(&mut out, TO);
    request::<CatalogLoadSkill>(&mut out, TO);
    request::<ApprovalRespond>(&mut out, TO);
    request::<ApprovalGrants>(&mut out, TO);
    request::<ApprovalRevoke>(&mut out, TO);
    request::<UsageList>(&mut out, TO);
    request::<UsageReset>(&mut out, TO);
    request::<HostExecuteTool>(&mut out, FROM);
    request::<HostRepairToolCall>(&mut out, FROM);
    request::<HostElicit>(&mut out, FROM);
    request::<HostSample>(&mut out, FROM);
    request::<HostRoots>(&mut out, FROM);
    request::<HostEmbed>(&mut out, FROM);
    request::<HostOpenUrl>(&mut out, FROM);
    request::<HostSecretsGet>(&mut out, FROM);
    request::<HostSecretsSet>(&mut out, FROM);
    request::<HostSecretsDelete>(&mut out, FROM);
    notification::<Initialized>(&mut out, TO);
    notification::<Exit>(&mut out, TO);
    notification::<CancelRequest>(&mut out, TO);
    notification::<Progress>(&mut out, FROM);
    notification::<LogMessage>(&mut out, FROM);
    notification::<CatalogDidChange>(&mut out, FROM);
    notification::<CatalogResourcesChanged>(&mut out, FROM);
    notification::<CatalogPromptsChanged>(&mut out, FROM);
    notification::<CatalogResourceUpdated>(&mut out, FROM);
    notification::<ApprovalRequestNotification>(&mut out, FROM);
    notification::<ApprovalWithdrawn>(&mut out, FROM);
    // The protocol version travels with `initialize`'s schema: the clients' generators read it
    // into their `PROTOCOL_VERSION`, so a bump reaches both clients through the drift checks.
    if let Some(init) = out.get_mut(&file_name(Initialize::METHOD)) {
        init["x-protocolVersion"] = json!(PROTOCOL_VERSION);
    }
    out.into_iter()
        .map(|(k, v)| (k, serde_json::to_string_pretty(&v).expect("schema serializes") + "\n"))
        .collect()
}
