//! The slot of one request from the editor while it is in flight, and the token buckets that
//! limit its progress and log notifications. Time is passed in, so the bucket is testable.

use crate::actors::upstream::reply::CancelReason;
use crate::protocol::revisions::legacy::RequestClass;
use actix::SpawnHandle;
use serde_json::Value;
use std::time::Instant;

/// Greatest number of progress notifications per second per request.
pub const MAX_PROGRESS_PER_SEC: f64 = 50.0;
/// Burst allowance of the progress bucket, in notifications.
pub const PROGRESS_BURST: f64 = 50.0;
/// Greatest number of log messages (`notifications/message`) per second per request in
/// flight: the rule of progress, since both are request-scoped notifications that an editor
/// shows as they come. On stdio a log message names no request (2026-07-28 logging), so it is
/// charged to a request in flight that has a token left (n requests in flight pass at most
/// n x 50 per second); with none in flight it is dropped (a late message of a request that
/// ended).
pub const MAX_LOG_MESSAGES_PER_SEC: f64 = 50.0;
/// Burst allowance of each log bucket, in messages.
pub const LOG_BURST: f64 = 50.0;

/// A token bucket: `capacity` tokens, refilled at `rate_per_sec`.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    tokens: f64,
    capacity: f64,
    rate_per_sec: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(capacity: f64, rate_per_sec: f64, now: Instant) -> Self {
        TokenBucket {
            tokens: capacity,
            capacity,
            rate_per_sec,
            last: now,
        }
    }

    /// Takes one token if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + dt * self.rate_per_sec).min(self.capacity);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// One request of the editor in flight.
#[derive(Debug)]
pub struct Slot {
    /// The running future of the slot (cancel it to cancel the request).
    pub handle: Option<SpawnHandle>,
    /// The method (`initialize` or a forwarded one), for the lifecycle and the metrics.
    pub method: RequestClass,
    /// When the request arrived.
    pub started: Instant,
    /// The editor's progress token, if it sent one.
    pub editor_progress_token: Option<Value>,
    /// The bridge's own token sent upstream in its place.
    pub upstream_progress_token: Option<String>,
    /// Limits progress notifications.
    pub progress_bucket: TokenBucket,
    /// The editor's reason when it cancels the request, for the upstream's cancel.
    pub cancel_reason: CancelReason,
    /// Limits the log messages charged to this request.
    pub log_bucket: TokenBucket,
}

#[cfg(test)]
mod tests {
    use super::{MAX_PROGRESS_PER_SEC, PROGRESS_BURST, TokenBucket};
    use std::time::{Duration, Instant};

    #[test]
    fn a_burst_passes_then_the_rate_holds() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(PROGRESS_BURST, MAX_PROGRESS_PER_SEC, t0);
        let passed = (0..200).filter(|_| b.take(t0)).count();
        assert_eq!(passed, 50);
        // One second later, 50 more.
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!((0..200).filter(|_| b.take(t1)).count(), 50);
        // 20 ms later, one more.
        assert!(b.take(t1 + Duration::from_millis(20)));
        assert!(!b.take(t1 + Duration::from_millis(20)));
    }
}
