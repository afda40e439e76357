//! Counters of the actors (messages handled, mailbox depth, slowest handling), of the queues
//! of the writers (size, peak, notifications dropped, requests refused or removed; see
//! [`QueueStats::line`]) and of the forwarded methods (requests, errors, latency quantiles),
//! written as log lines of scope `metrics`: a debug line every [`METRICS_INTERVAL`] while
//! requests flow, one info line with the totals when the bridge stops. A line is the parts
//! `name: key=value ...` joined by `; `: actors first, then queues (the stderr queue last,
//! [`crate::log::queue::StderrStats::line`]), then methods.

use actix::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
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

/// The Metrics actor.
pub struct Metrics {
    actors: Vec<Arc<ActorStats>>,
    queues: Vec<Arc<QueueStats>>,
    methods: BTreeMap<&'static str, MethodStats>,
    since_last_line: u64,
    ended: Link<ActorEnded>,
}

impl Metrics {
    /// A Metrics actor that reports the given actors' and queues' counters.
    pub fn new(
        actors: Vec<Arc<ActorStats>>,
        queues: Vec<Arc<QueueStats>>,
        ended: Link<ActorEnded>,
    ) -> Self {
        Metrics {
            actors,
            queues,
            methods: BTreeMap::new(),
            since_last_line: 0,
            ended,
        }
    }

    fn write(&self, info: bool) {
        let mut parts: Vec<String> = self.actors.iter().map(|a| a.line()).collect();
        parts.extend(self.queues.iter().map(|q| q.line()));
        parts.push(crate::log::stderr_queue().stats().line());
        parts.extend(self.methods.iter().map(|(m, s)| s.line(m)));
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
            if act.since_last_line > 0 {
                act.write(false);
                act.since_last_line = 0;
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.ended.do_send(ActorEnded("metrics"));
    }
}

crate::counted_handlers!(Metrics: MethodDone, WriteTotals);

/// One forwarded request ended.
#[derive(Message)]
#[rtype(result = "()")]
pub struct MethodDone {
    /// The method name.
    pub method: &'static str,
    /// False when the editor got an error.
    pub ok: bool,
    /// Time from the editor's request to the response.
    pub latency: Duration,
}

impl Handler<MethodDone> for Metrics {
    type Result = ();
    fn handle(&mut self, m: MethodDone, _: &mut Context<Self>) {
        self.methods
            .entry(m.method)
            .or_default()
            .record(m.ok, m.latency);
        self.since_last_line += 1;
    }
}

/// Shutdown step (Supervisor), the last one: write the totals line, then stop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct WriteTotals;

impl Handler<WriteTotals> for Metrics {
    type Result = ();
    fn handle(&mut self, _: WriteTotals, ctx: &mut Context<Self>) {
        self.write(true);
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
}
