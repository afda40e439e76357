//! The pure protocol layer: values in, values out. Nothing here does I/O, starts a task,
//! reads a clock or knows about actors; every rule here is table-tested beside its code.

pub mod defaults;
pub mod era;
pub mod errors;
pub mod excerpt;
pub mod framing;
pub mod id;
pub mod idscan;
pub mod input;
pub mod item_filter;
pub mod jsonrpc;
pub mod legacy;
pub mod list_items;
pub mod listen;
pub mod log_level;
pub mod methods;
pub mod modern;
pub mod note;
pub mod numbers;
pub mod passthrough;
pub mod raw;
pub mod redirect;
pub mod relay;
pub mod remote;
pub mod request_headers;
pub mod shape;
pub mod spare;
pub mod surrogates;
pub mod tool_schema;
pub mod tools_refetch;
pub mod translate;
