//! Where the upstream command is found, by the rules of the spawn (`execvp`): a name with a
//! `/` is a path, as is; any other name is looked up in the `PATH` directories. Done once at
//! start-up, so a command that cannot start is reported before any `initialize`. Starts
//! nothing.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The directories searched when `PATH` is not set (glibc's `execvp` default).
pub const DEFAULT_PATH: &str = "/bin:/usr/bin";
/// The most bytes of a program read for its `#!` line (Linux reads 256, `BINPRM_BUF_SIZE`).
pub const SHEBANG_MAX_BYTES: usize = 256;

/// Why the command cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unstartable {
    /// A name without `/` that is in none of the directories of `path` (the value of `PATH`,
    /// or [`DEFAULT_PATH`] when `unset`).
    NotInPath { path: String, unset: bool },
    /// A path (with a `/`) where there is no file.
    NoSuchFile { path: PathBuf },
    /// A file that exists but cannot be executed (no execute permission); for a name
    /// without `/`, the first such file found in `PATH`.
    NotExecutable { path: PathBuf },
    /// A path (with a `/`) that names a directory: `mcp-bridge ~/servers/` is a command
    /// with its program left out, which "not executable" would not say.
    Directory { path: PathBuf },
    /// A script whose `#!` line names an interpreter where there is no file: `execve` fails
    /// with "No such file or directory" for a file that exists.
    NoInterpreter { path: PathBuf, interpreter: PathBuf },
}

/// A command that cannot start: its program (the first word of the command, never its
/// arguments) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartError {
    /// The program as given on the command line.
    pub program: String,
    /// Why it cannot start.
    pub why: Unstartable,
}

/// The stderr message without a working directory ([`StartError::log_message`]).
impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.log_message(None))
    }
}

impl std::error::Error for StartError {}

impl StartError {
    /// The stderr message: names the program and where the bridge looked, e.g.
    /// `cannot start 'foo': not found in PATH (/usr/bin:/bin)`.
    pub fn log_message(&self, cwd: Option<&Path>) -> String {
        let where_ = match &self.why {
            Unstartable::NotInPath { path, unset: false } => format!("not found in PATH ({path})"),
            Unstartable::NotInPath { path, unset: true } => {
                format!("not found in PATH (PATH is not set; looked in {path})")
            }
            Unstartable::NoSuchFile { path } => match cwd.filter(|_| path.is_relative()) {
                Some(dir) => format!(
                    "no such file: {} (relative to {})",
                    path.display(),
                    dir.display()
                ),
                None => format!("no such file: {}", path.display()),
            },
            Unstartable::NotExecutable { path } => format!("not executable: {}", path.display()),
            Unstartable::Directory { path } => {
                format!("a directory, not a program: {}", path.display())
            }
            Unstartable::NoInterpreter { path, interpreter } => format!(
                "the interpreter of its #! line is not installed: {} (in {})",
                interpreter.display(),
                path.display()
            ),
        };
        format!("cannot start '{}': {where_}", self.program)
    }

    /// The `data.detail` of `spawn_failed`: the program and the reason, without the value of
    /// any environment variable (no `PATH`), e.g. `cannot start 'foo': not found in PATH`.
    pub fn editor_detail(&self) -> String {
        let why = match &self.why {
            Unstartable::NotInPath { .. } => "not found in PATH",
            Unstartable::NoSuchFile { .. } => "no such file",
            Unstartable::NotExecutable { .. } => "not executable",
            Unstartable::Directory { .. } => "a directory, not a program",
            Unstartable::NoInterpreter { .. } => "the interpreter of its #! line is not installed",
        };
        format!("cannot start '{}': {why}", self.program)
    }
}

/// Resolves `program` as the spawn will, with `path_var` the value of `PATH` (`None`: unset).
/// An empty entry of `PATH` is the working directory, as for `execvp`.
///
/// Errors: [`StartError`] when no executable file is found.
pub fn resolve(program: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, StartError> {
    let fail = |why| StartError {
        program: program.to_string_lossy().into_owned(),
        why,
    };
    if program.as_bytes().contains(&b'/') {
        let path = PathBuf::from(program);
        return match executable(&path) {
            Some(true) => runnable(path).map_err(fail),
            Some(false) if path.is_dir() => Err(fail(Unstartable::Directory { path })),
            Some(false) => Err(fail(Unstartable::NotExecutable { path })),
            None => Err(fail(Unstartable::NoSuchFile { path })),
        };
    }
    let (search, unset) = match path_var {
        Some(p) => (p, false),
        None => (OsStr::new(DEFAULT_PATH), true),
    };
    let mut not_executable = None;
    if !program.is_empty() {
        for dir in search.as_bytes().split(|&b| b == b':') {
            let dir = if dir.is_empty() {
                Path::new(".")
            } else {
                Path::new(OsStr::from_bytes(dir))
            };
            let candidate = dir.join(program);
            match executable(&candidate) {
                Some(true) => return runnable(candidate).map_err(fail),
                Some(false) => {
                    not_executable.get_or_insert(candidate);
                }
                None => {}
            }
        }
    }
    Err(fail(match not_executable {
        Some(path) => Unstartable::NotExecutable { path },
        None => Unstartable::NotInPath {
            path: search.to_string_lossy().into_owned(),
            unset,
        },
    }))
}

/// An executable file, unless it is a script whose `#!` interpreter (an absolute path, as
/// the kernel takes it) is not there.
fn runnable(path: PathBuf) -> Result<PathBuf, Unstartable> {
    match missing_interpreter(&path) {
        Some(interpreter) => Err(Unstartable::NoInterpreter { path, interpreter }),
        None => Ok(path),
    }
}

/// The interpreter of the `#!` line of the file at `path` when it is an absolute path with
/// no file there; `None` for a file that is no script, or one whose interpreter is there or
/// cannot be judged (a relative one, a file that cannot be read).
fn missing_interpreter(path: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; SHEBANG_MAX_BYTES];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).ok()?;
    let interpreter = shebang_interpreter(&head[..n])?;
    (interpreter.is_absolute() && std::fs::metadata(&interpreter).is_err()).then_some(interpreter)
}

/// The interpreter a `#!` line names: the first word after `#!` (spaces and tabs around it),
/// up to the end of the line.
fn shebang_interpreter(head: &[u8]) -> Option<PathBuf> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let word = line
        .split(|&b| b == b' ' || b == b'\t' || b == b'\r')
        .find(|w| !w.is_empty())?;
    Some(PathBuf::from(OsStr::from_bytes(word)))
}

/// `None`: nothing there; `Some(true)`: a file this process may execute; `Some(false)`: a
/// directory, or a file without execute permission for this process.
fn executable(path: &Path) -> Option<bool> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(false);
    }
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: access(2) reads a NUL-terminated path that lives across the call.
    Some(unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0)
}

/// Why the upstream command did not start. Its text is the `data.detail` of `spawn_failed`:
/// it names the program and never an argument or an environment value.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The program cannot be resolved (any more) when it is spawned: the program and the
    /// reason, without the value of any environment variable ([`StartError::editor_detail`]).
    #[error("{}", .0.editor_detail())]
    NotRunnable(StartError),
    /// The OS refused to start the program, which resolves: the program as given and the OS's
    /// words.
    #[error("cannot start '{program}': {error}")]
    Refused {
        /// The program as given on the command line.
        program: String,
        /// What the spawn failed with.
        error: io::Error,
    },
    /// A bridge that opens only an in-process upstream (the embedded one) was given a child
    /// or a URL.
    #[error("this bridge opens only an in-process upstream")]
    NotInProcess,
    /// The child started, but its stdin cannot be made a non-blocking pipe.
    #[error("{0}")]
    Stdin(#[source] io::Error),
    /// The HTTP client for a URL upstream cannot be made (`connect_failed`, never the URL or
    /// a header value).
    #[cfg(feature = "http")]
    #[error(transparent)]
    Connect(super::http::client::ClientError),
}

/// The error of the spawn of `program` itself: the resolution's reason when the program cannot
/// be resolved (any more) in `path_var` (the child's `PATH`), else the OS error; its text names
/// the program and never an argument or an environment value.
pub fn spawn_error(program: &OsStr, path_var: Option<&OsStr>, error: io::Error) -> SpawnError {
    match resolve(program, path_var) {
        Err(e) => SpawnError::NotRunnable(e),
        Ok(_) => SpawnError::Refused {
            program: program.to_string_lossy().into_owned(),
            error,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-bridge-program-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn file(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn a_name_is_searched_in_path_and_the_first_executable_file_wins() {
        let d = scratch("search");
        let (a, b) = (d.join("a"), d.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        file(&a, "srv", 0o644);
        let exe = file(&b, "srv", 0o755);
        std::fs::create_dir_all(a.join("dir")).unwrap();
        let path = format!("{}:{}", a.display(), b.display());
        assert_eq!(resolve(OsStr::new("srv"), Some(OsStr::new(&path))), Ok(exe));
        let err = resolve(OsStr::new("nothing"), Some(OsStr::new(&path))).unwrap_err();
        assert_eq!(
            err.log_message(None),
            format!("cannot start 'nothing': not found in PATH ({path})")
        );
        assert_eq!(
            err.editor_detail(),
            "cannot start 'nothing': not found in PATH"
        );
        let only_a = a.display().to_string();
        let err = resolve(OsStr::new("srv"), Some(OsStr::new(&only_a))).unwrap_err();
        assert_eq!(
            err.log_message(None),
            format!("cannot start 'srv': not executable: {}/srv", only_a)
        );
        assert_eq!(err.editor_detail(), "cannot start 'srv': not executable");
        let err = resolve(OsStr::new("dir"), Some(OsStr::new(&only_a))).unwrap_err();
        assert_eq!(err.editor_detail(), "cannot start 'dir': not executable");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_name_with_a_slash_is_a_path_as_is() {
        let d = scratch("slash");
        let exe = file(&d, "srv", 0o700);
        assert_eq!(
            resolve(exe.as_os_str(), Some(OsStr::new(""))),
            Ok(exe.clone())
        );
        let missing = d.join("missing");
        let err = resolve(missing.as_os_str(), None).unwrap_err();
        assert_eq!(
            err.log_message(Some(Path::new("/w"))),
            format!("cannot start '{0}': no such file: {0}", missing.display())
        );
        let err = resolve(OsStr::new("./x/srv"), None).unwrap_err();
        assert_eq!(
            err.log_message(Some(Path::new("/w"))),
            "cannot start './x/srv': no such file: ./x/srv (relative to /w)"
        );
        assert_eq!(err.editor_detail(), "cannot start './x/srv': no such file");
        let err = resolve(d.as_os_str(), None).unwrap_err();
        assert_eq!(
            err.log_message(None),
            format!(
                "cannot start '{0}': a directory, not a program: {0}",
                d.display()
            )
        );
        assert_eq!(
            err.editor_detail(),
            format!("cannot start '{}': a directory, not a program", d.display())
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_script_whose_interpreter_is_not_installed_cannot_start() {
        let d = scratch("shebang");
        let script = d.join("srv.py");
        std::fs::write(&script, "#!/no/such/python3 -u\nprint()\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = resolve(script.as_os_str(), None).unwrap_err();
        assert_eq!(
            err.log_message(None),
            format!(
                "cannot start '{0}': the interpreter of its #! line is not installed: /no/such/python3 (in {0})",
                script.display()
            )
        );
        assert_eq!(
            err.editor_detail(),
            format!(
                "cannot start '{}': the interpreter of its #! line is not installed",
                script.display()
            )
        );
        let path = d.display().to_string();
        let err = resolve(OsStr::new("srv.py"), Some(OsStr::new(&path))).unwrap_err();
        assert_eq!(
            err.editor_detail(),
            "cannot start 'srv.py': the interpreter of its #! line is not installed"
        );
        // Its interpreter there, a relative one (not judged), or no script at all: it starts.
        for (name, text) in [
            ("sh", "#! /bin/sh\n"),
            ("rel", "#!python3\n"),
            ("bin", "\x7fELF"),
        ] {
            let p = d.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(resolve(p.as_os_str(), None), Ok(p.clone()), "{name}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_interpreter_of_a_shebang_line_is_its_first_word() {
        let of = |b: &[u8]| shebang_interpreter(b).map(|p| p.display().to_string());
        assert_eq!(of(b"#!/usr/bin/env node\n"), Some("/usr/bin/env".into()));
        assert_eq!(of(b"#! \t/bin/bash -e\r\n"), Some("/bin/bash".into()));
        assert_eq!(of(b"#!\n"), None);
        assert_eq!(of(b"# comment"), None);
        assert_eq!(of(b""), None);
    }

    #[test]
    fn an_unset_path_searches_the_default_directories() {
        let err = resolve(OsStr::new("no-such-program-4a1f"), None).unwrap_err();
        assert_eq!(
            err.log_message(None),
            "cannot start 'no-such-program-4a1f': not found in PATH (PATH is not set; looked in /bin:/usr/bin)"
        );
        assert!(resolve(OsStr::new("sh"), None).is_ok());
        assert!(resolve(OsStr::new(""), Some(OsStr::new("/bin"))).is_err());
    }

    #[test]
    fn a_failed_spawn_names_the_program_and_why() {
        let missing = spawn_error(
            OsStr::new("/no/such/srv"),
            None,
            io::Error::from(io::ErrorKind::NotFound),
        );
        assert!(matches!(&missing, SpawnError::NotRunnable(e) if e.program == "/no/such/srv"));
        assert_eq!(
            missing.to_string(),
            "cannot start '/no/such/srv': no such file"
        );
        let denied = || io::Error::from_raw_os_error(libc::EACCES);
        let refused = spawn_error(OsStr::new("/bin/sh"), None, denied());
        assert!(matches!(&refused, SpawnError::Refused { program, .. } if program == "/bin/sh"));
        assert_eq!(
            refused.to_string(),
            format!("cannot start '/bin/sh': {}", denied())
        );
    }
}
