//! The files that options name (`--ca-file`, `--token-key-file`): how a failure to read one is
//! told. One rule for all: the option, the path and the operating system's own words
//! (`No such file or directory (os error 2)`), never Rust's error-kind text (`entity not found`).

use std::path::Path;

/// The OS's text of an I/O error (`Permission denied (os error 13)`), or the library's message
/// for an error that did not come from the OS (`stream did not contain valid UTF-8`); control
/// characters become spaces.
pub fn io_error_text(e: &std::io::Error) -> String {
    crate::protocol::wire::excerpt::sanitize(&e.to_string())
}

/// A file named by an option that cannot be read: the option, the path and the OS's words, each
/// with control characters as spaces
/// (`--ca-file /nonexist cannot be read: No such file or directory (os error 2)`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{option} {path} cannot be read: {why}")]
pub struct CannotRead {
    /// The option that names the file (`--ca-file`).
    pub option: String,
    /// The path as given.
    pub path: String,
    /// The OS's text of the error ([`io_error_text`]).
    pub why: String,
}

impl CannotRead {
    /// The failure to read `path`, named by `option`, with `e`.
    pub fn new(option: &str, path: &Path, e: &std::io::Error) -> Self {
        CannotRead {
            option: option.to_owned(),
            path: crate::log::sanitize(&path.display().to_string()),
            why: io_error_text(e),
        }
    }
}

/// Reads the whole file that `option` names. Errors: [`CannotRead`].
pub fn read_option_file(option: &str, path: &Path) -> Result<Vec<u8>, CannotRead> {
    std::fs::read(path).map_err(|e| CannotRead::new(option, path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_told_in_the_os_words() {
        let e = read_option_file("--ca-file", Path::new("/nonexistent/ca.pem")).unwrap_err();
        assert_eq!(e.why, "No such file or directory (os error 2)");
        assert_eq!(
            e.to_string(),
            "--ca-file /nonexistent/ca.pem cannot be read: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn a_directory_is_told_in_the_os_words() {
        let e = read_option_file("--ca-file", Path::new("/")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--ca-file / cannot be read: Is a directory (os error 21)"
        );
    }
}
