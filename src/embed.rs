//! The embedded bridge: one stdio connection of a process that holds a
//! 2026-07-28 [`Server`] answers clients of both revisions. The first request on the input
//! selects the path:
//!
//! - `server/discover` before any other request selects no path: the server answers it (or,
//!   with [`Discover::Refuse`], -32601 `method_not_found`), and the next line decides;
//! - `initialize` selects the **legacy path** (2025-11-25): the same Frontend and actors as the
//!   `mcp-bridge` executable, with the upstream on the `Memory` transport
//!   (the bridge's internal `UpstreamSpec::Memory`): the server runs on a task of the same process, its messages
//!   cross in memory, and the bridge's fallback name is the server's name;
//! - any other line selects the **modern path** (2026-07-28): the server serves the
//!   connection itself, and a request past [`Limits::max_in_flight`] is refused at once with
//!   -32603 `too_many_requests` (the reader never waits for a free slot).
//!
//! Both paths take the line length, the nesting depth, the requests in flight and the shutdown
//! grace from [`AutoOptions::limits`]. At the end of the input the legacy path stops as the bridge's shutdown
//! cascade does (without its watchdog: the process is the server's); the modern path ends its
//! open listen streams with their result, waits at most [`Limits::shutdown_grace`] for the
//! other requests and cancels the rest.
//!
//! The legacy path logs as the bridge does, through `tracing`: its lines go to the process's
//! subscriber, if any (the `mcp-bridge` executable installs its own stderr format).
//!
//! On the memory link the time limits of the requests do not apply (they are
//! [`MEMORY_TIME_LIMIT`]); only the wait for the editor's answers to one round of input
//! requests keeps its limit ([`AutoOptions::input_timeout`]).

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::FramedRead;

use crate::actors::config::{BridgeConfig, Timeouts};
use crate::actors::supervisor;
use crate::protocol::listen::ListenTimings;
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::methods;
use crate::protocol::wire::framing::{Frame, FrameCodec, READ_CHUNK_BYTES};
use crate::protocol::wire::jsonrpc::{self, Message};
use crate::server::connection::{self, AtEnd, Input};
use crate::server::{Limits, Server};
use crate::transport::open::UpstreamSpec;
use crate::transport::queue::{EDITOR_QUEUE, QueueStats};
use crate::transport::writer::Writer;
/// The time limit of every request to the in-process server on the legacy path (and of its
/// `server/discover`): 30 days, in effect none: the in-process server is the embedding
/// program's own code, which decides how long its handlers take.
pub const MEMORY_TIME_LIMIT: Duration = Duration::from_secs(30 * 24 * 3600);

/// What [`serve_stdio_auto`] does with a `server/discover` that comes before the first other
/// request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Discover {
    /// The server answers it with its `DiscoverResult` (the default).
    #[default]
    Answer,
    /// It is refused with -32601 `method_not_found`, as the `mcp-bridge` executable does.
    Refuse,
}

/// The options of [`serve_stdio_auto`].
///
/// ```
/// use mcp_bridge::embed::{AutoOptions, Discover};
/// use mcp_bridge::server::Limits;
///
/// let options = AutoOptions {
///     discover: Discover::Refuse,
///     limits: Limits { max_in_flight: 32, ..Limits::default() },
///     ..AutoOptions::default()
/// };
/// assert_eq!(options.input_timeout.as_secs(), 3600);
/// ```
#[derive(Clone, Debug)]
pub struct AutoOptions {
    /// The limits of both paths (default: `Limits::default()`).
    pub limits: Limits,
    /// A `server/discover` before the first request (default: answered).
    pub discover: Discover,
    /// On the legacy path, the wait for the editor's answers to one round of input requests
    /// (default 1 h, as the bridge's `Timeouts::input`).
    pub input_timeout: Duration,
}

impl Default for AutoOptions {
    fn default() -> Self {
        AutoOptions {
            limits: Limits::default(),
            discover: Discover::Answer,
            input_timeout: Timeouts::default().input,
        }
    }
}

/// Serves one connection of newline-delimited JSON-RPC on `input`/`output` (normally the
/// process's stdin and stdout) for a client of either revision; the first request selects
/// the path (see the module doc). Returns at the end of the input, once the selected path
/// has stopped.
///
/// Blocks the calling thread: it runs its own actix `System` (a tokio current-thread
/// runtime), on which the server's handlers run too. Call it from `main`, not from inside a
/// tokio runtime.
///
/// ```no_run
/// use mcp_bridge::embed::{AutoOptions, serve_stdio_auto};
/// use mcp_bridge::server::{Outcome, Server, ToolDef};
/// use serde_json::json;
///
/// fn main() -> std::io::Result<()> {
///     let server = Server::builder("hello", "1.0.0")
///         .tool(ToolDef::new("hello", json!({"type": "object"})), |_, _| async {
///             Ok(Outcome::text("Hello!"))
///         })
///         .build();
///     serve_stdio_auto(server, tokio::io::stdin(), tokio::io::stdout(), AutoOptions::default())
/// }
/// ```
///
/// # Errors
/// A write error before the path is selected; on the modern path a write error of the
/// connection; on the legacy path `Other` when the bridge ended with an exit code other
/// than 0 (an internal error). A read error ends the input, as the end of the input does.
pub fn serve_stdio_auto<R, W>(
    server: Server,
    input: R,
    output: W,
    options: AutoOptions,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let system = actix::System::new();
    let limits = options.limits.clone();
    let selected = system.block_on(select(&server, input, output, &options))?;
    match selected {
        Selected::Nothing => Ok(()),
        Selected::Modern(frames, output) => system.block_on(connection::serve_framed(
            &server,
            frames,
            output,
            &limits,
            AtEnd::Grace,
        )),
        Selected::Legacy(first, rest, output) => {
            let config = legacy_config(server, &options);
            // Made here, outside the runtime: a runtime must not be dropped inside one.
            let output = BlockingOutput::new(output)?;
            system.block_on(async move {
                let frames = futures_util::stream::iter([first]).chain(
                    rest.take_while(|read| std::future::ready(read.is_ok()))
                        .filter_map(|read| std::future::ready(read.ok())),
                );
                let output =
                    Writer::for_blocking(output, EDITOR_QUEUE, QueueStats::new("editor_queue"));
                supervisor::start_on(config, frames, output);
            });
            match system.run_with_code()? {
                0 => Ok(()),
                code => Err(io::Error::other(format!(
                    "the embedded bridge ended with exit code {code}"
                ))),
            }
        }
    }
}

/// [`serve_stdio_auto`] on the process's stdin and stdout with the default options.
///
/// ```no_run
/// use mcp_bridge::server::{Outcome, Server, ToolDef};
///
/// fn main() -> std::io::Result<()> {
///     let server = Server::builder("hello", "1.0.0")
///         .tool(ToolDef::no_input("hello"), |_, _| async { Ok(Outcome::text("Hello!")) })
///         .build();
///     mcp_bridge::embed::serve_stdio(server)
/// }
/// ```
///
/// # Errors
/// As [`serve_stdio_auto`].
pub fn serve_stdio(server: Server) -> io::Result<()> {
    serve_stdio_auto(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        AutoOptions::default(),
    )
}

/// Serves `server` over Streamable HTTP on `addr` ([`crate::server::http`]) until SIGINT or
/// SIGTERM: to 2026-07-28 clients statelessly, and to 2025-11-25 clients in sessions
/// ([`HttpOptions::sessions`](crate::server::http::HttpOptions::sessions), unless `options`
/// has its own), each served by an in-process bridge as the legacy path of
/// [`serve_stdio_auto`] is, with the default [`AutoOptions`]. Runs its own actix `System`
/// (call it from `main`, not from inside a runtime). Once bound it writes one line to stderr,
/// `NAME: listening on http://ADDR/PATH` (with the port chosen when `addr`'s port is 0).
///
/// A session's bridge ends when its input ends (the session was deleted, idle past its time
/// limit, or the server stops); its end is the session's, and the System goes on.
///
/// ```no_run
/// use mcp_bridge::server::{Server, http};
///
/// fn main() -> std::io::Result<()> {
///     let server = Server::builder("hello", "1.0.0").tool("hello", |_, _| "Hello!").build();
///     mcp_bridge::embed::serve_http(server, http::loopback(8000), http::HttpOptions::default())
/// }
/// ```
///
/// # Errors
/// The runtime cannot start or the address cannot be bound.
#[cfg(feature = "http-server")]
pub fn serve_http(
    server: Server,
    addr: std::net::SocketAddr,
    options: crate::server::http::HttpOptions,
) -> io::Result<()> {
    let system = actix::System::new();
    system.block_on(async move {
        let name = server.info()["name"].as_str().unwrap_or("mcp").to_owned();
        let options = match options.sessions {
            Some(_) => options,
            None => options.sessions(BridgeSessions {
                arbiter: actix::Arbiter::current(),
                server: server.clone(),
                options: AutoOptions::default(),
            }),
        };
        let bound = crate::server::http::bind(server, addr, options).await?;
        eprintln!("{name}: listening on {}", bound.url());
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        bound
            .run_until(async move {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            })
            .await
    })
}

/// The sessions of [`serve_http`]: each an in-process bridge on the System's arbiter, its
/// editor side the session's two channels.
#[cfg(feature = "http-server")]
struct BridgeSessions {
    arbiter: actix::ArbiterHandle,
    server: Server,
    options: AutoOptions,
}

#[cfg(feature = "http-server")]
impl crate::server::http::SessionFactory for BridgeSessions {
    fn start(&self, ends: crate::server::http::SessionEnds) -> crate::server::http::SessionStart {
        let server = self.server.clone();
        let options = self.options.clone();
        // The actors are not `Send`: they are made on the arbiter's thread, inside its task.
        let started = self.arbiter.spawn(async move {
            let crate::server::http::SessionEnds { input, output, .. } = ends;
            let config = legacy_config(server, &options);
            let frames = futures_util::stream::unfold(input, |mut input| async move {
                let line = input.recv().await?;
                Some((Frame::Line(line), input))
            });
            let output =
                Writer::for_line_channel(output, EDITOR_QUEUE, QueueStats::new("editor_queue"));
            let host = std::rc::Rc::new(SessionHost {
                output: output.clone(),
            });
            supervisor::start_with(
                config,
                Box::pin(frames),
                output,
                Box::pin(std::future::pending()),
                host,
                None,
            );
        });
        Box::pin(std::future::ready(if started {
            Ok(())
        } else {
            Err(io::Error::other("the actix System has stopped"))
        }))
    }
}

/// The host of a session's bridge: its end is the session's, not the process's.
#[cfg(feature = "http-server")]
struct SessionHost {
    output: Writer,
}

#[cfg(feature = "http-server")]
impl supervisor::Host for SessionHost {
    fn step(&self, step: &'static str) {
        tracing::debug!(target: "supervisor", "shutdown step: {step}");
    }
    // The process is the application's, and other sessions run in it.
    fn start_watchdog(&self, _after: Duration) {}
    fn exit(&self, code: i32) {
        tracing::debug!(target: "supervisor", "a session's bridge ended with exit code {code}");
        // The writer's channel closes once it is empty: the HTTP server ends the session.
        self.output.close();
    }
}

/// The path the first request selected, with what was read so far.
enum Selected<R, W> {
    /// The input ended before any request but `server/discover`.
    Nothing,
    /// The lines for the server (the first one already read) and the output.
    Modern(Input<R>, W),
    /// The `initialize` line, the rest of the input and the output.
    Legacy(Frame, Box<FramedRead<R, FrameCodec>>, W),
}

/// Reads lines until one selects a path, answering each `server/discover` before it.
async fn select<R, W>(
    server: &Server,
    input: R,
    mut output: W,
    options: &AutoOptions,
) -> io::Result<Selected<R, W>>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let limits = &options.limits;
    let codec = FrameCodec::new(limits.max_line_bytes);
    let mut lines = FramedRead::with_capacity(input, codec, READ_CHUNK_BYTES);
    loop {
        let frame = match lines.next().await {
            Some(Ok(frame)) => frame,
            // A read error ends the input, as its end does.
            Some(Err(_)) | None => return Ok(Selected::Nothing),
        };
        let parsed = match &frame {
            Frame::Line(line) => jsonrpc::parse(line, limits.max_depth).ok(),
            Frame::TooLong { .. } => None,
        };
        match parsed {
            Some(Message::Request { id, method, params }) if method == methods::SERVER_DISCOVER => {
                let response = match options.discover {
                    Discover::Answer => server.answer_alone(&id, &method, params).await,
                    Discover::Refuse => Some(jsonrpc::error_response(
                        Some(&id),
                        Cause::MethodNotFound.error(None),
                    )),
                };
                if let Some(response) = response {
                    write_line(&mut output, &response).await?;
                }
            }
            Some(Message::Request { method, .. }) if method == methods::INITIALIZE => {
                return Ok(Selected::Legacy(frame, Box::new(lines), output));
            }
            _ => {
                return Ok(Selected::Modern(
                    Input::Lines(VecDeque::from([frame]), Box::new(lines)),
                    output,
                ));
            }
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &mut W, message: &Value) -> io::Result<()> {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    output.write_all(&line).await?;
    output.flush().await
}

/// The bridge's configuration of the legacy path: the in-process server as the upstream, the
/// limits of the options, no time limit on the memory link but the editor's answers.
fn legacy_config(server: Server, options: &AutoOptions) -> BridgeConfig {
    let name = server.info()["name"].as_str().map(str::to_owned);
    BridgeConfig {
        upstream: UpstreamSpec::Memory(server),
        name,
        discover_timeout: MEMORY_TIME_LIMIT,
        open_upstream: crate::transport::open::open_in_process,
        max_line_bytes: options.limits.max_line_bytes,
        max_depth: options.limits.max_depth,
        timeouts: Timeouts {
            list: MEMORY_TIME_LIMIT,
            read: MEMORY_TIME_LIMIT,
            call: MEMORY_TIME_LIMIT,
            later_read: MEMORY_TIME_LIMIT,
            input: options.input_timeout,
        },
        max_in_flight: options.limits.max_in_flight,
        shutdown_grace: options.limits.shutdown_grace,
        listen: ListenTimings::default(),
        sign_in: None,
        metrics_interval: None,
        item_filter: None,
        observer: None,
        in_process: true,
        member: None,
    }
}

/// The editor's output as the blocking sink of the bridge's writer thread: each write runs on
/// a small runtime of that thread, so the output may be any `AsyncWrite` (tokio's stdout, a
/// pipe, a test's duplex stream).
struct BlockingOutput<W> {
    runtime: tokio::runtime::Runtime,
    output: W,
}

impl<W> BlockingOutput<W> {
    fn new(output: W) -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(BlockingOutput { runtime, output })
    }
}

impl<W: AsyncWrite + Unpin> io::Write for BlockingOutput<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.runtime.block_on(self.output.write(bytes))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.runtime.block_on(self.output.flush())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Outcome, ToolDef};
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, BufReader};

    fn meta() -> Value {
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}})
    }

    /// Serves `lines` (then the end of input) with `options`; every line written back.
    fn exchange(lines: &[Value], options: AutoOptions) -> Vec<Value> {
        let server = Server::builder("t", "1")
            .tool(ToolDef::no_input("hi"), |_, _| async {
                Ok(Outcome::text("hi"))
            })
            .build();
        let (mut client, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, replies) = tokio::io::duplex(1 << 16);
        let served = std::thread::spawn(move || {
            serve_stdio_auto(server, server_input, server_output, options)
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let Ok(runtime) = runtime else {
            panic!("a runtime for the client");
        };
        let text: Vec<u8> = lines
            .iter()
            .flat_map(|line| format!("{line}\n").into_bytes())
            .collect();
        let read = runtime.block_on(async move {
            assert!(client.write_all(&text).await.is_ok());
            drop(client);
            let mut out = Vec::new();
            let mut replies = BufReader::new(replies).lines();
            while let Ok(Some(line)) = replies.next_line().await {
                out.push(serde_json::from_str(&line).unwrap_or(Value::Null));
            }
            out
        });
        assert!(matches!(served.join(), Ok(Ok(()))));
        read
    }

    #[test]
    fn a_refused_discover_selects_no_path_and_the_next_request_selects_the_modern_one() {
        let options = AutoOptions {
            discover: Discover::Refuse,
            ..AutoOptions::default()
        };
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                              "params": {"_meta": meta()}});
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "hi", "_meta": meta()}});
        let replies = exchange(&[discover, call], options);
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert_eq!(
            replies[0],
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601,
                   "message": "Method not found", "data": {"cause": "method_not_found"}}})
        );
        assert_eq!(replies[1]["id"], 2);
        assert_eq!(replies[1]["result"]["content"][0]["text"], "hi");
    }

    #[test]
    fn an_input_that_ends_after_discovers_ends_without_a_path() {
        let discover = json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover",
                              "params": {"_meta": meta()}});
        let replies = exchange(&[discover.clone(), discover], AutoOptions::default());
        assert_eq!(replies.len(), 2, "{replies:?}");
        for reply in replies {
            assert_eq!(reply["id"], "d");
            assert_eq!(reply["result"]["supportedVersions"], json!(["2026-07-28"]));
        }
    }

    /// Serves a conversation with `options`: each group of lines is written once the replies
    /// to the group before it (as many as it has requests) were read; every reply read
    /// (notifications left out).
    fn converse(groups: &[&[Value]], options: AutoOptions) -> Vec<Value> {
        let server = Server::builder("t", "1").tool("hi", |_, _| "hi").build();
        let (mut client, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, replies) = tokio::io::duplex(1 << 16);
        let served = std::thread::spawn(move || {
            serve_stdio_auto(server, server_input, server_output, options)
        });
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            panic!("a runtime for the client");
        };
        let read = runtime.block_on(async move {
            let mut out = Vec::new();
            let mut replies = BufReader::new(replies).lines();
            for group in groups {
                let text: Vec<u8> = group
                    .iter()
                    .flat_map(|line| format!("{line}\n").into_bytes())
                    .collect();
                assert!(client.write_all(&text).await.is_ok());
                let mut wanted = group.iter().filter(|line| line.get("id").is_some()).count();
                while wanted > 0 {
                    let Ok(Some(line)) = replies.next_line().await else {
                        return out;
                    };
                    let reply: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    // Notifications (a list change after the listen opened) are not replies.
                    if reply.get("id").is_some() {
                        out.push(reply);
                        wanted -= 1;
                    }
                }
            }
            drop(client);
            out
        });
        assert!(matches!(served.join(), Ok(Ok(()))));
        read
    }

    #[test]
    fn the_legacy_path_applies_the_nesting_depth_of_the_limits() {
        let options = AutoOptions {
            limits: Limits {
                max_depth: 4,
                ..Limits::default()
            },
            ..AutoOptions::default()
        };
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        // Depth 5 (the message, params, arguments, a, b), then depth 4.
        let deep = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "hi", "arguments": {"a": {"b": []}}}});
        let at_limit = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                              "params": {"name": "hi", "arguments": {"a": {}}}});
        let replies = converse(&[&[initialize], &[initialized, deep], &[at_limit]], options);
        assert_eq!(replies.len(), 3, "{replies:?}");
        assert_eq!(replies[0]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(
            replies[1],
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32600,
                   "message": "Invalid request: the message is nested too deeply",
                   "data": {"cause": "too_deep", "detail": 4}}})
        );
        assert_eq!(replies[2]["id"], 3, "{replies:?}");
        assert_eq!(replies[2]["result"]["content"][0]["text"], "hi");
    }
}
