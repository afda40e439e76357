//! JSON-RPC 2.0 on newline-delimited lines, without any MCP meaning: the framing codec and its
//! spare buffer, ids and their recovery from bad lines, the parse (depth, numbers, surrogates),
//! raw members and the frames written from their parts, and the excerpts of peer bytes for the
//! log. Imports nothing else of `protocol`: it is the lowest room.

pub mod excerpt;
pub mod framing;
pub mod id;
pub mod idscan;
pub mod jsonrpc;
pub mod numbers;
pub mod parts;
pub mod raw;
pub mod spare;
pub mod surrogates;
