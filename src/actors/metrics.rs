//! Counters of the actors (messages handled, mailbox depth, slowest handling), of the queues
//! of the writers (size, peak, notifications dropped, requests refused or removed; see
//! [`QueueStats::line`]) and of the forwarded methods (requests, errors, latency quantiles),
//! written as log lines of scope `metrics`: a debug line every [`METRICS_INTERVAL`] while
//! requests flow (at info every `--metrics-interval` when it is given), and when a bridge that
//! ran stops (see [`WriteTotals`]) the totals at debug and a short summary at info (requests,
//! errors, the slowest method and its time, what was dropped). A line of counters is the parts
//! `name: key=value ...` joined by `; `: actors first, then queues (the stderr queue last,
//! [`crate::log::queue::StderrStats::line`]), then methods.

use actix::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::link::{ActorStats, Link};
use super::supervisor::messages::{ActorEnded, ActorKind};
use crate::transport::queue::QueueStats;
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
        self.push_sample(latency.as_micros().min(u32::MAX as u128) as u32);
    }

    /// Adds `later`'s counts and its samples, oldest first, as if recorded after these.
    fn merge(&mut self, later: MethodStats) {
        self.requests += later.requests;
        self.errors += later.errors;
        let n = later.samples_us.len();
        // The ring's oldest sample is at `next` once it is full.
        let start = if n < MAX_LATENCY_SAMPLES {
            0
        } else {
            later.next
        };
        for i in 0..n {
            self.push_sample(later.samples_us[(start + i) % n]);
        }
    }

    fn push_sample(&mut self, us: u32) {
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

/// The counters of the forwarded methods. The Frontend records each request in its own
/// table as the request ends (a map update, no message per request) and hands the table to
/// the Metrics actor as a [`MethodBatch`] every [`METRICS_INTERVAL`] and when it finishes;
/// the Metrics actor merges the batches.
#[derive(Debug, Default)]
pub struct MethodTimes {
    methods: BTreeMap<&'static str, MethodStats>,
}

impl MethodTimes {
    /// One forwarded request of `method` ended (`ok`: false when the editor got an error),
    /// `latency` after the editor's request came.
    pub fn record(&mut self, method: &'static str, ok: bool, latency: Duration) {
        self.methods.entry(method).or_default().record(ok, latency);
    }

    /// Whether no request was recorded.
    pub fn is_empty(&self) -> bool {
        self.methods.is_empty()
    }

    /// Adds the counters of `other` (recorded after these).
    fn merge(&mut self, other: MethodTimes) {
        for (method, stats) in other.methods {
            self.methods.entry(method).or_default().merge(stats);
        }
    }

    fn lines(&self) -> Vec<String> {
        self.methods.iter().map(|(m, s)| s.line(m)).collect()
    }

    /// The requests and errors of every method, and the method of the slowest request with
    /// its time in microseconds (none without a request).
    fn sums(&self) -> (u64, u64, Option<(&'static str, u32)>) {
        let requests = self.methods.values().map(|s| s.requests).sum();
        let errors = self.methods.values().map(|s| s.errors).sum();
        let slowest = self
            .methods
            .iter()
            .filter_map(|(m, s)| s.samples_us.iter().max().map(|us| (*m, *us)))
            .max_by_key(|(_, us)| *us);
        (requests, errors, slowest)
    }
}

/// The summary line at the end: `N requests, N errors; slowest METHOD, N.N ms; nothing
/// dropped` (or `dropped: N frames of QUEUE, N stderr lines`). `dropped` names each queue
/// with notifications dropped (full, or over their rate limit) and the stderr lines dropped.
fn summary(methods: &MethodTimes, dropped: &[(&str, u64)]) -> String {
    let mut text = requests_text(methods);
    let dropped: Vec<String> = dropped
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    if dropped.is_empty() {
        text.push_str("; nothing dropped");
    } else {
        text.push_str(&format!("; dropped: {}", dropped.join(", ")));
    }
    text
}

/// The part of the summary of the requests: `N requests, N errors; slowest METHOD, N.N ms`
/// (without the slowest when there was no request).
pub fn requests_text(methods: &MethodTimes) -> String {
    let (requests, errors, slowest) = methods.sums();
    let mut text = format!(
        "{}, {}",
        plural(requests, "request", "requests"),
        plural(errors, "error", "errors")
    );
    if let Some((method, us)) = slowest {
        text.push_str(&format!(
            "; slowest {method}, {:.1} ms",
            f64::from(us) / 1000.0
        ));
    }
    text
}

/// `n` and the noun of its number.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The Frontend's counters of the methods since its last batch.
#[derive(Message)]
#[rtype(result = "()")]
pub struct MethodBatch(pub MethodTimes);

/// The Metrics actor.
pub struct Metrics {
    actors: Vec<Arc<ActorStats>>,
    queues: Vec<Arc<QueueStats>>,
    methods: MethodTimes,
    ended: Link<ActorEnded>,
    /// `--metrics-interval`: the counters at info this often (`None`: off).
    interval: Option<Duration>,
    /// A bridge that is one server of a gateway, which writes its server's summary line: this
    /// bridge's own summary is at debug then, unless it dropped something (which the gateway's
    /// line does not count).
    in_gateway: bool,
}

impl Metrics {
    /// A Metrics actor that reports the given actors' and queues' counters and the methods'
    /// counters of the [`MethodBatch`]es it gets; at info every `interval` when one is given.
    pub fn new(
        actors: Vec<Arc<ActorStats>>,
        queues: Vec<Arc<QueueStats>>,
        ended: Link<ActorEnded>,
        interval: Option<Duration>,
    ) -> Self {
        Metrics {
            actors,
            queues,
            methods: MethodTimes::default(),
            ended,
            interval,
            in_gateway: false,
        }
    }

    /// The same, for a bridge that is one server of a gateway when `yes`: its summary line is
    /// at debug unless it dropped something (the gateway writes the server's summary).
    pub fn in_gateway(mut self, yes: bool) -> Self {
        self.in_gateway = yes;
        self
    }

    /// Every counter, as one line's text.
    fn counters(&self) -> String {
        let mut parts: Vec<String> = self.actors.iter().map(|a| a.line()).collect();
        parts.extend(self.queues.iter().map(|q| q.line()));
        parts.push(crate::log::stderr_queue().stats().line());
        parts.extend(self.methods.lines());
        parts.join("; ")
    }

    /// The totals at debug, then the summary at info. The counters are read before either
    /// line is queued: the stderr counts are those of the lines before them.
    fn write_totals(&self) {
        let text = self.counters();
        let mut dropped: Vec<(String, u64)> = self
            .queues
            .iter()
            .map(|q| {
                let n = q.dropped() + q.rate_limited.load(Ordering::Relaxed);
                (format!("frames of {}", q.name), n)
            })
            .collect();
        dropped.push((
            "stderr lines".to_string(),
            crate::log::stderr_queue().stats().dropped_lines(),
        ));
        let dropped: Vec<(&str, u64)> = dropped.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        let nothing_dropped = dropped.iter().all(|(_, n)| *n == 0);
        let summary = summary(&self.methods, &dropped);
        tracing::debug!(target: "metrics", "totals: {text}");
        if self.in_gateway && nothing_dropped {
            tracing::debug!(target: "metrics", "summary: {summary}");
        } else {
            tracing::info!(target: "metrics", "summary: {summary}");
        }
    }
}

impl Actor for Metrics {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Some(every) = self.interval {
            ctx.run_interval(every, |act, _| {
                tracing::info!(target: "metrics", "{}", act.counters());
            });
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.ended.do_send(ActorEnded(ActorKind::Metrics));
    }
}

crate::counted_handlers!(Metrics: MethodBatch, WriteTotals);

impl Handler<MethodBatch> for Metrics {
    type Result = ();
    /// A batch comes every [`METRICS_INTERVAL`] while requests flow: the periodic line.
    fn handle(&mut self, MethodBatch(batch): MethodBatch, _: &mut Context<Self>) {
        self.methods.merge(batch);
        tracing::debug!(target: "metrics", "{}", self.counters());
    }
}

/// Shutdown step (Supervisor), the last one: write the totals and the summary when the bridge `ran` (an
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
            self.write_totals();
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
    fn the_counters_give_one_part_per_method_in_name_order() {
        let mut t = MethodTimes::default();
        t.record("tools/list", true, Duration::from_micros(7));
        t.record("tools/call", false, Duration::from_micros(3));
        assert_eq!(
            t.lines(),
            [
                "tools/call: requests=1 errors=1 p50_us=3 p90_us=3 p99_us=3 max_us=3",
                "tools/list: requests=1 errors=0 p50_us=7 p90_us=7 p99_us=7 max_us=7"
            ]
        );
    }

    #[test]
    fn the_summary_sums_the_methods_names_the_slowest_and_what_was_dropped() {
        let mut t = MethodTimes::default();
        assert_eq!(
            summary(&t, &[("frames of editor_queue", 0), ("stderr lines", 0)]),
            "0 requests, 0 errors; nothing dropped"
        );
        t.record("tools/list", true, Duration::from_micros(700));
        t.record("tools/call", false, Duration::from_micros(12_345));
        t.record("tools/call", true, Duration::from_micros(3));
        assert_eq!(
            summary(&t, &[("frames of editor_queue", 0), ("stderr lines", 0)]),
            "3 requests, 1 error; slowest tools/call, 12.3 ms; nothing dropped"
        );
        let mut one = MethodTimes::default();
        one.record("ping", true, Duration::from_micros(50));
        assert_eq!(
            summary(
                &one,
                &[
                    ("frames of editor_queue", 4),
                    ("frames of upstream_queue", 0),
                    ("stderr lines", 1)
                ]
            ),
            "1 request, 0 errors; slowest ping, 0.1 ms; dropped: 4 frames of editor_queue, 1 stderr lines"
        );
    }

    #[test]
    fn merged_batches_count_as_one_table_and_keep_the_newest_samples() {
        let mut all = MethodTimes::default();
        let mut first = MethodTimes::default();
        first.record("tools/call", true, Duration::from_micros(5));
        all.merge(first);
        let mut second = MethodTimes::default();
        second.record("tools/call", false, Duration::from_micros(9));
        second.record("ping", true, Duration::from_micros(1));
        all.merge(second);
        assert_eq!(
            all.lines(),
            [
                "ping: requests=1 errors=0 p50_us=1 p90_us=1 p99_us=1 max_us=1",
                "tools/call: requests=2 errors=1 p50_us=9 p90_us=9 p99_us=9 max_us=9"
            ]
        );
        // A full ring merges oldest first: the newest MAX_LATENCY_SAMPLES of both stay.
        let mut ring = MethodStats::default();
        for us in 0..(MAX_LATENCY_SAMPLES as u64 + 10) {
            ring.record(true, Duration::from_micros(us));
        }
        let mut kept = MethodStats::default();
        kept.record(true, Duration::from_micros(u64::from(u32::MAX) + 1));
        kept.merge(ring);
        let mut samples = kept.samples_us.clone();
        samples.sort_unstable();
        assert_eq!(samples.len(), MAX_LATENCY_SAMPLES);
        assert_eq!(samples[0], 10);
        assert_eq!(
            samples[MAX_LATENCY_SAMPLES - 1],
            MAX_LATENCY_SAMPLES as u32 + 9
        );
        assert_eq!(kept.requests, MAX_LATENCY_SAMPLES as u64 + 11);
    }
}
