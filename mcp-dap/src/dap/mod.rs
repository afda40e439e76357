//! The Debug Adapter Protocol as values: the `Content-Length` framing of its messages
//! ([`framing`]) and the messages `mcp-dap` sends and reads ([`types`]). PURE like
//! `protocol`: no I/O, no clocks, no actors.
//!
//! The DAP specification ("Base Protocol",
//! <https://microsoft.github.io/debug-adapter-protocol/specification>) frames each message as
//! a header part of `name: value` lines ended by an empty line, then a JSON body of exactly
//! `Content-Length` bytes.

pub mod framing;
pub mod skim;
pub mod types;
