//! `resources/*`, `prompts/*` and `completion/complete` of `toolreg mcp`: the handlers
//! `session.rs` delegates to, over the aggregate of `shelf.rs`, and what the gateway tells
//! clients when it changes.
//!
//! Invariants:
//! - Lists answer from the current `Shelf` (the catalog's last-known-good lists), never from
//!   an upstream server; the shelf is rebuilt on every catalog event, before the tools' resync.
//! - A changed shelf is announced: `notifications/resources/list_changed` when the listed
//!   resources or templates differ, `notifications/prompts/list_changed` when the prompts do,
//!   to every session client and to every `subscriptions/listen` stream that asked.
//! - Subscriptions are per upstream resource: the upstream is subscribed once, when the first
//!   client subscribes, and unsubscribed when the last one leaves; its
//!   `notifications/resources/updated` goes to each subscriber under the URI it subscribed with.
//!   A subscriber is a 2025-11-25 session (`resources/subscribe`) or one `subscriptions/listen`
//!   stream of a 2026-07-28 client (`resourceSubscriptions`), which leaves when the stream ends.
//!   The listen filter accepts only URIs the gateway can route to an upstream that subscribes.
//! - Requests go to one upstream through `Catalog::ask`, bounded by the call timeout.
//! - A `prompts/get` or `resources/read` that a 2026-07-28 upstream answers input-required
//!   (SEP-2322) is passed through to a 2026-07-28 client under a sealed state (`passthru.rs`),
//!   as `tools/call` is; for a 2025-11-25 client the gateway answers the upstream's requests
//!   itself by asking the client (elicitation, sampling), registered as a call in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequiredResult,
    InputResponses, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceUpdatedNotificationParam, ResultType, SubscriptionFilter,
};
use rmcp::service::{Peer, RequestContext, RoleServer, SubscriptionSink};
use rmcp::ErrorData;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::passthru;
use super::session::InFlight;
use super::shelf::{Route, Shelf};
use super::{lock, Gateway, Lens};
use crate::catalog::{Answer, Ask, Catalog, CatalogError, Inputs};

/// Which listed set changed, as counters a listen stream compares.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Changes {
    pub resources: u64,
    pub prompts: u64,
}

/// A client subscribed to an upstream resource, under the URI it used.
struct Subscriber {
    uri: String,
    to: Subscribed,
}

/// Where a subscriber's updates go.
#[derive(Clone)]
pub(crate) enum Subscribed {
    /// A 2025-11-25 session.
    Session(Peer<RoleServer>),
    /// A `subscriptions/listen` stream, by a number of the gateway's (the sink's request id is
    /// only unique per client).
    Stream(u64, SubscriptionSink),
}

impl Subscribed {
    fn same(&self, other: &Subscribed) -> bool {
        match (self, other) {
            (Subscribed::Session(a), Subscribed::Session(b)) => same_peer(a, b),
            (Subscribed::Stream(a, _), Subscribed::Stream(b, _)) => a == b,
            _ => false,
        }
    }

    /// A gone session; a stream leaves by `unsubscribe` when it ends.
    fn gone(&self) -> bool {
        matches!(self, Subscribed::Session(p) if p.is_transport_closed())
    }

    async fn tell(&self, uri: String) {
        let sent = match self {
            Subscribed::Session(peer) => peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_ok(),
            Subscribed::Stream(_, sink) => sink.notify_resource_updated(uri).await.is_ok(),
        };
        if !sent {
            tracing::debug!("resources/updated not delivered");
        }
    }
}

/// The gateway's part for resources and prompts; each lens has its own shelf.
#[derive(Default)]
pub(crate) struct Resources {
    /// By upstream (server id, own URI).
    subscribers: Mutex<HashMap<(String, String), Vec<Subscriber>>>,
    /// Numbers `Subscribed::Stream`s.
    streams: std::sync::atomic::AtomicU64,
}

/// Two handles of one client session: rmcp keeps its handshake info in one shared slot.
fn same_peer(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    matches!((a.peer_info(), b.peer_info()), (Some(x), Some(y)) if Arc::ptr_eq(&x, &y))
}

impl Resources {
    /// `lens`'s shelf over the catalog's current lists of the servers `has` says are in it;
    /// what changed is announced to the lens's clients.
    pub async fn rebuild(&self, catalog: &Catalog, lens: &Lens, has: &(dyn Fn(&str) -> bool + Sync)) {
        let servers: Vec<_> = catalog.server_ids().into_iter().filter(|id| has(id)).filter_map(|id| catalog.extras(&id).map(|e| (id, e))).collect();
        let Some((resources, prompts)) = lens.replace_shelf(Shelf::build(&servers)) else { return };
        lens.shelf_changes.send_modify(|c| {
            c.resources += u64::from(resources);
            c.prompts += u64::from(prompts);
        });
        for peer in lens.peers() {
            if resources && peer.notify_resource_list_changed().await.is_err() {
                tracing::debug!("resources/list_changed not delivered");
            }
            if prompts && peer.notify_prompt_list_changed().await.is_err() {
                tracing::debug!("prompts/list_changed not delivered");
            }
        }
    }

    /// An upstream's `notifications/resources/updated`, to the clients subscribed to it.
    pub async fn updated(&self, server: &str, uri: &str) {
        let to: Vec<(String, Subscribed)> = {
            let mut subs = lock(&self.subscribers);
            let Some(list) = subs.get_mut(&(server.to_owned(), uri.to_owned())) else { return };
            list.retain(|s| !s.to.gone());
            list.iter().map(|s| (s.uri.clone(), s.to.clone())).collect()
        };
        for (uri, to) in to {
            to.tell(uri).await;
        }
    }

    /// A number for a new listen stream's subscriptions.
    pub fn next_stream(&self) -> u64 {
        self.streams.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

/// The capabilities `toolreg mcp` declares: tools and logging always; resources, prompts and
/// completions as far as some upstream offers them.
pub(crate) fn capabilities(lens: &Lens) -> Value {
    let f = lens.shelf().features;
    let mut caps = json!({"tools": {"listChanged": true}, "logging": {}});
    // listChanged whatever the upstreams say: the set changes as servers come and go.
    if f.resources {
        caps["resources"] = json!({"listChanged": true, "subscribe": f.subscribe});
    }
    if f.prompts {
        caps["prompts"] = json!({"listChanged": true});
    }
    if f.completions {
        caps["completions"] = json!({});
    }
    caps
}

/// The part of a `subscriptions/listen` filter the gateway serves: the list changes, and the
/// resources it can route to an upstream that takes subscriptions.
pub(crate) fn accepted(requested: &SubscriptionFilter, shelf: &Shelf) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::builder();
    let routable = |uri: &&String| shelf.resource(uri).is_ok_and(|r| shelf.server_features(&r.server).subscribe);
    let uris: Vec<&String> = requested.resource_subscriptions.iter().flatten().filter(routable).collect();
    if !uris.is_empty() {
        accepted = accepted.resource_subscriptions(uris);
    }
    if requested.tools_list_changed == Some(true) {
        accepted = accepted.tools_list_changed();
    }
    if requested.resources_list_changed == Some(true) {
        accepted = accepted.resources_list_changed();
    }
    if requested.prompts_list_changed == Some(true) {
        accepted = accepted.prompts_list_changed();
    }
    accepted.build()
}

pub(super) fn invalid(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

pub(super) fn failed(route: &Route, method: &str, e: CatalogError) -> ErrorData {
    // A code that means something to the caller (-32602: e.g. no such resource, SEP-2164) is
    // kept with its data, as for tools/call.
    if let CatalogError::Rpc { code, message, data } = e {
        return ErrorData::new(ErrorCode(code), message, data);
    }
    ErrorData::internal_error(format!("{method} on MCP server {}: {e}", route.server), Some(json!({"server": route.server})))
}

pub(super) fn parse<T: serde::de::DeserializeOwned>(what: &str, v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| ErrorData::internal_error(format!("the upstream's {what} result could not be read: {e}"), None))
}

/// A page of a list from the shelf (`pages.rs`), after the warm-up wait of `tools/list`:
/// complete, `ttlMs: 0, cacheScope: private` as `tools/list` says (answered from memory, a
/// change is announced, what is listed depends on the gateway's config).
pub(super) async fn listed<T: serde::de::DeserializeOwned>(gw: &Gateway, lens: &Lens, (method, field): (&'static str, &str), pick: fn(&Shelf) -> &[Value], cursor: Option<String>) -> Result<T, ErrorData> {
    gw.listing_when_warm(lens).await;
    let (entries, next) = super::pages::cut(method, lens.shelf(), pick, cursor).await?;
    let mut result = json!({field: entries, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"});
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    parse(field, result)
}

pub(crate) async fn list_resources(gw: &Gateway, lens: &Lens, cursor: Option<String>) -> Result<ListResourcesResult, ErrorData> {
    listed(gw, lens, ("resources/list", "resources"), |s| &s.resources, cursor).await
}

pub(crate) async fn list_resource_templates(gw: &Gateway, lens: &Lens, cursor: Option<String>) -> Result<ListResourceTemplatesResult, ErrorData> {
    listed(gw, lens, ("resources/templates/list", "resourceTemplates"), |s| &s.templates, cursor).await
}

pub(crate) async fn list_prompts(gw: &Gateway, lens: &Lens, cursor: Option<String>) -> Result<ListPromptsResult, ErrorData> {
    listed(gw, lens, ("prompts/list", "prompts"), |s| &s.prompts, cursor).await
}

/// Who sent a `prompts/get` or `resources/read`, for the upstream's input requests.
pub(crate) struct Caller {
    peer: Peer<RoleServer>,
    /// A 2026-07-28 client: it answers input requests itself, and may not be sent requests.
    stateless: bool,
    capabilities: Value,
    cancel: CancellationToken,
}

impl Caller {
    pub fn of(context: &RequestContext<RoleServer>) -> Caller {
        // A 2026-07-28 request names its client's capabilities in `_meta`; a session's, at start.
        let capabilities = context.meta.client_capabilities().or_else(|| context.peer.peer_info().map(|i| i.capabilities.clone()));
        Caller {
            peer: context.peer.clone(),
            stateless: context.protocol_version().is_some_and(|v| !v.has_initialize()),
            capabilities: serde_json::to_value(capabilities.unwrap_or_default()).unwrap_or_else(|_| json!({})),
            cancel: context.ct.clone(),
        }
    }
}

/// `ask` of `asked` (the prompt name or URI as the client gave it) on the upstream `route`
/// names, with the client's answers and state of an earlier round: the upstream's result, or
/// the input-required result for the client.
#[allow(clippy::too_many_arguments)]
async fn ask_upstream(
    gw: &Gateway,
    caller: &Caller,
    route: &Route,
    ask: Ask,
    asked: &str,
    mut params: Value,
    state: Option<&str>,
    responses: Option<&InputResponses>,
) -> Result<Result<Value, InputRequiredResult>, ErrorData> {
    let kind = if ask == Ask::GetPrompt { "prompt" } else { "resource" };
    let purpose = passthru::request_purpose(kind, asked);
    if let Some(p) = params.as_object_mut() {
        p.remove("inputResponses");
        p.remove("requestState");
    }
    let (inputs, call) = if caller.stateless {
        let retry = passthru::open_request(gw, &purpose, route, state, responses)?;
        let capabilities = super::views::upstream_caps(caller.capabilities.clone(), gw.config().gateway.views());
        (Inputs::PassThrough { capabilities, retry }, None)
    } else {
        let id = gw.whole.service.next_call_id();
        lock(&gw.clients.calls).insert(id.clone(), caller.peer.clone());
        (Inputs::Fulfil, Some(InFlight(gw, id)))
    };
    let call_id = call.as_ref().map(|c| c.1.as_str());
    let answer = gw.catalog.ask_with(&route.server, ask, asked, params, call_id, caller.cancel.clone(), &inputs).await;
    match answer.map_err(|e| failed(route, ask.method(), e))? {
        Answer::Complete(v) => Ok(Ok(v)),
        Answer::InputRequired { requests, state } => passthru::ask_request(gw, &purpose, route, requests, state).map(Err),
        // Tasks are made of tool calls only.
        Answer::Task(_) => Err(ErrorData::internal_error(format!("{}: the server answered with a task", ask.method()), None)),
    }
}

pub(crate) async fn read_resource(gw: &Gateway, lens: &Lens, request: ReadResourceRequestParams, caller: &Caller) -> Result<ReadResourceResponse, ErrorData> {
    // A client that reads before it lists (it knew the URI) waits for the warm-up too.
    gw.listing_when_warm(lens).await;
    let asked = request.uri.clone();
    let route = lens.shelf().resource(&asked).map_err(invalid)?;
    let mut params = serde_json::to_value(&request).unwrap_or_else(|_| json!({}));
    params["uri"] = json!(route.own);
    let (state, responses) = (request.request_state.as_deref(), request.input_responses.as_ref());
    let mut v = match ask_upstream(gw, caller, &route, Ask::ReadResource, &asked, params, state, responses).await? {
        Ok(v) => v,
        Err(input_required) => return Ok(ReadResourceResponse::InputRequired(input_required)),
    };
    // Contents name the URI the client asked for, not the upstream's own.
    if asked != route.own {
        for content in v["contents"].as_array_mut().into_iter().flatten() {
            if content["uri"] == route.own.as_str() {
                content["uri"] = json!(asked);
            }
        }
    }
    let mut result: ReadResourceResult = parse("resources/read", v)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result.into())
}

pub(crate) async fn get_prompt(gw: &Gateway, lens: &Lens, request: GetPromptRequestParams, caller: &Caller) -> Result<GetPromptResponse, ErrorData> {
    gw.listing_when_warm(lens).await;
    let route = lens.shelf().prompt(&request.name).map_err(invalid)?;
    let mut params = serde_json::to_value(&request).unwrap_or_else(|_| json!({}));
    params["name"] = json!(route.own);
    let (state, responses) = (request.request_state.as_deref(), request.input_responses.as_ref());
    let v = match ask_upstream(gw, caller, &route, Ask::GetPrompt, &request.name, params, state, responses).await? {
        Ok(v) => v,
        Err(input_required) => return Ok(GetPromptResponse::InputRequired(input_required)),
    };
    let mut result: GetPromptResult = parse("prompts/get", v)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result.into())
}

/// Routed by its `ref`: a prompt name or a resource template, as listed.
pub(crate) async fn complete(gw: &Gateway, lens: &Lens, request: CompleteRequestParams) -> Result<CompleteResult, ErrorData> {
    let mut params = serde_json::to_value(&request).unwrap_or_else(|_| json!({}));
    let shelf = lens.shelf();
    let route = match (params["ref"]["type"].as_str(), params["ref"]["name"].as_str(), params["ref"]["uri"].as_str()) {
        (Some("ref/prompt"), Some(name), _) => {
            let route = shelf.prompt(name).map_err(invalid)?;
            params["ref"]["name"] = json!(route.own);
            route
        }
        (Some("ref/resource"), _, Some(uri)) => {
            let route = shelf.template(uri).map_err(invalid)?;
            params["ref"]["uri"] = json!(route.own);
            route
        }
        _ => return Err(invalid("completion/complete needs a ref/prompt with a name or a ref/resource with a uri".into())),
    };
    if !shelf.server_features(&route.server).completions {
        return Err(invalid(format!("MCP server {} offers no completions", route.server)));
    }
    let v = gw.catalog.ask(&route.server, Ask::Complete, params).await.map_err(|e| failed(&route, "completion/complete", e))?;
    let mut result: CompleteResult = parse("completion/complete", v)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// `resources/subscribe` of a session client, or one URI of a listen stream: the upstream is
/// subscribed for the first one.
pub(crate) async fn subscribe(gw: &Gateway, lens: &Lens, uri: String, to: Subscribed) -> Result<(), ErrorData> {
    let shelf = lens.shelf();
    let route = shelf.resource(&uri).map_err(invalid)?;
    if !shelf.server_features(&route.server).subscribe {
        return Err(invalid(format!("MCP server {} offers no resource subscriptions", route.server)));
    }
    let key = (route.server.clone(), route.own.clone());
    let first = {
        let mut subs = lock(&gw.resources.subscribers);
        let list = subs.entry(key.clone()).or_default();
        list.retain(|s| !s.to.gone());
        let first = list.is_empty();
        if !list.iter().any(|s| s.uri == uri && s.to.same(&to)) {
            list.push(Subscriber { uri, to });
        }
        first
    };
    if first {
        if let Err(e) = gw.catalog.ask(&route.server, Ask::Subscribe, json!({"uri": route.own})).await {
            lock(&gw.resources.subscribers).remove(&key);
            return Err(failed(&route, "resources/subscribe", e));
        }
    }
    Ok(())
}

/// `resources/unsubscribe`, or a listen stream's end: the upstream is unsubscribed when its
/// last subscriber leaves.
pub(crate) async fn unsubscribe(gw: &Gateway, lens: &Lens, uri: String, to: Subscribed) -> Result<(), ErrorData> {
    let route = lens.shelf().resource(&uri).map_err(invalid)?;
    let key = (route.server.clone(), route.own.clone());
    let last = {
        let mut subs = lock(&gw.resources.subscribers);
        let Some(list) = subs.get_mut(&key) else { return Ok(()) };
        list.retain(|s| !s.to.gone() && !(s.uri == uri && s.to.same(&to)));
        let last = list.is_empty();
        if last {
            subs.remove(&key);
        }
        last
    };
    if last {
        gw.catalog.ask(&route.server, Ask::Unsubscribe, json!({"uri": route.own})).await.map_err(|e| failed(&route, "resources/unsubscribe", e))?;
    }
    Ok(())
}
