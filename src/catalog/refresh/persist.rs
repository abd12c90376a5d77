//! A server's list and pins on disk (`cache.rs`, `pins.rs` keep the formats): the list read at
//! start arrives here, and every change is written back off the async threads, one write at a
//! time per server (`persist_lock`), each carrying the newest value. The pins go to the shared
//! store as the operations queued since the last write (`pins::stored`), and what the store
//! then holds (others' approvals too) is adopted. Reads and writes of the store for a server
//! are made under `persist_lock`, so a read never replaces a newer one in memory.

use std::sync::Arc;

use super::{Server, Shared};
use crate::catalog::pins::Pins;
use crate::catalog::cache::{self, CachedList};
use crate::catalog::lock;
use crate::catalog::pins::stored;
use crate::store::StoreError;
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

    /// Write the queued pin operations off the async threads, like `persist` (same lock).
    pub(super) fn persist_pins(self: &Arc<Self>) {
        if self.shared.opts.cache_dir.is_none() {
            return;
        }
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = me.write_pins() {
                tracing::warn!(server = %me.id, error = %e, "cannot write the approved MCP tool definitions; will try again at the next change");
            }
        });
    }

    /// Replays the queued pin operations on the stored record now, on this thread, and adopts
    /// the result. On failure they stay queued (and applied in memory) for the next write.
    pub fn write_pins(self: &Arc<Self>) -> Result<(), StoreError> {
        let Some((store, dir)) = self.shared.pins_store() else { return Ok(()) };
        let _guard = lock(&self.persist_lock);
        let ops = std::mem::take(&mut lock(&self.data).pin_ops);
        if ops.is_empty() {
            return Ok(());
        }
        // Read before the write: at most one read too many later, never a change taken for seen.
        let written = store.revision(stored::KIND).and_then(|r| Ok((stored::write(&**store, dir, &self.id, &ops)?, r)));
        match written {
            Ok((pins, revision)) => {
                self.adopt(pins, revision);
                Ok(())
            }
            Err(e) => {
                let mut d = lock(&self.data);
                let later = std::mem::replace(&mut d.pin_ops, ops);
                d.pin_ops.extend(later);
                Err(e)
            }
        }
    }

    /// Reads the pins from the store and adopts them, unless `seen` is the revision they were
    /// last read at: what another process approved (or held) since. Returns whether they changed.
    pub fn adopt_stored(self: &Arc<Self>, seen: Option<u64>) -> bool {
        let Some((store, dir)) = self.shared.pins_store() else { return false };
        if seen.is_some() && lock(&self.data).pins_revision == seen {
            return false;
        }
        let _guard = lock(&self.persist_lock);
        match stored::read(&**store, dir, &self.id) {
            Ok((pins, revision)) => self.adopt(pins, revision),
            Err(e) => {
                tracing::warn!(server = %self.id, error = %e, "cannot read the approved MCP tool definitions");
                false
            }
        }
    }
}

impl Shared {
    /// The pins' store and the directory it is in; `None` without a `cacheDir`. Opens the
    /// store and imports the pins files of earlier releases at the first call: blocking.
    pub fn pins_store(&self) -> Option<(&Arc<dyn crate::store::Store>, &std::path::Path)> {
        let dir = self.opts.cache_dir.as_deref()?;
        let store = self.pins_store.get_or_init(|| {
            let store = crate::store::shared(dir);
            if store.ephemeral() && dir.join(crate::store::FILE).exists() {
                // A state database this process cannot open: what it approved is unknown, so
                // every server fails closed rather than trusting its next list anew.
                let _ = store.put("store", "recovered", b"the state database could not be opened");
            }
            if let Err(e) = stored::import(&*store, dir) {
                tracing::warn!(error = %e, "cannot import the pins files into the state database");
            }
            store
        });
        Some((store, dir))
    }

    /// A server's pins from the store, and the revision read with them; fails closed when the
    /// store cannot be read (the revision is then unknown, so the next check reads again).
    pub fn load_pins(&self, server_id: &str) -> (Pins, Option<u64>) {
        let Some((store, dir)) = self.pins_store() else { return (Pins::default(), None) };
        match stored::read(&**store, dir, server_id) {
            Ok((pins, revision)) => (pins, Some(revision)),
            Err(e) => (stored::unreadable(server_id, &e), None),
        }
    }
}
