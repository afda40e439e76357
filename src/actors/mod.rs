//! The running system: each actor owns its state and is reached only through messages.
//! The Supervisor starts the others and runs the shutdown cascade; the Frontend owns the
//! lifecycle and the slots; the Upstream owns the child and the upstream ids; the Listener
//! keeps the listen stream for the editor; stdout is written only through
//! one `transport::writer::Writer`; the Metrics actor writes the counters to the log.

pub mod frontend;
pub mod link;
pub mod listener;
pub mod metrics;
pub mod pending;
pub mod rounds;
pub mod slots;
pub mod supervisor;
pub mod upstream;

pub use supervisor::start;
