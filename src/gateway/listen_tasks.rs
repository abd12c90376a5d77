//! The task ids a 2026-07-28 `subscriptions/listen` stream asks about (SEP-2663 adds `taskIds`
//! to the stream's filter, `params.notifications`): rmcp 3.11's `SubscriptionFilter` has no such
//! field and drops it before the handler sees the request, so the HTTP face reads it off the
//! body first and hands it on in the request's extensions, where `listen` finds it beside
//! rmcp's `http::request::Parts`. Over stdio no stream names any: none is told of tasks.

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use serde_json::Value;

/// At most this many task ids are followed per stream; the rest are not told of.
pub const MAX_IDS: usize = 100;
/// A listen request's body larger than this reaches rmcp empty, refused as a bad body is.
const MAX_BODY: usize = 256 * 1024;

/// The ids a listen request named, as it named them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskIds(pub Vec<String>);

pub type Body = Either<Incoming, Full<Bytes>>;

/// `req` with its `TaskIds` in its extensions when it is a `subscriptions/listen` (by its
/// `Mcp-Method` header, which 2026-07-28 requires); any other request passes untouched.
pub async fn read(req: hyper::Request<Incoming>) -> hyper::Request<Body> {
    let listen = req.headers().get("mcp-method").is_some_and(|m| m.as_bytes() == b"subscriptions/listen");
    if !listen || req.method() != hyper::Method::POST {
        return req.map(Either::Left);
    }
    let (mut parts, body) = req.into_parts();
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        // Unreadable or too large: rmcp refuses the empty body as it refuses any bad one.
        Err(_) => Bytes::new(),
    };
    if let Some(ids) = serde_json::from_slice::<Value>(&bytes).ok().as_ref().and_then(task_ids) {
        parts.extensions.insert(ids);
    }
    hyper::Request::from_parts(parts, Either::Right(Full::new(bytes)))
}

/// `params.notifications.taskIds` of a listen request: strings only, at most `MAX_IDS`.
fn task_ids(request: &Value) -> Option<TaskIds> {
    let ids = request.pointer("/params/notifications/taskIds")?.as_array()?;
    Some(TaskIds(ids.iter().filter_map(Value::as_str).take(MAX_IDS).map(str::to_owned).collect()))
}

/// The ids the listen request of `context` named (HTTP only).
pub fn asked(context: &rmcp::service::RequestContext<rmcp::service::RoleServer>) -> Vec<String> {
    let parts = context.extensions.get::<http::request::Parts>();
    parts.and_then(|p| p.extensions.get::<TaskIds>()).map(|t| t.0.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listen_filters_task_ids_are_read_strings_only_and_bounded() {
        let listen = json!({"method": "subscriptions/listen", "params": {"notifications": {"taskIds": ["a", 7, "b"]}}});
        assert_eq!(task_ids(&listen), Some(TaskIds(vec!["a".into(), "b".into()])));
        let many: Vec<String> = (0..MAX_IDS + 5).map(|i| i.to_string()).collect();
        let listen = json!({"params": {"notifications": {"taskIds": many}}});
        assert_eq!(task_ids(&listen).unwrap().0.len(), MAX_IDS);
        assert_eq!(task_ids(&json!({"params": {"notifications": {"toolsListChanged": true}}})), None);
    }
}
