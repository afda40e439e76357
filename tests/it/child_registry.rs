//! Every child of a process is reached when the process ends without its stop steps: the
//! registry of children (`transport::children`) holds each live child's process group. Each
//! child here starts a grandchild (`sleep 1000`) in its own group; afterwards no process of
//! any group is left.

use crate::common;

use common::{Bridge, Revision, scratch_dir, wait_until};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The adapters (and the processes of the panic test) started here.
const CHILDREN: usize = 3;

/// mcp-dap's shutdown time limit (`sessions::SHUTDOWN_TIME_LIMIT`, 10 s) and its margin
/// (1 s), with room for a loaded machine: the end of sessions whose adapters never answer
/// `disconnect` (3 s each, at once) stays below it.
const HANGING_SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);

/// The exit of a process whose sessions end in time.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(15);

/// The process groups and the grandchildren that the children reported in `dir`, once
/// [`CHILDREN`] reported.
fn reported(dir: &Path) -> Vec<(i32, i32)> {
    let read = || -> Vec<(i32, i32)> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(i32, i32)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (group, sleep) = name.split_once('.')?;
                Some((group.parse().ok()?, sleep.parse().ok()?))
            })
            .collect();
        found.sort_unstable();
        found
    };
    assert!(
        wait_until(|| read().len() == CHILDREN),
        "the children reported {:?}",
        read()
    );
    read()
}

/// Whether no process of the group `pgid` exists (`kill(-pgid, 0)` fails with ESRCH).
fn group_gone(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the group exists.
    let r = unsafe { libc::kill(-pgid, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Asserts that every group in `groups` exists now, and then, after `end` ran, that none is
/// left (waiting for it).
fn every_group_ends(groups: &[(i32, i32)], end: impl FnOnce()) {
    assert_eq!(groups.len(), CHILDREN, "{groups:?}");
    for &(group, sleep) in groups {
        assert!(!group_gone(group), "group {group} is gone before the end");
        assert_eq!(
            std::fs::read_to_string(format!("/proc/{sleep}/cmdline")).ok(),
            Some("sleep\u{0}1000\u{0}".to_owned()),
            "the grandchild {sleep} of group {group}"
        );
    }
    end();
    for &(group, _) in groups {
        assert!(wait_until(|| group_gone(group)), "group {group} survived");
    }
}

/// mcp-dap with the scripted adapter (`common/dap_script.py`) as `kids`, and
/// [`CHILDREN`] sessions of it launched: each adapter starts a grandchild (`sleep 1000`) in
/// its own group and reports it in `dir/groups`; with `hang`, it never answers `disconnect`
/// nor `terminate`, so mcp-dap gives up at its disconnect time limit and stops its group.
fn start_dap(hang: bool, dir: &Path) -> Bridge {
    let reports = dir.join("groups");
    std::fs::create_dir(&reports).expect("create the report folder");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/common/dap_script.py");
    let adapter = format!("kids=python3 {}", script.display());
    let mut b = Bridge::start_command(
        Command::new(common::dap_bin()).args(["--adapter", &adapter]),
        Revision::Modern,
    );
    for n in 1..=CHILDREN {
        let id = json!(format!("launch-{n}"));
        b.send_request(
            id.clone(),
            "tools/call",
            crate::dap::modern(json!({"name": "launch", "arguments": {
                "program": "/scripted/prog", "adapter": "kids", "stop_on_entry": false,
                "launch_arguments": {"grandchild_report": reports, "ignore_end": hang}}})),
        );
        let r = b.recv_response_within(&id, crate::dap::CALL_LIMIT);
        assert_eq!(r["result"]["isError"], Value::Null, "{r}");
        assert_eq!(
            r["result"]["structuredContent"]["session"],
            json!(format!("s{n}")),
            "{r}"
        );
    }
    b
}

#[test]
fn sigterm_ends_the_groups_of_three_adapters_of_mcp_dap() {
    let dir = scratch_dir("registry-sigterm");
    let mut b = start_dap(false, &dir);
    let groups = reported(&dir.join("groups"));
    every_group_ends(&groups, || {
        b.signal("-TERM");
        assert_eq!(b.exit_code(SHUTDOWN_LIMIT), Some(0));
    });
}

#[test]
fn adapters_that_never_answer_disconnect_end_with_their_groups_at_the_end_of_stdin() {
    let dir = scratch_dir("registry-hang");
    let mut b = start_dap(true, &dir);
    let groups = reported(&dir.join("groups"));
    every_group_ends(&groups, || {
        b.close_stdin();
        assert_eq!(b.exit_code(HANGING_SHUTDOWN_LIMIT), Some(0));
    });
}

/// Where the test binary, run again as the process that panics, has its children report.
const PANIC_DIR_ENV: &str = "MCP_BRIDGE_IT_PANIC_DIR";

/// The exit code that the panic hook of the process that panics gives.
const PANIC_EXIT: i32 = 70;

/// The file whose presence in the report folder lets the process panic: the test first
/// checks that every grandchild runs, which a panic at once would race with.
const PANIC_GO: &str = "go";

/// This test's name, to run it again as the process that panics.
const PANIC_TEST: &str = "child_registry::a_panic_ends_the_group_of_every_child";

#[test]
fn a_panic_ends_the_group_of_every_child() {
    if let Some(dir) = std::env::var_os(PANIC_DIR_ENV) {
        panic_with_children(PathBuf::from(dir));
    }
    let dir = scratch_dir("registry-panic");
    let exe = std::env::current_exe().expect("the test binary");
    let mut run = Command::new(exe);
    run.args(["--exact", PANIC_TEST, "--nocapture", "--test-threads=1"])
        .env(PANIC_DIR_ENV, &dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut process = run.spawn().expect("run the test binary again");
    let groups = reported(&dir);
    every_group_ends(&groups, || {
        std::fs::write(dir.join(PANIC_GO), "").expect("tell the process to panic");
        let status = process.wait().expect("the process that panics ends");
        assert_eq!(status.code(), Some(PANIC_EXIT));
    });
}

/// The process that panics: the panic hook of the application
/// (`app::process::stop_children_at_panic`), [`CHILDREN`] children started by
/// `transport::child::spawn`, each with a grandchild in its group, then a panic once the test
/// says so ([`PANIC_GO`]). It is no subreaper, so only the registry reaches the grandchildren.
fn panic_with_children(dir: PathBuf) -> ! {
    use mcp_bridge::transport::children::ChildRegistry;
    let children = ChildRegistry::new();
    mcp_bridge::app::process::stop_children_at_panic(children.clone(), "it", PANIC_EXIT);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let mut started = Vec::new();
        for n in 0..CHILDREN {
            let report = format!(
                "sleep 1000 & touch {}/$$.$!; exec sleep 1001",
                dir.display()
            );
            let args = ["-c".into(), report.into()];
            let child = mcp_bridge::transport::child::spawn(
                &"sh".into(),
                &args,
                &Default::default(),
                &children,
            )
            .unwrap_or_else(|e| panic!("child {n}: {e}"));
            started.push(child);
        }
        while !dir.join(PANIC_GO).exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the test's panic, with {} children", started.len());
    })
}
