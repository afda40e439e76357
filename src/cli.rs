//! The command line: `mcp-bridge [options] [--] <command> [args...]`: like `env` or `nohup`,
//! the command starts at the first argument that is not an option (the `--` is optional) and
//! goes to the child verbatim. Invalid arguments print the cause (never the value) and the
//! usage on stderr, and exit 2.

use clap::error::{ContextKind, ErrorKind};
use clap::{CommandFactory, Parser, ValueEnum};
use std::ffi::OsString;
use std::time::Duration;

use crate::config::{BridgeConfig, Timeouts};
use crate::protocol::framing::{DEFAULT_MAX_LINE_BYTES, MAX_MAX_LINE_BYTES};
use crate::protocol::notify::{
    LISTEN_ACK_TIMEOUT_SECS, LISTEN_BACKOFF_INITIAL_MS, LISTEN_BACKOFF_MAX_SECS,
    LISTEN_STABLE_SECS, ListenTimings,
};
use crate::transport::upstream::UpstreamSpec;

/// Exit code of invalid arguments.
pub const EXIT_USAGE: i32 = 2;
/// Longest accepted time limit, in seconds (about 30 days).
pub const MAX_TIMEOUT_SECS: f64 = 2_592_000.0;

const AFTER_HELP: &str = "\
The command starts at the first argument that is not an option of mcp-bridge, like env or
nohup: everything from there on goes to it verbatim, options included. A `--` before it is
optional; use it when the command's name itself starts with `-`.

Examples:
  mcp-bridge mcp-example-server
  mcp-bridge python3 server.py --port 1
  mcp-bridge --name files -- npx -y some-mcp-server --root /tmp
  mcp-bridge --log-level debug -- python3 server.py

The editor starts mcp-bridge as a stdio server; mcp-bridge starts <COMMAND> and speaks
MCP 2026-07-28 to it over its stdin and stdout. The child's stderr passes through.
Exit codes: 0 at the end of stdin (or SIGTERM, SIGINT, SIGHUP), 1 when the upstream server exits
after initialize, 2 for invalid arguments.";

/// The log levels of `--log-level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogLevelArg {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevelArg {
    /// The tracing filter of the level.
    pub fn filter(self) -> tracing::level_filters::LevelFilter {
        use tracing::level_filters::LevelFilter;
        match self {
            LogLevelArg::Error => LevelFilter::ERROR,
            LogLevelArg::Warn => LevelFilter::WARN,
            LogLevelArg::Info => LevelFilter::INFO,
            LogLevelArg::Debug => LevelFilter::DEBUG,
            LogLevelArg::Trace => LevelFilter::TRACE,
        }
    }
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= MAX_TIMEOUT_SECS => Ok(v),
        _ => Err(format!(
            "expected seconds, more than 0 and at most {MAX_TIMEOUT_SECS}"
        )),
    }
}

/// The command line of `mcp-bridge`.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "mcp-bridge",
    version,
    about = "Lets an MCP 2025-11-25 editor (VS Code, Claude Desktop, Cursor) use an MCP 2026-07-28 server.",
    after_help = AFTER_HELP,
    override_usage = "mcp-bridge [OPTIONS] [--] <COMMAND> [ARGS]..."
)]
pub struct Cli {
    /// Server name shown to the editor when the upstream server gives none [default: the command's file name]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Lowest level of the bridge's own stderr lines
    #[arg(long, value_enum, value_name = "LEVEL", default_value = "info")]
    pub log_level: LogLevelArg,
    /// Time limit of server/discover when the editor initializes, in seconds
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = seconds)]
    pub discover_timeout: f64,
    /// Longest JSON-RPC line accepted from the editor or the upstream, in bytes (1 to 1073741824)
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_MAX_LINE_BYTES as u64))]
    pub max_line_bytes: u64,
    /// Time limit of the list methods and completion/complete, in seconds
    #[arg(long, value_name = "SECONDS", default_value = "120", value_parser = seconds)]
    pub list_timeout: f64,
    /// Time limit of prompts/get and resources/read, in seconds
    #[arg(long, value_name = "SECONDS", default_value = "120", value_parser = seconds)]
    pub read_timeout: f64,
    /// Time limit of tools/call, in seconds
    #[arg(long, value_name = "SECONDS", default_value = "3600", value_parser = seconds)]
    pub call_timeout: f64,
    /// Time the editor has to answer one round of input requests of the upstream, in seconds
    #[arg(long, value_name = "SECONDS", default_value = "3600", value_parser = seconds)]
    pub input_timeout: f64,
    /// Requests of the editor in flight at once; the next one gets an error at once
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_in_flight: u32,
    /// Wait for the upstream to exit at each step of the shutdown (after its stdin closes, then after SIGTERM; then SIGKILL), in seconds
    #[arg(long, value_name = "SECONDS", default_value = "2", value_parser = seconds)]
    pub shutdown_grace: f64,
    /// Wait before a new listen stream after a loss, in seconds; it doubles up to --listen-backoff-max
    #[arg(long, value_name = "SECONDS", default_value_t = LISTEN_BACKOFF_INITIAL_MS as f64 / 1000.0, value_parser = seconds)]
    pub listen_backoff_initial: f64,
    /// Longest wait before a new listen stream, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = LISTEN_BACKOFF_MAX_SECS as f64, value_parser = seconds)]
    pub listen_backoff_max: f64,
    /// A listen stream that lives this long after its acknowledgment makes the next wait the first one again, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = LISTEN_STABLE_SECS as f64, value_parser = seconds)]
    pub listen_stable: f64,
    /// Time limit of the acknowledgment of a listen stream, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = LISTEN_ACK_TIMEOUT_SECS as f64, value_parser = seconds)]
    pub listen_ack_timeout: f64,
    /// The upstream MCP 2026-07-28 server command and its arguments, verbatim: everything from
    /// the first argument that is not an option of the bridge (or after `--`)
    #[arg(
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

impl Cli {
    /// The configuration of the running bridge.
    pub fn config(&self) -> BridgeConfig {
        let mut parts = self.command.iter().cloned();
        let command = parts.next().unwrap_or_default();
        BridgeConfig {
            upstream: UpstreamSpec::Child {
                command,
                args: parts.collect(),
            },
            name: self.name.clone(),
            discover_timeout: Duration::from_secs_f64(self.discover_timeout),
            max_line_bytes: self.max_line_bytes as usize,
            timeouts: Timeouts {
                list: Duration::from_secs_f64(self.list_timeout),
                read: Duration::from_secs_f64(self.read_timeout),
                call: Duration::from_secs_f64(self.call_timeout),
                later_read: Timeouts::default().later_read,
                input: Duration::from_secs_f64(self.input_timeout),
            },
            max_in_flight: self.max_in_flight as usize,
            shutdown_grace: Duration::from_secs_f64(self.shutdown_grace),
            listen: ListenTimings {
                backoff_initial: Duration::from_secs_f64(self.listen_backoff_initial),
                backoff_max: Duration::from_secs_f64(self.listen_backoff_max),
                stable: Duration::from_secs_f64(self.listen_stable),
                ack_timeout: Duration::from_secs_f64(self.listen_ack_timeout),
            },
        }
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run the bridge.
    Run(Box<Cli>),
    /// Print this text to stdout and exit 0 (`--help`, `--version`).
    Print(String),
    /// Print this text to stderr and exit [`EXIT_USAGE`].
    Usage(String),
}

/// Parses the arguments (the program name first).
pub fn parse<I, T>(args: I) -> Parsed
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => Parsed::Run(Box::new(cli)),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                Parsed::Print(e.render().to_string())
            }
            _ => Parsed::Usage(usage_error(&e)),
        },
    }
}

fn usage_error(e: &clap::Error) -> String {
    let arg = e
        .get(ContextKind::InvalidArg)
        .map(|a| {
            a.to_string()
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let cause = match e.kind() {
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => format!("invalid value for {arg}"),
        ErrorKind::MissingRequiredArgument => {
            "missing the upstream command: give it after the options (or after --)".to_string()
        }
        ErrorKind::UnknownArgument => {
            "unexpected argument (not an option of mcp-bridge; the upstream command comes after the options)".to_string()
        }
        ErrorKind::ArgumentConflict => format!("conflicting arguments: {arg}"),
        ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues => {
            format!("wrong number of values for {arg}")
        }
        ErrorKind::InvalidUtf8 => "an argument is not valid UTF-8".to_string(),
        _ => "invalid arguments".to_string(),
    };
    let usage = Cli::command().render_usage().to_string();
    format!(
        "{}: cli: error: {cause}\n\n{usage}\n\nFor more information, try '--help'.\n",
        crate::log::TAG
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command_of(args: &[&str]) -> (Vec<String>, Option<String>) {
        match parse(args.iter().copied()) {
            Parsed::Run(cli) => (
                cli.command
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
                cli.name.clone(),
            ),
            other => panic!("expected Run for {args:?}, got {other:?}"),
        }
    }

    #[test]
    fn the_command_starts_at_the_first_argument_that_is_not_an_option() {
        let cases: &[(&[&str], &[&str], Option<&str>)] = &[
            (
                &["python3", "server.py", "--port", "1"],
                &["python3", "server.py", "--port", "1"],
                None,
            ),
            (
                &["--name", "x", "srv", "--name", "y"],
                &["srv", "--name", "y"],
                Some("x"),
            ),
            (
                &["--name", "x", "--", "srv", "-v"],
                &["srv", "-v"],
                Some("x"),
            ),
            (&["srv", "--", "-x"], &["srv", "--", "-x"], None),
            (&["srv", "-h"], &["srv", "-h"], None),
            (&["srv", "--help"], &["srv", "--help"], None),
            (&["srv", "--version"], &["srv", "--version"], None),
            (&["--", "--weird-name", "a"], &["--weird-name", "a"], None),
            (&["--", "srv", "--"], &["srv", "--"], None),
            (&["--name=x", "srv"], &["srv"], Some("x")),
        ];
        for (args, command, name) in cases {
            let mut argv = vec!["mcp-bridge"];
            argv.extend_from_slice(args);
            let (c, n) = command_of(&argv);
            assert_eq!(c, *command, "{args:?}");
            assert_eq!(n.as_deref(), *name, "{args:?}");
        }
    }

    fn usage_of(args: &[&str]) -> String {
        match parse(args.iter().copied()) {
            Parsed::Usage(s) => s,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn the_command_after_the_separator_is_kept_unchanged() {
        let Parsed::Run(cli) = parse([
            "mcp-bridge",
            "--name",
            "x",
            "--",
            "srv",
            "--name",
            "-v",
            "--",
        ]) else {
            panic!("expected Run");
        };
        let c = cli.config();
        let UpstreamSpec::Child { command, args } = &c.upstream else {
            panic!("the command line gives a child upstream");
        };
        assert_eq!(command, "srv");
        assert_eq!(
            args,
            &vec![OsString::from("--name"), "-v".into(), "--".into()]
        );
        assert_eq!(c.name.as_deref(), Some("x"));
        assert_eq!(c.max_line_bytes, 64 * 1024 * 1024);
        assert_eq!(c.discover_timeout, Duration::from_secs(60));
        assert_eq!(c.listen, ListenTimings::default());
    }

    #[test]
    fn invalid_values_name_the_option_but_never_the_value() {
        let s = usage_of(&["mcp-bridge", "--max-line-bytes", "0", "--", "x"]);
        assert!(
            s.starts_with("mcp-bridge: cli: error: invalid value for --max-line-bytes"),
            "{s}"
        );
        assert!(!s.contains(" 0 ") && !s.contains("'0'"), "{s}");
        let s = usage_of(&["mcp-bridge", "--max-line-bytes", "1073741825", "--", "x"]);
        assert!(!s.contains("1073741825"), "{s}");
        let s = usage_of(&[
            "mcp-bridge",
            "--discover-timeout",
            "secret-token",
            "--",
            "x",
        ]);
        assert!(
            !s.contains("secret-token") && s.contains("--discover-timeout"),
            "{s}"
        );
        let s = usage_of(&["mcp-bridge", "--log-level", "loud", "--", "x"]);
        assert!(!s.contains("loud"), "{s}");
        assert!(usage_of(&["mcp-bridge"]).contains("missing the upstream command"));
        assert!(
            usage_of(&["mcp-bridge", "--bogus-secret", "--", "x"]).contains("unexpected argument")
        );
        assert!(!usage_of(&["mcp-bridge", "--bogus-secret", "--", "x"]).contains("bogus-secret"));
        assert!(usage_of(&["mcp-bridge", "--name", "x"]).contains("missing the upstream command"));
        assert!(usage_of(&["mcp-bridge", "--"]).contains("missing the upstream command"));
    }

    #[test]
    fn the_largest_line_limit_is_one_gibibyte() {
        assert!(matches!(
            parse(["mcp-bridge", "--max-line-bytes", "1073741824", "--", "x"]),
            Parsed::Run(_)
        ));
    }
}
