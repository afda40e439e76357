//! Byte movers with no protocol knowledge. Today: a child process on stdio, started in its own
//! process group so that every process it starts can be stopped with it.

pub mod child;
pub mod isolation;
pub mod lines;
pub mod program;
pub mod stdio;
