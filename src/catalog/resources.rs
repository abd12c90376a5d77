//! A server's resources, resource templates, prompts and skills (the "extras" beside its
//! tools), and the requests that use them: `resources/read`, `prompts/get`,
//! `completion/complete`, `resources/subscribe` / `unsubscribe`, `resources/directory/read`.
//!
//! Invariants:
//! - The lists are fetched with the tools, in the same refresh (`refresh.rs`), only as far as
//!   the server's capabilities declare them, and kept last-known-good the same way: a failed
//!   fetch keeps the old lists; they persist in the cache file beside the tools. Skills
//!   (SEP-2640) are listed entries only (`skills/list`): no skill file is read to list them.
//! - Items stay the server's own JSON objects (`Resource`, `ResourceTemplate`, `Prompt`): the
//!   catalog names no server but its own, so collisions between servers are the reader's
//!   business (the gateway's `resources.rs`).
//! - Every request is bounded: a list by `list_timeout` for all its pages, a request by
//!   `call_timeout`; a server waiting for the user's authorization fails at once.
//! - A 2026-07-28 server knows no `resources/subscribe`: its subscriptions are listen streams
//!   (`listen.rs`), one per URI, under the same `Ask::Subscribe` / `Unsubscribe`.
//! - `resources/read` and `prompts/get` of a 2026-07-28 server may answer input-required
//!   (SEP-2322), as `tools/call` may: `Catalog::ask_with` runs their rounds through
//!   `mrtr::Rounds` (`Inputs::Fulfil`, every round within the one call timeout) or sends one
//!   round for a caller who answers itself (`Inputs::PassThrough`), as `client.rs` does for tools.

use std::time::{Duration, Instant};

use rmcp::model::{
    ClientRequest, CompleteRequest, GetPromptRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListSkillsRequest, PaginatedRequestParams, ReadResourceDirectoryRequest, ReadResourceRequest,
};
// Legacy-only in 2026-07-28; 2025-11-25 servers still subscribe this way.
#[allow(deprecated)]
use rmcp::model::{SubscribeRequest, UnsubscribeRequest};
use rmcp::model::{RequestMetaObject, DEFAULT_MRTR_MAX_ROUNDS};
use rmcp::service::PeerRequestOptions;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::call::Deadline;
use super::client::Connection;
use super::error::CatalogError;
use super::elicit::CallOrigin;
use super::mrtr::{self, Answer, Inputs, Retry};
use super::{lock, Catalog};

const MAX_PAGES: usize = 1000;

/// What the server declared it offers beyond tools.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct Features {
    pub resources: bool,
    pub subscribe: bool,
    pub resources_list_changed: bool,
    pub prompts: bool,
    pub prompts_list_changed: bool,
    pub completions: bool,
    /// The skills extension (`io.modelcontextprotocol/skills`), and its `directoryRead`.
    pub skills: bool,
    pub directory_read: bool,
}

/// A server's last-known-good resources, templates and prompts, as the server sent them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Extras {
    #[serde(default)]
    pub features: Features,
    #[serde(default)]
    pub resources: Vec<Value>,
    #[serde(default)]
    pub templates: Vec<Value>,
    #[serde(default)]
    pub prompts: Vec<Value>,
    /// `skills/list`'s entries, every page.
    #[serde(default)]
    pub skills: Vec<Value>,
}

impl Extras {
    /// Whether the resources (or templates, or skills: their files are resources) and whether
    /// the prompts differ from `before` (nothing known before: whichever the server offers).
    pub fn differs_from(&self, before: Option<&Extras>) -> (bool, bool) {
        match before {
            None => (self.features.resources, self.features.prompts),
            Some(b) => (
                self.resources != b.resources || self.templates != b.templates || self.skills != b.skills || self.features.resources != b.features.resources,
                self.prompts != b.prompts || self.features.prompts != b.features.prompts,
            ),
        }
    }
}

/// A request about a server's extras; its params are the MCP request's, names as the server
/// knows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    ReadResource,
    GetPrompt,
    Complete,
    Subscribe,
    Unsubscribe,
    /// `resources/directory/read` (the skills extension's `directoryRead`).
    ReadDirectory,
}

impl Ask {
    pub fn method(self) -> &'static str {
        match self {
            Ask::ReadResource => "resources/read",
            Ask::GetPrompt => "prompts/get",
            Ask::Complete => "completion/complete",
            Ask::Subscribe => "resources/subscribe",
            Ask::Unsubscribe => "resources/unsubscribe",
            Ask::ReadDirectory => "resources/directory/read",
        }
    }

    /// Whether a server with `features` answers it.
    fn offered(self, f: &Features) -> bool {
        match self {
            Ask::ReadResource => f.resources,
            Ask::GetPrompt => f.prompts,
            Ask::Complete => f.completions,
            Ask::Subscribe | Ask::Unsubscribe => f.subscribe,
            Ask::ReadDirectory => f.directory_read,
        }
    }

    fn request(self, params: Value) -> Result<ClientRequest, serde_json::Error> {
        Ok(match self {
            Ask::ReadResource => ClientRequest::ReadResourceRequest(ReadResourceRequest::new(serde_json::from_value(params)?)),
            Ask::GetPrompt => ClientRequest::GetPromptRequest(GetPromptRequest::new(serde_json::from_value(params)?)),
            Ask::Complete => ClientRequest::CompleteRequest(CompleteRequest::new(serde_json::from_value(params)?)),
            #[allow(deprecated)]
            Ask::Subscribe => ClientRequest::SubscribeRequest(SubscribeRequest::new(serde_json::from_value(params)?)),
            #[allow(deprecated)]
            Ask::Unsubscribe => ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(serde_json::from_value(params)?)),
            Ask::ReadDirectory => ClientRequest::ReadResourceDirectoryRequest(ReadResourceDirectoryRequest::new(serde_json::from_value(params)?)),
        })
    }
}

#[derive(Clone, Copy)]
pub(super) enum Kind {
    Resources,
    Templates,
    Prompts,
    Skills,
}

impl Kind {
    fn method(self) -> &'static str {
        match self {
            Kind::Resources => "resources/list",
            Kind::Templates => "resources/templates/list",
            Kind::Prompts => "prompts/list",
            Kind::Skills => "skills/list",
        }
    }

    fn field(self) -> &'static str {
        match self {
            Kind::Resources => "resources",
            Kind::Templates => "resourceTemplates",
            Kind::Prompts => "prompts",
            Kind::Skills => "skills",
        }
    }

    fn request(self, cursor: Option<String>) -> ClientRequest {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        match self {
            Kind::Resources => ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params)),
            Kind::Templates => ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest::with_param(params)),
            Kind::Prompts => ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params)),
            Kind::Skills => ClientRequest::ListSkillsRequest(ListSkillsRequest::with_param(params)),
        }
    }
}

impl Connection {
    /// What the server's capabilities declare beyond tools.
    pub(super) fn features(&self) -> Features {
        let Some(info) = self.peer().peer_info() else { return Features::default() };
        let caps = &info.capabilities;
        let resources = caps.resources.as_ref();
        let prompts = caps.prompts.as_ref();
        Features {
            resources: resources.is_some(),
            subscribe: resources.and_then(|r| r.subscribe) == Some(true),
            resources_list_changed: resources.and_then(|r| r.list_changed) == Some(true),
            prompts: prompts.is_some(),
            prompts_list_changed: prompts.and_then(|p| p.list_changed) == Some(true),
            completions: caps.completions.is_some(),
            skills: caps.supports_skills(),
            directory_read: caps.supports_directory_read(),
        }
    }

    /// The declared lists, each with all its pages within `timeout`; `None` when the server
    /// declares neither resources nor prompts.
    pub(super) async fn list_extras(&self, timeout: Duration) -> Result<Option<Extras>, CatalogError> {
        let features = self.features();
        if !features.resources && !features.prompts && !features.completions {
            return Ok(None);
        }
        let mut extras = Extras { features, ..Extras::default() };
        if features.resources {
            extras.resources = self.list_all(Kind::Resources, timeout).await?;
            extras.templates = self.list_all(Kind::Templates, timeout).await?;
        }
        if features.prompts {
            extras.prompts = self.list_all(Kind::Prompts, timeout).await?;
        }
        if features.skills {
            extras.skills = self.list_all(Kind::Skills, timeout).await?;
        }
        Ok(Some(extras))
    }

    pub(super) async fn list_all(&self, kind: Kind, timeout: Duration) -> Result<Vec<Value>, CatalogError> {
        let deadline = Instant::now() + timeout;
        let mut items = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.send(kind.request(cursor.take()), kind.method(), deadline, timeout).await?;
            if let Some(Value::Array(list)) = page.get(kind.field()) {
                items.extend(list.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.to_owned()) {
                        return Err(CatalogError::Mcp(format!("{} repeated cursor {next:?}", kind.method())));
                    }
                    cursor = Some(next.to_owned());
                }
                _ => return Ok(items),
            }
        }
        Err(CatalogError::Mcp(format!("{} has more than {MAX_PAGES} pages", kind.method())))
    }

    /// One request's result as JSON (rmcp's result union is untagged: the JSON is what counts).
    pub(super) async fn send(&self, request: ClientRequest, what: &str, deadline: Instant, timeout: Duration) -> Result<Value, CatalogError> {
        self.send_meta(request, what, deadline, timeout, None).await
    }

    /// `send`, with `meta` added to the request's `_meta` (a pass-through caller's capabilities).
    pub(in crate::catalog) async fn send_meta(&self, request: ClientRequest, what: &str, deadline: Instant, timeout: Duration, meta: Option<RequestMetaObject>) -> Result<Value, CatalogError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(CatalogError::timed_out(what, timeout));
        }
        let mut options = PeerRequestOptions::with_timeout(remaining);
        options.meta = meta;
        let response = self
            .peer()
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.failed(what, timeout, e))?
            .await_response()
            .await
            .map_err(|e| self.failed(what, timeout, e))?;
        serde_json::to_value(&response).map_err(|e| CatalogError::Mcp(format!("{what}: {e}")))
    }
}

impl Catalog {
    /// The server's last-known-good extras, from memory only; `None` when it offers none (or
    /// none is known yet), or it is unknown or disabled.
    pub fn extras(&self, server_id: &str) -> Option<Extras> {
        let server = self.enabled_server(server_id).ok()?;
        let extras = lock(&server.data).extras.clone();
        extras
    }

    /// What is known of the server's extras, from memory only: `None` while nothing was ever
    /// listed (a cold server, which gets one background refresh as `list_tools` gives it);
    /// a listed server that offers none has every feature off.
    pub fn extras_known(&self, server_id: &str) -> Result<Option<Extras>, CatalogError> {
        let server = self.enabled_server(server_id)?;
        let (known, kick) = {
            let d = lock(&server.data);
            let known = match (&d.extras, &d.tools) {
                (Some(e), _) => Some(e.clone()),
                (None, Some(_)) => Some(Extras::default()),
                (None, None) => None,
            };
            let kick = known.is_none() && d.error.is_none() && !d.kicked && !d.loading;
            (known, kick)
        };
        if kick {
            server.start_refresh(false);
        }
        Ok(known)
    }

    /// `ask` with `params` through the server's session (connecting if it has none), within
    /// the call timeout. The result is the server's, as JSON.
    /// A 2026-07-28 server is subscribed through `subscriptions/listen` instead (it knows no
    /// `resources/subscribe`): `Connection::watch_resource`.
    pub async fn ask(&self, server_id: &str, ask: Ask, params: Value) -> Result<Value, CatalogError> {
        let (conn, config, deadline, timeout) = self.ask_connection(server_id, ask).await?;
        if matches!(ask, Ask::Subscribe | Ask::Unsubscribe) && !conn.has_initialize() {
            let uri = params["uri"].as_str().ok_or_else(|| CatalogError::Mcp(format!("{}: no uri", ask.method())))?;
            let within = deadline.saturating_duration_since(Instant::now());
            conn.watch_resource(uri, ask == Ask::Subscribe, within).await.map_err(|e| e.redacted(&config))?;
            return Ok(json!({}));
        }
        let request = ask.request(params).map_err(|e| CatalogError::Mcp(format!("{}: invalid params: {e}", ask.method())))?;
        conn.send(request, ask.method(), deadline, timeout).await.map_err(|e| e.redacted(&config))
    }

    /// `ask` of a request that may answer input-required (`resources/read`, `prompts/get`):
    /// under `Inputs::Fulfil` the server's input requests are asked of the host, named with
    /// `call_id` (the gateway's calling client), until a result; under `PassThrough` one round
    /// is sent with the caller's answers, state and capabilities, and its input requests come
    /// back as `Answer::InputRequired`. `name`: the prompt or URI, for the questions' `tool`.
    #[allow(clippy::too_many_arguments)]
    pub async fn ask_with(
        &self,
        server_id: &str,
        ask: Ask,
        name: &str,
        params: Value,
        call_id: Option<&str>,
        cancel: CancellationToken,
        inputs: &Inputs,
    ) -> Result<Answer, CatalogError> {
        let (conn, config, deadline, timeout) = self.ask_connection(server_id, ask).await?;
        let method = ask.method();
        // The URI as the server names it (a gateway's client may have asked for another form).
        let own_uri = params.get("uri").and_then(Value::as_str).unwrap_or(name).to_owned();
        let round = |retry: Option<Retry>, meta: Option<RequestMetaObject>| {
            let mut params = params.clone();
            if let Some(retry) = retry {
                params["inputResponses"] = Value::Object(retry.responses);
                if let Some(state) = retry.state {
                    params["requestState"] = json!(state);
                }
            }
            let (conn, cancel) = (&conn, &cancel);
            async move {
                let request = ask.request(params).map_err(|e| CatalogError::Mcp(format!("{method}: invalid params: {e}")))?;
                tokio::select! {
                    _ = cancel.cancelled() => Err(CatalogError::Cancelled),
                    r = conn.send_meta(request, method, deadline, timeout, meta) => r,
                }
            }
        };
        let answer = match inputs {
            Inputs::Fulfil => {
                let origin = CallOrigin { call_id: call_id.map(str::to_owned), tool: name.to_owned(), cancel: cancel.clone(), logs: None };
                let (asker, server_id) = conn.asker();
                let deadline = Deadline::start(deadline.saturating_duration_since(Instant::now()));
                let rounds = mrtr::Rounds { asker, server_id, origin: &origin, deadline: &deadline, max_rounds: DEFAULT_MRTR_MAX_ROUNDS, method };
                rounds.drive(|retry| round(retry, None)).await.map(Answer::Complete)
            }
            Inputs::PassThrough { capabilities, retry } => match round(retry.clone(), conn.caller_meta(capabilities)).await {
                Ok(v) => mrtr::read_for(method, v),
                Err(e) => Err(e),
            },
        };
        let answer = answer.map_err(|e| e.redacted(&config))?;
        if let (Ask::ReadResource, Answer::Complete(v)) = (ask, &answer) {
            self.enabled_server(server_id)?.check_view(&own_uri, v)?;
        }
        Ok(answer)
    }

    /// The server's session for `ask` (connecting if it has none) and the call timeout's
    /// deadline, or why `ask` cannot be sent to it.
    async fn ask_connection(&self, server_id: &str, ask: Ask) -> Result<(std::sync::Arc<Connection>, super::ServerConfig, Instant, Duration), CatalogError> {
        let server = self.enabled_server(server_id)?;
        let config = server.config();
        let method = ask.method();
        if let Some(known) = lock(&server.data).extras.as_ref().map(|e| e.features) {
            if !ask.offered(&known) {
                return Err(CatalogError::NotOffered { server: server_id.to_owned(), method: method.to_owned() });
            }
        }
        if let Some(why) = server.needs_user() {
            return Err(CatalogError::NeedsAuth(why));
        }
        let timeout = config.timeouts.call(self.inner.shared.opts.call_timeout);
        let deadline = Instant::now() + timeout;
        let conn = tokio::time::timeout(timeout, server.connection())
            .await
            .unwrap_or_else(|_| Err(CatalogError::timed_out(method, timeout)))
            .inspect_err(|e| server.record_failure(e.to_string()))
            .map_err(|e| e.redacted(&config))?;
        if !ask.offered(&conn.features()) {
            return Err(CatalogError::NotOffered { server: server_id.to_owned(), method: method.to_owned() });
        }
        Ok((conn, config, deadline, timeout))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_without_fields_read_as_empty_and_round_trip() {
        let e: Extras = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(e, Extras::default());
        let full = Extras {
            features: Features { resources: true, subscribe: true, skills: true, ..Features::default() },
            resources: vec![serde_json::json!({"uri": "test://a", "name": "a"})],
            templates: vec![],
            prompts: vec![serde_json::json!({"name": "p"})],
            skills: vec![serde_json::json!({"uri": "skill://a/SKILL.md"})],
        };
        let back: Extras = serde_json::from_value(serde_json::to_value(&full).unwrap()).unwrap();
        assert_eq!(back, full);
    }

    #[test]
    fn requests_are_offered_only_as_declared() {
        let f = Features { resources: true, prompts: false, completions: true, ..Features::default() };
        assert!(Ask::ReadResource.offered(&f) && Ask::Complete.offered(&f));
        assert!(!Ask::GetPrompt.offered(&f) && !Ask::Subscribe.offered(&f) && !Ask::ReadDirectory.offered(&f));
        assert!(Ask::ReadDirectory.offered(&Features { directory_read: true, ..f }));
        // A cache file written before skills were known still reads.
        let old: Features = serde_json::from_value(serde_json::json!({"resources": true, "subscribe": false})).unwrap();
        assert!(old.resources && !old.skills);
        assert!(Ask::ReadResource.request(serde_json::json!({"uri": "test://a"})).is_ok());
        assert!(Ask::GetPrompt.request(serde_json::json!({"nope": 1})).is_err());
    }
}
