//! The pure protocol layer: values in, values out. Nothing here does I/O, starts a task,
//! reads a clock or knows about actors; every rule here is table-tested beside its code.
//!
//! Its rooms, lowest first; a room imports only from its own and lower rooms
//! (`scripts/imports.py` checks it, as it checks the layers):
//! - [`wire`]: JSON-RPC 2.0 on newline-delimited lines, without any MCP meaning;
//! - [`revisions`]: the two revisions as types (2025-11-25 for the editor, 2026-07-28 for the
//!   upstream), their methods, errors and log levels;
//! - [`listen`]: the listen stream of 2026-07-28 and its 2025-11-25 notifications;
//! - [`rules`]: what the bridge decides between the two revisions: the era, translation, the
//!   result rules, the item filter, relay and pass-through, and the bridge's fixed choices.

pub mod listen;
pub mod revisions;
pub mod rules;
pub mod wire;
