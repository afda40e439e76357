//! The process's children: every adapter joins the registry at its start (`adapter.rs`), and
//! the panic hook and the end of all sessions reach each adapter's process group through it.

use std::sync::{Arc, LazyLock};

use mcp_bridge::process::ChildRegistry;

/// The registry of this process's children (one process, one registry: the panic hook, which
/// has no other way to reach them, reads it).
pub static CHILDREN: LazyLock<Arc<ChildRegistry>> = LazyLock::new(ChildRegistry::new);
