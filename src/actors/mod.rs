//! The running system: each actor owns its state and is reached only through messages, sent
//! on counted [`link::Link`]s (never an `Addr` of another actor). The Supervisor starts every
//! other actor, hears of each one's end and runs the shutdown cascade; the Frontend owns the
//! lifecycle and the slots; the Upstream owns the child and the upstream ids; the Listener
//! keeps the listen stream for the editor; the PendingTable the requests to the editor; the
//! SignIn actor of a URL upstream with sign-in the tokens and the sign-in's state; stdout is
//! written only through one `transport::writer::Writer`; the Metrics actor writes the
//! counters to the log.
//!
//! Each message lives beside the actor that handles it: in the actor's file, or, when actors
//! that the handler itself imports send it, in a leaf file beside it (`frontend/messages.rs`,
//! `supervisor/messages.rs`, `upstream/reply.rs`), so no actor file imports another in a
//! circle (`scripts/imports.py` checks it, for every module of the crate); a message whose
//! handler is not in every build lives in a feature-free leaf (`sign_in_side.rs`).

pub mod config;
#[cfg(feature = "auth")]
pub mod consent;
pub mod frontend;
pub mod gateway;
pub mod link;
pub mod listener;
pub mod log_span;
pub mod metrics;
pub mod pending;
pub mod sign_in_side;
#[cfg(feature = "auth")]
pub mod signin;
pub mod supervisor;
pub mod upstream;
