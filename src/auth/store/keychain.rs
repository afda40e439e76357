//! The OS keychain store through `keyring` 4 (Secret Service over zbus on Linux, the macOS
//! Keychain, the Windows Credential Manager): service [`super::SERVICE`], one entry per key.
//! Every call blocks (D-Bus): run it off the actor thread.

use keyring::{Entry, Error};

use super::{Backend, SERVICE, StoreError};

/// The keychain of the host.
pub struct Keychain;

impl Keychain {
    /// Opens the keychain and probes it with one read (about 1 ms without D-Bus).
    /// Errors: the store's own message (no secret in it).
    pub fn open() -> Result<Self, StoreError> {
        if let Err(e) = Entry::store_status() {
            return Err(StoreError::Unavailable(e.to_string()));
        }
        let k = Keychain;
        k.get("index")?;
        Ok(k)
    }
}

fn entry(key: &str) -> Result<Entry, StoreError> {
    Entry::new(SERVICE, key).map_err(unavailable)
}

fn unavailable(e: Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

impl Backend for Keychain {
    fn describe(&self) -> String {
        format!("keychain (service {SERVICE})")
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match entry(key)?.get_secret() {
            Ok(v) => Ok(Some(v)),
            Err(Error::NoEntry) => Ok(None),
            Err(Error::BadEncoding(_) | Error::BadDataFormat(..)) => Err(StoreError::Unreadable(
                "a keychain entry of another format".into(),
            )),
            Err(e) => Err(unavailable(e)),
        }
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        entry(key)?.set_secret(value).map_err(unavailable)
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        match entry(key)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(Error::NoEntry) => Ok(false),
            Err(e) => Err(unavailable(e)),
        }
    }
}
