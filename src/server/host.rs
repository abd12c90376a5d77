//! The host as the core sees it, over the sidecar's reverse messages: invoke's `HostPort`
//! (`Host`), the catalog's `AskHost` for the questions MCP servers ask mid-call (`host/elicit`,
//! `host/sample`, `host/roots`), and embed's `Embedder` (`host/embed`). The MCP side of a call speaks no host
//! protocol: it is `upstream::Mcp`, which the gateway runs calls through too.

use super::outgoing::Outgoing;
use crate::catalog::{AskHost, ElicitParams, ElicitResult, RootsParams, RootsResult, SampleParams};
use crate::service::{ApprovalRequest, HostPort};
use crate::protocol::{
    ApprovalRequestNotification, ApprovalWithdrawn, HostElicit, HostEmbed, HostExecuteTool, HostRepairToolCall, HostRoots, HostSample, Notification, Request,
};
use futures::future::BoxFuture;
use std::sync::Arc;
use serde_json::{json, Value};
use std::time::Duration;

pub struct Host<'a> {
    pub out: &'a Outgoing,
    pub call_timeout: Duration,
}

impl HostPort for Host<'_> {
    fn approval_request(&self, mut req: ApprovalRequest) {
        // The user reads the arguments: hidden characters the model sent are shown (`\u{202E}`).
        crate::invisible::show(&mut req.arguments);
        self.out.notify(ApprovalRequestNotification::METHOD, req);
    }

    fn approval_withdrawn(&self, approval_id: &str, reason: &str) {
        self.out.notify(ApprovalWithdrawn::METHOD, json!({"approvalId": approval_id, "reason": reason}));
    }

    fn progress(&self, token: &str, value: Value) {
        self.out.notify("$/progress", json!({"token": token, "value": value}));
    }

    async fn execute_tool(&self, name: &str, arguments: &Value, call_id: &str) -> Result<Value, String> {
        let req = self.out.request(HostExecuteTool::METHOD, json!({"name": name, "arguments": arguments, "callId": call_id}));
        match tokio::time::timeout(self.call_timeout, req).await {
            Ok(Ok(v)) if v.is_object() => Ok(v),
            Ok(Ok(v)) => Err(format!("the host answered {v} instead of a CallToolResult")),
            Ok(Err(e)) => Err(e.message),
            Err(_) => Err(format!("no answer within {} ms", self.call_timeout.as_millis())),
        }
    }

    async fn repair_tool_call(&self, name: &str, schema: &Value, arguments: &Value, error: &str) -> Result<Option<Value>, String> {
        let params = json!({"name": name, "inputSchema": schema, "arguments": arguments, "error": error});
        match tokio::time::timeout(self.call_timeout, self.out.request(HostRepairToolCall::METHOD, params)).await {
            Ok(Ok(Value::Null)) => Ok(None),
            Ok(Ok(v)) => v.get("arguments").cloned().map(Some).ok_or_else(|| format!("the host answered {v} without arguments")),
            Ok(Err(e)) => Err(e.message),
            Err(_) => Err(format!("no answer within {} ms", self.call_timeout.as_millis())),
        }
    }
}

/// The catalog's questions as reverse requests. The catalog bounds the wait and drops the
/// future to withdraw a question, which sends the host `$/cancelRequest` (`Outgoing::request`).
/// Answers are parsed here and never logged: they are what the user typed.
pub struct Questions(pub Arc<Outgoing>);

impl AskHost for Questions {
    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, String>> {
        let out = self.0.clone();
        Box::pin(async move {
            let v = out.request(HostElicit::METHOD, params).await.map_err(|e| e.message)?;
            serde_json::from_value(v).map_err(|e| format!("the host's answer to {} is not an ElicitResult: {e}", HostElicit::METHOD))
        })
    }

    fn sample(&self, params: SampleParams) -> BoxFuture<'static, Result<Value, String>> {
        let out = self.0.clone();
        Box::pin(async move { out.request(HostSample::METHOD, params).await.map_err(|e| e.message) })
    }

    fn roots(&self, params: RootsParams) -> BoxFuture<'static, Result<RootsResult, String>> {
        let out = self.0.clone();
        Box::pin(async move {
            let v = out.request(HostRoots::METHOD, params).await.map_err(|e| e.message)?;
            serde_json::from_value(v).map_err(|e| format!("the host's answer to {} is not a RootsResult: {e}", HostRoots::METHOD))
        })
    }
}

/// tool_search's embeddings from the host (`host/embed`), for `search.embeddings.kind: host`.
pub struct HostEmbedder(pub Arc<Outgoing>);

impl crate::service::Embedder for HostEmbedder {
    fn embed(&self, texts: Vec<String>, purpose: crate::service::Purpose) -> BoxFuture<'static, Result<crate::service::Embedded, String>> {
        let out = self.0.clone();
        let purpose = match purpose {
            crate::service::Purpose::Query => crate::protocol::EmbedPurpose::Query,
            crate::service::Purpose::Document => crate::protocol::EmbedPurpose::Document,
        };
        Box::pin(async move {
            let v = out.request(HostEmbed::METHOD, crate::protocol::EmbedParams { texts, purpose }).await.map_err(|e| format!("{} failed: {}", HostEmbed::METHOD, e.message))?;
            let r: crate::protocol::EmbedResult =
                serde_json::from_value(v).map_err(|e| format!("the host's answer to {} is not an EmbedResult: {e}", HostEmbed::METHOD))?;
            Ok(crate::service::Embedded { vectors: r.vectors, model: format!("host:{}", r.model) })
        })
    }

    /// Documents per `host/embed`: embedding APIs take batches of this order.
    fn batch(&self) -> usize {
        64
    }

    fn kind(&self) -> &'static str {
        "host"
    }
}
