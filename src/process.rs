//! Child processes of a server that starts programs of its own, as `mcp-dap` starts debug
//! adapters: each child leads a process group of its own and joins a [`ChildRegistry`], so
//! that the paths that end the process at once (a panic, a second termination signal) reach
//! every live child and everything it started, however many there are.
//!
//! The bridge runs its upstream server with the same parts: [`resolve`] finds the program
//! before anything starts, [`spawn`] starts it with piped stdio and exactly fds 0, 1 and 2,
//! [`ChildProcess::stop`] ends its group with the stdio transport's steps, and
//! [`stop_children_at_panic`] installs the panic hook that ends them all.
//!
//! ```no_run
//! use mcp_bridge::process::{self, ChildEnv, ChildRegistry};
//! use std::ffi::OsString;
//! use std::time::Duration;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let children = ChildRegistry::new();
//! // A descendant whose parent dies becomes this process's child, so the sweep finds it.
//! process::become_subreaper();
//! process::stop_children_at_panic(children.clone(), "my-server", 1);
//! let program = process::resolve("python3".as_ref(), std::env::var_os("PATH").as_deref())?;
//! let args = [OsString::from("adapter.py")];
//! let (child, io) = process::spawn(&program.into(), &args, &ChildEnv::default(), &children)?;
//! // ... speak to it over io.stdin and io.stdout ...
//! drop(io);
//! child.stop(Duration::from_secs(1)).await;
//! # Ok(())
//! # }
//! ```
//!
//! Linux only in full: elsewhere there is no subreaper and no sweep of other descendants.

pub use crate::app::process::{stop_children_at_panic, stop_every_child};
pub use crate::transport::child::{ChildEnv, ChildIo, ChildProcess, KILLED_EXIT_TIME_LIMIT, spawn};
pub use crate::transport::children::ChildRegistry;
pub use crate::transport::isolation::become_subreaper;
pub use crate::transport::program::{DEFAULT_PATH, StartError, Unstartable, resolve};
