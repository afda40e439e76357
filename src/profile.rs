//! The profile of the bridge: the fixed choices of this product that the protocol layer
//! leaves open (the id prefix of the requests the bridge sends to the editor, the identity
//! it reports upstream).

/// The prefix of the ids of requests the bridge sends to the editor (`b-1`, `b-2`, ...). They
/// are strings, so they never equal a numeric id of the editor.
pub const REQUEST_ID_PREFIX: &str = "b-";

/// The prefix of the `elicitationId` the bridge mints for a URL elicitation (2025-11-25 needs
/// one; 2026-07-28 has none).
pub const ELICITATION_ID_PREFIX: &str = "mcp-bridge-elicitation-";

/// The client name the bridge reports upstream in `io.modelcontextprotocol/clientInfo`.
pub const CLIENT_NAME: &str = "mcp-bridge";
