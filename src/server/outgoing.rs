//! Everything the sidecar sends: responses, notifications, and its own requests to the host.
//!
//! Frames never interleave: a sender writes its frame straight to the stdout pipe while nothing
//! is queued (holding the `backlog` lock), and otherwise queues it for the writer task, which
//! writes in order and batches. Reverse requests (`host/executeTool`, ...) wait on a oneshot that the main loop
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
    /// A framed message (header + body).
    Frame(Bytes),
    Close(oneshot::Sender<()>),
}

pub struct Outgoing {
    tx: mpsc::UnboundedSender<WriterMsg>,
    recorder: Option<Arc<Recorder>>,
    /// Whether frames are queued for the writer task; while they are, every frame queues behind
    /// them. While none are, a frame is written straight to a non-blocking stdout pipe by the
    /// sender (one thread hop less per reply); what does not fit goes to the queue.
    backlog: Mutex<bool>,
    direct_fd: Option<i32>,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
}

/// Starts the writer task over `out`. `direct_fd`: stdout's fd when it is a non-blocking pipe.
pub fn start(
    mut out: crate::transport::stdio::BoxWrite,
    direct_fd: Option<i32>,
    recorder: Option<Arc<Recorder>>,
) -> Arc<Outgoing> {
    let (tx, mut rx) = mpsc::unbounded_channel::<WriterMsg>();
    let outgoing = Arc::new(Outgoing {
        tx,
        recorder,
        backlog: Mutex::new(false),
        direct_fd,
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
    });
    let me = Arc::downgrade(&outgoing);
    tokio::spawn(async move {
        let mut buf = BytesMut::with_capacity(64 * 1024);
        while let Some(msg) = rx.recv().await {
            let mut close = None;
            let mut push = |msg: WriterMsg, buf: &mut BytesMut| match msg {
                WriterMsg::Frame(frame) => buf.extend_from_slice(&frame),
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
            // Queue drained: senders may write directly again, unless more arrived meanwhile.
            if let Some(o) = me.upgrade() {
                let mut backlog = o.backlog.lock().unwrap_or_else(|e| e.into_inner());
                if rx.is_empty() {
                    *backlog = false;
                }
            }
        }
    });
    outgoing
}

/// Writes as much of `data` as the pipe takes without blocking; returns how much.
fn write_nonblocking(fd: i32, data: &[u8]) -> usize {
    let mut done = 0;
    while done < data.len() {
        // SAFETY: the slice is valid for reads of its length; fd is stdout, open for our life.
        let n = unsafe { libc::write(fd, data[done..].as_ptr().cast(), data.len() - done) };
        if n > 0 {
            done += n as usize;
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        } else {
            break; // would block, or an error the writer task will meet and report
        }
    }
    done
}

impl Outgoing {
    pub fn send_raw(&self, body: Bytes) {
        let mut frame = BytesMut::with_capacity(body.len() + 32);
        encode_frame(&body, &mut frame);
        let mut backlog = self.backlog.lock().unwrap_or_else(|e| e.into_inner());
        // Recorded under the lock, so the transcript has the wire's order.
        if let Some(r) = &self.recorder {
            r.record(Direction::Out, &body);
        }
        let written = match (self.direct_fd, *backlog) {
            (Some(fd), false) => write_nonblocking(fd, &frame),
            _ => 0,
        };
        if written < frame.len() {
            *backlog = true;
            let _ = self.tx.send(WriterMsg::Frame(frame.freeze().slice(written..)));
        }
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
        // Removes the waiter however this future ends. Still waiting means the call was
        // cancelled or timed out: the host is told, as LSP does, and a late answer is ignored.
        struct Forget<'a>(&'a Outgoing, &'a str);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                let waiting = self.0.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(self.1);
                if waiting.is_some() {
                    self.0.notify("$/cancelRequest", json!({"id": self.1}));
                }
            }
        }
        let _forget = Forget(self, &id);
        self.send_value(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await.unwrap_or_else(|_| Err(RpcError::new(ErrorCode::INTERNAL_ERROR, "the host went away")))
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
