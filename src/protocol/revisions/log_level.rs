//! The logging level of MCP (`LoggingLevel`): the same in 2025-11-25 (`logging/setLevel`,
//! `notifications/message`) and 2026-07-28 (the `io.modelcontextprotocol/logLevel` key of a
//! request's `_meta`), so both eras and the server API share this one type.

/// RFC 5424 severities of MCP logging (`LoggingLevel`, the same in both revisions), from the
/// least severe, so `Ord` is severity order.
///
/// It reads from its name on the wire (`serde`), and a tool argument of this type has the
/// schema of `LoggingLevel` (`schemars`: the eight names).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[schemars(inline, description = "An MCP logging level (RFC 5424 severities).")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Reads a level name (`"debug"` .. `"emergency"`).
    pub fn parse(s: &str) -> Option<LogLevel> {
        Some(match s {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }

    /// The level name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl std::str::FromStr for LogLevel {
    type Err = ();

    fn from_str(name: &str) -> Result<Self, ()> {
        LogLevel::parse(name).ok_or(())
    }
}
