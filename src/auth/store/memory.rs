//! The memory token store: the last resort of `auto`, and `--token-store memory`.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Backend, StoreError};

/// Values in this process only.
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<String, Vec<u8>>>);

fn poisoned() -> StoreError {
    StoreError::Unavailable("the memory store is poisoned".into())
}

impl Backend for MemoryStore {
    fn describe(&self) -> String {
        "memory (a sign-in at each start)".into()
    }
    fn is_memory(&self) -> bool {
        true
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.0.lock().map_err(|_| poisoned())?.get(key).cloned())
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0
            .lock()
            .map_err(|_| poisoned())?
            .insert(key.into(), value.to_vec());
        Ok(())
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self.0.lock().map_err(|_| poisoned())?.remove(key).is_some())
    }
}
