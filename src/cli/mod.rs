//! The command line: `mcp-bridge [options] [--] <command> [args...]`: like `env` or `nohup`,
//! the command starts at the first argument that is not an option (the `--` is optional) and
//! goes to the child verbatim. Invalid arguments print the cause (never the value) and the
//! usage on stderr, and exit 2.

use clap::error::{ContextKind, ErrorKind};
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use std::ffi::OsString;
use std::time::Duration;

pub mod config_file;
pub mod filter;
pub mod sign_in;
pub mod url_form;
mod with_config;

use crate::actors::config::{BridgeConfig, Timeouts};
use crate::actors::gateway::{
    DEFAULT_CRASH_LOOP_ENDS, DEFAULT_CRASH_LOOP_WINDOW, DEFAULT_FAILED_RETRY,
    DEFAULT_RESTART_BACKOFF_INITIAL, DEFAULT_RESTART_BACKOFF_MAX, DEFAULT_START_TIME_LIMIT,
    RestartPolicy,
};
use crate::protocol::listen::{
    LISTEN_ACK_TIMEOUT_SECS, LISTEN_BACKOFF_INITIAL_MS, LISTEN_BACKOFF_MAX_SECS,
    LISTEN_STABLE_SECS, ListenTimings,
};
use crate::protocol::rules::item_filter::ItemFilter;
use crate::protocol::wire::framing::{DEFAULT_MAX_LINE_BYTES, MAX_MAX_LINE_BYTES};
use crate::transport::child::ChildEnv;
use crate::transport::http::{DEFAULT_MAX_RESPONSE_BYTES, HttpSpec, MAX_MAX_RESPONSE_BYTES};
use crate::transport::open::UpstreamSpec;

/// Exit code of invalid arguments.
pub const EXIT_USAGE: i32 = 2;
/// Longest accepted time limit, in seconds (about 30 days).
pub const MAX_TIMEOUT_SECS: f64 = 2_592_000.0;
/// Shortest accepted time limit (`--discover-timeout`, `--list-timeout`, `--read-timeout`,
/// `--call-timeout`, `--input-timeout`, `--listen-ack-timeout`, `--shutdown-grace`,
/// `--sign-in-timeout`), in seconds: below it a limit fails what a server answers at once (a
/// round trip through a child takes milliseconds, a busy machine's scheduler adds tens).
pub const MIN_TIMEOUT_SECS: f64 = 0.1;
/// Shortest accepted wait of the listen stream (`--listen-backoff-initial`,
/// `--listen-backoff-max`, `--listen-stable`), in seconds: a server that ends each stream right
/// after its acknowledgment gets at most 20 new streams a second (and the editor as many list
/// changes), not thousands.
pub const MIN_LISTEN_WAIT_SECS: f64 = 0.05;

/// The first screen of `--help`: what the bridge does with both kinds of server.
const LONG_ABOUT: &str = "\
Lets an MCP 2025-11-25 editor (VS Code, Claude Desktop, Cursor) use an MCP server of either
revision. The editor starts mcp-bridge as its stdio server; mcp-bridge starts the server's
command (or reaches its URL) and asks it server/discover:
  - a server that speaks MCP 2026-07-28 is translated for the 2025-11-25 editor;
  - a server that speaks 2025-11-25 or earlier is passed through unchanged (the fallback).
In an editor's config, write the full path of mcp-bridge and of the server's program: an
editor starts servers with a short PATH. Every option and message: docs/usage.md of the
source tree that `cargo install --path` built.";

const AFTER_HELP: &str = "\
The command starts at the first argument that is not an option of mcp-bridge, like env or
nohup: everything from there on goes to it verbatim, options included. A `--` before it is
optional; use it when the command's name itself starts with `-`.

With a URL in place of the command (https, or http to a loopback host: localhost,
*.localhost, 127.0.0.0/8, [::1]; no user info, no fragment), mcp-bridge speaks MCP
2026-07-28 over Streamable HTTP to the server at that URL. Give a secret header with
--header-env (never --header: command lines show in process lists and editor logs).
HTTPS_PROXY or ALL_PROXY is the proxy, NO_PROXY names hosts without one; a loopback host
never uses a proxy. A URL upstream never stops the bridge: a failed request gets an error.

Examples:
  mcp-bridge mcp-example-server
  mcp-bridge python3 server.py --port 1
  mcp-bridge --name files -- npx -y some-mcp-server --root /tmp
  mcp-bridge --log-level debug -- python3 server.py
  mcp-bridge https://mcp.example.com/mcp
  mcp-bridge --header-env Authorization=API_AUTH https://mcp.example.com/mcp
  mcp-bridge --allow-tool 'read_*' --allow-tool 'list_*' -- python3 server.py
  mcp-bridge --deny-tool 'delete_*' https://mcp.example.com/mcp

The filters show the editor only some of the server's tools, prompts and resources: above,
the read-only tools read_* and list_*, or every tool but delete_*. GLOB: * any text, ? one
character, [abc], [!abc], {a,b}, \\ before a character for itself; the whole name (or URI)
must match. A --deny-* glob wins over an --allow-* glob; without --allow-*, everything not
denied is shown. A hidden item is absent from its list (the other items in their order, each
page with its cursor), and a request that names it gets the error of an unknown one without
reaching the server. They hold in pass-through too.

The doctor subcommand checks a server through the bridge and says what an editor will see:
`mcp-bridge doctor [OPTIONS] <COMMAND>...` or `<URL>` (the revision and why, the server's
name and capabilities, the lists and the items the bridge repairs or drops, the sign-in a URL
asks for, timings, the editors' configuration); see `mcp-bridge doctor --help`.
`mcp-bridge doctor --config FILE` checks every server of an editor's configuration file as it
is, Claude Desktop's or Cursor's {\"mcpServers\": ...} or VS Code's mcp.json, and the names
their tools get behind one bridge ({server}__{tool}); a server's bridge options go in its
entry under \"mcp-bridge\", which editors ignore:
  {\"mcpServers\": {\"files\": {\"command\": \"/usr/local/bin/mcp-server-filesystem\",
     \"args\": [\"${userHome}/Documents\"],
     \"mcp-bridge\": {\"denyTool\": [\"write_*\"], \"callTimeout\": 60}}}}
`mcp-bridge --config FILE` runs every server of that same file behind this one bridge: the
editor starts one stdio server and sees every server's tools and prompts as {server}__{name}
and resources as {server}+{uri}; each server is supervised on its own (one that exits fails
only its own calls and starts again; see the Many servers options). The editor's entry:
  {\"mcpServers\": {\"all\": {\"command\": \"/home/you/.cargo/bin/mcp-bridge\",
     \"args\": [\"--config\", \"/home/you/.config/Claude/claude_desktop_config.json\"]}}}

With --serve-http ADDR (PORT on 127.0.0.1, or IP:PORT), mcp-bridge serves the server over
Streamable HTTP at http://ADDR/mcp instead of stdio: to MCP 2025-11-25 clients in sessions,
each session a bridge of its own (every option above applies to each), and to MCP 2026-07-28
clients when one run of the server serves all (--upstream-lifetime: auto shares a command's
2026-07-28 server and gives a 2025-11-25 one a run per session):
  mcp-bridge --serve-http 8000 -- python3 server.py
Beyond loopback a client needs `Authorization: Bearer TOKEN`, the token of
MCP_BRIDGE_LISTEN_TOKEN or else one made at start and written to stderr, unless --no-auth.
GET /healthz answers while it runs; SIGTERM or SIGINT ends every session and its server.

The logout subcommand deletes stored sign-ins of URL servers: `mcp-bridge logout <URL>` one
(give the server entry's --account, --redirect-port, --token-store and key), `mcp-bridge
logout --all` every one; see `mcp-bridge logout --help`.

The editor starts mcp-bridge as a stdio server; mcp-bridge starts <COMMAND> and speaks
MCP 2026-07-28 to it over its stdin and stdout. The child's stderr passes through.
SECONDS values are from 0.1 to 2592000 (--listen-backoff-initial, --listen-backoff-max and
--listen-stable from 0.05).
Exit codes: 0 at the end of stdin (also on SIGTERM, SIGINT or SIGHUP, and when the editor
closes the bridge's stdout); 1 when the upstream server exits after initialize (or a URL
server ends its 2025-11-25 session), and on an internal error; 2 for invalid arguments (also
a missing --header-env variable, a --ca-file or --token-key-file that cannot be used, a
token store that does not open, and a --config file that cannot be used); 128 + the signal's number (143, 130, 129) when a second
SIGTERM, SIGINT or SIGHUP cuts the shutdown short.";

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

/// How long a run of the server lives behind `--serve-http` (`--upstream-lifetime`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UpstreamLifetime {
    /// Shared for a command whose server answers `server/discover` at start as a
    /// 2026-07-28 server, else a run for each session.
    Auto,
    /// A run for each session, which ends with it.
    PerSession,
    /// One run for every session, started at the first and again after it ends.
    Shared,
}

/// A time limit that is not a number of seconds in its range (clap adds the option and the
/// value; exit [`EXIT_USAGE`]): `expected seconds, at least <min> and at most 2592000`.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "expected seconds, at least {min_secs} and at most {}",
    MAX_TIMEOUT_SECS
)]
pub struct SecondsError {
    /// The least the option takes, in seconds.
    pub min_secs: f64,
}

/// Reads seconds from `min` to [`MAX_TIMEOUT_SECS`]. Errors: [`SecondsError`].
fn seconds_from(s: &str, min: f64) -> Result<f64, SecondsError> {
    match s.parse::<f64>() {
        Ok(v) if (min..=MAX_TIMEOUT_SECS).contains(&v) => Ok(v),
        _ => Err(SecondsError { min_secs: min }),
    }
}

/// The value parser of time limits in seconds: [`MIN_TIMEOUT_SECS`] to [`MAX_TIMEOUT_SECS`].
pub fn seconds(s: &str) -> Result<f64, SecondsError> {
    seconds_from(s, MIN_TIMEOUT_SECS)
}

/// The value parser of the listen stream's waits in seconds: [`MIN_LISTEN_WAIT_SECS`] to
/// [`MAX_TIMEOUT_SECS`].
pub fn listen_wait_seconds(s: &str) -> Result<f64, SecondsError> {
    seconds_from(s, MIN_LISTEN_WAIT_SECS)
}

/// The command line of `mcp-bridge`.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "mcp-bridge",
    version,
    about = "Lets an MCP 2025-11-25 editor (VS Code, Claude Desktop, Cursor) use an MCP server of either revision.",
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    override_usage = "mcp-bridge [OPTIONS] [--] <COMMAND> [ARGS]...\n       mcp-bridge [OPTIONS] <URL>\n       mcp-bridge --serve-http <ADDR> [OPTIONS] [--] <COMMAND [ARGS]... | URL>\n       mcp-bridge [--log-level <LEVEL>] [MANY SERVERS OPTIONS] --config <FILE>\n       mcp-bridge doctor [--json] [--sign-in] [OPTIONS] <COMMAND [ARGS]... | URL>\n       mcp-bridge doctor [--json] [--log-level <LEVEL>] --config <FILE>\n       mcp-bridge logout [--account <LABEL>] [--forget-client] <URL> | --all"
)]
pub struct Cli {
    /// Server name shown to the editor when the upstream server gives none [default: the command's file name]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Lowest level of the bridge's own stderr lines
    #[arg(long, value_enum, value_name = "LEVEL", default_value = "info")]
    pub log_level: LogLevelArg,
    /// Write the metrics line (the counters of the actors, queues and methods) at info every SECONDS [default: off]
    #[arg(long, value_name = "SECONDS", value_parser = seconds, allow_negative_numbers = true)]
    pub metrics_interval: Option<f64>,
    /// Time limit of server/discover when the editor initializes, and again of the initialize passed through to a 2025-11-25 server, in seconds
    #[arg(help_heading = "Time limits", long, value_name = "SECONDS", default_value = "60", value_parser = seconds, allow_negative_numbers = true)]
    pub discover_timeout: f64,
    /// Longest JSON-RPC line accepted from the editor or the upstream, in bytes (1 to 1073741824)
    #[arg(help_heading = "Limits", long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_MAX_LINE_BYTES as u64), allow_negative_numbers = true)]
    pub max_line_bytes: u64,
    /// Time limit of the list methods and completion/complete, in seconds
    #[arg(help_heading = "Time limits", long, value_name = "SECONDS", default_value = "120", value_parser = seconds, allow_negative_numbers = true)]
    pub list_timeout: f64,
    /// Time limit of prompts/get and resources/read, in seconds
    #[arg(help_heading = "Time limits", long, value_name = "SECONDS", default_value = "120", value_parser = seconds, allow_negative_numbers = true)]
    pub read_timeout: f64,
    /// Time limit of tools/call, in seconds
    #[arg(help_heading = "Time limits", long, value_name = "SECONDS", default_value = "3600", value_parser = seconds, allow_negative_numbers = true)]
    pub call_timeout: f64,
    /// Time the editor has to answer one round of input requests of the upstream, in seconds
    #[arg(help_heading = "Time limits", long, value_name = "SECONDS", default_value = "3600", value_parser = seconds, allow_negative_numbers = true)]
    pub input_timeout: f64,
    /// Requests of the editor in flight at once (1 to 65536); the next one gets an error at once
    #[arg(help_heading = "Limits", long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65_536), allow_negative_numbers = true)]
    pub max_in_flight: u32,
    /// Wait for the upstream to exit at each step of the shutdown (after its stdin closes, then after SIGTERM; then SIGKILL), in seconds
    #[arg(help_heading = "Time limits", long, value_name = "SECONDS", default_value = "2", value_parser = seconds, allow_negative_numbers = true)]
    pub shutdown_grace: f64,
    /// Wait before a new listen stream after a loss, in seconds; it doubles up to --listen-backoff-max
    #[arg(help_heading = "Listen stream", long, value_name = "SECONDS", default_value_t = LISTEN_BACKOFF_INITIAL_MS as f64 / 1000.0, value_parser = listen_wait_seconds, allow_negative_numbers = true)]
    pub listen_backoff_initial: f64,
    /// Longest wait before a new listen stream, in seconds
    #[arg(help_heading = "Listen stream", long, value_name = "SECONDS", default_value_t = LISTEN_BACKOFF_MAX_SECS as f64, value_parser = listen_wait_seconds, allow_negative_numbers = true)]
    pub listen_backoff_max: f64,
    /// A listen stream that lives this long after its acknowledgment makes the next wait the first one again, in seconds
    #[arg(help_heading = "Listen stream", long, value_name = "SECONDS", default_value_t = LISTEN_STABLE_SECS as f64, value_parser = listen_wait_seconds, allow_negative_numbers = true)]
    pub listen_stable: f64,
    /// Time limit of the acknowledgment of a listen stream, in seconds
    #[arg(help_heading = "Listen stream", long, value_name = "SECONDS", default_value_t = LISTEN_ACK_TIMEOUT_SECS as f64, value_parser = seconds, allow_negative_numbers = true)]
    pub listen_ack_timeout: f64,
    /// URL form: send the header NAME with VALUE on every request (never a secret: use --header-env)
    #[arg(help_heading = "URL form", long = "header", value_name = "NAME:VALUE")]
    pub header: Vec<String>,
    /// URL form: send the header NAME with the value of the environment variable VAR (a variable that is not set is an error)
    #[arg(
        help_heading = "URL form",
        long = "header-env",
        value_name = "NAME=VAR"
    )]
    pub header_env: Vec<String>,
    /// URL form: also trust the CA certificates of this PEM file (besides the system's)
    #[arg(help_heading = "URL form", long, value_name = "PEM")]
    pub ca_file: Option<std::path::PathBuf>,
    /// URL form: longest JSON response, and longest event of a response stream, in bytes (1 to 1073741824)
    #[arg(help_heading = "URL form", long, value_name = "BYTES", default_value_t = DEFAULT_MAX_RESPONSE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_MAX_RESPONSE_BYTES as u64), allow_negative_numbers = true)]
    pub max_response_bytes: u64,
    /// The sign-in options of the URL form.
    #[command(flatten)]
    pub sign_in: sign_in::SignInArgs,
    /// The filter options (tools, prompts, resources).
    #[command(flatten)]
    pub filter: filter::FilterArgs,
    /// The item filter of the filter options, made by [`parse`] (`None`: none given).
    #[arg(skip)]
    pub item_filter: Option<std::sync::Arc<ItemFilter>>,
    /// The URL form, checked and read by [`parse`] (headers, CA file, proxy environment).
    #[arg(skip)]
    pub http: Option<HttpSpec>,
    /// Warnings of the command line, for the log once it runs.
    #[arg(skip)]
    pub warnings: Vec<String>,
    /// What a child server gets besides the bridge's environment and folder: a server's
    /// `env` and `cwd` in a configuration file (`config_file`); none on the command line.
    #[arg(skip)]
    pub child_env: ChildEnv,
    /// Many servers behind this one bridge: every server of an editor's configuration file (Claude Desktop's or Cursor's mcpServers, VS Code's mcp.json), each tool and prompt as SERVER__NAME; a server's own options go in its "mcp-bridge" entry
    #[arg(
        help_heading = "Many servers",
        long,
        value_name = "FILE",
        conflicts_with = "command"
    )]
    pub config: Option<std::path::PathBuf>,
    /// With --config: the longest wait of the editor's initialize for the servers' own; a server that is later joins when it answers, in seconds
    #[arg(help_heading = "Many servers", long, value_name = "SECONDS", default_value_t = DEFAULT_START_TIME_LIMIT.as_secs_f64(), value_parser = seconds, allow_negative_numbers = true)]
    pub start_time_limit: f64,
    /// With --config: the first wait before a server that ended starts again; it doubles with each end in the crash-loop window, in seconds
    #[arg(help_heading = "Many servers", long, value_name = "SECONDS", default_value_t = DEFAULT_RESTART_BACKOFF_INITIAL.as_secs_f64(), value_parser = seconds, allow_negative_numbers = true)]
    pub restart_backoff_initial: f64,
    /// With --config: the longest wait before a server that ended starts again, in seconds
    #[arg(help_heading = "Many servers", long, value_name = "SECONDS", default_value_t = DEFAULT_RESTART_BACKOFF_MAX.as_secs_f64(), value_parser = seconds, allow_negative_numbers = true)]
    pub restart_backoff_max: f64,
    /// With --config: a server that ends this many times within --crash-loop-window is failed: left out (its items leave the lists) until --failed-retry later
    #[arg(help_heading = "Many servers", long, value_name = "N", default_value_t = DEFAULT_CRASH_LOOP_ENDS as u32, value_parser = clap::value_parser!(u32).range(1..=1000), allow_negative_numbers = true)]
    pub crash_loop_ends: u32,
    /// With --config: the window of --crash-loop-ends, in seconds
    #[arg(help_heading = "Many servers", long, value_name = "SECONDS", default_value_t = DEFAULT_CRASH_LOOP_WINDOW.as_secs_f64(), value_parser = seconds, allow_negative_numbers = true)]
    pub crash_loop_window: f64,
    /// With --config: how long a failed server is left out before it is tried again, in seconds
    #[arg(help_heading = "Many servers", long, value_name = "SECONDS", default_value_t = DEFAULT_FAILED_RETRY.as_secs_f64(), value_parser = seconds, allow_negative_numbers = true)]
    pub failed_retry: f64,
    /// Serve the server over Streamable HTTP at ADDR instead of stdio: PORT (on 127.0.0.1) or IP:PORT; the endpoint is /mcp. Each 2025-11-25 client session gets a bridge and a run of the server of its own; GET /healthz answers while the process runs; it runs until SIGTERM or SIGINT. Beyond loopback clients need a bearer token: MCP_BRIDGE_LISTEN_TOKEN, else one made at start and written to stderr
    #[arg(help_heading = "Serve over HTTP", long, value_name = "ADDR", value_parser = crate::server::http::parse_addr)]
    pub serve_http: Option<std::net::SocketAddr>,
    /// With --serve-http beyond loopback: serve without a bearer token, to anyone who reaches the address
    #[arg(help_heading = "Serve over HTTP", long)]
    pub no_auth: bool,
    /// With --serve-http: sessions at once (1 to 65536), each with its run of the server; past it an idle session ends to make room, and when every one is busy a new client gets 503
    #[arg(help_heading = "Serve over HTTP", long, value_name = "N", default_value_t = crate::server::http::DEFAULT_MAX_SESSIONS as u32,
          value_parser = clap::value_parser!(u32).range(1..=65_536), allow_negative_numbers = true)]
    pub max_sessions: u32,
    /// With --serve-http: per-session, a run of the server for each session (any server); shared, one run of a command's 2026-07-28 server for every session and every 2026-07-28 client (a 2025-11-25 server keeps a session per connection and cannot be shared); auto, shared when the command's server answers server/discover at start as a 2026-07-28 server, else per-session
    #[arg(
        help_heading = "Serve over HTTP",
        long,
        value_enum,
        value_name = "LIFETIME",
        default_value = "auto"
    )]
    pub upstream_lifetime: UpstreamLifetime,
    /// The upstream MCP server command and its arguments, verbatim: everything from the first
    /// argument that is not an option of the bridge (or after `--`); or the URL of the upstream
    /// server
    #[arg(
        required_unless_present = "config",
        num_args = 1..,
        trailing_var_arg = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

impl Cli {
    /// The environment variables that `--header-env` names (read at parse time).
    pub fn header_env_vars(&self) -> Vec<String> {
        self.header_env
            .iter()
            .filter_map(|h| h.split_once('=').map(|(_, var)| var.to_string()))
            .collect()
    }

    /// The supervision of many servers (`--config`).
    pub fn restart_policy(&self) -> RestartPolicy {
        RestartPolicy {
            backoff_initial: Duration::from_secs_f64(self.restart_backoff_initial),
            backoff_max: Duration::from_secs_f64(self.restart_backoff_max),
            loop_ends: self.crash_loop_ends as usize,
            loop_window: Duration::from_secs_f64(self.crash_loop_window),
            failed_retry: Duration::from_secs_f64(self.failed_retry),
        }
    }

    /// The configuration of the running bridge.
    pub fn config(&self) -> BridgeConfig {
        let mut parts = self.command.iter().cloned();
        let command = parts.next().unwrap_or_default();
        let upstream = match &self.http {
            Some(spec) => UpstreamSpec::Http(spec.clone()),
            None => UpstreamSpec::Child {
                command,
                args: parts.collect(),
                env: self.child_env.clone(),
            },
        };
        BridgeConfig {
            upstream,
            name: self.name.clone(),
            discover_timeout: Duration::from_secs_f64(self.discover_timeout),
            open_upstream: crate::transport::open::open,
            max_line_bytes: self.max_line_bytes as usize,
            max_depth: crate::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH,
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
            sign_in: None,
            metrics_interval: self.metrics_interval.map(Duration::from_secs_f64),
            item_filter: self.item_filter.clone(),
            observer: None,
            in_process: false,
            member: None,
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
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = Cli::command()
        .try_get_matches_from(&args)
        .and_then(|matches| match with_config::misplaced(&matches) {
            Some(cause) => Ok(Err(cause)),
            None => Cli::from_arg_matches(&matches).map(Ok),
        });
    let parsed = match parsed {
        Ok(Err(cause)) => return Parsed::Usage(usage_line(&cause)),
        Ok(Ok(cli)) => Ok(cli),
        Err(e) => Err(e),
    };
    match parsed {
        Ok(cli) if logout_after_options(&args, &cli.command) => {
            Parsed::Usage(usage_line(LOGOUT_COMES_FIRST))
        }
        Ok(mut cli) => match cli.read_url_form() {
            Ok(()) => match cli.filter.filter() {
                Ok(filter) => {
                    cli.item_filter = filter.map(std::sync::Arc::new);
                    let misplaced = misplaced_options(&cli.command);
                    cli.warnings.extend(misplaced);
                    Parsed::Run(Box::new(cli))
                }
                Err(e) => Parsed::Usage(usage_line(&e.to_string())),
            },
            Err(cause) => Parsed::Usage(usage_line(&cause.to_string())),
        },
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                Parsed::Print(e.render().to_string())
            }
            _ => match with_config::conflict(&args, &e) {
                Some(cause) => Parsed::Usage(usage_line(cause)),
                None => Parsed::Usage(usage_error(&e)),
            },
        },
    }
}

/// The warnings of the arguments after the server's program that are long options of the
/// bridge (`--deny-tool`, `--log-level=debug`), read from clap's own definition of [`Cli`]:
/// they go to the server, as the command line's rule says (everything from the program on is
/// the server's, like `env` or `nohup`), so a filter given there filters nothing. One warning
/// per option, which names the option, never its value (it may be a secret). `--help` and
/// `--version` are left out: a server has its own.
fn misplaced_options(command: &[OsString]) -> Vec<String> {
    let cli = Cli::command();
    let own: Vec<&str> = cli
        .get_arguments()
        .filter(|a| !a.is_positional() && !matches!(a.get_id().as_str(), "help" | "version"))
        .flat_map(|a| a.get_long_and_visible_aliases().unwrap_or_default())
        .collect();
    let mut warnings = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for arg in command.iter().skip(1) {
        let Some(name) = arg.to_str().and_then(|a| a.strip_prefix("--")) else {
            continue;
        };
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        if let Some(&long) = own.iter().find(|&&o| o == name)
            && !seen.contains(&long)
        {
            seen.push(long);
            warnings.push(format!(
                "--{long} comes after the server's program, so it goes to the server, not to mcp-bridge: an option of mcp-bridge goes before the program (mcp-bridge --{long} ... -- PROGRAM ...)"
            ));
        }
    }
    warnings
}

/// The cause of `mcp-bridge [OPTIONS] logout ...`: `logout` is read as the subcommand only as the
/// first argument, so after options it would be the upstream command.
const LOGOUT_COMES_FIRST: &str = "logout is the first argument when it is the subcommand: mcp-bridge logout [--account <LABEL>] [--forget-client] <URL> | --all (a program named logout behind the bridge: write -- logout)";

/// `mcp-bridge` options, then `logout` as the upstream command (`command`, the rest of `args`)
/// without `--` before it: a user who meant the subcommand (a program of that name comes after
/// `--`).
fn logout_after_options(args: &[OsString], command: &[OsString]) -> bool {
    let start = args.len().saturating_sub(command.len());
    command.first().is_some_and(|c| c == "logout")
        && start > 1
        && !args[1..start].iter().any(|a| a == "--")
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
        // clap's own text: the value, the option and what it accepts (a range, the values).
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => clap_cause(e),
        ErrorKind::MissingRequiredArgument => {
            "missing the upstream command: give it after the options (or after --)".to_string()
        }
        ErrorKind::UnknownArgument => {
            // The option's name only: what follows a `=` may be a secret given to a mistyped
            // option (`--token=...`).
            let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
            format!(
                "unexpected argument '{name}' (not an option of mcp-bridge; the upstream command comes after the options)"
            )
        }
        ErrorKind::ArgumentConflict if e.to_string().contains("cannot be used multiple times") => {
            format!("{arg} is given more than once (it takes one value)")
        }
        ErrorKind::ArgumentConflict => format!("conflicting arguments: {arg}"),
        ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues => {
            format!("wrong number of values for {arg}")
        }
        ErrorKind::InvalidUtf8 => "an argument is not valid UTF-8".to_string(),
        _ => "invalid arguments".to_string(),
    };
    usage_line(&cause)
}

/// clap's message of `e` up to its first blank line, without its `error: ` and with its lines
/// joined (`invalid value '-1' for '--call-timeout <SECONDS>': expected seconds, ...`).
fn clap_cause(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let first: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    crate::protocol::wire::excerpt::sanitize(&first.join(" "))
}

/// The text of a usage error: the cause, then the usage.
fn usage_line(cause: &str) -> String {
    let usage = Cli::command().render_usage().to_string();
    format!(
        "{}: cli: error: {cause}\n\n{usage}\n\nFor more information, try '--help'.\n",
        crate::log::TAG
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help's sentence on SECONDS values states the constants the value parsers use.
    #[test]
    fn the_help_states_the_bounds_of_seconds() {
        let text = AFTER_HELP.replace('\n', " ");
        assert!(
            text.contains(&format!(
                "SECONDS values are from {MIN_TIMEOUT_SECS} to {MAX_TIMEOUT_SECS} (--listen-backoff-initial, --listen-backoff-max and --listen-stable from {MIN_LISTEN_WAIT_SECS})."
            )),
            "{text}"
        );
    }

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
    fn logout_after_options_is_the_subcommand_in_the_wrong_place() {
        for args in [
            &[
                "mcp-bridge",
                "--log-level",
                "debug",
                "logout",
                "https://h/mcp",
            ][..],
            &[
                "mcp-bridge",
                "--token-store",
                "memory",
                "logout",
                "https://h/mcp",
            ],
            &["mcp-bridge", "--no-browser", "logout", "--all"],
        ] {
            let text = usage_of(args);
            assert!(
                text.starts_with(&format!("mcp-bridge: cli: error: {LOGOUT_COMES_FIRST}\n")),
                "{args:?}: {text}"
            );
        }
        // After `--`, or as the value of an option, `logout` is no subcommand.
        let (c, n) = command_of(&["mcp-bridge", "--", "logout", "x"]);
        assert_eq!((c, n), (vec!["logout".to_string(), "x".to_string()], None));
        let (c, n) = command_of(&["mcp-bridge", "--name", "logout", "srv"]);
        assert_eq!(
            (c, n),
            (vec!["srv".to_string()], Some("logout".to_string()))
        );
        let (c, _) = command_of(&["mcp-bridge", "srv", "logout"]);
        assert_eq!(c, vec!["srv".to_string(), "logout".to_string()]);
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
        let UpstreamSpec::Child { command, args, .. } = &c.upstream else {
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
    fn usage_errors_name_the_value_and_what_is_accepted_but_no_value_after_an_unknown_option() {
        let s = usage_of(&["mcp-bridge", "--max-line-bytes", "0", "--", "x"]);
        assert!(
            s.starts_with("mcp-bridge: cli: error: invalid value '0' for '--max-line-bytes <BYTES>': 0 is not in 1..=1073741824\n"),
            "{s}"
        );
        let s = usage_of(&["mcp-bridge", "--call-timeout", "-1", "x"]);
        assert!(
            s.starts_with("mcp-bridge: cli: error: invalid value '-1' for '--call-timeout <SECONDS>': expected seconds, at least 0.1 and at most 2592000\n"),
            "{s}"
        );
        assert!(usage_of(&["mcp-bridge"]).contains("missing the upstream command"));
        let s = usage_of(&["mcp-bridge", "--bogus-secret=v4lue", "--", "x"]);
        assert!(
            s.starts_with("mcp-bridge: cli: error: unexpected argument '--bogus-secret' (not an option of mcp-bridge"),
            "{s}"
        );
        assert!(!s.contains("v4lue"), "{s}");
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

    #[test]
    fn the_url_form_takes_headers_and_refuses_what_it_must() {
        // SAFETY: a variable name no other test reads.
        unsafe { std::env::set_var("MCP_BRIDGE_CLI_TEST_TOKEN", "Bearer t0k") };
        let Parsed::Run(cli) = parse([
            "mcp-bridge",
            "--header",
            "X-Team: blue",
            "--header-env",
            "Authorization=MCP_BRIDGE_CLI_TEST_TOKEN",
            "--max-response-bytes",
            "1000",
            "https://mcp.example.com/mcp",
        ]) else {
            panic!("expected Run");
        };
        let UpstreamSpec::Http(spec) = cli.config().upstream else {
            panic!("expected an HTTP upstream");
        };
        let headers: Vec<_> = spec
            .headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_string()))
            .collect();
        assert_eq!(
            headers,
            vec![
                ("x-team".to_string(), "blue".to_string()),
                ("authorization".to_string(), "Bearer t0k".to_string())
            ]
        );
        assert_eq!(spec.max_response_bytes, 1000);
        assert!(!format!("{spec:?}").contains("t0k"));
        let cases: &[(&[&str], &str)] = &[
            (
                &[
                    "--header-env",
                    "Authorization=MCP_BRIDGE_CLI_TEST_UNSET",
                    "https://h/mcp",
                ],
                "the variable MCP_BRIDGE_CLI_TEST_UNSET of --header-env Authorization is not set",
            ),
            (
                &["--header", "Host:x", "https://h/mcp"],
                "the header Host is set by the bridge or by HTTP and cannot be given",
            ),
            (
                &["--header", "Mcp-Session-Id:x", "https://h/mcp"],
                "the header Mcp-Session-Id is set by the bridge or by HTTP and cannot be given",
            ),
            (
                &["--header", "novalue", "https://h/mcp"],
                "--header takes NAME:VALUE",
            ),
            (
                &["--header", "X-A:1", "--", "srv"],
                "--header, --header-env, --ca-file and --max-response-bytes apply only to a URL upstream",
            ),
            (
                &["https://h/mcp", "extra"],
                "the URL form takes no arguments after the URL",
            ),
            (
                &["--ca-file", "/nonexistent/ca.pem", "https://h/mcp"],
                "--ca-file /nonexistent/ca.pem cannot be read: No such file or directory (os error 2)",
            ),
            (
                &["--ca-file", "/etc/hostname", "https://h/mcp"],
                "--ca-file /etc/hostname holds no PEM certificate",
            ),
        ];
        for (args, cause) in cases {
            let mut argv = vec!["mcp-bridge"];
            argv.extend_from_slice(args);
            let s = usage_of(&argv);
            assert!(
                s.starts_with(&format!("mcp-bridge: cli: error: {cause}\n")),
                "{args:?}: {s}"
            );
        }
    }
}
