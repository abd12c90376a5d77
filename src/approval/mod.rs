//! Approvals: a gated call waits here for the host's answer.
//!
//! Each call that needs approval opens one `Pending` with a fresh id; the host answers by id.
//! No answer within the timeout, a cancelled call, or a dropped wait all mean "not approved":
//! the call never runs. Concurrent calls each wait on their own id. An approval the user
//! asks to be remembered becomes a grant (`grants.rs`), which spares later calls the question.

pub mod grants;

pub use grants::{Grant, Grants, Lasts, Remember};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// `remember`: how long the approval lasts beyond this call (only an approval is kept).
    Approve { remember: Remember },
    Deny { reason: Option<String> },
}

impl Decision {
    /// Approved for this call only.
    pub const ONCE: Decision = Decision::Approve { remember: Remember::Once };
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Approved { remember: Remember },
    Denied { reason: Option<String> },
    TimedOut(Duration),
    Cancelled,
}

#[derive(Default)]
pub struct Approvals {
    pending: Mutex<HashMap<String, (oneshot::Sender<Decision>, CancellationToken)>>,
    seq: AtomicU64,
}

/// An open approval; dropping it withdraws the request.
pub struct Pending {
    pub id: String,
    rx: oneshot::Receiver<Decision>,
    owner: Arc<Approvals>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.owner.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

impl Approvals {
    /// `cancel` is the waiting call's token: once it is cancelled, an answer is refused.
    pub fn open(self: &Arc<Self>, cancel: &CancellationToken) -> Pending {
        let id = format!("approval-{}", self.seq.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), (tx, cancel.clone()));
        Pending { id, rx, owner: self.clone() }
    }

    /// Delivers the host's answer; false when no call waits for that id (unknown, answered,
    /// timed out or cancelled).
    pub fn respond(&self, id: &str, decision: Decision) -> bool {
        let waiter = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        waiter.is_some_and(|(tx, cancel)| !cancel.is_cancelled() && tx.send(decision).is_ok())
    }
}

impl Pending {
    pub async fn wait(mut self, timeout: Duration, cancel: &CancellationToken) -> Outcome {
        tokio::select! {
            // A call cancelled before (or while) its answer arrived is not approved.
            biased;
            _ = cancel.cancelled() => Outcome::Cancelled,
            d = &mut self.rx => match d {
                Ok(Decision::Approve { remember }) => Outcome::Approved { remember },
                Ok(Decision::Deny { reason }) => Outcome::Denied { reason },
                Err(_) => Outcome::Cancelled,
            },
            _ = tokio::time::sleep(timeout) => Outcome::TimedOut(timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_call_waits_for_its_own_answer() {
        let a = Arc::new(Approvals::default());
        let never = CancellationToken::new();
        let (p1, p2) = (a.open(&never), a.open(&never));
        let (id1, id2) = (p1.id.clone(), p2.id.clone());
        assert!(a.respond(&id2, Decision::Deny { reason: Some("no".into()) }));
        assert!(a.respond(&id1, Decision::ONCE));
        assert!(!a.respond(&id1, Decision::ONCE), "answered twice");
        assert_eq!(p1.wait(DEFAULT_TIMEOUT, &never).await, Outcome::Approved { remember: Remember::Once });
        assert_eq!(p2.wait(DEFAULT_TIMEOUT, &never).await, Outcome::Denied { reason: Some("no".into()) });
    }

    #[tokio::test]
    async fn timeout_and_cancel_are_not_approval() {
        let a = Arc::new(Approvals::default());
        let never = CancellationToken::new();
        let p = a.open(&never);
        let id = p.id.clone();
        assert_eq!(p.wait(Duration::from_millis(10), &never).await, Outcome::TimedOut(Duration::from_millis(10)));
        assert!(!a.respond(&id, Decision::ONCE), "a late answer finds nobody");
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(a.open(&cancel).wait(DEFAULT_TIMEOUT, &cancel).await, Outcome::Cancelled);
    }
}
