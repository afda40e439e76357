//! The command line of the real binary: help, version, and invalid arguments (exit 2, the
//! cause but never the value).

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_explains_the_form_and_every_option() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Usage: mcp-bridge [OPTIONS] -- <COMMAND> [ARGS]..."),
        "{out}"
    );
    for opt in [
        "--name",
        "--log-level",
        "--discover-timeout",
        "--max-line-bytes",
        "--list-timeout",
        "--read-timeout",
        "--call-timeout",
        "--max-in-flight",
        "--shutdown-grace",
        "--version",
    ] {
        assert!(out.contains(opt), "{opt} missing from --help");
    }
    assert!(out.contains("[default: 67108864]") && out.contains("[default: info]"));
}

#[test]
fn version_prints_the_package_version() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("mcp-bridge {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn invalid_arguments_exit_2_with_the_cause_and_the_usage_but_not_the_value() {
    for (args, cause) in [
        (
            vec!["--max-line-bytes", "0", "--", "x"],
            "invalid value for --max-line-bytes",
        ),
        (
            vec!["--max-line-bytes", "2000000000", "--", "x"],
            "invalid value for --max-line-bytes",
        ),
        (
            vec!["--log-level", "sekret-value", "--", "x"],
            "invalid value for --log-level",
        ),
        (
            vec!["--discover-timeout", "1x", "--", "x"],
            "invalid value for --discover-timeout",
        ),
        (vec![], "missing the upstream command"),
        (
            vec!["--token=sekret-value", "--", "x"],
            "unexpected argument",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert!(
            err.starts_with(&format!("mcp-bridge: cli: error: {cause}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("Usage: mcp-bridge [OPTIONS] -- <COMMAND> [ARGS]..."),
            "{err}"
        );
        assert!(
            !err.contains("sekret-value") && !err.contains("2000000000") && !err.contains("1x"),
            "{err}"
        );
    }
}
