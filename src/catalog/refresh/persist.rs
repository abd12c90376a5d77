//! A server's list and pins on disk (`cache.rs`, `pins.rs` keep the formats): the list read at
//! start arrives here, and every change is written back off the async threads, one write at a
//! time per server (`persist_lock`), each carrying the newest value.

use std::sync::Arc;

use super::Server;
use crate::catalog::cache::{self, CachedList};
use crate::catalog::lock;
use crate::catalog::pins;
use crate::catalog::status::CatalogEvent;

impl Server {
    pub(super) fn apply_cached(self: &Arc<Self>, cached: Option<CachedList>) {
        let mut d = lock(&self.data);
        d.loading = false;
        if let (Some(list), None) = (cached, &d.tools) {
            d.tools = Some(list.tools);
            d.refreshed_at = list.refreshed_at;
            if let Some(extras) = list.extras {
                let (resources, prompts) = extras.differs_from(None);
                d.extras = Some(extras);
                let _ = self.shared.events.send(CatalogEvent::ExtrasChanged { server_id: self.id.clone(), resources, prompts });
            }
            let persist_pins = self.reevaluate(&mut d);
            self.publish(&mut d, true);
            drop(d);
            if persist_pins {
                self.persist_pins();
            }
        }
    }

    /// Write the current list to disk off the async threads; the lock plus reading the list
    /// inside it means the last write always carries the newest list.
    pub(super) fn persist(self: &Arc<Self>) {
        let Some(dir) = self.shared.opts.cache_dir.clone() else { return };
        let me = self.clone();
        let persist_lock = self.persist_lock.clone();
        tokio::task::spawn_blocking(move || {
            let _guard = lock(&persist_lock);
            let Some(list) = me.last_known_good() else { return };
            let written = if lock(&me.data).private {
                cache::remove(&dir, &me.id)
            } else {
                cache::store(&dir, &me.id, &me.identity, &list)
            };
            if let Err(e) = written {
                tracing::warn!(server = %me.id, error = %e, "cannot write MCP tool cache");
            }
        });
    }

    /// Write the pins to disk off the async threads, like `persist` (same lock, newest value).
    pub(super) fn persist_pins(self: &Arc<Self>) {
        let Some(dir) = self.shared.opts.cache_dir.clone() else { return };
        let me = self.clone();
        let persist_lock = self.persist_lock.clone();
        tokio::task::spawn_blocking(move || {
            let _guard = lock(&persist_lock);
            let Some(pins) = me.pins() else { return };
            if let Err(e) = pins::store(&dir, &me.id, &pins) {
                tracing::warn!(server = %me.id, error = %e, "cannot write the approved MCP tool definitions");
            }
        });
    }
}
