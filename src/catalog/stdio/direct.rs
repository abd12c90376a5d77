//! The direct path of a stdio `tools/call` (`DirectCalls`): the calling task writes its request
//! itself, with a `toolreg-N` string id, and the reader hands the response straight back to it.
//! Every line goes out whole under one lock (`LineWrite`): a call that stops waiting for a
//! blocked write leaves the rest of its line to a task of its own, never half-way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;

use crate::catalog::lock;

/// The answer to a direct call: its `result`, or its `error` object.
pub(crate) type Reply = Result<Box<RawValue>, Value>;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type SharedWriter = Arc<tokio::sync::Mutex<Option<Writer>>>;

/// The writing half of the session and the direct calls waiting for their response.
pub(crate) struct DirectCalls {
    writer: SharedWriter,
    waiting: std::sync::Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    next: AtomicU64,
    closed: AtomicBool,
    /// Takes a notification line off rmcp's path (true: taken), see `on_notice`.
    notice: std::sync::OnceLock<NoticeHook>,
}

type NoticeHook = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// Where a direct call's response will arrive.
pub(crate) struct Pending {
    pub id: String,
    pub reply: oneshot::Receiver<Reply>,
}

const DIRECT_ID_PREFIX: &str = "toolreg-";

impl DirectCalls {
    pub(super) fn new(writer: Writer) -> Self {
        DirectCalls {
            writer: Arc::new(tokio::sync::Mutex::new(Some(writer))),
            waiting: std::sync::Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            notice: std::sync::OnceLock::new(),
        }
    }

    /// Lets `hook` take notification lines as they are read, before the responses that follow
    /// them. rmcp runs each notification's handler in a task of its own while a direct call's
    /// response is handed back at once, so a server's last log message of a call could be
    /// handled after the call had ended and no longer found it (then dropped).
    pub fn on_notice(&self, hook: impl Fn(&[u8]) -> bool + Send + Sync + 'static) {
        let _ = self.notice.set(Box::new(hook));
    }

    pub(super) fn take_notice(&self, text: &[u8]) -> bool {
        self.notice.get().is_some_and(|hook| hook(text))
    }

    /// A fresh id and the receiver of its response; `None` once the server's stdout ended.
    pub fn register(&self) -> Option<Pending> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let id = format!("{DIRECT_ID_PREFIX}{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, reply) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), tx);
        // The reader may have closed between the check and the insert.
        if self.closed.load(Ordering::Acquire) {
            lock(&self.waiting).remove(&id);
            return None;
        }
        Some(Pending { id, reply })
    }

    /// Stops waiting for `id` (timed out, cancelled, or its request could not be written).
    pub fn forget(&self, id: &str) {
        lock(&self.waiting).remove(id);
    }

    /// Writes one whole line (the caller ends it with `\n`).
    pub async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut writer = self.writer.lock().await;
        let w = writer.as_mut().ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotConnected, "transport is closed"))?;
        w.write_all(line).await?;
        w.flush().await
    }

    /// Waits for the writer, then holds it for `line` (the caller ends it with `\n`). Nothing is
    /// written before `LineWrite::run`, so dropping this wait sends nothing.
    pub async fn start_line(&self, line: Vec<u8>) -> LineWrite {
        LineWrite { writer: Some(self.writer.clone().lock_owned().await), line, done: 0 }
    }

    /// Writes `line` when the writer is free, in a task of its own: for a notice (a call's
    /// cancellation) that must not hold its sender up behind a server that does not read.
    pub fn send_later(&self, line: Vec<u8>) {
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let mut rest = LineWrite { writer: Some(writer.lock_owned().await), line, done: 0 };
            let _ = rest.run().await;
        });
    }

    /// The response for a waiting direct call, if `text` is one. Called with every line read.
    pub(super) fn deliver(&self, text: &[u8]) -> bool {
        #[derive(Deserialize)]
        struct Probe<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            method: Option<serde::de::IgnoredAny>,
            result: Option<Box<RawValue>>,
            error: Option<Value>,
        }
        // Only a line that names one of our ids is parsed twice.
        if lock(&self.waiting).is_empty() || memchr::memmem::find(text, DIRECT_ID_PREFIX.as_bytes()).is_none() {
            return false;
        }
        let Ok(probe) = serde_json::from_slice::<Probe>(text) else { return false };
        let Some(Ok(id)) = probe.id.map(|raw| serde_json::from_str::<String>(raw.get())) else { return false };
        // A request from the server that happens to use such an id is not an answer.
        if !id.starts_with(DIRECT_ID_PREFIX) || probe.method.is_some() {
            return false;
        }
        let reply = match (probe.result, probe.error) {
            (Some(r), None) => Ok(r),
            (None, Some(e)) => Err(e),
            _ => Err(json!({"code": -32603, "message": "the server's response has neither a result nor an error"})),
        };
        match lock(&self.waiting).remove(&id) {
            Some(tx) => {
                let _ = tx.send(reply);
            }
            None => tracing::debug!(%id, "response to a call no longer waited for; dropped"),
        }
        true
    }

    /// An error for a waiting direct call (an oversized response).
    pub(super) fn deliver_error(&self, id: &Value, error: Value) -> bool {
        let Some(id) = id.as_str() else { return false };
        match lock(&self.waiting).remove(id) {
            Some(tx) => {
                let _ = tx.send(Err(error));
                true
            }
            None => false,
        }
    }

    /// The transport closes: the server sees EOF on its stdin.
    pub(super) async fn close_writing(&self) -> std::io::Result<()> {
        let writer = self.writer.lock().await.take();
        match writer {
            Some(mut w) => w.shutdown().await,
            None => Ok(()),
        }
    }

    /// No more responses will come: every waiting call fails (its sender is dropped).
    pub(super) fn close_reading(&self) {
        self.closed.store(true, Ordering::Release);
        lock(&self.waiting).clear();
    }
}

/// One line on its way out, holding the writer. `run` is cancel-safe: the bytes written so far
/// are counted here, so waiting can stop at any point; a line begun and not finished is then
/// finished in a task of its own (`stop_waiting`, or on drop), never left half-way.
pub(crate) struct LineWrite {
    writer: Option<tokio::sync::OwnedMutexGuard<Option<Writer>>>,
    line: Vec<u8>,
    done: usize,
}

impl LineWrite {
    /// Writes the rest of the line and flushes. After an error the writer is let go unfinished:
    /// the pipe is broken, there is no reader left to confuse.
    pub async fn run(&mut self) -> std::io::Result<()> {
        let result = self.write_rest().await;
        if result.is_err() {
            self.writer = None;
        }
        result
    }

    async fn write_rest(&mut self) -> std::io::Result<()> {
        let closed = || std::io::Error::new(std::io::ErrorKind::NotConnected, "transport is closed");
        let w = self.writer.as_mut().ok_or_else(closed)?.as_mut().ok_or_else(closed)?;
        while self.done < self.line.len() {
            // `write` is cancel-safe: bytes are written and counted in the same poll.
            match w.write(&self.line[self.done..]).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => self.done += n,
            }
        }
        w.flush().await
    }

    /// The caller stops waiting. A line none of which was written is dropped unsent (false);
    /// otherwise it may reach the server (true): its rest is written in a task of its own,
    /// then `then`, under the same hold of the writer so that nothing comes between.
    pub fn stop_waiting(mut self, then: Vec<u8>) -> bool {
        if self.done == 0 {
            return false;
        }
        self.finish_later(Some(then));
        true
    }

    fn finish_later(&mut self, then: Option<Vec<u8>>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let mut rest = LineWrite { writer: self.writer.take(), line: std::mem::take(&mut self.line), done: self.done };
        runtime.spawn(async move {
            if rest.run().await.is_ok() {
                if let Some(then) = then {
                    (rest.line, rest.done) = (then, 0);
                    let _ = rest.run().await;
                }
            }
        });
    }
}

impl Drop for LineWrite {
    fn drop(&mut self) {
        // The call's future itself was dropped mid-line.
        if self.writer.is_some() && self.done > 0 && self.done < self.line.len() {
            self.finish_later(None);
        }
    }
}

