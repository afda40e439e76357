//! The command line of `mcp-bridge doctor`: its own flags (`--json`, `--sign-in`) among the
//! options before the server, and every option of the bridge, read by the bridge's own parser
//! ([`cli::parse`]), so the server is started or reached exactly as `mcp-bridge` would do it
//! with the same options.

use std::ffi::OsString;

use crate::cli::{self, Cli};

/// The flag of the JSON report.
pub const JSON_FLAG: &str = "--json";
/// The flag that lets doctor sign in as the bridge does.
pub const SIGN_IN_FLAG: &str = "--sign-in";

/// `mcp-bridge doctor --help`.
pub const DOCTOR_HELP: &str = "\
Checks an MCP server the way mcp-bridge uses it, and says what an editor will see.

Usage: mcp-bridge doctor [--json] [--sign-in] [OPTIONS] [--] <COMMAND> [ARGS]...
       mcp-bridge doctor [--json] [--sign-in] [OPTIONS] <URL>

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

Every option of mcp-bridge applies as it does to the bridge (see mcp-bridge --help):
--discover-timeout bounds server/discover (and a passed-through initialize), --list-timeout
each list call, the filters hide items, the URL form's options reach the URL.

Exit codes: 0 when the server is usable through the bridge (a URL that asks for a sign-in
counts as usable when the bridge can sign in there: its metadata is found and offers a
registration the bridge uses), 1 when it is not (the last line, and `reason` in JSON, says
why), 2 for invalid arguments.

Examples:
  mcp-bridge doctor python3 server.py
  mcp-bridge doctor --json -- npx -y some-mcp-server
  mcp-bridge doctor https://mcp.example.com/mcp
  mcp-bridge doctor --sign-in --client-id my-app https://mcp.example.com/mcp
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

/// What the command line asks for.
pub enum DoctorParsed {
    /// Examine the server.
    Run(DoctorArgs),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> DoctorArgs {
        match parse(args.iter().map(OsString::from).collect()) {
            DoctorParsed::Run(d) => d,
            DoctorParsed::Print(t) | DoctorParsed::Usage(t) => panic!("{args:?}: {t}"),
        }
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
