//! A stdio call's log messages (`notifications/message`), forwarded to its caller in the order
//! the server wrote them and all before the call's own result.
//!
//! rmcp hands each notification to its handler in a task of its own, while a direct call's
//! response comes straight back from the reader (`stdio::DirectCalls`), so a server's last log
//! line before its response could be handled after the call had ended, find no call in
//! flight, and be dropped. Here the reader queues the line for its call before it reads the
//! response; the call forwards what is queued while it waits and drains the rest first.

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::elicit::{AskHost, InFlight};
use super::lock;

/// The queue of one call, held while it runs (its sender sits in the call's `CallOrigin`).
pub(crate) struct CallLogs {
    call_id: String,
    host: Arc<dyn AskHost>,
    queue: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
}

impl CallLogs {
    /// A queue for the call `call_id` and the sender the reader puts its lines in.
    pub fn new(call_id: &str, host: Arc<dyn AskHost>) -> (Self, mpsc::UnboundedSender<Value>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (CallLogs { call_id: call_id.to_owned(), host, queue: tokio::sync::Mutex::new(rx) }, tx)
    }

    /// Waits for `reply`, forwarding log messages as they come; those read before the reply
    /// are forwarded before it is returned.
    pub async fn forward_until<T>(&self, mut reply: oneshot::Receiver<T>) -> Result<T, oneshot::error::RecvError> {
        let mut queue = self.queue.lock().await;
        loop {
            tokio::select! {
                biased;
                r = &mut reply => {
                    while let Ok(message) = queue.try_recv() {
                        self.host.log(&self.call_id, message).await;
                    }
                    return r;
                }
                Some(message) = queue.recv() => self.host.log(&self.call_id, message).await,
            }
        }
    }
}

/// The reader's hook (`DirectCalls::on_notice`): a `notifications/message` line goes to the
/// queue of the sole call in flight, when it has one (true); anything else is left to rmcp.
pub(crate) fn take(in_flight: &Mutex<InFlight>, text: &[u8]) -> bool {
    if memchr::memmem::find(text, b"notifications/message").is_none() {
        return false;
    }
    #[derive(Deserialize)]
    struct Notice {
        method: String,
        #[serde(default)]
        params: Value,
        id: Option<serde::de::IgnoredAny>,
    }
    let Ok(notice) = serde_json::from_slice::<Notice>(text) else { return false };
    if notice.method != "notifications/message" || notice.id.is_some() {
        return false;
    }
    let Some(queue) = lock(in_flight).find(None).and_then(|call| call.logs) else { return false };
    queue.send(notice.params).is_ok()
}
