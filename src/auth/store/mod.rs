//! Token stores (`--token-store auto|keychain|file|memory`): the OS keychain, files encrypted
//! with an AEAD under a key from outside the token directory, and memory. Every call blocks,
//! so callers run it off the actor thread ([`TokenStore::run`]). A store that stops answering
//! falls through to the next for the rest of the process. Values are opaque bytes (the caller's
//! JSON records); nothing here logs a value.
//!
//! The bridge opens `auto` at its first use ([`open_at_first_use`]): the keychain probe (D-Bus,
//! zbus's threads and ~1 MB of code pages) is paid only by a bridge that has a stored sign-in
//! (a [`marker`]) or whose upstream asks for one. The explicit choices open at start, so a
//! `keychain` or `file` store that cannot open is an exit 2 before anything runs.

pub mod file;
pub mod index;
pub mod keychain;
pub mod lock;
pub mod marker;
pub mod memory;
pub mod records;

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The name of the bridge's keychain service and of its state directory.
pub const SERVICE: &str = "mcp-bridge";

/// A failure of one store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store does not answer (no D-Bus session, a locked keychain, an unwritable
    /// directory): the chain falls through to the next store.
    #[error("the token store does not answer: {0}")]
    Unavailable(String),
    /// The stored value cannot be read (wrong key, damaged file): treated as absent by callers
    /// that can sign in again.
    #[error("a stored value cannot be read: {0}")]
    Unreadable(String),
}

/// One token store: blocking get, set and delete of opaque values by key.
pub trait Backend: Send + Sync {
    /// The name of the info line (`keychain`, `encrypted files in <dir>`, `memory`).
    fn describe(&self) -> String;
    /// The value of `key`, `None` when absent.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Writes `value` under `key`, replacing any value.
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError>;
    /// Deletes `key`; `Ok(false)` when it was absent.
    fn delete(&self, key: &str) -> Result<bool, StoreError>;
    /// Whether this is the memory store (nothing outlives the process).
    fn is_memory(&self) -> bool {
        false
    }
    /// The directory of the file store's entries; `None` for the other stores.
    fn file_dir(&self) -> Option<PathBuf> {
        None
    }
}

/// `--token-store`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreChoice {
    /// The keychain, then encrypted files (with a key), then memory.
    Auto,
    /// Only the OS keychain.
    Keychain,
    /// Only encrypted files (needs `MCP_BRIDGE_TOKEN_KEY` or `--token-key-file`).
    File,
    /// Only memory: a sign-in at each start.
    Memory,
}

/// What opens a lazily opened chain (the stores of `auto`), at its first use.
type Opener = Box<dyn FnOnce() -> Vec<Arc<dyn Backend>> + Send>;

/// The stores of a [`TokenStore`]: open, or still to be opened at the first call.
enum Chain {
    Open(Vec<Arc<dyn Backend>>),
    Lazy(Opener),
}

/// The chain of stores in use: the first answers; one that stops answering is dropped for the
/// rest of the process (the next one takes over, with a warning). A chain made by
/// [`TokenStore::lazy`] opens at the first call that needs a store ([`TokenStore::call`], so on
/// the thread of that call: the blocking pool for callers that use [`TokenStore::run`]).
#[derive(Clone)]
pub struct TokenStore {
    chain: Arc<Mutex<Chain>>,
    /// Set once the chain is open (read without the chain's lock).
    opened: Arc<AtomicBool>,
    /// The directory of the cross-process entry locks (`None`: the memory store, which no
    /// other process shares: nothing is written).
    pub lock_dir: Option<PathBuf>,
    /// The directory of the sign-in markers ([`marker`]); `None`: no markers are kept.
    pub marker_dir: Option<PathBuf>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// What [`TokenStore::describe`] says of a lazy chain before its first use.
pub const NOT_OPENED: &str = "auto (opened at first use)";

impl TokenStore {
    /// An open chain of `backends` (first in use), with entry locks in `lock_dir`, keeping no
    /// sign-in markers.
    pub fn new(backends: Vec<Arc<dyn Backend>>, lock_dir: PathBuf) -> Self {
        TokenStore {
            chain: Arc::new(Mutex::new(Chain::Open(backends))),
            opened: Arc::new(AtomicBool::new(true)),
            lock_dir: Some(lock_dir),
            marker_dir: None,
        }
    }

    /// An open chain of `backends` that no other process shares (the memory store): no entry
    /// locks and no sign-in markers, so nothing is written.
    pub fn unshared(backends: Vec<Arc<dyn Backend>>) -> Self {
        TokenStore {
            chain: Arc::new(Mutex::new(Chain::Open(backends))),
            opened: Arc::new(AtomicBool::new(true)),
            lock_dir: None,
            marker_dir: None,
        }
    }

    /// A chain that `open` makes at its first use (one info line names the store then), with
    /// entry locks in `lock_dir`, keeping no sign-in markers.
    pub fn lazy(
        open: impl FnOnce() -> Vec<Arc<dyn Backend>> + Send + 'static,
        lock_dir: PathBuf,
    ) -> Self {
        TokenStore {
            chain: Arc::new(Mutex::new(Chain::Lazy(Box::new(open)))),
            opened: Arc::new(AtomicBool::new(false)),
            lock_dir: Some(lock_dir),
            marker_dir: None,
        }
    }

    /// The same chain, keeping sign-in markers in `dir`.
    pub fn with_markers(mut self, dir: PathBuf) -> Self {
        self.marker_dir = Some(dir);
        self
    }

    /// Whether the chain is open (a lazy chain before its first use is not). Never blocks.
    pub fn is_open(&self) -> bool {
        self.opened.load(Ordering::Acquire)
    }

    /// The name of the store in use ([`NOT_OPENED`] for a lazy chain before its first use;
    /// this does not open it).
    pub fn describe(&self) -> String {
        let Ok(chain) = self.chain.lock() else {
            return String::new();
        };
        match &*chain {
            Chain::Open(v) => v.first().map(|b| b.describe()).unwrap_or_default(),
            Chain::Lazy(_) => NOT_OPENED.into(),
        }
    }

    /// Whether the store in use is the memory store. Opens a lazy chain (blocking).
    pub fn is_memory(&self) -> bool {
        self.current().is_some_and(|b| b.is_memory())
    }

    /// The directory of the store in use when it is the file store. Opens a lazy chain
    /// (blocking).
    pub fn file_dir(&self) -> Option<PathBuf> {
        self.current().and_then(|b| b.file_dir())
    }

    /// The store in use; opens a lazy chain first (blocking: the keychain probe).
    fn current(&self) -> Option<Arc<dyn Backend>> {
        let mut chain = self.chain.lock().ok()?;
        if let Chain::Lazy(_) = &*chain
            && let Chain::Lazy(open) = std::mem::replace(&mut *chain, Chain::Open(Vec::new()))
        {
            *chain = Chain::Open(open());
            self.opened.store(true, Ordering::Release);
            if let Chain::Open(v) = &*chain
                && let Some(b) = v.first()
            {
                tracing::info!(target: "sign-in", "token store: {}, opened at its first use", b.describe());
            }
        }
        match &*chain {
            Chain::Open(v) => v.first().cloned(),
            Chain::Lazy(_) => None,
        }
    }

    /// The number of stores left in the chain (0 for a lazy chain).
    fn len(&self) -> usize {
        match self.chain.lock().as_deref() {
            Ok(Chain::Open(v)) => v.len(),
            _ => 0,
        }
    }

    fn fall_through(&self, failed: &Arc<dyn Backend>, why: &StoreError) {
        let Ok(mut chain) = self.chain.lock() else {
            return;
        };
        let Chain::Open(chain) = &mut *chain else {
            return;
        };
        if chain.len() > 1 && chain.first().is_some_and(|b| Arc::ptr_eq(b, failed)) {
            chain.remove(0);
            tracing::warn!(target: "sign-in", "{why}; using the token store {} for the rest of the process", chain[0].describe());
        }
    }

    /// Runs one blocking store call with fall-through, on this thread (callers on the actor
    /// thread use [`TokenStore::run`]).
    pub fn call<T>(
        &self,
        f: impl Fn(&dyn Backend) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        loop {
            let Some(b) = self.current() else {
                return Err(StoreError::Unavailable("no token store".into()));
            };
            match f(b.as_ref()) {
                Err(e @ StoreError::Unavailable(_)) => {
                    if self.len() <= 1 {
                        return Err(e);
                    }
                    self.fall_through(&b, &e);
                }
                other => return other,
            }
        }
    }

    /// Runs `f` on the blocking pool: keychain calls and file I/O never run on the actor
    /// thread, where a blocking call would stall every actor of that arbiter.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&TokenStore) -> T + Send + 'static,
    ) -> T {
        let me = self.clone();
        match tokio::task::spawn_blocking(move || f(&me)).await {
            Ok(v) => v,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// The value of `key` (an unreadable value counts as absent, with a warning).
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.call(|b| b.get(key)) {
            Err(StoreError::Unreadable(why)) => {
                tracing::warn!(target: "sign-in", "a stored sign-in cannot be read ({why}); the bridge signs in again");
                Ok(None)
            }
            other => other,
        }
    }

    /// The value of `key`, with an unreadable value (a file that does not open with this key,
    /// a damaged entry) as [`StoreError::Unreadable`]: for `logout`, which must not take an
    /// entry it cannot open for an absent one.
    pub fn get_strict(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.call(|b| b.get(key))
    }

    /// Writes `value` under `key`.
    pub fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.call(|b| b.set(key, value))
    }

    /// Deletes `key`.
    pub fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.call(|b| b.delete(key))
    }
}

/// The store key of one stored sign-in: one per server URL, account and redirect URI
/// (`signin-<sha256 hex of the three, newline-separated>`).
pub fn sign_in_key(url: &str, account: &str, redirect_uri: &str) -> String {
    format!("signin-{}", hex_digest(&[url, account, redirect_uri]))
}

/// The start of every client registration's key.
pub const CLIENT_KEY_PREFIX: &str = "client-";

/// The store key of a dynamic client registration: credentials are bound to the issuer
/// (2026-07-28 client registration), and to the redirect URI they were registered with.
pub fn client_key(issuer: &str, redirect_uri: &str) -> String {
    format!("{CLIENT_KEY_PREFIX}{}", hex_digest(&[issuer, redirect_uri]))
}

fn hex_digest(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        h.update(p.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The bridge's state directory: `$XDG_STATE_HOME/mcp-bridge`, else
/// `~/.local/state/mcp-bridge` (dirs' state directory), else the temporary directory.
pub fn state_dir() -> PathBuf {
    dirs::state_dir()
        .or_else(|| dirs::home_dir().map(|h| h.join(".local/state")))
        .unwrap_or_else(std::env::temp_dir)
        .join(SERVICE)
}

/// The key of the file store, from `MCP_BRIDGE_TOKEN_KEY` or `--token-key-file`.
pub const TOKEN_KEY_ENV: &str = "MCP_BRIDGE_TOKEN_KEY";

/// Why a store chosen with `--token-store` did not open (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// `--token-store keychain`: the keychain does not answer.
    #[error("--token-store keychain: {0}")]
    Keychain(StoreError),
    /// `--token-store file` with a key that is not usable.
    #[error("--token-store file: {0}")]
    FileKey(file::KeyError),
    /// `--token-store file` without a key.
    #[error(
        "--token-store file needs a key: set {TOKEN_KEY_ENV} (64 hex digits) or give --token-key-file"
    )]
    NoFileKey,
    /// `--token-store file`: the token directory cannot be used.
    #[error("--token-store file: {0}")]
    File(StoreError),
    /// `auto` with a key that is given and not usable.
    #[error(transparent)]
    Key(file::KeyError),
}

/// Opens the stores of `choice` with the file key `token_key` (`MCP_BRIDGE_TOKEN_KEY`, read at
/// start) or `key_file` (`--token-key-file`): `auto` tries the keychain, then encrypted files when a key
/// is given, then memory; another choice opens only that store (an [`OpenError`] when it does
/// not open). Blocking (the keychain probe): call before the actor system or off its thread.
/// Writes one info line naming the store in use. Sign-in markers are kept in
/// `<state dir>/signins`. `logout` opens its store this way.
pub fn open_with_key(
    choice: StoreChoice,
    token_key: Option<&str>,
    key_file: Option<&Path>,
) -> Result<TokenStore, OpenError> {
    let dir = state_dir();
    let key = file::key_from(token_key, key_file);
    let mut chain: Vec<Arc<dyn Backend>> = Vec::new();
    match choice {
        StoreChoice::Keychain => {
            chain.push(Arc::new(
                keychain::Keychain::open().map_err(OpenError::Keychain)?,
            ));
        }
        StoreChoice::File => {
            let key = key
                .map_err(OpenError::FileKey)?
                .ok_or(OpenError::NoFileKey)?;
            chain.push(Arc::new(
                file::FileStore::open(dir.join("tokens"), key).map_err(OpenError::File)?,
            ));
        }
        StoreChoice::Memory => {
            // Nothing of a memory store outlives the process: no lock and no marker file.
            let store = TokenStore::unshared(vec![Arc::new(memory::MemoryStore::default())]);
            tracing::info!(target: "sign-in", "token store: {}", store.describe());
            return Ok(store);
        }
        StoreChoice::Auto => {
            let key = key.map_err(OpenError::Key)?;
            chain = auto_chain(&dir, key);
        }
    }
    let store =
        TokenStore::new(chain, dir.join("locks")).with_markers(dir.join(marker::MARKER_DIR_NAME));
    tracing::info!(target: "sign-in", "token store: {}", store.describe());
    Ok(store)
}

/// The store of a bridge's sign-in: `auto` is opened at its first use ([`TokenStore::lazy`]:
/// no keychain probe at start; an unusable key is still an [`OpenError`] now), with one info
/// line now ([`NOT_OPENED`]) and one when it opens; every other choice opens now as
/// [`open_with_key`] does (a `keychain` or `file` store that does not open is an error at start).
pub fn open_at_first_use(
    choice: StoreChoice,
    token_key: Option<&str>,
    key_file: Option<&Path>,
) -> Result<TokenStore, OpenError> {
    if choice != StoreChoice::Auto {
        return open_with_key(choice, token_key, key_file);
    }
    let dir = state_dir();
    let key = file::key_from(token_key, key_file).map_err(OpenError::Key)?;
    let tokens = dir.clone();
    let store = TokenStore::lazy(move || auto_chain(&tokens, key), dir.join("locks"))
        .with_markers(dir.join(marker::MARKER_DIR_NAME));
    // At debug: every URL start writes it, and the line that matters is the one of the
    // store that opens (at info).
    tracing::debug!(target: "sign-in", "token store: {NOT_OPENED}");
    Ok(store)
}

/// The stores of `auto` in the state directory `dir`: the keychain when it answers, the
/// encrypted files when `key` is given and they open, then memory. Blocking (the keychain probe).
fn auto_chain(dir: &Path, key: Option<file::FileKey>) -> Vec<Arc<dyn Backend>> {
    let mut chain: Vec<Arc<dyn Backend>> = Vec::new();
    match keychain::Keychain::open() {
        Ok(k) => chain.push(Arc::new(k)),
        Err(e) => tracing::debug!(target: "sign-in", "no keychain: {e}"),
    }
    if let Some(key) = key {
        match file::FileStore::open(dir.join("tokens"), key) {
            Ok(f) => chain.push(Arc::new(f)),
            Err(e) => {
                tracing::warn!(target: "sign-in", "the file token store does not open: {e}")
            }
        }
    }
    chain.push(Arc::new(memory::MemoryStore::default()));
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dead;
    impl Backend for Dead {
        fn describe(&self) -> String {
            "dead".into()
        }
        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
        fn set(&self, _: &str, _: &[u8]) -> Result<(), StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
        fn delete(&self, _: &str) -> Result<bool, StoreError> {
            Err(StoreError::Unavailable("gone".into()))
        }
    }

    #[test]
    fn a_store_that_stops_answering_falls_through_for_good() {
        let s = TokenStore::new(
            vec![Arc::new(Dead), Arc::new(memory::MemoryStore::default())],
            std::env::temp_dir(),
        );
        assert_eq!(s.describe(), "dead");
        s.set("k", b"v").unwrap();
        assert_eq!(s.describe(), "memory (a sign-in at each start)");
        assert_eq!(s.get("k").unwrap(), Some(b"v".to_vec()));
        let only_dead = TokenStore::new(vec![Arc::new(Dead)], std::env::temp_dir());
        assert!(matches!(
            only_dead.get("k"),
            Err(StoreError::Unavailable(_))
        ));
    }

    #[test]
    fn a_lazy_chain_opens_once_at_its_first_call_and_not_before() {
        let opens = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = opens.clone();
        let s = TokenStore::lazy(
            move || {
                counted.fetch_add(1, Ordering::SeqCst);
                vec![Arc::new(Dead), Arc::new(memory::MemoryStore::default())]
            },
            std::env::temp_dir(),
        );
        assert!(!s.is_open());
        assert_eq!(s.describe(), NOT_OPENED);
        assert_eq!(format!("{s:?}"), "auto (opened at first use)");
        assert_eq!(opens.load(Ordering::SeqCst), 0);
        // The first call opens the chain; the dead store falls through as in an open chain.
        assert_eq!(s.get("k").unwrap(), None);
        assert!(s.is_open());
        assert_eq!(opens.load(Ordering::SeqCst), 1);
        assert_eq!(s.describe(), "memory (a sign-in at each start)");
        s.set("k", b"v").unwrap();
        assert_eq!(s.clone().get("k").unwrap(), Some(b"v".to_vec()));
        assert!(s.is_memory());
        assert_eq!(opens.load(Ordering::SeqCst), 1);
        assert_eq!(s.marker_dir, None);
        let m = s.with_markers(std::env::temp_dir().join("m"));
        assert_eq!(m.marker_dir, Some(std::env::temp_dir().join("m")));
    }

    #[test]
    fn keys_separate_url_account_and_redirect_uri() {
        let a = sign_in_key("https://r/mcp", "default", "http://127.0.0.1:1/callback");
        assert_ne!(
            a,
            sign_in_key("https://r/mcp", "work", "http://127.0.0.1:1/callback")
        );
        assert_ne!(
            a,
            sign_in_key("https://r/mcp", "default", "http://127.0.0.1:2/callback")
        );
        assert_ne!(
            a,
            sign_in_key("https://r/mc", "pdefault", "http://127.0.0.1:1/callback")
        );
        assert!(a.starts_with("signin-") && a.len() == 7 + 64);
    }
}
