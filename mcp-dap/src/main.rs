//! `mcp-dap`: an MCP server that drives Debug Adapter Protocol adapters (debugpy), written on
//! the crate's server API and served to 2026-07-28 and 2025-11-25 clients alike
//! (`embed::serve_stdio`). The DAP side runs on a thread of its own with its own actix System:
//! the Sessions supervisor, and per session a Session and an Adapter actor. The adapters are
//! forked on that thread, which lives until the end, because each adapter gets SIGKILL when
//! the thread that forked it ends (`transport::isolation`). The end of stdin ends every
//! session: `disconnect` with `terminateDebuggee`, then the stop steps of each adapter's
//! process group. SIGTERM, SIGINT and SIGHUP do the same, and the process exits 0, as at the
//! end of stdin.

use std::sync::{Arc, mpsc};

use actix::prelude::*;
use clap::Parser;
use tokio::sync::watch;

use mcp_bridge::app::process::{stop_children_at_panic, stop_every_child};
use mcp_bridge::server::{CacheScope, Outcome, ResourceDef, ResourceTemplateDef, Server};

use mcp_dap::children::CHILDREN;
use mcp_dap::sessions::{CloseAll, Find, Sessions};
use mcp_dap::{adapters, session, sessions, tools};

/// The command line.
#[derive(Parser)]
#[command(
    name = "mcp-dap",
    version,
    about = "An MCP server that drives debug adapters (DAP)"
)]
struct Cli {
    /// An adapter by its command, `NAME=COMMAND [ARG...]` (split at whitespace), for
    /// `launch`'s `adapter: NAME`; an argument `{port}` makes it a TCP adapter, given a free
    /// port to listen on. Repeatable; a built-in name (debugpy, lldb) is replaced.
    #[arg(long = "adapter", value_name = "NAME=COMMAND...")]
    adapters: Vec<String>,
    /// An adapter that chooses its port and prints it (`Listening on port N`, `listening at
    /// HOST:N`: the last number of the first line of its stdout that names a port or a
    /// listen), `NAME=COMMAND [ARG...]`; mcp-dap connects to 127.0.0.1 at that port.
    #[arg(long = "adapter-printing-port", value_name = "NAME=COMMAND...")]
    adapters_printing_port: Vec<String>,
}

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

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let registry =
        match adapters::Registry::with_all_options(&cli.adapters, &cli.adapters_printing_port) {
            Ok(registry) => Arc::new(registry),
            Err(e) => {
                eprintln!("mcp-dap: {e}");
                std::process::exit(2);
            }
        };
    // debugpy's launcher starts the debuggee in a process group of its own: as a subreaper
    // this process inherits it if the launcher dies, and the sweep at the end finds it.
    mcp_bridge::transport::isolation::become_subreaper();
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
