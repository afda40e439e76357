//! The JSON-RPC error a handler or the dispatcher answers with: the protocol layer's
//! [`ErrorObject`] under the server API's name [`RpcError`], with the codes of
//! [`ErrorCode`] (defined once, in `protocol::revisions::errors`). This module never decides when to use
//! which code.

pub use crate::protocol::revisions::errors::{ErrorCode, ErrorObject};

/// A JSON-RPC error object (`code`, `message`, optional `data`), sent as the response to a
/// request; the server API's name of [`ErrorObject`].
pub type RpcError = ErrorObject;
