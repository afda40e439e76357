//! One folder of the test process for everything the tests, and the programs they start, write
//! outside a scratch folder of their own: `HOME`, `XDG_STATE_HOME` (the bridge's state folder:
//! its lock files, sign-in markers and token files) and `TMPDIR` (so that
//! `std::env::temp_dir()`, the scratch folders of [`super::scratch_dir`], and the temporary
//! files of every program started are in it). The variables are set before `main`, while the
//! process has one thread (a `.init_array` entry, what the `ctor` crate does on Linux), and
//! the folder is removed at the process's exit (`atexit`), so a run leaves nothing behind and
//! never writes to the user's `~/.local/state/mcp-bridge`.
//!
//! `CARGO_HOME` and `RUSTUP_HOME` keep the user's (the tests build examples with cargo, which
//! finds its registry and toolchains through them).

use std::path::PathBuf;
use std::sync::OnceLock;

/// The folder of this test process (`<temp dir>/mcp-bridge-it-<pid>`).
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// Runs [`set_up`] before `main` (ELF: the C runtime calls each `.init_array` entry first).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static SET_UP: extern "C" fn() = set_up;

/// Makes the folder and points the variables into it; registers [`clean_up`].
extern "C" fn set_up() {
    let root = std::env::temp_dir().join(format!("mcp-bridge-it-{}", std::process::id()));
    let home = root.join("home");
    let state = root.join("state");
    let tmp = root.join("tmp");
    for dir in [&home, &state, &tmp] {
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
    }
    let user_home = std::env::var_os("HOME").map(PathBuf::from);
    // SAFETY: before main, on the only thread of the process.
    unsafe {
        if let Some(user) = &user_home {
            if std::env::var_os("CARGO_HOME").is_none() {
                std::env::set_var("CARGO_HOME", user.join(".cargo"));
            }
            if std::env::var_os("RUSTUP_HOME").is_none() {
                std::env::set_var("RUSTUP_HOME", user.join(".rustup"));
            }
        }
        std::env::set_var("HOME", &home);
        std::env::set_var("XDG_STATE_HOME", &state);
        std::env::set_var("TMPDIR", &tmp);
    }
    let _ = ROOT.set(root);
    // SAFETY: `clean_up` is an `extern "C" fn()` that lives as long as the program.
    unsafe {
        libc::atexit(clean_up);
    }
}

/// Removes the folder of the process (every test has ended: `main` returned or `exit` was
/// called).
extern "C" fn clean_up() {
    if let Some(root) = ROOT.get() {
        let _ = std::fs::remove_dir_all(root);
    }
}

/// The folder of this test process, when it was made.
pub fn root() -> Option<&'static PathBuf> {
    ROOT.get()
}
