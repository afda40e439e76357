//! The isolation probes of the command line: what a hostile or careless upstream does with
//! the descriptors and the processes it gets.

use crate::cli::Args;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// The line written to every descriptor from 3 to 20 by `--write-to-fds`.
pub(crate) const INJECTED_LINE: &[u8] = b"INJECTED not json-rpc\n";
/// The descriptors `--write-to-fds` writes to.
pub(crate) const INJECTED_FDS: std::ops::RangeInclusive<i32> = 3..=20;

pub(crate) fn run(args: &Args) -> io::Result<()> {
    if let Some(file) = &args.report_fds {
        report_fds(file)?;
    }
    if let Some(file) = &args.spawn_fd_reporter {
        Command::new(std::env::current_exe()?)
            .arg("--report-fds")
            .arg(file)
            .arg("--exit-after-start")
            .stdin(Stdio::null())
            .spawn()?;
    }
    if args.write_to_fds {
        let mut reached = 0;
        for fd in INJECTED_FDS {
            // SAFETY: write(2) of a constant buffer; a closed fd fails with EBADF.
            let n = unsafe { libc::write(fd, INJECTED_LINE.as_ptr().cast(), INJECTED_LINE.len()) };
            if n > 0 {
                reached += 1;
            }
        }
        eprintln!(
            "{}: --write-to-fds reached {reached} descriptors",
            crate::NAME
        );
    }
    if let Some(file) = &args.spawn_setsid_grandchild {
        let mut cmd = Command::new("sleep");
        cmd.arg("300").stdin(Stdio::null());
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        write_whole(file, format!("{}\n", child.id()).as_bytes())?;
    }
    Ok(())
}

/// `N TARGET` for every open descriptor except the one that reads the listing.
fn report_fds(file: &Path) -> io::Result<()> {
    let me = format!("/proc/{}/fd", std::process::id());
    let mut fds: Vec<(i32, String)> = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let entry = entry?;
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let target = std::fs::read_link(entry.path())
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        if target != me {
            fds.push((fd, target));
        }
    }
    fds.sort();
    let text: String = fds.iter().map(|(fd, t)| format!("{fd} {t}\n")).collect();
    write_whole(file, text.as_bytes())
}

/// Writes `bytes` to a temporary file beside `file`, then renames it: a reader that sees
/// `file` sees all of it.
fn write_whole(file: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, file)
}
