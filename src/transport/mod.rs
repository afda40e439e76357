//! Byte movers with no protocol knowledge beyond frames. The upstream's transport seam
//! (`upstream.rs`) and its implementations: a child process on stdio, started in its own
//! process group so that every process it starts can be stopped with it (`child.rs`,
//! `child_upstream.rs`; the process's registry of those groups: `children.rs`), and an
//! in-process server (`memory.rs`); one upstream shared by the bridges of many sessions, which
//! gives each bridge's requests ids of its own by the rules of
//! `protocol::rules::shared_upstream` (`shared.rs`); framed reading; non-blocking
//! stdio; the last lines of a child's stderr (`stderr_tail.rs`); and the one bounded writer of
//! frames.

pub mod child;
pub mod child_status;
pub mod child_upstream;
pub mod children;
#[cfg(feature = "http")]
pub mod http;
pub mod isolation;
pub mod lines;
pub mod memory;
pub mod observe;
pub mod open;
pub mod program;
pub mod queue;
pub mod shared;
pub mod stderr_tail;
pub mod stdio;
pub mod token;
pub mod upstream;
pub mod writer;
