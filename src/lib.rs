//! mcp-bridge: a stdio MCP server of revision 2025-11-25 for editors, in front of an MCP
//! server of revision 2026-07-28.
//!
//! # What the crate offers
//!
//! - [`server`]: a small MCP 2026-07-28 server API. Register tools, prompts and resources on a
//!   [`server::ServerBuilder`] and serve a connection; `server::http` (feature
//!   `http-server`) serves it to 2026-07-28 clients over Streamable HTTP.
//! - [`embed`]: serves such a server to clients of both revisions on one stdio connection
//!   (a 2025-11-25 client through the bridge in the same process), or over HTTP.
//! - [`process`]: child processes for a server that starts programs of its own (as mcp-dap
//!   starts debug adapters), each reached at a panic and at the end.
//!
//! `examples/minimal.rs` is a whole server in a dozen lines:
//!
//! ```no_run
//! use mcp_bridge::server::Server;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! fn main() -> std::io::Result<()> {
//!     let server = Server::builder("adder", "1.0.0")
//!         .typed_tool("add", |Add { a, b }, _| (a + b).to_string())
//!         .build();
//!     mcp_bridge::embed::serve_stdio(server)
//! }
//! ```
//!
//! # Layout
//!
//! Everything else is internal: the bridge's own parts, which the `mcp-bridge` executable runs.
//! `protocol` is pure (values in, values out); `log` formats stderr; `transport` moves bytes; `auth` signs in to an HTTP
//! upstream; `actors` wire them into the running system; `app` and `cli` start the executable.
//! The non-default feature `internals` makes them public (and hidden from the documentation)
//! for the crate's tests, benches and fixtures; they have no stability promise.
//!
//! # Features
//!
//! `http` (the URL form) and `auth` (its OAuth sign-in and the executable's command line) are
//! default features, required by the `mcp-bridge` executable; an embedded server uses
//! `default-features = false` and carries neither. `http-server` (default) gives
//! `server::http` and `embed::serve_http`. `schema-check` (default) checks list items and
//! accepted form content against the 2025-11-25 schema.

// An embedded server's build (without `http` and `auth`) compiles the executable's parts (child
// processes, the log files, the sign-in's helpers) that it never runs: dead code there is by
// design. The executable's build (the default features) uses every internal part, and
// `scripts/test` reports its dead code (`cargo clippy --lib`, without the tests' `internals`).
#![cfg_attr(not(all(feature = "http", feature = "auth")), allow(dead_code))]

pub mod embed;
pub mod process;
pub mod server;

// The internal modules: private, or public but hidden with the feature `internals`. Written
// out in pairs: a module declared by a macro could not name its `#[macro_export]` macros by
// path (rustc's `macro_expanded_macro_exports_accessed_by_absolute_paths`).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod actors;
#[cfg(not(feature = "internals"))]
mod actors;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod app;
#[cfg(not(feature = "internals"))]
mod app;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod auth;
#[cfg(not(feature = "internals"))]
mod auth;
#[cfg(all(feature = "auth", feature = "internals"))]
#[doc(hidden)]
pub mod cli;
#[cfg(all(feature = "auth", not(feature = "internals")))]
mod cli;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod log;
#[cfg(not(feature = "internals"))]
mod log;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod protocol;
#[cfg(not(feature = "internals"))]
mod protocol;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod transport;
#[cfg(not(feature = "internals"))]
mod transport;

/// The whole `mcp-bridge` executable (src/main.rs calls only this): see
/// `app::executable`. Never returns: it exits the process with the bridge's exit code.
#[cfg(all(feature = "http", feature = "auth"))]
#[doc(hidden)]
pub fn run_executable() -> ! {
    app::executable::run()
}
