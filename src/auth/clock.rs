//! The time sign-ins run, for the time limit of `server/discover`: a sign-in can run during
//! `initialize` (the first request of a URL upstream gets a 401), and the user's time in the
//! browser is not the server's silence. So the wait for `server/discover` counts only the time
//! in which no sign-in runs, up to `--discover-timeout`, and lets the sign-ins run besides, up
//! to `--sign-in-timeout` of their time: at most `--discover-timeout` plus `--sign-in-timeout`
//! in all, and `--discover-timeout` when no sign-in runs.
//!
//! The sign-in owns the [`SignInClock`] and publishes every start and end of a sign-in on a
//! `tokio::sync::watch` channel; the Frontend holds only its receiving end ([`SignInTimes`]),
//! so the two share no state. This file needs no feature of the build: the Frontend names
//! [`SignInTimes`] in every build, and has one only when a SignIn actor runs.

use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// When sign-ins run, as the sign-in publishes it: one [`SignInClock::running`] guard per
/// sign-in, read by the waits of [`SignInTimes`].
#[derive(Debug)]
pub struct SignInClock {
    tx: watch::Sender<SignInTime>,
    /// The sign-in time a wait does not count, at most (`--sign-in-timeout`).
    allowance: Duration,
}

/// The time sign-ins ran, the value the clock's channel carries.
#[derive(Clone, Copy, Debug, Default)]
struct SignInTime {
    /// Sign-ins running now.
    running: usize,
    /// Since when one runs (while `running > 0`).
    since: Option<Instant>,
    /// The time sign-ins ran before `since`.
    spent: Duration,
}

impl SignInTime {
    /// The time sign-ins ran up to `now`, and whether one runs.
    fn at(&self, now: Instant) -> (Duration, bool) {
        let current = self
            .since
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        (self.spent + current, self.running > 0)
    }
}

/// A sign-in that runs, from [`SignInClock::running`] until it is dropped.
#[must_use = "the sign-in runs until this is dropped"]
pub struct Running<'a>(&'a SignInClock);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let now = Instant::now();
        self.0.tx.send_modify(|t| {
            t.running = t.running.saturating_sub(1);
            if t.running == 0
                && let Some(since) = t.since.take()
            {
                t.spent += now.saturating_duration_since(since);
            }
        });
    }
}

impl SignInClock {
    /// A clock whose waits do not count up to `allowance` of sign-in time
    /// (`--sign-in-timeout`).
    pub fn new(allowance: Duration) -> Self {
        SignInClock {
            tx: watch::Sender::new(SignInTime::default()),
            allowance,
        }
    }

    /// A sign-in starts now; it runs until the guard is dropped.
    pub fn running(&self) -> Running<'_> {
        let now = Instant::now();
        self.tx.send_modify(|t| {
            t.running += 1;
            if t.since.is_none() {
                t.since = Some(now);
            }
        });
        Running(self)
    }

    /// The receiving end, for the waits that leave out sign-in time.
    pub fn times(&self) -> SignInTimes {
        SignInTimes {
            rx: self.tx.subscribe(),
            allowance: self.allowance,
        }
    }
}

/// The receiving end of a [`SignInClock`]: what the Frontend's waits read. When the clock is
/// gone (its sign-in ended with the actor), no sign-in runs any more and the waits count
/// every moment.
#[derive(Clone, Debug)]
pub struct SignInTimes {
    rx: watch::Receiver<SignInTime>,
    allowance: Duration,
}

impl SignInTimes {
    /// The sign-in time a wait does not count, at most (`--sign-in-timeout`).
    pub fn allowance(&self) -> Duration {
        self.allowance
    }

    /// Waits for `fut` at most `limit` of time in which no sign-in runs, plus the time
    /// sign-ins run meanwhile, up to the clock's allowance of it (see the module doc).
    /// `None` when that time is up first (`fut` is then dropped).
    pub async fn within<F: Future>(&self, limit: Duration, fut: F) -> Option<F::Output> {
        let mut rx = self.rx.clone();
        let start = Instant::now();
        let (before, _) = rx.borrow_and_update().at(start);
        let mut fut = std::pin::pin!(fut);
        // False once the clock is gone: its last value stays, and no change can come.
        let mut open = true;
        loop {
            // Marked as seen when read, so a change after the read wakes the wait.
            let now = Instant::now();
            let (total, running) = rx.borrow_and_update().at(now);
            let signed_in = total.saturating_sub(before);
            let elapsed = now.saturating_duration_since(start);
            let wait = time_left(limit, self.allowance, elapsed, signed_in, running)?;
            tokio::select! {
                out = &mut fut => return Some(out),
                () = tokio::time::sleep(wait) => {}
                changed = rx.changed(), if open => open = changed.is_ok(),
            }
        }
    }
}

/// How long a wait of `limit` (not counting up to `allowance` of sign-in time) can still go
/// on before it is up, `elapsed` after it began, of which sign-ins took `signed_in`, one
/// `running` now: the time left of `limit`, plus, while a sign-in runs, what is left of the
/// allowance (the earliest moment the wait can be up, unless a sign-in starts or ends).
/// `None`: the time is up.
pub fn time_left(
    limit: Duration,
    allowance: Duration,
    elapsed: Duration,
    signed_in: Duration,
    running: bool,
) -> Option<Duration> {
    let not_counted = signed_in.min(allowance);
    let counted = elapsed.saturating_sub(not_counted);
    if counted >= limit {
        return None;
    }
    let left = limit - counted;
    Some(if running {
        left + (allowance - not_counted)
    } else {
        left
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn with_no_sign_in_the_limit_alone_counts() {
        assert_eq!(time_left(S(60), S(300), S(0), S(0), false), Some(S(60)));
        assert_eq!(time_left(S(60), S(300), S(59), S(0), false), Some(S(1)));
        assert_eq!(time_left(S(60), S(300), S(60), S(0), false), None);
    }

    #[test]
    fn the_time_of_a_sign_in_is_not_counted_up_to_the_allowance() {
        // 10 s of silence, then a sign-in that runs for 100 s so far: 50 s of the limit are
        // left once it ends, and it can run for 200 s more.
        assert_eq!(time_left(S(60), S(300), S(110), S(100), true), Some(S(250)));
        // It ended: the limit counts again.
        assert_eq!(time_left(S(60), S(300), S(110), S(100), false), Some(S(50)));
        assert_eq!(time_left(S(60), S(300), S(160), S(100), false), None);
        // A sign-in past the allowance is counted like silence.
        assert_eq!(time_left(S(60), S(300), S(350), S(340), true), Some(S(10)));
        assert_eq!(time_left(S(60), S(300), S(360), S(350), true), None);
    }

    fn run<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    /// Lower bounds only (a busy machine makes any wait longer, never shorter).
    #[test]
    fn a_wait_ends_at_the_limit_without_a_sign_in_and_later_with_one() {
        const MS: fn(u64) -> Duration = Duration::from_millis;
        let clock = SignInClock::new(S(300));
        let times = clock.times();
        let started = Instant::now();
        let out = run(times.within(MS(50), std::future::pending::<()>()));
        assert_eq!(out, None);
        assert!(started.elapsed() >= MS(50), "{:?}", started.elapsed());
        // A sign-in of 100 ms that starts 10 ms into a wait of 50 ms: the wait is up 150 ms
        // after it began at the earliest.
        let started = Instant::now();
        let sign_in = async {
            tokio::time::sleep(MS(10)).await;
            let _running = clock.running();
            tokio::time::sleep(MS(100)).await;
        };
        let wait = times.within(MS(50), std::future::pending::<()>());
        let (out, ()) = run(async { tokio::join!(wait, sign_in) });
        assert_eq!(out, None);
        assert!(started.elapsed() >= MS(150), "{:?}", started.elapsed());
        // What the wait waits for ends it.
        assert_eq!(run(times.within(MS(50), async { 7 })), Some(7));
        // The clock gone, a wait counts every moment.
        drop(clock);
        let started = Instant::now();
        assert_eq!(
            run(times.within(MS(50), std::future::pending::<()>())),
            None
        );
        assert!(started.elapsed() >= MS(50), "{:?}", started.elapsed());
    }
}
