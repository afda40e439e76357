//! The log format of the bridge: every stderr line is `mcp-bridge: <scope>: <level>: <message>`,
//! with control characters replaced by spaces. Every line (the bridge's and the upstream's
//! relayed stderr lines) goes through one bounded queue to a writer thread ([`queue`]): a
//! stderr that nobody reads drops and counts lines, it never blocks the JSON-RPC path. The
//! warnings a peer can cause at will are rate-limited ([`limit`], [`limits`]).

pub mod files;
pub mod limit;
pub mod limits;
pub mod queue;

use crate::protocol::wire::excerpt::sanitize;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The fixed tag at the start of every log line.
pub const TAG: &str = "mcp-bridge";

/// Formats one event as one line of the bridge's log.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineFormat;

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let scope = meta.target().rsplit("::").next().unwrap_or("bridge");
        let mut msg = String::new();
        ctx.field_format()
            .format_fields(Writer::new(&mut msg), event)?;
        let level = meta.level().as_str().to_ascii_lowercase();
        match member(ctx) {
            Some(member) => writeln!(
                writer,
                "{TAG}: {}: {level}: {}: {}",
                sanitize(scope),
                sanitize(&member),
                sanitize(&msg)
            ),
            None => writeln!(
                writer,
                "{TAG}: {}: {level}: {}",
                sanitize(scope),
                sanitize(&msg)
            ),
        }
    }
}

/// The name of the span around the actors of a bridge that is one server of a gateway
/// (`crate::actors::log_span`): its field `member` names the server.
pub const MEMBER_SPAN: &str = "member";

/// The span of a bridge whose server is `member` in the gateway's file; no span for the only
/// bridge of a process. At the level `error`, so that it is entered at every log level that
/// writes a line.
pub fn member_span(member: Option<&str>) -> tracing::Span {
    match member {
        Some(name) => tracing::error_span!(MEMBER_SPAN, member = %name),
        None => tracing::Span::none(),
    }
}

/// The server of the gateway whose bridge logs `event`: the field of the span
/// `MEMBER_SPAN` around it (`None`: the only bridge of the process,
/// or the gateway itself).
fn member<S, N>(ctx: &FmtContext<'_, S, N>) -> Option<String>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    let scope = ctx.event_scope()?;
    for span in scope {
        if span.name() != MEMBER_SPAN {
            continue;
        }
        let extensions = span.extensions();
        let fields = extensions.get::<FormattedFields<N>>()?;
        return fields.fields.strip_prefix("member=").map(str::to_owned);
    }
    None
}

/// How long the exit waits for the stderr queue to be written (a stderr that blocks loses
/// what is left).
pub const STDERR_EXIT_FLUSH: Duration = Duration::from_secs(1);

static STDERR: OnceLock<queue::StderrQueue> = OnceLock::new();

/// The stderr queue of the process ([`queue::STDERR_QUEUE_LINES`] lines,
/// [`queue::STDERR_QUEUE_MAX_BYTES`] bytes), started at its first use.
pub fn stderr_queue() -> &'static queue::StderrQueue {
    STDERR.get_or_init(|| {
        queue::StderrQueue::start(
            std::io::stderr(),
            queue::STDERR_QUEUE_LINES,
            queue::STDERR_QUEUE_MAX_BYTES,
        )
    })
}

/// Relays one stderr line of the upstream (ending with its newline) through the queue; it is
/// dropped and counted when the queue is full.
pub fn relay_upstream_line(line: Vec<u8>) {
    stderr_queue().push(line, queue::Source::Upstream);
}

/// Waits at most `limit` until the stderr queue is written (the bridge exits; each bridge's
/// Supervisor has written the summaries of its rate-limited warnings).
pub fn flush(limit: Duration) {
    if let Some(q) = STDERR.get() {
        q.flush(limit);
    }
}

/// The writer the logger formats each event into: one `write` is one whole line, queued.
#[derive(Clone, Copy, Debug)]
struct QueuedLine;

impl std::io::Write for QueuedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        stderr_queue().push(buf.to_vec(), queue::Source::Bridge);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes one line to stderr in the log format, ignoring a stderr that fails (for the few
/// places that must not go through the logger: the watchdog, the panic hook, usage errors).
/// It writes directly, after what is queued (waited for at most [`STDERR_EXIT_FLUSH`]), and
/// waits at most [`STDERR_EXIT_FLUSH`] for its own write (a stderr nobody reads must not keep
/// the watchdog or the panic hook from ending the process).
pub fn raw_line(scope: &str, level: &str, message: &str) {
    use std::io::Write;
    let line = format!(
        "{TAG}: {}: {level}: {}\n",
        sanitize(scope),
        sanitize(message)
    );
    if let Some(q) = STDERR.get() {
        q.flush(STDERR_EXIT_FLUSH);
    }
    let (done_tx, done) = std::sync::mpsc::channel();
    let write = move || {
        let _ = std::io::stderr().write_all(line.as_bytes());
        let _ = done_tx.send(());
    };
    match std::thread::Builder::new()
        .name("mcp-bridge-raw-line".into())
        .spawn(write)
    {
        Ok(_) => {
            let _ = done.recv_timeout(STDERR_EXIT_FLUSH);
        }
        Err(_) => {
            // No thread: the line is not written (writing here could block for ever).
        }
    }
}

/// Installs the stderr logger with the given floor; its lines go through the stderr queue.
pub fn init(level: tracing::level_filters::LevelFilter) {
    let _ = tracing_subscriber::fmt()
        .with_writer(|| QueuedLine)
        .with_ansi(false)
        // A stderr nobody reads (EPIPE) must never stop the bridge: the default reports a
        // failed write with eprintln!, which panics on that same stderr.
        .log_internal_errors(false)
        .with_max_level(level)
        .event_format(LineFormat)
        .try_init();
}
