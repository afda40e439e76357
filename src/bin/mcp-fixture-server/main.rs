//! `mcp-fixture-server`: the MCP 2026-07-28 stdio server that mcp-bridge's black-box tests and
//! benchmarks start as their upstream, built on `mcp_bridge::server`. By default it serves the
//! example server's tools, prompt and resources (as `Value` handlers whose frames the tests
//! assert); `--test-tools`, `--bad-list-items`, the lifecycle flags and the isolation probes
//! make it misbehave on purpose. `--help` lists everything.

mod bad_items;
mod cli;
mod demo;
mod input_requests;
mod listens;
mod output;
mod probes;
mod process;
mod stall;
mod test_tools;
mod tool;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::Parser;
use mcp_bridge::server::{CacheScope, Server};

use cli::{Args, Scope};

/// The name in `serverInfo` and at the start of its stderr lines: the example server's, whose
/// frames this fixture reproduces and whose name the tests assert.
const NAME: &str = "mcp-example-server";

/// How often `--discover-gate` looks for its file.
const GATE_POLL: Duration = Duration::from_millis(10);

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(error) = probes::run(&args) {
        eprintln!("{NAME}: a start-up probe failed: {error}");
        return ExitCode::FAILURE;
    }
    if args.exit_after_start {
        return ExitCode::SUCCESS;
    }
    if let Some(line) = &args.stderr_line {
        eprintln!("{line}");
    }
    if args.stdout_bom {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if out
            .write_all(b"\xEF\xBB\xBF")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    let server = build(&args);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{NAME}: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(feature = "http-server")]
    if let Some(addr) = args.http {
        use mcp_bridge::server::http;
        let mut options = http::HttpOptions {
            authorization_servers: args.http_authorization_server.clone(),
            ..http::HttpOptions::default()
        };
        if let Some(good) = args.http_bearer_token.clone() {
            options = options.bearer(move |token: &str| token == good);
        }
        if let Some(ms) = args.http_session_idle_ms {
            options.session_idle_time_limit = Duration::from_millis(ms);
        }
        if let Some(ms) = args.http_session_claim_ms {
            options.session_claim_time_limit = Duration::from_millis(ms);
        }
        if let Some(ms) = args.http_body_read_ms {
            options.body_read_time_limit = Duration::from_millis(ms);
        }
        if let Some(max) = args.http_max_sessions {
            options.max_sessions = max;
        }
        if args.http_debug_log {
            mcp_bridge::log::init(tracing::level_filters::LevelFilter::DEBUG);
        }
        drop(runtime);
        return match mcp_bridge::embed::serve_http(server, addr, options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("{NAME}: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let served = match args.stall_stdin_after {
        None => runtime.block_on(server.serve_stdio()),
        Some(lines) => {
            let input = stall::StallingReader::new(
                tokio::io::stdin(),
                lines,
                args.resume_stdin_file.clone(),
            );
            runtime.block_on(server.serve(input, tokio::io::stdout()))
        }
    };
    if args.keep_running_after_eof {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    // Exit without waiting for the runtime: its stdin reader thread may be blocked in read(2).
    std::process::exit(match served {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("{NAME}: {error}");
            1
        }
    })
}

fn build(args: &Args) -> Server {
    let scope = match args.cache_scope {
        Scope::Public => CacheScope::Public,
        Scope::Private => CacheScope::Private,
    };
    let mut builder = Server::builder(NAME, env!("CARGO_PKG_VERSION"))
        .server_info(!args.no_server_info)
        .listen(!args.no_listen)
        .cache(args.ttl_ms, scope);
    if let Some(instructions) = &args.instructions {
        builder = builder.instructions(instructions);
    }
    if let Some(items) = args.page_size {
        builder = builder.page_size(items);
    }
    if let Some(path) = &args.trace {
        builder = builder.trace_input(path.clone());
    }
    let delay = Duration::from_millis(args.discover_delay_ms);
    let gate = args.discover_gate.clone();
    let error = args.discover_error.clone();
    let exit_after = args.exit_after_discover;
    builder = builder.discover_hook(move |ctx| {
        let error = error.clone();
        let gate = gate.clone();
        async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if let Some(gate) = gate {
                while !gate.exists() {
                    tokio::time::sleep(GATE_POLL).await;
                }
            }
            if exit_after {
                ctx.close_connection();
            }
            error.map_or(Ok(()), Err)
        }
    });
    if args.listen_error.is_some() || args.listen_delay_ms > 0 {
        let error = args.listen_error.clone();
        let error_from = args.listen_error_from;
        let delay = Duration::from_millis(args.listen_delay_ms);
        let delay_from = args.listen_delay_from;
        let seen = Arc::new(AtomicU64::new(0));
        builder = builder.listen_hook(move |_ctx, _filter| {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            let error = error.clone().filter(|_| n >= error_from);
            let delay = if n >= delay_from {
                delay
            } else {
                Duration::ZERO
            };
            async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                error.map_or(Ok(()), Err)
            }
        });
    }
    builder = demo::demo(builder);
    if args.test_tools {
        builder = test_tools::test_tools(builder);
    }
    if args.bad_list_items {
        builder = bad_items::bad_list_items(builder);
    }
    builder.build()
}
