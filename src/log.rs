//! The log format of the bridge: every stderr line is `mcp-bridge: <scope>: <level>: <message>`,
//! written in one write, with control characters replaced by spaces.

use std::fmt;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
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
        writeln!(
            writer,
            "{TAG}: {}: {level}: {}",
            sanitize(scope),
            sanitize(&msg)
        )
    }
}

/// Writes one line to stderr in the log format, ignoring a stderr that fails (for the few
/// places that must not go through the logger: the watchdog, the panic hook, usage errors).
pub fn raw_line(scope: &str, level: &str, message: &str) {
    use std::io::Write;
    let line = format!(
        "{TAG}: {}: {level}: {}\n",
        sanitize(scope),
        sanitize(message)
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Replaces every control character with a space.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Installs the stderr logger with the given floor.
pub fn init(level: tracing::level_filters::LevelFilter) {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        // A stderr nobody reads (EPIPE) must never stop the bridge: the default reports a
        // failed write with eprintln!, which panics on that same stderr.
        .log_internal_errors(false)
        .with_max_level(level)
        .event_format(LineFormat)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_spaces() {
        assert_eq!(sanitize("a\nb\tc\u{1b}[31m"), "a b c [31m");
    }
}
