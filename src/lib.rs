//! mcp-bridge: a stdio MCP server of revision 2025-11-25 for editors, in front of an MCP
//! server of revision 2026-07-28.
//!
//! Layers: [`protocol`] is pure (values in, values out); [`transport`] moves bytes; [`actors`]
//! wire them into the running system; `cli` reads the command line; [`log`] formats stderr;
//! [`server`] is a small 2026-07-28 server API used by the example server and the tests;
//! [`embed`] serves such a server to clients of both revisions on one stdio connection.
//!
//! Features: `http` (the URL form, `transport::http`) and `auth` (its OAuth sign-in, `auth`
//! but its clock, and the executable's `cli`) are default features, required by the
//! `mcp-bridge` binary; an embedded server uses `default-features = false` and carries neither. `schema-check`
//! (default) checks list items and accepted form content against the 2025-11-25 schema.

pub mod actors;
pub mod app;
pub mod auth;
#[cfg(feature = "auth")]
pub mod cli;
pub mod embed;
pub mod log;
pub mod protocol;
pub mod server;
pub mod transport;
