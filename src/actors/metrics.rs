//! Counters of the actors (messages handled, mailbox depth, slowest handling), of the queues
//! of the writers (size, peak, notifications dropped, requests refused or removed; see
//! [`QueueStats::line`]) and of the forwarded methods (requests, errors, latency quantiles),
//! written as log lines of scope `metrics`: a debug line every [`METRICS_INTERVAL`] while
//! requests flow, one info line with the totals when a bridge that ran stops (see [`WriteTotals`]). A line is the parts
//! `name: key=value ...` joined by `; `: actors first, then queues (the stderr queue last,
//! [`crate::log::queue::StderrStats::line`]), then methods.

use actix::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::link::{ActorStats, Link};
use super::supervisor::messages::ActorEnded;
use crate::transport::writer::QueueStats;

/// Interval of the periodic metrics line while requests flow.
pub const METRICS_INTERVAL: Duration = Duration::from_secs(30);
/// Latency samples kept per method for the quantiles (the newest ones).
pub const MAX_LATENCY_SAMPLES: usize = 65_536;

#[derive(Default, Debug)]
struct MethodStats {
    requests: u64,
    errors: u64,
    samples_us: Vec<u32>,
    next: usize,
}

impl MethodStats {
    fn record(&mut self, ok: bool, latency: Duration) {
        self.requests += 1;
        if !ok {
            self.errors += 1;
        }
        let us = latency.as_micros().min(u32::MAX as u128) as u32;
        if self.samples_us.len() < MAX_LATENCY_SAMPLES {
            self.samples_us.push(us);
        } else {
            self.samples_us[self.next] = us;
            self.next = (self.next + 1) % MAX_LATENCY_SAMPLES;
        }
    }

    fn line(&self, method: &str) -> String {
        let mut s = self.samples_us.clone();
        s.sort_unstable();
        let q = |p: f64| -> u32 {
            if s.is_empty() {
                return 0;
            }
            s[((s.len() - 1) as f64 * p).round() as usize]
        };
        format!(
            "{method}: requests={} errors={} p50_us={} p90_us={} p99_us={} max_us={}",
            self.requests,
            self.errors,
            q(0.5),
            q(0.9),
            q(0.99),
            s.last().copied().unwrap_or(0)
        )
    }
}

/// The counters of the forwarded methods, shared by the Frontend (which records each request
/// as it ends, with no message, so a request costs no extra hand-off) and the Metrics actor
/// (which writes them).
#[derive(Debug, Default)]
pub struct MethodTimes {
    methods: Mutex<BTreeMap<&'static str, MethodStats>>,
    /// Requests recorded since the last periodic line.
    since_last_line: AtomicU64,
}

impl MethodTimes {
    /// New, empty counters.
    pub fn new() -> Arc<MethodTimes> {
        Arc::new(MethodTimes::default())
    }

    /// One forwarded request of `method` ended (`ok`: false when the editor got an error),
    /// `latency` after the editor's request came.
    pub fn record(&self, method: &'static str, ok: bool, latency: Duration) {
        let mut methods = self.methods.lock().unwrap_or_else(|p| p.into_inner());
        methods.entry(method).or_default().record(ok, latency);
        self.since_last_line.fetch_add(1, Ordering::Relaxed);
    }

    fn lines(&self) -> Vec<String> {
        let methods = self.methods.lock().unwrap_or_else(|p| p.into_inner());
        methods.iter().map(|(m, s)| s.line(m)).collect()
    }
}

/// The Metrics actor.
pub struct Metrics {
    actors: Vec<Arc<ActorStats>>,
    queues: Vec<Arc<QueueStats>>,
    methods: Arc<MethodTimes>,
    ended: Link<ActorEnded>,
}

impl Metrics {
    /// A Metrics actor that reports the given actors' and queues' counters and the methods'
    /// counters in `methods`.
    pub fn new(
        actors: Vec<Arc<ActorStats>>,
        queues: Vec<Arc<QueueStats>>,
        methods: Arc<MethodTimes>,
        ended: Link<ActorEnded>,
    ) -> Self {
        Metrics {
            actors,
            queues,
            methods,
            ended,
        }
    }

    fn write(&self, info: bool) {
        let mut parts: Vec<String> = self.actors.iter().map(|a| a.line()).collect();
        parts.extend(self.queues.iter().map(|q| q.line()));
        parts.push(crate::log::stderr_queue().stats().line());
        parts.extend(self.methods.lines());
        let text = parts.join("; ");
        if info {
            tracing::info!(target: "metrics", "totals: {text}");
        } else {
            tracing::debug!(target: "metrics", "{text}");
        }
    }
}

impl Actor for Metrics {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(METRICS_INTERVAL, |act, _| {
            if act.methods.since_last_line.swap(0, Ordering::Relaxed) > 0 {
                act.write(false);
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.ended.do_send(ActorEnded("metrics"));
    }
}

crate::counted_handlers!(Metrics: WriteTotals);

/// Shutdown step (Supervisor), the last one: write the totals line when the bridge `ran` (an
/// `initialize` succeeded at least once: a bridge whose upstream never started, or whose
/// editor never initialized, has only its error lines to show), then stop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WriteTotals {
    /// An `initialize` succeeded at least once: the totals line is written only then.
    pub ran: bool,
}

impl Handler<WriteTotals> for Metrics {
    type Result = ();
    fn handle(&mut self, WriteTotals { ran }: WriteTotals, ctx: &mut Context<Self>) {
        if ran {
            self.write(true);
        }
        ctx.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_samples() {
        let mut m = MethodStats::default();
        for i in 1..=100 {
            m.record(i % 10 != 0, Duration::from_micros(i));
        }
        assert_eq!(
            m.line("tools/call"),
            "tools/call: requests=100 errors=10 p50_us=51 p90_us=90 p99_us=99 max_us=100"
        );
    }

    #[test]
    fn the_shared_counters_give_one_part_per_method_in_name_order() {
        let t = MethodTimes::new();
        t.record("tools/list", true, Duration::from_micros(7));
        t.record("tools/call", false, Duration::from_micros(3));
        assert_eq!(
            t.lines(),
            [
                "tools/call: requests=1 errors=1 p50_us=3 p90_us=3 p99_us=3 max_us=3",
                "tools/list: requests=1 errors=0 p50_us=7 p90_us=7 p99_us=7 max_us=7"
            ]
        );
        assert_eq!(t.since_last_line.load(Ordering::Relaxed), 2);
    }
}
