//! The two revisions of MCP as types: the 2025-11-25 side of the editor ([`legacy`]), the
//! 2026-07-28 side of the upstream ([`modern`]), and what both share: method names, log levels,
//! error codes and the bridge's error table, the notes for the log, shared defaults. Imports
//! only [`super::wire`].

pub mod defaults;
pub mod errors;
pub mod legacy;
pub mod log_level;
pub mod methods;
pub mod modern;
pub mod note;
