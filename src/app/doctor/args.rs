//! The command line of `mcp-bridge doctor`: its own flags (`--json`, `--sign-in`) among the
//! options before the server, and every option of the bridge, read by the bridge's own parser
//! ([`cli::parse`]), so the server is started or reached exactly as `mcp-bridge` would do it
//! with the same options.

use clap::ValueEnum;
use std::ffi::OsString;
use std::path::PathBuf;

use crate::cli::{self, Cli, LogLevelArg};

/// The flag of the JSON report.
pub const JSON_FLAG: &str = "--json";
/// The flag that lets doctor sign in as the bridge does.
pub const SIGN_IN_FLAG: &str = "--sign-in";
/// The flag of a configuration file of many servers.
pub const CONFIG_FLAG: &str = "--config";
/// The flag of the log level (the one option of the bridge that `--config` takes).
const LOG_LEVEL_FLAG: &str = "--log-level";

/// The usage of `doctor --config`.
const CONFIG_USAGE: &str =
    "Usage: mcp-bridge doctor [--json] [--log-level <LEVEL>] --config <FILE>";

/// `mcp-bridge doctor --help`.
pub const DOCTOR_HELP: &str = "\
Checks an MCP server the way mcp-bridge uses it, and says what an editor will see.

Usage: mcp-bridge doctor [--json] [--sign-in] [OPTIONS] [--] <COMMAND> [ARGS]...
       mcp-bridge doctor [--json] [--sign-in] [OPTIONS] <URL>
       mcp-bridge doctor [--json] [--log-level <LEVEL>] --config <FILE>

doctor starts the server's command (or reaches its URL) through the bridge's own actors, as
an editor's mcp-bridge would, and reports:
  - the revision the server speaks (2026-07-28, translated; or 2025-11-25 and earlier, passed
    through, over stdio or the 2025-11-25 HTTP transport) and why the bridge decided so;
  - the server's name, version and capabilities;
  - how many tools, prompts, resources and resource templates it lists (every page), and each
    item a 2025-11-25 editor would refuse: what the bridge repairs, what it drops, and, in
    pass-through, what reaches the editor unchanged;
  - for a URL that asks for a sign-in: its protected resource metadata, its authorization
    server and the registrations it offers (dynamic registration, client ID metadata
    documents, pre-registration), without signing in;
  - the time of server/discover (or initialize) and of one list call, in milliseconds;
  - the configuration of VS Code, Claude Desktop and Cursor that runs mcp-bridge in front of
    the server, with the options given here (doctor's own left out).

Options of doctor (before the server, anywhere among the options):
      --json     One JSON object on stdout instead of the text (docs/usage.md describes it)
      --sign-in  Sign in as the bridge does when the server asks for it (a browser, or the
                 grant the sign-in options choose), then check the server behind the sign-in
      --config <FILE>
                 Check every enabled server of an editor's configuration file instead: Claude
                 Desktop's or Cursor's {\"mcpServers\": ...}, or VS Code's mcp.json
                 {\"servers\": ...} (comments allowed), each with its bridge options under
                 \"mcp-bridge\" in its entry. Each server's report is headed by its name, in the
                 file's order; then the names its tools and prompts get behind one bridge
                 ({server}__{name}) where they are sanitized or shortened, and any name two
                 items share, which fails. A file that cannot be used is exit 2, with
                 FILE:LINE:COLUMN and the member that is wrong.

Every option of mcp-bridge applies as it does to the bridge (see mcp-bridge --help):
--discover-timeout bounds server/discover (and a passed-through initialize), --list-timeout
each list call, the filters hide items, the URL form's options reach the URL.

Exit codes: 0 when the server is usable through the bridge (a URL that asks for a sign-in
counts as usable when the bridge can sign in there: its metadata is found and offers a
registration the bridge uses), 1 when it is not (the last line, and `reason` in JSON, says
why), 2 for invalid arguments. With --config: 0 when every enabled server is usable and no
two items share a name, else 1; 2 also for a file that cannot be used.

Examples:
  mcp-bridge doctor python3 server.py
  mcp-bridge doctor --json -- npx -y some-mcp-server
  mcp-bridge doctor https://mcp.example.com/mcp
  mcp-bridge doctor --sign-in --client-id my-app https://mcp.example.com/mcp
  mcp-bridge doctor --config ~/.config/Claude/claude_desktop_config.json
";

/// What doctor was asked.
pub struct DoctorArgs {
    /// `--json`.
    pub json: bool,
    /// `--sign-in`.
    pub sign_in: bool,
    /// The bridge's command line, as `mcp-bridge` reads it.
    pub cli: Box<Cli>,
    /// The bridge's arguments as given (its options and the server), doctor's own left out:
    /// the `args` of the editor's configuration.
    pub bridge_args: Vec<OsString>,
    /// Whether `--log-level` was given (else doctor logs warnings and errors only).
    pub log_level_given: bool,
}

/// What `doctor --config` was asked.
pub struct ConfigArgs {
    /// `--json`.
    pub json: bool,
    /// The file.
    pub path: PathBuf,
    /// `--log-level` (else doctor logs warnings and errors only).
    pub log_level: Option<LogLevelArg>,
}

/// What the command line asks for.
pub enum DoctorParsed {
    /// Examine the server.
    Run(DoctorArgs),
    /// Examine every server of a configuration file.
    RunConfig(ConfigArgs),
    /// Print this text to stdout, exit 0 (`--help`, `--version`).
    Print(String),
    /// Print this text to stderr, exit 2.
    Usage(String),
}

/// Whether `a` is an option of doctor's own.
fn is_own(a: &OsString) -> bool {
    a == JSON_FLAG || a == SIGN_IN_FLAG
}

/// Parses the arguments after `mcp-bridge doctor`. Doctor's flags count before the server
/// only (and before a `--`): from the server's first argument on, everything is the
/// server's, as for the bridge.
pub fn parse(args: Vec<OsString>) -> DoctorParsed {
    if let Some(parsed) = parse_config(&args) {
        return parsed;
    }
    let separator = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let mut keep: Vec<bool> = args
        .iter()
        .enumerate()
        .map(|(i, a)| !(i < separator && is_own(a)))
        .collect();
    // Two rounds at most: a flag of doctor's name found after the server's start is the
    // server's, put back (which moves no start: it comes after it).
    for _ in 0..2 {
        let kept: Vec<usize> = (0..args.len()).filter(|&i| keep[i]).collect();
        let mut argv: Vec<OsString> = vec!["mcp-bridge".into()];
        argv.extend(kept.iter().map(|&i| args[i].clone()));
        let cli = match cli::parse(argv) {
            cli::Parsed::Run(cli) => cli,
            cli::Parsed::Print(text) => {
                let help = args[..separator].iter().any(|a| a == "--help" || a == "-h");
                return DoctorParsed::Print(if help { DOCTOR_HELP.to_string() } else { text });
            }
            // The hint names doctor's own help, not the bridge's.
            cli::Parsed::Usage(text) => {
                return DoctorParsed::Usage(
                    text.replace("try '--help'", "try 'mcp-bridge doctor --help'"),
                );
            }
        };
        let start = kept
            .get(kept.len().saturating_sub(cli.command.len()))
            .copied()
            .unwrap_or(args.len());
        let late: Vec<usize> = (start..args.len()).filter(|&i| !keep[i]).collect();
        if late.is_empty() || cli.command.is_empty() {
            let own: Vec<&OsString> = (0..start).filter(|&i| !keep[i]).map(|i| &args[i]).collect();
            let log_level_given = args[..start]
                .iter()
                .any(|a| a == "--log-level" || a.to_string_lossy().starts_with("--log-level="));
            return DoctorParsed::Run(DoctorArgs {
                json: own.iter().any(|a| *a == JSON_FLAG),
                sign_in: own.iter().any(|a| *a == SIGN_IN_FLAG),
                cli,
                bridge_args: kept.iter().map(|&i| args[i].clone()).collect(),
                log_level_given,
            });
        }
        for i in late {
            keep[i] = true;
        }
    }
    DoctorParsed::Usage(DOCTOR_HELP.to_string())
}

/// Parses `doctor --config`: `Some` when `--config` is among doctor's leading options
/// (`--json`, `--log-level`, `--config`, before any other argument); every other argument is
/// then a usage error, since a server's options go in its entry. `None`: not this form.
fn parse_config(args: &[OsString]) -> Option<DoctorParsed> {
    let (mut json, mut path, mut log_level) = (false, None, None);
    let mut i = 0;
    while let Some(arg) = args.get(i).and_then(|a| a.to_str()) {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg, None),
        };
        let mut value = || {
            inline.clone().or_else(|| {
                i += 1;
                args.get(i).map(|a| a.to_string_lossy().into_owned())
            })
        };
        match flag {
            JSON_FLAG if inline.is_none() => json = true,
            CONFIG_FLAG => match value() {
                Some(v) if !v.is_empty() => path = Some(PathBuf::from(v)),
                _ => return Some(config_usage("--config takes the path of a file")),
            },
            LOG_LEVEL_FLAG => {
                log_level = value().map(|v| LogLevelArg::from_str(&v, false).ok());
            }
            _ => break,
        }
        i += 1;
    }
    let path = path?;
    let log_level = match log_level {
        None => None,
        Some(Some(level)) => Some(level),
        Some(None) => {
            let levels = "error, warn, info, debug, trace";
            return Some(config_usage(&format!("--log-level takes one of {levels}")));
        }
    };
    if i < args.len() {
        return Some(config_usage(
            "doctor --config takes only --json and --log-level (a server's options go in its \"mcp-bridge\" entry of the file)",
        ));
    }
    Some(DoctorParsed::RunConfig(ConfigArgs {
        json,
        path,
        log_level,
    }))
}

/// The usage error of `doctor --config`.
fn config_usage(cause: &str) -> DoctorParsed {
    DoctorParsed::Usage(format!(
        "{}: cli: error: {cause}\n\n{CONFIG_USAGE}\n\nFor more information, try 'mcp-bridge doctor --help'.\n",
        crate::log::TAG
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> DoctorArgs {
        match parse(args.iter().map(OsString::from).collect()) {
            DoctorParsed::Run(d) => d,
            DoctorParsed::Print(t) | DoctorParsed::Usage(t) => panic!("{args:?}: {t}"),
            DoctorParsed::RunConfig(c) => panic!("{args:?}: --config {:?}", c.path),
        }
    }

    fn parsed(args: &[&str]) -> DoctorParsed {
        parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn config_takes_json_and_the_log_level_and_nothing_else() {
        let Some(DoctorParsed::RunConfig(c)) = Some(parsed(&[
            "--json",
            "--config",
            "mcp.json",
            "--log-level=debug",
        ])) else {
            panic!("the --config form");
        };
        assert!(c.json);
        assert_eq!(c.path, PathBuf::from("mcp.json"));
        assert_eq!(c.log_level, Some(LogLevelArg::Debug));
        let Some(DoctorParsed::RunConfig(c)) = Some(parsed(&["--config=a b.json"])) else {
            panic!("the --config form");
        };
        assert_eq!(
            (c.json, c.path, c.log_level),
            (false, PathBuf::from("a b.json"), None)
        );
        for (args, cause) in [
            (
                &["--config", "f", "--name", "x"][..],
                "doctor --config takes only --json and --log-level (a server's options go in its \"mcp-bridge\" entry of the file)",
            ),
            (
                &["--json", "--config", "f", "srv"][..],
                "doctor --config takes only --json and --log-level (a server's options go in its \"mcp-bridge\" entry of the file)",
            ),
            (&["--config"][..], "--config takes the path of a file"),
            (
                &["--log-level", "loud", "--config", "f"][..],
                "--log-level takes one of error, warn, info, debug, trace",
            ),
        ] {
            match parsed(args) {
                DoctorParsed::Usage(t) => assert_eq!(
                    t,
                    format!(
                        "mcp-bridge: cli: error: {cause}\n\n{CONFIG_USAGE}\n\nFor more information, try 'mcp-bridge doctor --help'.\n"
                    ),
                    "{args:?}"
                ),
                _ => panic!("{args:?}: not a usage error"),
            }
        }
        // After the server's program, --config is the server's.
        let d = run(&["srv", "--config", "f"]);
        assert_eq!(strings(&d.cli.command), ["srv", "--config", "f"]);
    }

    fn strings(v: &[OsString]) -> Vec<String> {
        v.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn doctors_flags_count_before_the_server_and_the_rest_is_the_bridges() {
        let d = run(&["--json", "--name", "x", "--sign-in", "srv", "--json", "a"]);
        assert!(d.json && d.sign_in);
        assert_eq!(
            strings(&d.bridge_args),
            ["--name", "x", "srv", "--json", "a"]
        );
        assert_eq!(strings(&d.cli.command), ["srv", "--json", "a"]);
        assert!(!d.log_level_given);
        let d = run(&["srv", "--sign-in"]);
        assert!(!d.json && !d.sign_in);
        assert_eq!(strings(&d.cli.command), ["srv", "--sign-in"]);
        let d = run(&["--log-level=debug", "--", "--json"]);
        assert!(!d.json && d.log_level_given);
        assert_eq!(strings(&d.cli.command), ["--json"]);
    }

    #[test]
    fn help_is_doctors_and_a_missing_server_is_a_usage_error() {
        assert!(matches!(
            parse(vec!["--help".into()]),
            DoctorParsed::Print(t) if t == DOCTOR_HELP
        ));
        assert!(matches!(
            parse(vec!["--json".into()]),
            DoctorParsed::Usage(t) if t.contains("missing the upstream command")
                && t.ends_with("For more information, try 'mcp-bridge doctor --help'.\n")
        ));
    }
}
