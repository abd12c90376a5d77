//! Everything the sidecar sends: responses, notifications, and its own requests to the host.
//!
//! One writer task owns stdout; everyone else hands it bodies through a channel, so frames never
//! interleave. Reverse requests (`host/executeTool`, ...) wait on a oneshot that the main loop
//! completes when the host's response arrives, matched by id.

use crate::protocol::{ErrorCode, RpcError};
use crate::transport::codec::encode_frame;
use crate::transport::record::{Direction, Recorder};
use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

enum WriterMsg {
    Body(Bytes),
    Close(oneshot::Sender<()>),
}

pub struct Outgoing {
    tx: mpsc::UnboundedSender<WriterMsg>,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
}

/// Starts the writer task over `out`.
pub fn start(mut out: crate::transport::stdio::BoxWrite, recorder: Option<Arc<Recorder>>) -> Arc<Outgoing> {
    let (tx, mut rx) = mpsc::unbounded_channel::<WriterMsg>();
    tokio::spawn(async move {
        let mut buf = BytesMut::with_capacity(64 * 1024);
        while let Some(msg) = rx.recv().await {
            let mut close = None;
            let mut push = |msg: WriterMsg, buf: &mut BytesMut| match msg {
                WriterMsg::Body(body) => {
                    if let Some(r) = &recorder {
                        r.record(Direction::Out, &body);
                    }
                    encode_frame(&body, buf);
                }
                WriterMsg::Close(ack) => close = Some(ack),
            };
            push(msg, &mut buf);
            // Batch whatever else is ready into one write.
            while let Ok(msg) = rx.try_recv() {
                push(msg, &mut buf);
            }
            if let Err(e) = out.write_all(&buf).await.and(out.flush().await) {
                tracing::warn!("stdout closed: {e}");
                return;
            }
            buf.clear();
            if let Some(ack) = close {
                let _ = ack.send(());
                return;
            }
        }
    });
    Arc::new(Outgoing { tx, pending: Mutex::new(HashMap::new()), next_id: AtomicU64::new(1) })
}

impl Outgoing {
    pub fn send_raw(&self, body: Bytes) {
        let _ = self.tx.send(WriterMsg::Body(body));
    }

    fn send_value(&self, v: &Value) {
        self.send_raw(Bytes::from(serde_json::to_vec(v).expect("JSON values serialize")));
    }

    pub fn error(&self, id: Value, e: RpcError) {
        self.send_value(&json!({"jsonrpc": "2.0", "id": id, "error": e}));
    }

    pub fn notify(&self, method: &str, params: impl serde::Serialize) {
        self.send_value(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request to the host and waits for its answer.
    pub async fn request(&self, method: &str, params: impl serde::Serialize) -> Result<Value, RpcError> {
        let id = format!("toolreg-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), tx);
        self.send_value(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let res = rx.await;
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
        res.unwrap_or_else(|_| Err(RpcError::new(ErrorCode::INTERNAL_ERROR, "the host went away")))
    }

    /// Completes a reverse request; false when nothing was waiting for that id.
    pub fn complete(&self, id: &Value, result: Result<Value, RpcError>) -> bool {
        let key = match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let waiter = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        waiter.is_some_and(|tx| tx.send(result).is_ok())
    }

    /// Flushes everything queued so far and stops the writer.
    pub async fn close(&self) {
        let (ack, done) = oneshot::channel();
        if self.tx.send(WriterMsg::Close(ack)).is_ok() {
            let _ = done.await;
        }
    }
}
