//! The profile of the bridge: the fixed choices of this product that the protocol layer
//! leaves open (the id prefix of the requests the bridge sends to the editor, the identity
//! it reports upstream).

/// The prefix of the ids of requests the bridge sends to the editor (`b-1`, `b-2`, ...). They
/// are strings, so they never equal a numeric id of the editor.
pub const REQUEST_ID_PREFIX: &str = "b-";

/// The prefix of the id of the era probe, the `server/discover` the bridge sends upstream
/// before it knows the era (`mcp-bridge-probe-1`, ...; the number is the Upstream's request
/// counter). When the upstream turns out to be a legacy server, the editor's own requests pass
/// through with the editor's ids; a string id with this prefix is one no editor uses in
/// practice (editors number their requests, `0`, `1`, ...), so the probe never shares an id
/// with one of them and a late answer to it is never taken for the answer to the editor's
/// request (the editor's `initialize` with id 1 among them). The prefix is reserved for the
/// bridge: an editor request passed through with the very id of a probe still unanswered is
/// not sent and gets `duplicate_id`.
pub const PROBE_ID_PREFIX: &str = "mcp-bridge-probe-";

/// The prefix of the `elicitationId` the bridge mints for a URL elicitation (2025-11-25 needs
/// one; 2026-07-28 has none).
pub const ELICITATION_ID_PREFIX: &str = "mcp-bridge-elicitation-";
