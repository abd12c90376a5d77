//! The backend without a state directory: records in memory for the process's run (a sidecar
//! whose host gave no `cacheDir`). Same operations, same transactions, nothing shared.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{lock, Exclusive, Store, StoreError, Tx};

#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Default, Clone)]
struct State {
    records: BTreeMap<(String, String), Vec<u8>>,
    revisions: BTreeMap<String, u64>,
}

struct MemoryTx<'a>(&'a mut State);

impl Tx for MemoryTx<'_> {
    fn get(&mut self, kind: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.0.records.get(&(kind.to_owned(), key.to_owned())).cloned())
    }

    fn list(&mut self, kind: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        Ok(self.0.records.iter().filter(|((k, _), _)| k == kind).map(|((_, key), v)| (key.clone(), v.clone())).collect())
    }

    fn put(&mut self, kind: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0.records.insert((kind.to_owned(), key.to_owned()), value.to_vec());
        *self.0.revisions.entry(kind.to_owned()).or_default() += 1;
        Ok(())
    }

    fn delete(&mut self, kind: &str, key: &str) -> Result<bool, StoreError> {
        let gone = self.0.records.remove(&(kind.to_owned(), key.to_owned())).is_some();
        if gone {
            *self.0.revisions.entry(kind.to_owned()).or_default() += 1;
        }
        Ok(gone)
    }
}

impl Store for MemoryStore {
    fn transact(&self, work: &mut dyn FnMut(&mut dyn Tx) -> Result<(), StoreError>) -> Result<(), StoreError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        // Work on a copy: an error leaves the state as it was (the records are small).
        let mut draft = state.clone();
        work(&mut MemoryTx(&mut draft))?;
        *state = draft;
        Ok(())
    }

    fn revision(&self, kind: &str) -> Result<u64, StoreError> {
        Ok(self.state.lock().unwrap_or_else(|e| e.into_inner()).revisions.get(kind).copied().unwrap_or(0))
    }

    fn exclusive(&self, name: &str) -> Result<Exclusive, StoreError> {
        Ok(lock::exclusive_memory(name))
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }

    fn ephemeral(&self) -> bool {
        true
    }
}
