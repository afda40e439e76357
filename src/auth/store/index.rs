//! The index of stored sign-ins, kept in the same store under the key `index`: sign-ins add
//! their line, `logout` reads and removes them. Changes take the index's own entry lock, so
//! concurrent bridges do not lose lines.

use std::time::Duration;

use super::records::IndexEntry;
use super::{StoreError, TokenStore, lock};

/// The store key of the index.
pub const INDEX_KEY: &str = "index";
/// Longest wait for the index lock.
pub const INDEX_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The stored index (empty when absent or unreadable).
pub fn read(store: &TokenStore) -> Result<Vec<IndexEntry>, StoreError> {
    Ok(store
        .get(INDEX_KEY)?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default())
}

/// The stored index for `logout`: empty when absent, [`StoreError::Unreadable`] when it exists
/// but does not open with this key or is not an index.
pub fn read_strict(store: &TokenStore) -> Result<Vec<IndexEntry>, StoreError> {
    match store.get_strict(INDEX_KEY)? {
        None => Ok(Vec::new()),
        Some(b) => serde_json::from_slice(&b)
            .map_err(|_| StoreError::Unreadable("the index is not a list of sign-ins".into())),
    }
}

fn write(store: &TokenStore, entries: &[IndexEntry]) -> Result<(), StoreError> {
    let bytes =
        serde_json::to_vec(entries).map_err(|e| StoreError::Unavailable(format!("index: {e}")))?;
    store.set(INDEX_KEY, &bytes)
}

/// Changes the index under its lock: `f` edits the lines; the index is written when it changed.
pub async fn update(
    store: &TokenStore,
    f: impl FnOnce(&mut Vec<IndexEntry>) + Send + 'static,
) -> Result<(), StoreError> {
    let _guard = lock::lock(store.lock_dir.as_deref(), INDEX_KEY, INDEX_LOCK_TIMEOUT)
        .await
        .map_err(|e| StoreError::Unavailable(format!("index lock: {e}")))?;
    store
        .run(move |s| {
            let mut entries = read(s)?;
            let before = entries.clone();
            f(&mut entries);
            if entries != before {
                write(s, &entries)?;
            }
            Ok(())
        })
        .await
}

/// Adds `entry` unless its key is listed.
pub async fn add(store: &TokenStore, entry: IndexEntry) -> Result<(), StoreError> {
    update(store, move |v| {
        if !v.iter().any(|e| e.key == entry.key) {
            v.push(entry);
        }
    })
    .await
}
