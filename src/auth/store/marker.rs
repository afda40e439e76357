//! Sign-in markers: one empty file per stored sign-in, `<state dir>/signins/<store key>`, made
//! when a sign-in's tokens are stored in a store that outlives the process and removed by
//! `logout`. A marker holds no secret (the store key is a SHA-256 hash of the server URL,
//! account and redirect URI). It tells a starting bridge whether the token store holds a
//! sign-in for its server, so `--token-store auto` opens the store (the keychain: D-Bus,
//! zbus's threads and code pages) only when it has something to give; a bridge whose upstream
//! never asks for a sign-in never opens it. A sign-in stored without a marker (by an older
//! bridge) is still found: at the first 401 the store is read before any sign-in starts.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The name of the markers' directory under the state directory.
pub const MARKER_DIR_NAME: &str = "signins";

/// The path of the marker of `key` in `dir`.
pub fn path(dir: &Path, key: &str) -> PathBuf {
    dir.join(key)
}

/// Whether the marker of `key` exists in `dir` (one `stat`; an error counts as absent).
pub fn exists(dir: &Path, key: &str) -> bool {
    fs::symlink_metadata(path(dir, key)).is_ok()
}

/// Makes the marker of `key` in `dir` (the directory 0700, the file empty, 0600).
/// Errors: the directory or the file cannot be made.
pub fn create(dir: &Path, key: &str) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path(dir, key))
        .map(|_| ())
}

/// Removes the marker of `key` in `dir`; `Ok(false)` when there was none.
pub fn remove(dir: &Path, key: &str) -> io::Result<bool> {
    match fs::remove_file(path(dir, key)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_made_found_and_removed_once() {
        let d = std::env::temp_dir().join(format!("mcp-bridge-marker-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        let dir = d.join(MARKER_DIR_NAME);
        assert!(!exists(&dir, "signin-ab"));
        create(&dir, "signin-ab").unwrap();
        create(&dir, "signin-ab").unwrap();
        assert!(exists(&dir, "signin-ab"));
        assert!(!exists(&dir, "signin-cd"));
        assert_eq!(fs::metadata(path(&dir, "signin-ab")).unwrap().len(), 0);
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&path(&dir, "signin-ab")), 0o600);
        assert!(remove(&dir, "signin-ab").unwrap());
        assert!(!remove(&dir, "signin-ab").unwrap());
        assert!(!exists(&dir, "signin-ab"));
        let _ = fs::remove_dir_all(&d);
    }
}
