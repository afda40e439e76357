//! The library of `mcp-dap` (`main.rs` reads the command line): the DAP codec (`dap`), below
//! the actors that drive the adapters: per session an Adapter actor (`adapter`: the DAP
//! connection) and a Session actor (`session`: its state and threads), the Sessions supervisor
//! (`sessions`), and the MCP tools that reach them (`tools`). [`adapters`] resolves an
//! adapter's command (the command line's `--adapter`); `echo` bounds what an error repeats of
//! a client's input; `children` holds the process's children; [`serve`] wires them and serves
//! them on stdio.

mod adapter;
pub mod adapters;
mod children;
mod dap;
mod echo;
pub mod serve;
mod session;
mod sessions;
mod tools;
