//! The encrypted file store: one file per key in the token directory (0700), each
//! `nonce (12 bytes) || ChaCha20-Poly1305 ciphertext`, with the key's name as associated data
//! (a file renamed to another key does not open). The 256-bit key comes from outside the
//! directory: `MCP_BRIDGE_TOKEN_KEY` or a private `--token-key-file`, 64 hex digits. It
//! protects against other accounts and a copy of the directory alone, not against a program
//! of the same account.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{Backend, StoreError};

/// Bytes of the key (64 hex digits).
pub const KEY_BYTES: usize = 32;
/// Bytes of the nonce at the start of each file.
pub const NONCE_BYTES: usize = 12;

/// The key of the file store (never shown).
#[derive(Clone)]
pub struct FileKey([u8; KEY_BYTES]);

impl std::fmt::Debug for FileKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileKey(..)")
    }
}

/// Why a key is not usable.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the token key must be 64 hex digits")]
    Format,
    /// `--token-key-file` cannot be read: the path and the OS's words.
    #[error(transparent)]
    Read(crate::log::files::CannotRead),
    #[error("--token-key-file must be private to your account (chmod 600)")]
    NotPrivate,
}

impl FileKey {
    /// A key from 64 hex digits (surrounding white space ignored).
    pub fn from_hex(s: &str) -> Result<Self, KeyError> {
        let s = s.trim();
        if s.len() != 2 * KEY_BYTES || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(KeyError::Format);
        }
        let mut k = [0u8; KEY_BYTES];
        for (i, k) in k.iter_mut().enumerate() {
            *k = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| KeyError::Format)?;
        }
        Ok(FileKey(k))
    }
}

/// The key from `MCP_BRIDGE_TOKEN_KEY` (`env`) or else `--token-key-file`: `Ok(None)` when
/// neither is given. A key file readable or writable by group or others is refused.
pub fn key_from(env: Option<&str>, file: Option<&Path>) -> Result<Option<FileKey>, KeyError> {
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        return FileKey::from_hex(v).map(Some);
    }
    let Some(path) = file else {
        return Ok(None);
    };
    let meta = fs::metadata(path).map_err(|e| {
        KeyError::Read(crate::log::files::CannotRead::new(
            "--token-key-file",
            path,
            &e,
        ))
    })?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(KeyError::NotPrivate);
    }
    let text = fs::read_to_string(path).map_err(|e| {
        KeyError::Read(crate::log::files::CannotRead::new(
            "--token-key-file",
            path,
            &e,
        ))
    })?;
    FileKey::from_hex(&text).map(Some)
}

/// Files in one directory, encrypted under one key.
pub struct FileStore {
    dir: PathBuf,
    cipher: ChaCha20Poly1305,
}

fn unavailable(e: std::io::Error) -> StoreError {
    StoreError::Unavailable(format!(
        "token directory: {}",
        crate::log::files::io_error_text(&e)
    ))
}

impl FileStore {
    /// Opens (creates, 0700) the directory `dir`.
    pub fn open(dir: PathBuf, key: FileKey) -> Result<Self, StoreError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(unavailable)?;
        let cipher = ChaCha20Poly1305::new_from_slice(&key.0)
            .map_err(|_| StoreError::Unavailable("bad key length".into()))?;
        Ok(FileStore { dir, cipher })
    }

    fn path(&self, key: &str) -> PathBuf {
        // Keys are the store's own (`signin-<hex>`, `client-<hex>`, `index`): no separators.
        self.dir.join(key.replace(['/', '\\'], "_"))
    }
}

impl Backend for FileStore {
    fn describe(&self) -> String {
        format!("encrypted files in {}", self.dir.display())
    }

    fn file_dir(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let bytes = match fs::read(self.path(key)) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(unavailable(e)),
        };
        if bytes.len() < NONCE_BYTES {
            return Err(StoreError::Unreadable("a token file is too short".into()));
        }
        let nonce = Nonce::try_from(&bytes[..NONCE_BYTES])
            .map_err(|_| StoreError::Unreadable("bad nonce".into()))?;
        self.cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: &bytes[NONCE_BYTES..],
                    aad: key.as_bytes(),
                },
            )
            .map(Some)
            .map_err(|_| StoreError::Unreadable("a token file does not open with this key".into()))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let mut nonce_bytes = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce_bytes)
            .map_err(|e| StoreError::Unavailable(format!("no random bytes: {e}")))?;
        let nonce = Nonce::try_from(&nonce_bytes[..])
            .map_err(|_| StoreError::Unavailable("bad nonce".into()))?;
        let sealed = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: value,
                    aad: key.as_bytes(),
                },
            )
            .map_err(|_| StoreError::Unavailable("encryption failed".into()))?;
        // Written beside, then renamed over: a reader never sees half a file.
        let path = self.path(key);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(unavailable)?;
        f.write_all(&nonce_bytes)
            .and_then(|_| f.write_all(&sealed))
            .and_then(|_| f.sync_all())
            .map_err(unavailable)?;
        fs::rename(&tmp, &path).map_err(unavailable)
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        match fs::remove_file(self.path(key)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(unavailable(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcp-bridge-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn values_round_trip_encrypted_and_bound_to_their_key() {
        let d = tmpdir("rt");
        let s = FileStore::open(d.clone(), FileKey::from_hex(HEX).unwrap()).unwrap();
        s.set("signin-a", b"the-secret-token").unwrap();
        assert_eq!(
            s.get("signin-a").unwrap(),
            Some(b"the-secret-token".to_vec())
        );
        let raw = fs::read(d.join("signin-a")).unwrap();
        assert!(!raw.windows(6).any(|w| w == b"secret"));
        assert_eq!(
            fs::metadata(d.join("signin-a"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&d).unwrap().permissions().mode() & 0o777,
            0o700
        );
        fs::copy(d.join("signin-a"), d.join("signin-b")).unwrap();
        assert!(matches!(s.get("signin-b"), Err(StoreError::Unreadable(_))));
        let other = FileStore::open(
            d.clone(),
            FileKey::from_hex(&HEX.replace('0', "1")).unwrap(),
        )
        .unwrap();
        assert!(matches!(
            other.get("signin-a"),
            Err(StoreError::Unreadable(_))
        ));
        assert!(s.delete("signin-a").unwrap());
        assert!(!s.delete("signin-a").unwrap());
        assert_eq!(s.get("signin-a").unwrap(), None);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_key_is_64_hex_digits_from_the_variable_or_a_private_file() {
        assert!(FileKey::from_hex(HEX).is_ok());
        assert!(matches!(
            FileKey::from_hex(&HEX[1..]),
            Err(KeyError::Format)
        ));
        assert!(matches!(
            FileKey::from_hex(&HEX.replace('a', "g")),
            Err(KeyError::Format)
        ));
        let d = tmpdir("key");
        fs::create_dir_all(&d).unwrap();
        let f = d.join("key");
        fs::write(&f, format!("{HEX}\n")).unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            key_from(None, Some(&f)),
            Err(KeyError::NotPrivate)
        ));
        fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(key_from(None, Some(&f)).unwrap().is_some());
        assert!(key_from(Some(HEX), None).unwrap().is_some());
        assert!(key_from(None, None).unwrap().is_none());
        fs::remove_dir_all(&d).unwrap();
    }
}
