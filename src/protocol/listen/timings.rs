//! The waits of the listen stream: the settings (`--listen-*`) and the backoff before a new
//! stream after a loss.

use std::time::Duration;

/// The wait before the first new stream after a loss, in milliseconds (`--listen-backoff-initial`).
pub const LISTEN_BACKOFF_INITIAL_MS: u64 = 500;

/// The longest wait before a new stream, in seconds (`--listen-backoff-max`).
pub const LISTEN_BACKOFF_MAX_SECS: u64 = 30;

/// How long a stream lives after its acknowledgment before a loss starts the waits again from
/// the first one, in seconds (`--listen-stable`).
pub const LISTEN_STABLE_SECS: u64 = 10;

/// How long the bridge waits for the acknowledgment of a stream on stdio, in seconds
/// (`--listen-ack-timeout`).
pub const LISTEN_ACK_TIMEOUT_SECS: u64 = 10;

/// The time settings of the listen stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenTimings {
    /// The first wait after a loss.
    pub backoff_initial: Duration,
    /// The longest wait; each wait doubles up to it.
    pub backoff_max: Duration,
    /// A stream that lives this long after its acknowledgment resets the wait.
    pub stable: Duration,
    /// The time limit of the acknowledgment.
    pub ack_timeout: Duration,
}

impl Default for ListenTimings {
    fn default() -> Self {
        ListenTimings {
            backoff_initial: Duration::from_millis(LISTEN_BACKOFF_INITIAL_MS),
            backoff_max: Duration::from_secs(LISTEN_BACKOFF_MAX_SECS),
            stable: Duration::from_secs(LISTEN_STABLE_SECS),
            ack_timeout: Duration::from_secs(LISTEN_ACK_TIMEOUT_SECS),
        }
    }
}

/// The waits before new streams after losses: the first wait, then twice the last one up to
/// the longest; a stream that lived `stable` after its acknowledgment starts again from the
/// first wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// Waits from `initial` doubling up to `max` (an `initial` above `max` is `max`).
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        let first = initial.min(max);
        Backoff {
            initial: first,
            max,
            next: first,
        }
    }

    /// The wait before the next stream after a loss. `lived` is how long the lost stream lived
    /// after its acknowledgment (`None`: never acknowledged).
    pub fn after_loss(&mut self, lived: Option<Duration>, stable: Duration) -> Duration {
        if lived.is_some_and(|l| l >= stable) {
            self.next = self.initial;
        }
        let wait = self.next;
        self.next = wait.saturating_mul(2).min(self.max);
        wait
    }
}
