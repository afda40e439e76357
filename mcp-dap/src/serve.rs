//! mcp-dap served on stdio (`embed::serve_stdio`) to 2026-07-28 and 2025-11-25 clients alike.
//! The DAP side runs on a thread of its own with its own actix System: the Sessions supervisor,
//! and per session a Session and an Adapter actor. The adapters are forked on that thread,
//! which lives until the end, because each adapter gets SIGKILL when the thread that forked it
//! ends (`transport::isolation`). The end of stdin ends every session: `disconnect` with
//! `terminateDebuggee`, then the stop steps of each adapter's process group. SIGTERM, SIGINT
//! and SIGHUP do the same, and the process exits 0, as at the end of stdin.

use std::sync::{Arc, mpsc};

use actix::prelude::*;
use tokio::sync::watch;

use mcp_bridge::process::{stop_children_at_panic, stop_every_child};
use mcp_bridge::server::{CacheScope, Outcome, ResourceDef, ResourceTemplateDef, Server};

use crate::adapters::Registry;
use crate::children::CHILDREN;
use crate::sessions::{self, CloseAll, Find, Sessions};
use crate::{session, tools};

/// The exit code of an internal error (a panic anywhere), as the bridge's.
const EXIT_INTERNAL_ERROR: i32 = 1;

/// What the DAP thread hands back: the Sessions' address, the channel that gives it the
/// server, and the resource list it publishes.
struct DapSide {
    sessions: Addr<Sessions>,
    server: mpsc::Sender<Server>,
    list: watch::Receiver<Vec<ResourceDef>>,
}

/// Starts the DAP thread; its Sessions actor starts once it is given the server.
fn start_dap_side() -> std::io::Result<DapSide> {
    let (addr_tx, addr_rx) = mpsc::channel();
    let (server_tx, server_rx) = mpsc::channel::<Server>();
    let (listed, list) = watch::channel(Vec::new());
    std::thread::Builder::new()
        .name("mcp-dap".into())
        .spawn(move || {
            let system = System::new();
            system.block_on(async move {
                let context = Context::<Sessions>::new();
                let _ = addr_tx.send(context.address());
                // The server is built with the address, then comes back: nothing else runs on
                // this thread before it.
                if let Ok(server) = server_rx.recv() {
                    context.run(Sessions::new(server, listed));
                }
            });
            let _ = system.run();
        })?;
    let addr = addr_rx
        .recv()
        .map_err(|_| std::io::Error::other("the DAP thread did not start"))?;
    Ok(DapSide {
        sessions: addr,
        server: server_tx,
        list,
    })
}

/// The state or output resource of `uri`.
async fn read_resource(sessions: Addr<Sessions>, read: serde_json::Value) -> Outcome {
    let uri = read["uri"].as_str().unwrap_or_default().to_owned();
    let id = read["variables"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let missing = || Outcome::resource_text(&uri, format!("no session {id:?} is open"));
    let Ok(Some(session)) = sessions.send(Find(id.clone())).await else {
        return missing();
    };
    if uri.ends_with("/output") {
        return match session.send(session::Output).await {
            Ok(text) => Outcome::resource_text(&uri, text),
            Err(_) => missing(),
        };
    }
    match session.send(session::Snapshot).await {
        Ok((state, _)) => {
            Outcome::resource_text(&uri, serde_json::to_string(&state).unwrap_or_default())
        }
        Err(_) => missing(),
    }
}

/// Serves mcp-dap with the adapters of `registry` on stdin and stdout until the end of stdin
/// (then every session ends, and this returns) or a termination signal (then every session
/// ends, and the process exits 0). A panic anywhere stops every adapter and exits 1. Errors:
/// the DAP thread cannot start or ended early, or stdio fails.
pub fn serve_stdio(registry: Registry) -> std::io::Result<()> {
    let registry = Arc::new(registry);
    // debugpy's launcher starts the debuggee in a process group of its own: as a subreaper
    // this process inherits it if the launcher dies, and the sweep at the end finds it.
    mcp_bridge::process::become_subreaper();
    // An internal error stops every adapter's group and every other descendant, and exits,
    // instead of leaving the adapters' processes behind.
    stop_children_at_panic(CHILDREN.clone(), "mcp-dap", EXIT_INTERNAL_ERROR);
    let DapSide {
        sessions,
        server: server_tx,
        list,
    } = start_dap_side()?;
    // A session changes at any moment: no list or read of it may be served from a cache.
    let builder = Server::builder("mcp-dap", env!("CARGO_PKG_VERSION"))
        .cache(0, CacheScope::Private)
        .instructions(
            "Debug programs: launch (it returns a session id and stops at the entry) or attach, \
         set_breakpoints, continue, pause, next, step_in, step_out, threads, stack_trace, \
         scopes, variables, evaluate, wait, terminate, disconnect. Subscribe to a session's \
         state resource to hear of each stop.",
        );
    let builder = tools::register(builder, &sessions, registry);
    let mut builder = builder.resource_lister(move || list.borrow().clone());
    for (kind, mime) in [("state", "application/json"), ("output", "text/plain")] {
        let s = sessions.clone();
        let template = ResourceTemplateDef::new(&format!("dap://sessions/{{id}}/{kind}"), kind)
            .mime_type(mime);
        builder = builder.resource_template(template, move |read, _| {
            let s = s.clone();
            async move { read_resource(s, read).await }
        });
    }
    let server = builder.build();
    server_tx
        .send(server.clone())
        .map_err(|_| std::io::Error::other("the DAP thread ended"))?;
    on_termination_signal(sessions.clone());
    let served = mcp_bridge::embed::serve_stdio(server);
    end_all_sessions(sessions);
    served
}

/// Every session ends before the process does (the end of stdin, a termination signal):
/// each gets `disconnect`, at most [`sessions::SHUTDOWN_TIME_LIMIT`] in all; then every
/// adapter's group that is still registered gets SIGKILL, and whatever is left (a debuggee of
/// an adapter that crashed) ends in the sweep of the descendants.
fn end_all_sessions(sessions: Addr<Sessions>) {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let system = System::new();
        system.block_on(async move {
            let _ = sessions.send(CloseAll).await;
        });
        let _ = done_tx.send(());
    });
    let _ = done_rx.recv_timeout(sessions::SHUTDOWN_TIME_LIMIT + SHUTDOWN_MARGIN);
    stop_every_child(&CHILDREN);
}

/// What the end of the sessions may take beyond [`sessions::SHUTDOWN_TIME_LIMIT`] (the
/// thread that runs it starting and ending).
const SHUTDOWN_MARGIN: std::time::Duration = std::time::Duration::from_secs(1);

/// On SIGTERM, SIGINT or SIGHUP: the steps of the end of stdin, then exit 0 (the stdio
/// server's thread, which blocks on stdin, does not end by itself). The bridge treats these
/// signals as the end of its input too (docs/usage.md).
fn on_termination_signal(sessions: Addr<Sessions>) {
    let spawned = std::thread::Builder::new()
        .name("mcp-dap-signals".into())
        .spawn(move || {
            let system = System::new();
            let heard = system.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::hangup()),
                ) else {
                    return false;
                };
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                    _ = hup.recv() => {}
                }
                true
            });
            if heard {
                end_all_sessions(sessions);
                std::process::exit(0);
            }
        });
    if spawned.is_err() {
        eprintln!("mcp-dap: cannot watch for SIGTERM; it ends the process at once");
    }
}
