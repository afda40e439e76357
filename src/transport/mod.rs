//! Byte movers with no protocol knowledge beyond frames. Today: a child process on stdio,
//! started in its own process group so that every process it starts can be stopped with it;
//! framed reading; non-blocking stdio; and the one bounded writer of frames.

pub mod child;
pub mod isolation;
pub mod lines;
pub mod program;
pub mod stdio;
pub mod writer;
