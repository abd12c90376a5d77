//! The thread a local model runs on: at a lower priority, so neither the runtime's threads nor
//! the work pool wait for it; a query's text goes ahead of queued documents. One thread a model,
//! the model loaded there (`onnx.rs`, `use_m3.rs`), one load at a time (`load_turn.rs`).

use super::load_turn::Ticket;
use super::{Embedded, Purpose};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use tokio::sync::oneshot;

/// Below the work pool's nice 3: embedding the catalog is the least urgent work there is.
const NICE: i32 = 10;

/// A loaded model: texts in, one vector a text out, and the id its vectors are kept under.
pub trait LocalModel {
    fn id(&self) -> &str;
    fn embed(&mut self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, String>;
}

type Reply = oneshot::Sender<Result<Embedded, String>>;

#[derive(Default)]
struct Jobs {
    queue: VecDeque<(Vec<String>, Purpose, Reply)>,
    closed: bool,
}

pub struct Worker {
    jobs: Arc<(Mutex<Jobs>, Condvar)>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.jobs.0.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.jobs.1.notify_all();
    }
}

impl Worker {
    /// Starts the thread `name`; `load` runs there. A model that fails to load (or panics
    /// loading) fails every request with the reason: the search stays lexical.
    pub fn start<M: LocalModel + 'static>(name: &str, load: impl FnOnce() -> Result<M, String> + Send + 'static) -> Worker {
        let jobs: Arc<(Mutex<Jobs>, Condvar)> = Arc::default();
        let theirs = jobs.clone();
        let turn = Ticket::take();
        let spawned = std::thread::Builder::new().name(name.into()).spawn(move || {
            crate::os::lower_thread_priority(NICE);
            turn.wait();
            let model = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)).unwrap_or_else(|_| Err("the embedding model panicked while loading".into()));
            drop(turn);
            match &model {
                Ok(m) => tracing::info!(model = %m.id(), "embedding model loaded"),
                Err(e) => tracing::error!(error = %e, "embedding model not loaded; tool_search stays lexical"),
            }
            let mut model = model;
            loop {
                let (texts, purpose, reply) = {
                    let mut j = theirs.0.lock().unwrap_or_else(|e| e.into_inner());
                    loop {
                        if let Some(job) = j.queue.pop_front() {
                            break job;
                        }
                        if j.closed {
                            return;
                        }
                        j = theirs.1.wait(j).unwrap_or_else(|e| e.into_inner());
                    }
                };
                let out = match &mut model {
                    Ok(m) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.embed(&texts, purpose)))
                        .unwrap_or_else(|_| Err("the embedding model panicked".into()))
                        .map(|vectors| Embedded { vectors, model: m.id().to_string() }),
                    Err(e) => Err(e.clone()),
                };
                let _ = reply.send(out);
            }
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the embedding thread");
        }
        Worker { jobs }
    }

    /// Embeds now, blocking: for tests and benchmarks that use the model directly.
    pub fn embed_blocking(&self, texts: Vec<String>) -> Result<Embedded, String> {
        let rx = self.submit(texts, Purpose::Document);
        rx.blocking_recv().unwrap_or_else(|_| Err("the embedding thread is gone".into()))
    }

    /// Embeds a query now, blocking: for tests and benchmarks that use the model directly.
    pub fn query_blocking(&self, text: String) -> Result<Embedded, String> {
        let rx = self.submit(vec![text], Purpose::Query);
        rx.blocking_recv().unwrap_or_else(|_| Err("the embedding thread is gone".into()))
    }

    /// Queues a job (a query ahead of every waiting one); the answer comes on the receiver.
    pub fn submit(&self, texts: Vec<String>, purpose: Purpose) -> oneshot::Receiver<Result<Embedded, String>> {
        let (tx, rx) = oneshot::channel();
        let mut j = self.jobs.0.lock().unwrap_or_else(|e| e.into_inner());
        if purpose == Purpose::Query {
            j.queue.push_front((texts, purpose, tx));
        } else {
            j.queue.push_back((texts, purpose, tx));
        }
        self.jobs.1.notify_one();
        rx
    }

    /// As `submit`, for `Embedder::embed`.
    pub fn embed(&self, texts: Vec<String>, purpose: Purpose) -> futures::future::BoxFuture<'static, Result<Embedded, String>> {
        let rx = self.submit(texts, purpose);
        Box::pin(async move { rx.await.unwrap_or_else(|_| Err("the embedding thread is gone".into())) })
    }
}
