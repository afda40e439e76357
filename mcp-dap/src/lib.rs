//! The library of `mcp-dap` (`main.rs` serves it on stdio): the DAP codec ([`dap`]) and the
//! actors that drive the adapters: per session an [`adapter`] actor (the DAP connection) and a
//! [`session`] actor (its state), the [`sessions`] supervisor, and the MCP [`tools`] that
//! reach them; [`adapters`] resolves an adapter's command and [`echo`] bounds what a tool
//! shows of the debuggee's input; [`children`] holds the process's children.

pub mod adapter;
pub mod adapters;
pub mod children;
pub mod dap;
pub mod echo;
pub mod session;
pub mod sessions;
pub mod tools;
