//! A server's session slot: `Idle`, `Connecting` (one connect in its own task, every caller
//! awaiting the same shared future outside the lock) or `Live`; a connect that a restart or a
//! stop overtook is closed, and a child that dies turns the server to Error at once.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use futures::future::{BoxFuture, FutureExt, Shared as SharedFuture};
use tokio_util::sync::CancellationToken;

use super::Server;
use crate::catalog::client::{self, Connection};
use crate::catalog::error::CatalogError;
use crate::catalog::lock;
use crate::catalog::status::{CatalogEvent, ServerState};

pub(super) type ConnectFuture = SharedFuture<BoxFuture<'static, Result<Arc<Connection>, CatalogError>>>;

/// The session slot. A std mutex held for a few assignments: the connect itself runs in its
/// own task, awaited through `Connecting`'s shared future, outside the lock.
pub(super) enum Session {
    Idle,
    /// `abort` ends the connect early (restart, stop); it is a child of the server's stop token.
    Connecting { fut: ConnectFuture, abort: CancellationToken },
    Live(Arc<Connection>),
}

impl Server {
    /// The live session, connecting if there is none (bounded by the connect timeout). Every
    /// caller during a connect awaits the same one; no lock is held while it runs, so a
    /// restart, a stop or a status read never waits behind a slow server's handshake.
    pub async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, CatalogError> {
        let pending = {
            let mut slot = lock(&self.session);
            match &*slot {
                Session::Live(conn) if conn.is_alive() => return Ok(conn.clone()),
                Session::Connecting { fut, .. } => fut.clone(),
                Session::Live(_) | Session::Idle => {
                    if let Session::Live(old) = std::mem::replace(&mut *slot, Session::Idle) {
                        let grace = self.shared.opts.stop_grace;
                        tokio::spawn(async move { old.close(grace).await });
                    }
                    if self.stop.is_cancelled() {
                        return Err(CatalogError::NotConnected("server stopped".into()));
                    }
                    let abort = self.stop.child_token();
                    let fut = self.start_connect(abort.clone());
                    *slot = Session::Connecting { fut: fut.clone(), abort };
                    fut
                }
            }
        };
        pending.await
    }

    /// Spawn one connect; the caller stores the returned future as `Session::Connecting`
    /// (it holds the slot's lock meanwhile, so the task cannot finish before that).
    fn start_connect(self: &Arc<Self>, abort: CancellationToken) -> ConnectFuture {
        {
            let mut d = lock(&self.data);
            if d.state != Some(ServerState::Connecting) {
                d.state = Some(ServerState::Connecting);
                self.publish(&mut d, false);
            }
        }
        let weak: Weak<Server> = Arc::downgrade(self);
        let on_list_changed = Box::new(move || {
            if let Some(s) = weak.upgrade() {
                s.on_list_changed();
            }
        });
        let (events, server_id) = (self.shared.events.clone(), self.id.clone());
        let on_updated = Box::new(move |uri| {
            let _ = events.send(CatalogEvent::ResourceUpdated { server_id: server_id.clone(), uri });
        });
        let (tx, rx) = tokio::sync::oneshot::channel();
        let me = self.clone();
        let fut: ConnectFuture = async move {
            rx.await.unwrap_or_else(|_| Err(CatalogError::NotConnected("connect abandoned".into())))
        }
        .boxed()
        .shared();
        let mine = fut.clone();
        tokio::spawn(async move {
            let opts = &me.shared.opts;
            let config = me.config();
            let timeout = config.timeouts.connect(opts.connect_timeout);
            let connected = tokio::select! {
                r = client::connect(&config, timeout, opts.max_message_bytes, on_list_changed, on_updated, me.shared.asker(), me.auth.clone(), me.legacy.load(Ordering::Relaxed), &opts.spawn) => r,
                _ = abort.cancelled() => Err(("connect abandoned (restart or stop)".into(), None)),
            };
            me.legacy.store(connected.as_ref().is_ok_and(|c| c.has_initialize()), Ordering::Relaxed);
            let result = me.finish_connect(&mine, connected);
            let _ = tx.send(result);
        });
        fut
    }

    /// Store a finished connect, unless a restart or stop replaced it meanwhile.
    fn finish_connect(
        self: &Arc<Self>,
        mine: &ConnectFuture,
        connected: Result<Connection, client::ConnectFailure>,
    ) -> Result<Arc<Connection>, CatalogError> {
        let mut slot = lock(&self.session);
        let current = matches!(&*slot, Session::Connecting { fut, .. } if fut.ptr_eq(mine));
        let conn = match connected {
            Ok(c) => Arc::new(c),
            Err((e, diagnosis)) => {
                if current {
                    *slot = Session::Idle;
                    // Kept until a connect succeeds: the status says why it does not start.
                    lock(&self.data).diagnosis = diagnosis;
                }
                return Err(CatalogError::NotConnected(e));
            }
        };
        if !current || self.stop.is_cancelled() {
            drop(slot);
            let grace = self.shared.opts.stop_grace;
            tokio::spawn(async move { conn.close(grace).await });
            return Err(CatalogError::NotConnected("the connection was replaced (restart or stop)".into()));
        }
        *slot = Session::Live(conn.clone());
        drop(slot);
        lock(&self.data).diagnosis = None;
        self.watch_exit(&conn);
        // Connected outside a refresh (a call): the status is Connecting and a restarted
        // server may have other tools, so list them now.
        if lock(&self.data).in_flight.is_none() {
            self.start_refresh(true);
        }
        Ok(conn)
    }

    /// Take the session out of the slot (aborting a connect in progress).
    pub(super) fn take_session(&self) -> Option<Arc<Connection>> {
        match std::mem::replace(&mut *lock(&self.session), Session::Idle) {
            Session::Live(conn) => Some(conn),
            Session::Connecting { abort, .. } => {
                abort.cancel();
                None
            }
            Session::Idle => None,
        }
    }

    /// A child that dies (crash, kill) turns the server to Error at once, not at the next use.
    fn watch_exit(self: &Arc<Self>, conn: &Arc<Connection>) {
        let weak = Arc::downgrade(self);
        let conn_weak = Arc::downgrade(conn);
        let stop = self.stop.clone();
        let conn = conn.clone();
        tokio::spawn(async move {
            let why = tokio::select! {
                why = conn.exited() => why,
                _ = stop.cancelled() => return,
            };
            drop(conn);
            let (Some(me), Some(conn)) = (weak.upgrade(), conn_weak.upgrade()) else { return };
            let current = matches!(&*lock(&me.session), Session::Live(c) if Arc::ptr_eq(c, &conn));
            if current && !me.stop.is_cancelled() {
                me.drop_connection(&conn);
                me.record_failure(why);
            }
        });
    }

    pub(super) fn drop_connection(&self, conn: &Arc<Connection>) {
        {
            let mut slot = lock(&self.session);
            if matches!(&*slot, Session::Live(c) if Arc::ptr_eq(c, conn)) {
                *slot = Session::Idle;
            }
        }
        let conn = conn.clone();
        let grace = self.shared.opts.stop_grace;
        tokio::spawn(async move { conn.close(grace).await });
    }
}
