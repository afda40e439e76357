//! What keeps the upstream inside the bridge: the `pre_exec` step of the child (only fds 0, 1
//! and 2 cross `exec`, a parent-death signal) and, on Linux, the child-subreaper role with the
//! sweep that stops every remaining descendant at the end of a shutdown. Never speaks protocol.
//!
//! The child's `pre_exec` runs between `fork` and `exec`: it only makes system calls, with no
//! allocation and no lock (async-signal-safe).

use std::io;
use std::time::{Duration, Instant};

use super::children::ChildRegistry;

/// Rounds of the sweep at most: each round kills the bridge's children of the moment and reaps
/// them; the children of a killed process become the bridge's (subreaper) for the next round.
pub const MAX_SWEEP_ROUNDS: usize = 64;
/// How long one round of the sweep waits for the processes it killed to be reaped.
pub const SWEEP_ROUND_WAIT: Duration = Duration::from_millis(500);
/// Pause between two non-blocking `waitpid` polls of the sweep.
pub const SWEEP_POLL_INTERVAL: Duration = Duration::from_millis(2);
/// The first descriptor that never reaches the child: 0, 1 and 2 are its stdio pipes.
pub const FIRST_PRIVATE_FD: libc::c_int = 3;
/// When neither `close_range` nor `/proc/self/fd` can be used, descriptors up to this number
/// (or the descriptor limit, if lower) are marked close-on-exec one by one.
pub const FD_LOOP_LIMIT: libc::c_int = 65_536;

/// The step of the child between `fork` and `exec` (to be called from `pre_exec`):
/// 1. on Linux, `PR_SET_PDEATHSIG` = SIGKILL, then `getppid()` against `parent` (the bridge's
///    pid before the fork), so a bridge that died before the `prctl` is noticed; the spawn then
///    fails with `ESRCH`;
/// 2. every descriptor from 3 on becomes close-on-exec, so the new program gets exactly 0, 1
///    and 2, whatever the bridge inherited from the editor. They are marked rather than
///    closed: the standard library reports a failed `exec` through a close-on-exec pipe that
///    must stay open until the `exec`.
///
/// Errors: `ESRCH` when the parent is gone; the error of `fcntl`/`getdents64` otherwise.
///
/// # Safety
/// Only between `fork` and `exec` in the child, as the standard library's `pre_exec` runs it:
/// it allocates nothing and takes no lock.
pub unsafe fn child_pre_exec(parent: libc::pid_t) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl/getppid are async-signal-safe system calls without memory arguments.
    unsafe {
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    // SAFETY: same context as this function.
    unsafe { cloexec_from(FIRST_PRIVATE_FD) }
}

/// Marks every descriptor `>= first` close-on-exec: `close_range(CLOSE_RANGE_CLOEXEC)` (Linux
/// 5.11), else a `getdents64` walk of `/proc/self/fd` with a buffer on the stack, else `fcntl`
/// on every number up to the descriptor limit capped at [`FD_LOOP_LIMIT`].
///
/// # Safety
/// Async-signal-safe; meant for `pre_exec`.
unsafe fn cloexec_from(first: libc::c_int) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls; the buffers live on this stack frame.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) == 0
        {
            return Ok(());
        }
        if cloexec_proc_fds(first).is_ok() {
            return Ok(());
        }
    }
    // SAFETY: same context as this function.
    unsafe { cloexec_loop(first) };
    Ok(())
}

/// The last resort of [`cloexec_from`]: `fcntl` on every number from `first` up to the
/// descriptor limit, capped at [`FD_LOOP_LIMIT`].
unsafe fn cloexec_loop(first: libc::c_int) {
    // SAFETY: getrlimit writes into a local; fcntl on a number that is not open fails EBADF.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let mut last = FD_LOOP_LIMIT;
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < last as u64 {
            last = lim.rlim_cur as libc::c_int;
        }
        for fd in first..last {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// The `/proc/self/fd` walk of [`cloexec_from`], without allocation.
#[cfg(target_os = "linux")]
unsafe fn cloexec_proc_fds(first: libc::c_int) -> io::Result<()> {
    const PROC_SELF_FD: &[u8] = b"/proc/self/fd\0";
    // SAFETY: a NUL-terminated path constant; the descriptor is closed before returning.
    let dir = unsafe {
        libc::open(
            PROC_SELF_FD.as_ptr().cast(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closes the descriptor opened above.
            unsafe { libc::close(dir) };
            return Err(e);
        }
        if n == 0 {
            break;
        }
        let mut off = 0usize;
        while off + 19 < n as usize {
            // linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name[].
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            if let Some(fd) = parse_fd(&buf[off + 19..(off + reclen).min(n as usize)])
                && fd >= first
                && fd != dir
            {
                // SAFETY: fcntl on a descriptor number; a closed one fails harmlessly.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            off += reclen;
        }
    }
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(dir) };
    Ok(())
}

/// The descriptor number of a NUL-terminated directory entry name (`None` for `.`, `..`).
fn parse_fd(name: &[u8]) -> Option<libc::c_int> {
    let mut fd: libc::c_int = 0;
    let mut digits = 0;
    for &b in name {
        match b {
            0 => break,
            b'0'..=b'9' => {
                fd = fd.checked_mul(10)?.checked_add((b - b'0') as libc::c_int)?;
                digits += 1;
            }
            _ => return None,
        }
    }
    (digits > 0).then_some(fd)
}

/// Makes the bridge a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): a descendant whose
/// parent dies becomes the bridge's child instead of init's, so `stop_descendants` can find
/// it, also after it left the child's process group with `setsid`. False when the system
/// refuses (or is not Linux).
#[cfg(target_os = "linux")]
pub fn become_subreaper() -> bool {
    // SAFETY: prctl without memory arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0 }
}

/// Not Linux: there is no subreaper; false.
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> bool {
    false
}

/// The processes whose parent is `parent`, with their state letter (`Z` for a zombie), read
/// from `/proc/<pid>/stat` (empty where there is no `/proc`).
pub fn children_of(parent: libc::pid_t) -> Vec<(libc::pid_t, u8)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some((state, ppid)) = state_and_parent(&stat)
            && ppid == parent
        {
            out.push((pid, state));
        }
    }
    out
}

/// The state letter and the parent pid of a `/proc/<pid>/stat` line: `pid (comm) S ppid ...`,
/// where `comm` may hold spaces and parentheses (so the last `)` ends it).
fn state_and_parent(stat: &[u8]) -> Option<(u8, libc::pid_t)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Stops every remaining descendant of the bridge (the end of every shutdown): SIGKILL to each
/// child of the bridge, reap it, and again for the descendants that were handed to the
/// subreaper, until none is left or [`MAX_SWEEP_ROUNDS`] rounds of at most
/// [`SWEEP_ROUND_WAIT`] each. A child already reaped elsewhere (tokio's wait of the upstream,
/// `ECHILD`) counts as gone. Blocking; returns how many processes were reaped.
pub fn stop_descendants() -> usize {
    // SAFETY: getpid has no arguments.
    let me = unsafe { libc::getpid() };
    let mut reaped = 0;
    for _ in 0..MAX_SWEEP_ROUNDS {
        let mut left: Vec<libc::pid_t> = children_of(me).into_iter().map(|(p, _)| p).collect();
        if left.is_empty() {
            break;
        }
        for &pid in &left {
            // SAFETY: kill(2) of one pid; no memory is shared.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let end = Instant::now() + SWEEP_ROUND_WAIT;
        loop {
            left.retain(|&pid| match try_reap(pid) {
                Reap::Running => true,
                Reap::Reaped => {
                    reaped += 1;
                    false
                }
                Reap::NotOurs => false,
            });
            if left.is_empty() || Instant::now() >= end {
                break;
            }
            std::thread::sleep(SWEEP_POLL_INTERVAL);
        }
    }
    reaped
}

/// Reaps the zombies among the bridge's children except those in `keep` (the registered
/// children, whose status tokio collects): descendants of a child that were handed to the
/// subreaper and exited while the bridge runs. Never blocks; returns how many were reaped.
pub fn reap_orphan_zombies(keep: &ChildRegistry) -> usize {
    // SAFETY: getpid has no arguments.
    let me = unsafe { libc::getpid() };
    children_of(me)
        .into_iter()
        .filter(|&(pid, state)| state == b'Z' && !keep.contains(pid))
        .filter(|&(pid, _)| try_reap(pid) == Reap::Reaped)
        .count()
}

#[derive(Debug, PartialEq, Eq)]
enum Reap {
    Running,
    Reaped,
    NotOurs,
}

fn try_reap(pid: libc::pid_t) -> Reap {
    let mut status = 0;
    // SAFETY: waitpid writes the status into a local.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    match r {
        0 => Reap::Running,
        r if r == pid => Reap::Reaped,
        _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => Reap::Running,
        _ => Reap::NotOurs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_state_and_parent_even_with_parentheses_in_the_name() {
        assert_eq!(
            state_and_parent(b"123 (sleep) S 45 123 123 0 -1"),
            Some((b'S', 45))
        );
        assert_eq!(state_and_parent(b"7 (a) b) (c) Z 1 7 7 0"), Some((b'Z', 1)));
        assert_eq!(state_and_parent(b"7 (x"), None);
        assert_eq!(state_and_parent(b"7 (x) R"), None);
    }

    /// A descriptor without close-on-exec (a `dup`), and whether it has the flag after `mark`.
    fn marked_by(mark: unsafe fn(libc::c_int)) -> (bool, bool) {
        // SAFETY: dup/fcntl/close of a descriptor this test owns.
        unsafe {
            let fd = libc::dup(2);
            assert!(fd >= FIRST_PRIVATE_FD);
            let before = libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0;
            mark(fd);
            let after = libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0;
            libc::close(fd);
            (before, after)
        }
    }

    #[test]
    fn each_way_of_marking_descriptors_sets_close_on_exec() {
        unsafe fn range(fd: libc::c_int) {
            // SAFETY: marks only descriptors of this test process close-on-exec.
            let _ = unsafe { cloexec_from(fd) };
        }
        #[cfg(target_os = "linux")]
        unsafe fn proc_walk(fd: libc::c_int) {
            // SAFETY: as above.
            let _ = unsafe { cloexec_proc_fds(fd) };
        }
        assert_eq!(marked_by(range), (false, true));
        #[cfg(target_os = "linux")]
        assert_eq!(marked_by(proc_walk), (false, true));
        assert_eq!(marked_by(cloexec_loop), (false, true));
    }

    #[test]
    fn directory_entry_names_are_descriptor_numbers_or_nothing() {
        assert_eq!(parse_fd(b"0\0"), Some(0));
        assert_eq!(parse_fd(b"1023\0\0\0"), Some(1023));
        assert_eq!(parse_fd(b".\0"), None);
        assert_eq!(parse_fd(b"..\0"), None);
        assert_eq!(parse_fd(b"\0"), None);
        assert_eq!(parse_fd(b"99999999999\0"), None);
    }
}
