//! The cross-process lock of one stored sign-in: an exclusive `flock` on
//! `<lock dir>/<key>.lock`, so several bridge processes for the same server and account share
//! one sign-in and one refresh (a rotating refresh token is never spent twice, two browsers
//! never open). The kernel drops the lock when the process dies. The memory store, which no
//! other process shares, has no lock directory: its locks are taken at once and write nothing.

use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// The wait between two tries of a held lock.
pub const LOCK_POLL_INTERVAL: Duration = Duration::from_millis(25);

/// A held entry lock; dropping it releases the lock.
#[derive(Debug)]
pub struct EntryLock {
    /// The locked file (`None`: no lock directory).
    _file: Option<File>,
}

/// Takes the lock of `key` in `dir`, waiting at most `limit` (polling every
/// [`LOCK_POLL_INTERVAL`] without blocking the thread); with no `dir`, at once. Errors: the
/// directory cannot be made, or another process holds the lock for longer than `limit`
/// (`TimedOut`).
pub async fn lock(dir: Option<&Path>, key: &str, limit: Duration) -> std::io::Result<EntryLock> {
    let Some(dir) = dir else {
        return Ok(EntryLock { _file: None });
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(dir.join(format!("{key}.lock")))?;
    let deadline = Instant::now() + limit;
    loop {
        // SAFETY: flock on a file descriptor this function owns; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(EntryLock { _file: Some(file) });
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(err);
        }
        if Instant::now() >= deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "another bridge process holds the sign-in",
            ));
        }
        tokio::time::sleep(LOCK_POLL_INTERVAL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_holder_waits_until_the_first_lets_go() {
        let d = std::env::temp_dir().join(format!("mcp-bridge-lock-{}", std::process::id()));
        let a = lock(Some(&d), "k", Duration::from_secs(1)).await.unwrap();
        let e = lock(Some(&d), "k", Duration::from_millis(100))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        let other = lock(Some(&d), "other", Duration::from_millis(100)).await;
        assert!(other.is_ok());
        drop(a);
        assert!(lock(Some(&d), "k", Duration::from_secs(1)).await.is_ok());
        let _ = fs::remove_dir_all(&d);
    }
}
