//! Everything the sidecar sends: responses, notifications, and its own requests to the host.
//!
//! Frames never interleave: a sender writes its frame straight to the stdout pipe while nothing
//! is queued (holding the `backlog` lock), and otherwise queues it for the writer task, which
//! writes in order and batches. Reverse requests (`host/executeTool`, ...) wait on a oneshot that the main loop
//! completes when the host's response arrives, matched by id.
//!
//! The queue is bounded by bytes, with backpressure rather than loss: while more than
//! `MAX_QUEUED_BYTES` wait (the host is not reading stdout), the main loop stops reading stdin
//! (`writable`) and the catalog's notifications wait. What can still be queued meanwhile is
//! bounded: replies to the requests already in flight, and their notifications, except
//! `$/progress`, which is dropped while the queue is full (it is advisory).

use super::message::{self, Id, IdKey};
use crate::protocol::error::clip;
use crate::protocol::{ErrorCode, OutgoingStats, RpcError};
use crate::transport::codec::encode_frame;
use crate::transport::record::{Direction, Recorder};
use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot, Notify};

/// Above this many bytes waiting for stdout, the main loop stops reading stdin.
pub const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// The writer task joins queued frames into one write up to this size.
const BATCH_BYTES: usize = 256 * 1024;

enum WriterMsg {
    /// A framed message (header + body).
    Frame(Bytes),
    Close(oneshot::Sender<()>),
}

pub struct Outgoing {
    // Unbounded as a channel, bounded in bytes by `backlog.queued` and `writable`.
    tx: mpsc::UnboundedSender<WriterMsg>,
    recorder: Option<Arc<Recorder>>,
    /// Bytes queued for the writer task; while any are, every frame queues behind them. While
    /// none are, a frame is written straight to a non-blocking stdout pipe by the sender (one
    /// thread hop less per reply); what does not fit goes to the queue.
    backlog: Mutex<Backlog>,
    /// Signalled when the queue falls to `MAX_QUEUED_BYTES` or below.
    drained: Notify,
    direct_fd: Option<i32>,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct Backlog {
    queued: usize,
    peak: usize,
    /// stdout failed (the host is gone): frames are dropped and nothing waits for room.
    closed: bool,
    /// `shutdown` was answered: notifications (a server's status, progress) are dropped, so
    /// the host sees nothing after the answer but what it asks for.
    quiet: bool,
}

/// What a frame is, for `Backlog::quiet`.
#[derive(PartialEq)]
enum Kind {
    Frame,
    Notification,
    ShutdownAnswer,
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
        backlog: Mutex::default(),
        drained: Notify::new(),
        direct_fd,
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
    });
    let me = Arc::downgrade(&outgoing);
    // Ends at `close`, or when stdout fails; `serve` awaits it in `close`.
    tokio::spawn(async move {
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut next = rx.recv().await;
        while let Some(msg) = next.take() {
            // A frame of a batch's size or more is written as it is, not copied into `buf`
            // (which would keep the largest response's size for the process's life).
            let mut whole: Option<Bytes> = None;
            let push = |msg: WriterMsg, buf: &mut BytesMut, whole: &mut Option<Bytes>| match msg {
                WriterMsg::Frame(frame) if buf.is_empty() && frame.len() >= BATCH_BYTES => {
                    *whole = Some(frame);
                    None
                }
                WriterMsg::Frame(frame) => {
                    buf.extend_from_slice(&frame);
                    None
                }
                WriterMsg::Close(ack) => Some(ack),
            };
            let mut close = push(msg, &mut buf, &mut whole);
            // Batch whatever else is ready into one write, up to a size.
            while whole.is_none() && buf.len() < BATCH_BYTES && close.is_none() {
                match rx.try_recv() {
                    Ok(msg) => close = push(msg, &mut buf, &mut whole),
                    Err(_) => break,
                }
            }
            let data: &[u8] = whole.as_deref().unwrap_or(&buf[..]);
            let sent = data.len();
            if let Err(e) = out.write_all(data).await.and(out.flush().await) {
                tracing::warn!("stdout closed: {e}");
                if let Some(o) = me.upgrade() {
                    o.backlog.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
                    o.drained.notify_waiters();
                }
                return;
            }
            if let Some(o) = me.upgrade() {
                // Queue drained: senders may write directly again.
                let mut backlog = o.backlog.lock().unwrap_or_else(|e| e.into_inner());
                backlog.queued = backlog.queued.saturating_sub(sent);
                if backlog.queued <= MAX_QUEUED_BYTES {
                    o.drained.notify_waiters();
                }
            }
            buf.clear();
            if buf.capacity() > 2 * BATCH_BYTES {
                // A big frame joined a batch: give its room back.
                buf = BytesMut::with_capacity(64 * 1024);
            }
            if let Some(ack) = close {
                let _ = ack.send(());
                return;
            }
            next = rx.recv().await;
        }
    });
    outgoing
}

/// Writes as much of `data` as the pipe takes without blocking; returns how much.
#[cfg(not(unix))]
fn write_nonblocking(_fd: i32, _data: &[u8]) -> usize {
    0 // no direct fd off Unix (transport::stdio gives none): the writer task writes everything
}

/// Writes as much of `data` as the pipe takes without blocking; returns how much.
#[cfg(unix)]
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
        self.send(body, Kind::Frame);
    }

    /// The answer to `shutdown`: no notification follows it (set under the writer's lock, so
    /// none already past its check lands after the answer).
    pub fn send_shutdown_answer(&self, body: Bytes) {
        self.send(body, Kind::ShutdownAnswer);
    }

    fn send(&self, body: Bytes, kind: Kind) {
        if body.len() >= crate::os::TRIM_AFTER_BYTES {
            // Its serialisation buffers (and this frame, once written) are freed soon after.
            crate::os::release_freed_memory_soon();
        }
        let mut frame = BytesMut::with_capacity(body.len() + 32);
        encode_frame(&body, &mut frame);
        let mut backlog = self.backlog.lock().unwrap_or_else(|e| e.into_inner());
        if backlog.closed || (kind == Kind::Notification && backlog.quiet) {
            return;
        }
        backlog.quiet |= kind == Kind::ShutdownAnswer;
        // Recorded under the lock, so the transcript has the wire's order.
        if let Some(r) = &self.recorder {
            r.record(Direction::Out, &body);
        }
        let written = match (self.direct_fd, backlog.queued) {
            (Some(fd), 0) => write_nonblocking(fd, &frame),
            _ => 0,
        };
        if written < frame.len() {
            backlog.queued += frame.len() - written;
            backlog.peak = backlog.peak.max(backlog.queued);
            let _ = self.tx.send(WriterMsg::Frame(frame.freeze().slice(written..)));
        }
    }

    fn send_value(&self, v: &Value) {
        self.send_raw(Bytes::from(serde_json::to_vec(v).expect("JSON values serialize")));
    }

    /// An error response; `id` is `None` when the message's id could not be read.
    pub fn error(&self, id: Option<&Id>, e: RpcError) {
        self.send_raw(message::failure(id, &e));
    }

    pub fn notify(&self, method: &str, params: impl serde::Serialize) {
        if method == "$/progress" && self.is_full() {
            tracing::debug!("stdout queue full: $/progress dropped");
            return;
        }
        let v = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send(Bytes::from(serde_json::to_vec(&v).expect("JSON values serialize")), Kind::Notification);
    }

    fn is_full(&self) -> bool {
        let b = self.backlog.lock().unwrap_or_else(|e| e.into_inner());
        b.queued > MAX_QUEUED_BYTES && !b.closed
    }

    /// Waits while more than `MAX_QUEUED_BYTES` wait for the host to read stdout.
    pub async fn writable(&self) {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a drain between the two is not missed.
            drained.as_mut().enable();
            if !self.is_full() {
                return;
            }
            drained.await;
        }
    }

    pub fn stats(&self) -> OutgoingStats {
        let b = self.backlog.lock().unwrap_or_else(|e| e.into_inner());
        OutgoingStats { queued_bytes: b.queued, peak_queued_bytes: b.peak, max_queued_bytes: MAX_QUEUED_BYTES }
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

    /// Completes a reverse request; false when nothing was waiting for that id (our ids are
    /// strings). The result is parsed here, once, for the one caller that waits for it.
    pub fn complete(&self, id: &Id, result: Result<Bytes, RpcError>) -> bool {
        let IdKey::Str(key) = id.key() else { return false };
        let Some(waiter) = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&**key) else { return false };
        let result = result.and_then(|body| {
            serde_json::from_slice(&body).map_err(|e| RpcError::new(ErrorCode::INTERNAL_ERROR, format!("the host's result is not JSON: {}", clip(&e.to_string()))))
        });
        waiter.send(result).is_ok()
    }

    /// Flushes everything queued so far and stops the writer.
    pub async fn close(&self) {
        let (ack, done) = oneshot::channel();
        if self.tx.send(WriterMsg::Close(ack)).is_ok() {
            let _ = done.await;
        }
    }
}
