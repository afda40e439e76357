//! What the bridge decides between the two revisions: the era of the upstream, the
//! translation of requests and results (shapes, list items, tool schemas, the item filter),
//! input requests, the relay of notifications, pass-through, the rules of a URL upstream, the
//! names of many servers' items behind one bridge ([`names`]), and the bridge's fixed choices
//! ([`profile`]). The highest room: it may import [`super::wire`], [`super::revisions`] and
//! [`super::listen`].

pub mod era;
pub mod gateway;
pub mod input;
pub mod item_filter;
pub mod list_items;
pub mod names;
pub mod passthrough;
pub mod profile;
pub mod relay;
pub mod remote;
pub mod shape;
pub mod shared_upstream;
pub mod tool_schema;
pub mod translate;
