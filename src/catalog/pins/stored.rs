//! Pins in the shared store (`crate::store`, issue 63): a sidecar and several gateways over one
//! state directory approve tools at the same time, and none may undo another's approval.
//!
//! One record per server (kind `pins`, key the server id, the pins file's format 2), changed
//! only by `PinOp`s replayed on the record as stored now, inside one transaction. Why a
//! record per server rather than per tool: the baseline and the views read changed belong to
//! the server, a process adopts another's changes with one read per server, and replaying
//! operations needs no merge base (what a 3-way merge would need): an approval made elsewhere
//! is simply there when this process's operations are applied.
//!
//! Invariants:
//! - A process's pins in memory are the record as last read (or written) with its own
//!   not-yet-written operations applied on top (`refresh/approvals.rs`).
//! - No record is first use (trust on first use), unless the store was found damaged and
//!   restarted (`store/recovered`): then every server fails closed, baselined with nothing
//!   approved. A record that cannot be read fails closed too. A server with no record whose
//!   pins file of an earlier release exists (one the import could not read) is read from that
//!   file, which fails closed likewise.
//! - A write that changes nothing commits nothing (no revision bump wakes the others).
//! - The pins files are imported once per store (`Store::once`) and left in place, for a
//!   downgrade; they are never written again.

use std::path::Path;

use super::file::{self, encode, fail_closed, parse};
use super::{McpTool, Pins};
use crate::catalog::policy::Trust;
use crate::store::{Store, StoreError, Tx};

/// The kind of the pins records; its revision tells a process that another changed them.
pub const KIND: &str = "pins";

/// One change to a server's pins, as a process made it; replayed on the stored record.
#[derive(Clone, Debug, PartialEq)]
pub enum PinOp {
    /// A list was seen (`Pins::observe`): the baseline when there is none, all of it under `auto`.
    Observe { tools: Vec<McpTool>, trust: Trust },
    /// A quarantined server's baseline, with nothing approved.
    Quarantine,
    /// The user approved these definitions (checked against the list beforehand).
    Approve { tools: Vec<McpTool> },
    /// A view was read with this digest (`Pins::check_view`); `tools` are those naming it.
    View { tools: Vec<McpTool>, uri: String, digest: String, trust: Trust },
}

impl PinOp {
    pub fn apply(&self, pins: &mut Pins) {
        match self {
            PinOp::Observe { tools, trust } => {
                pins.observe(tools, *trust);
            }
            PinOp::Quarantine => {
                pins.quarantine();
            }
            PinOp::Approve { tools } => pins.approve_checked(tools),
            PinOp::View { tools, uri, digest, trust } => {
                pins.check_view(tools, uri, digest, *trust);
            }
        }
    }
}

/// The server's pins as stored now, and the revision of the kind read just before them (so
/// a newer change is never taken for seen).
pub fn read(store: &dyn Store, dir: &Path, server_id: &str) -> Result<(Pins, u64), StoreError> {
    let revision = store.revision(KIND)?;
    let mut pins = Pins::default();
    store.transact(&mut |tx| {
        pins = decode(tx, dir, server_id)?;
        Ok(())
    })?;
    Ok((pins, revision))
}

/// Applies `ops` to the server's record as stored now, in one transaction; the pins as
/// committed.
pub fn write(store: &dyn Store, dir: &Path, server_id: &str, ops: &[PinOp]) -> Result<Pins, StoreError> {
    let mut out = Pins::default();
    store.transact(&mut |tx| {
        let old = tx.get(KIND, server_id)?;
        let mut pins = decode_record(tx, dir, server_id, old.as_deref())?;
        for op in ops {
            op.apply(&mut pins);
        }
        // Pins without a baseline hold nothing worth keeping.
        if pins.baseline {
            let new = encode(server_id, &pins);
            if old.as_deref() != Some(new.as_slice()) {
                tx.put(KIND, server_id, &new)?;
            }
        }
        out = pins;
        Ok(())
    })?;
    Ok(out)
}

/// The pins of a server whose record could not be read (the store failed): closed.
pub fn unreadable(server_id: &str, e: &StoreError) -> Pins {
    fail_closed(server_id, "the state database", &e.to_string())
}

fn decode(tx: &mut dyn Tx, dir: &Path, server_id: &str) -> Result<Pins, StoreError> {
    let old = tx.get(KIND, server_id)?;
    decode_record(tx, dir, server_id, old.as_deref())
}

fn decode_record(tx: &mut dyn Tx, dir: &Path, server_id: &str, record: Option<&[u8]>) -> Result<Pins, StoreError> {
    Ok(match record {
        Some(bytes) => parse(bytes, server_id).unwrap_or_else(|why| fail_closed(server_id, "the state database", &why)),
        None if tx.get("store", "recovered")?.is_some() => fail_closed(server_id, "the state database", "it was found damaged and started anew"),
        None => file::load(dir, server_id),
    })
}

/// Imports the pins files of `dir` into the store, once per store: what a user approved
/// before the upgrade stays approved. Files that cannot be read are left to `decode` (which
/// fails closed for their server). Nothing is imported into a store found damaged: files older
/// than what it lost must not approve anew.
pub fn import(store: &dyn Store, dir: &Path) -> Result<bool, StoreError> {
    store.once("pins/import-files", &mut |tx| {
        if tx.get("store", "recovered")?.is_some() {
            return Ok(());
        }
        for (server_id, pins) in legacy_files(dir) {
            if tx.get(KIND, &server_id)?.is_none() {
                tx.put(KIND, &server_id, &encode(&server_id, &pins))?;
            }
        }
        Ok(())
    })
}

/// The readable pins files of `dir`, by server id.
fn legacy_files(dir: &Path) -> Vec<(String, Pins)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found = Vec::new();
    for path in entries.flatten().map(|e| e.path()) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if !(name.starts_with("pins-") && name.ends_with(".json")) {
            continue;
        }
        let Ok(bytes) = crate::catalog::cache::read_bounded(&path, crate::catalog::cache::MAX_FILE_BYTES) else { continue };
        let Some(id) = file::server_id_of(&bytes) else { continue };
        // The file must be the one its id names (not a copy under another name).
        if file::path_for(dir, &id) != path {
            continue;
        }
        if let Ok(pins) = parse(&bytes, &id) {
            found.push((id, pins));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::pins::{PinState, Rules};
    use crate::store::MemoryStore;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> McpTool {
        serde_json::from_value(json!({"name": name, "description": description, "inputSchema": {"type": "object"}})).unwrap()
    }

    fn states(pins: &Pins, tools: &[McpTool]) -> Vec<PinState> {
        tools.iter().map(|t| pins.state(t, &Rules::default())).collect()
    }

    #[test]
    fn approvals_of_two_processes_from_one_old_snapshot_both_stay() {
        let (store, dir) = (MemoryStore::default(), tempfile::tempdir().unwrap());
        let v1 = [tool("a", "1"), tool("b", "1")];
        write(&store, dir.path(), "s", &[PinOp::Observe { tools: v1.to_vec(), trust: Trust::Pinned }]).unwrap();
        // Both processes see the changed list; each approves one, from what it read before.
        let v2 = [tool("a", "2"), tool("b", "2")];
        write(&store, dir.path(), "s", &[PinOp::Approve { tools: vec![v2[0].clone()] }]).unwrap();
        let after = write(&store, dir.path(), "s", &[PinOp::Approve { tools: vec![v2[1].clone()] }]).unwrap();
        assert_eq!(states(&after, &v2), [PinState::Approved, PinState::Approved]);
        assert_eq!(read(&store, dir.path(), "s").unwrap().0, after);
        // A second process's first list is no second baseline.
        write(&store, dir.path(), "s", &[PinOp::Observe { tools: vec![tool("a", "3")], trust: Trust::Pinned }]).unwrap();
        assert_eq!(read(&store, dir.path(), "s").unwrap().0, after);
    }

    #[test]
    fn a_write_that_changes_nothing_bumps_no_revision() {
        let (store, dir) = (MemoryStore::default(), tempfile::tempdir().unwrap());
        let op = PinOp::Observe { tools: vec![tool("a", "1")], trust: Trust::Pinned };
        write(&store, dir.path(), "s", std::slice::from_ref(&op)).unwrap();
        let before = store.revision(KIND).unwrap();
        write(&store, dir.path(), "s", &[op]).unwrap();
        assert_eq!(store.revision(KIND).unwrap(), before);
    }

    #[test]
    fn no_record_is_first_use_unless_the_store_was_recovered_and_a_damaged_one_fails_closed() {
        let (store, dir) = (MemoryStore::default(), tempfile::tempdir().unwrap());
        let tools = [tool("a", "1")];
        assert!(!read(&store, dir.path(), "s").unwrap().0.has_baseline());
        store.put(KIND, "t", b"{\"formatVersion\": 2, trunc").unwrap();
        assert_eq!(states(&read(&store, dir.path(), "t").unwrap().0, &tools), [PinState::New]);
        store.put("store", "recovered", b"state.db.corrupt-1").unwrap();
        assert_eq!(states(&read(&store, dir.path(), "s").unwrap().0, &tools), [PinState::New]);
    }

    #[test]
    fn pins_files_are_imported_once_and_left_in_place_and_an_unreadable_one_fails_closed() {
        let (store, dir) = (MemoryStore::default(), tempfile::tempdir().unwrap());
        let tools = [tool("a", "1")];
        let mut old = Pins::default();
        old.observe(&tools, Trust::Pinned);
        file::store(dir.path(), "s/1", &old).unwrap();
        file::store(dir.path(), "bad", &old).unwrap();
        std::fs::write(file::path_for(dir.path(), "bad"), b"{\"formatVersion\": 2, \"serverId\": \"bad\", trunc").unwrap();
        assert!(import(&store, dir.path()).unwrap());
        assert!(!import(&store, dir.path()).unwrap(), "once");
        assert!(store.get(KIND, "s/1").unwrap().is_some());
        assert!(file::path_for(dir.path(), "s/1").exists());
        // The file is no longer read: the record is.
        std::fs::remove_file(file::path_for(dir.path(), "s/1")).unwrap();
        assert_eq!(read(&store, dir.path(), "s/1").unwrap().0, old);
        assert_eq!(states(&read(&store, dir.path(), "bad").unwrap().0, &tools), [PinState::New]);
    }
}
