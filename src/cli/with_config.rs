//! Which options of the command line go with `--config` (many servers behind one bridge):
//! the process's own and those of the supervision; a server's own options go in its entry of
//! the file, and the supervision's options go with `--config` only. And those of
//! `--serve-http`: `--no-auth` goes with it, and it does not go with `--config` (yet).

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};
use std::ffi::OsString;

use super::Cli;

/// The options of the supervision of many servers, which only `--config` has.
const ONLY_WITH_CONFIG: [&str; 6] = [
    "start_time_limit",
    "restart_backoff_initial",
    "restart_backoff_max",
    "crash_loop_ends",
    "crash_loop_window",
    "failed_retry",
];

/// Whether the option `id` goes with `--config`: the supervision's, and the process's own
/// (its log, its metrics line, the longest line). A server's options go in its entry.
fn goes_with_config(id: &str) -> bool {
    ONLY_WITH_CONFIG.contains(&id)
        || ["log_level", "metrics_interval", "max_line_bytes"].contains(&id)
}

/// Why the options of a parsed command line (`matches`) do not go together with (or without)
/// `--config`: an option of a
/// server beside `--config` (it goes in the server's entry of the file), or an option of the
/// supervision of many servers without it. `None`: they do.
pub(super) fn misplaced(matches: &ArgMatches) -> Option<String> {
    let command = Cli::command();
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let long = |id: &str| {
        command
            .get_arguments()
            .find(|a| a.get_id().as_str() == id)
            .and_then(|a| a.get_long())
            .map_or_else(|| id.to_owned(), |l| format!("--{l}"))
    };
    let ids: Vec<&str> = command
        .get_arguments()
        .map(|a| a.get_id().as_str())
        .filter(|id| given(id))
        .collect();
    if given("no_auth") && !given("serve_http") {
        return Some(
            "--no-auth goes with --serve-http (a server on stdio has no address to guard)".into(),
        );
    }
    if given("upstream_lifetime") && !given("serve_http") {
        return Some(
            "--upstream-lifetime goes with --serve-http (a server on stdio has one client)".into(),
        );
    }
    if given("max_sessions") && !given("serve_http") {
        return Some(
            "--max-sessions goes with --serve-http (a server on stdio has one client)".into(),
        );
    }
    if given("config") && given("serve_http") {
        return Some(
            "--serve-http serves one server's command or URL: the servers of a --config file are not served over HTTP yet".into(),
        );
    }
    if given("config") {
        let beside: Vec<String> = ids
            .iter()
            .filter(|id| **id != "config" && !goes_with_config(id))
            .map(|id| long(id))
            .collect();
        if !beside.is_empty() {
            return Some(format!(
                "{} cannot go with --config: beside it go only --log-level, --metrics-interval, --max-line-bytes and the Many servers options; a server's own options go in the \"mcp-bridge\" member of its entry in the file (docs/usage.md)",
                beside.join(", ")
            ));
        }
    } else if let Some(id) = ids.iter().find(|id| ONLY_WITH_CONFIG.contains(id)) {
        return Some(format!(
            "{} goes with --config (the supervision of many servers)",
            long(id)
        ));
    }
    None
}

/// Why `--config` does not go with the other arguments `args`, for clap's error `e`: a
/// server's command or URL beside it, or a second `--config` (clap's own words name only the
/// option). `None`: another error.
pub(super) fn conflict(args: &[OsString], e: &clap::Error) -> Option<&'static str> {
    let config = args
        .iter()
        .filter(|a| *a == "--config" || a.to_string_lossy().starts_with("--config="))
        .count();
    // clap reports an option given twice as a conflict with itself: not about `--config`
    // unless `--config` is the one given twice.
    let repeated = e.to_string().contains("cannot be used multiple times");
    match e.kind() {
        ErrorKind::ArgumentConflict if config >= 2 => Some("--config takes one file"),
        ErrorKind::ArgumentConflict if config == 1 && !repeated => {
            Some("--config runs the servers of the file: no server command or URL goes beside it")
        }
        _ => None,
    }
}
