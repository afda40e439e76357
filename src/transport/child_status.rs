//! How a child upstream ended, as a value: its exit code, the signal that ended it, or the
//! bridge's own kill of a child that closed its stdout and kept running. Its text is what the
//! log and the editor's `data.detail` show (`exit code 3`); it reads no process itself.

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// How a child process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildStatus {
    /// It exited with this code: `exit code N`.
    Exited(i32),
    /// This signal ended it: `signal N`.
    Signalled(i32),
    /// It closed its stdout and was still running `waited` later: the bridge killed its group
    /// (SIGKILL), so its status is the bridge's doing, never reported as `signal 9`.
    KilledAfterOutputEnded {
        /// How long the bridge waited for its exit after the end of its stdout.
        waited: Duration,
    },
    /// No status: the process was already gone from the bridge's hands, or the system reported
    /// neither a code nor a signal.
    Unknown,
}

impl From<&ExitStatus> for ChildStatus {
    fn from(status: &ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => ChildStatus::Exited(c),
            (None, Some(s)) => ChildStatus::Signalled(s),
            _ => ChildStatus::Unknown,
        }
    }
}

impl ChildStatus {
    /// What the status means when it is not the server's own: 127 and 126 are the codes a
    /// shell or `env` exits with when the program it was to run is not found or cannot be
    /// executed (POSIX Shell Command Language §2.8.2, "Exit Status for Commands"). A server
    /// that exits so at its first message never ran: the detail says so (`exit code 127: a
    /// program it runs was not found ...`), and the bridge does not start it again for
    /// `initialize` as it does a server that ended its session (rmcp's). `None` for any other
    /// status.
    pub fn cannot_run(self) -> Option<String> {
        let why = match self {
            ChildStatus::Exited(127) => {
                "a program it runs was not found (the code of a shell or env: a #! interpreter, a command of a script, an npx or uvx package)"
            }
            ChildStatus::Exited(126) => {
                "a program it runs cannot be executed (the code of a shell or env: no permission, or not a program)"
            }
            _ => return None,
        };
        Some(format!("{self}: {why}"))
    }
}

impl fmt::Display for ChildStatus {
    /// The text of the log lines and of the error of a failed start.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChildStatus::Exited(c) => write!(f, "exit code {c}"),
            ChildStatus::Signalled(s) => write!(f, "signal {s}"),
            ChildStatus::KilledAfterOutputEnded { waited } => write!(
                f,
                "it closed its stdout and was still running {} ms later: the bridge killed it (SIGKILL)",
                waited.as_millis()
            ),
            ChildStatus::Unknown => f.write_str("unknown status"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn an_exit_status_maps_to_its_variant_and_its_text() {
        // A wait status as waitpid(2) gives it: the code in the second byte, or the signal.
        for (raw, status, text) in [
            (3 << 8, ChildStatus::Exited(3), "exit code 3"),
            (0, ChildStatus::Exited(0), "exit code 0"),
            (9, ChildStatus::Signalled(9), "signal 9"),
            (15, ChildStatus::Signalled(15), "signal 15"),
        ] {
            let got = ChildStatus::from(&ExitStatus::from_raw(raw));
            assert_eq!(got, status);
            assert_eq!(got.to_string(), text);
        }
    }

    #[test]
    fn a_kill_of_the_bridge_and_an_unknown_status_say_so() {
        let killed = ChildStatus::KilledAfterOutputEnded {
            waited: Duration::from_millis(500),
        };
        assert_eq!(
            killed.to_string(),
            "it closed its stdout and was still running 500 ms later: the bridge killed it (SIGKILL)"
        );
        assert_eq!(ChildStatus::Unknown.to_string(), "unknown status");
    }

    #[test]
    fn only_the_shell_codes_126_and_127_mean_the_server_never_ran() {
        assert_eq!(
            ChildStatus::Exited(127).cannot_run().as_deref(),
            Some(
                "exit code 127: a program it runs was not found (the code of a shell or env: a #! interpreter, a command of a script, an npx or uvx package)"
            )
        );
        assert_eq!(
            ChildStatus::Exited(126).cannot_run().as_deref(),
            Some(
                "exit code 126: a program it runs cannot be executed (the code of a shell or env: no permission, or not a program)"
            )
        );
        for other in [
            ChildStatus::Exited(1),
            ChildStatus::Signalled(127),
            ChildStatus::Unknown,
        ] {
            assert_eq!(other.cannot_run(), None, "{other}");
        }
    }
}
