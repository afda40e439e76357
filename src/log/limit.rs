//! Rate limits of the warnings that a peer can cause at will, one per frame (a line of the
//! upstream that is not JSON-RPC, a line over the limit, ...): the first [`WARN_BURST`] are
//! logged, later ones are counted, and one summary line says how many were not logged, at
//! most one per [`WARN_SUMMARY_INTERVAL`]. After an interval without any, the burst starts
//! over.

use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Warnings of one kind logged before the rest are counted.
pub const WARN_BURST: u32 = 5;
/// Time between two summary lines of one kind (and the quiet time that starts the burst over).
pub const WARN_SUMMARY_INTERVAL: Duration = Duration::from_secs(10);

/// What to do with one warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Log it.
    Log,
    /// Count it; it opened the summary window `window`, whose summary is due
    /// [`WARN_SUMMARY_INTERVAL`] from now ([`WarnLimiter::close`]).
    Opened { window: u64 },
    /// Count it.
    Counted,
    /// Count it, and log now the summary of `suppressed` warnings (this one included) of a
    /// window that was due.
    Summary { suppressed: u64 },
}

/// The pure state of one kind of warning; the clock is the caller's (`now`).
#[derive(Debug, Default)]
pub struct WarnLimiter {
    logged: u32,
    suppressed: u64,
    /// The open window: its number and when it opened.
    window: Option<(u64, Instant)>,
    windows: u64,
    last: Option<Instant>,
}

impl WarnLimiter {
    /// A limiter that has seen nothing.
    pub const fn new() -> Self {
        WarnLimiter {
            logged: 0,
            suppressed: 0,
            window: None,
            windows: 0,
            last: None,
        }
    }

    /// One warning at `now`.
    pub fn hit(&mut self, now: Instant) -> Verdict {
        let quiet = self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) >= WARN_SUMMARY_INTERVAL);
        self.last = Some(now);
        if quiet && self.window.is_none() {
            self.logged = 0;
        }
        if self.logged < WARN_BURST {
            self.logged += 1;
            return Verdict::Log;
        }
        self.suppressed += 1;
        match self.window {
            None => {
                self.windows += 1;
                self.window = Some((self.windows, now));
                Verdict::Opened {
                    window: self.windows,
                }
            }
            Some((_, opened)) if now.saturating_duration_since(opened) >= WARN_SUMMARY_INTERVAL => {
                self.window = None;
                Verdict::Summary {
                    suppressed: std::mem::take(&mut self.suppressed),
                }
            }
            Some(_) => Verdict::Counted,
        }
    }

    /// The timer of window `window` is due: closes it if it is still open and gives the
    /// count of its summary.
    pub fn close(&mut self, window: u64) -> Option<u64> {
        if self.window.is_some_and(|(w, _)| w == window) {
            self.window = None;
            return Some(std::mem::take(&mut self.suppressed)).filter(|&n| n > 0);
        }
        None
    }

    /// Closes the open window whatever the time (the bridge stops): the count of its summary.
    pub fn flush(&mut self) -> Option<u64> {
        self.window = None;
        Some(std::mem::take(&mut self.suppressed)).filter(|&n| n > 0)
    }
}

/// One kind of warning of the bridge: a [`WarnLimiter`] on the real clock, whose summary line
/// is written by `summary` (given the count): by a timer of the tokio runtime when the window
/// is due, by the next warning when there is no runtime, or by [`RateLimited::flush`].
#[derive(Debug)]
pub struct RateLimited {
    state: Mutex<WarnLimiter>,
    summary: fn(u64),
}

impl RateLimited {
    /// A kind of warning whose summary line `summary` writes.
    pub const fn new(summary: fn(u64)) -> Self {
        RateLimited {
            state: Mutex::new(WarnLimiter::new()),
            summary,
        }
    }

    /// One warning of this kind (one bridge's, [`super::limits::BridgeLimits`]): true when
    /// the caller logs it.
    pub fn allow_shared(self: &Arc<Self>) -> bool {
        decide(self.clone())
    }

    /// Writes the summary of what is counted and not yet summarized (the bridge stops).
    pub fn flush(&self) {
        let due = self.state.lock().ok().and_then(|mut s| s.flush());
        if let Some(n) = due {
            (self.summary)(n);
        }
    }
}

/// One warning of `kind`: true when the caller logs it. The timer of a window it opens holds
/// `kind` until the window is due.
fn decide<K>(kind: K) -> bool
where
    K: Deref<Target = RateLimited> + Send + 'static,
{
    let verdict = match kind.state.lock() {
        Ok(mut s) => s.hit(Instant::now()),
        Err(_) => return false,
    };
    match verdict {
        Verdict::Log => true,
        Verdict::Counted => false,
        Verdict::Summary { suppressed } => {
            (kind.summary)(suppressed);
            false
        }
        Verdict::Opened { window } => {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    tokio::time::sleep(WARN_SUMMARY_INTERVAL).await;
                    let due = kind.state.lock().ok().and_then(|mut s| s.close(window));
                    if let Some(n) = due {
                        (kind.summary)(n);
                    }
                });
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, secs: f64) -> Instant {
        start + Duration::from_secs_f64(secs)
    }

    #[test]
    fn the_burst_is_logged_then_one_window_per_interval() {
        let t0 = Instant::now();
        let mut l = WarnLimiter::new();
        for _ in 0..WARN_BURST {
            assert_eq!(l.hit(t0), Verdict::Log);
        }
        assert_eq!(l.hit(t0), Verdict::Opened { window: 1 });
        for _ in 0..99 {
            assert_eq!(l.hit(at(t0, 5.0)), Verdict::Counted);
        }
        // The timer of window 1: 100 not logged.
        assert_eq!(l.close(1), Some(100));
        assert_eq!(l.close(1), None);
        assert_eq!(l.hit(at(t0, 10.5)), Verdict::Opened { window: 2 });
        assert_eq!(l.hit(at(t0, 11.0)), Verdict::Counted);
        assert_eq!(l.flush(), Some(2));
        assert_eq!(l.flush(), None);
    }

    #[test]
    fn without_a_timer_the_next_warning_after_the_interval_gives_the_summary() {
        let t0 = Instant::now();
        let mut l = WarnLimiter::new();
        for _ in 0..WARN_BURST {
            assert_eq!(l.hit(t0), Verdict::Log);
        }
        assert_eq!(l.hit(at(t0, 1.0)), Verdict::Opened { window: 1 });
        assert_eq!(l.hit(at(t0, 9.9)), Verdict::Counted);
        assert_eq!(l.hit(at(t0, 11.0)), Verdict::Summary { suppressed: 3 });
        // A late timer of the closed window does nothing to the next one.
        assert_eq!(l.hit(at(t0, 11.5)), Verdict::Opened { window: 2 });
        assert_eq!(l.close(1), None);
        assert_eq!(l.close(2), Some(1));
    }

    #[test]
    fn a_quiet_interval_starts_the_burst_over() {
        let t0 = Instant::now();
        let mut l = WarnLimiter::new();
        for _ in 0..WARN_BURST {
            assert_eq!(l.hit(t0), Verdict::Log);
        }
        assert_eq!(l.hit(t0), Verdict::Opened { window: 1 });
        assert_eq!(l.close(1), Some(1));
        assert_eq!(l.hit(at(t0, 9.0)), Verdict::Opened { window: 2 });
        assert_eq!(l.close(2), Some(1));
        // 10 s without any: the burst again.
        for _ in 0..WARN_BURST {
            assert_eq!(l.hit(at(t0, 19.0)), Verdict::Log);
        }
        assert_eq!(l.hit(at(t0, 19.0)), Verdict::Opened { window: 3 });
        // A quiet interval while a window is open does not start the burst over.
        assert_eq!(l.hit(at(t0, 40.0)), Verdict::Summary { suppressed: 2 });
    }
}
