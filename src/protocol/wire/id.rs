//! The JSON-RPC request id (JSON-RPC 2.0 §4: a string or a number; MCP excludes null), the
//! id of every frame the bridge reads or writes and of the id recovery of bad frames.

use serde_json::Value;
use std::fmt;

/// A JSON-RPC request id: a string or an integer (never null, never a fraction).
///
/// An integer id is a JSON number written as an integer (`-?(0|[1-9][0-9]*)`, no fraction, no
/// exponent) that fits in `i64` or `u64`; `-0` is the id `0`. A number written otherwise
/// (`1.0`, `1e2`, `1.5`) or beyond 64 bits is not a usable id (docs/errors.md): a request with
/// one gets `invalid_request_shape` without an id, a response with one is dropped. The same
/// rule holds for recovered ids ([`IdScanner`](super::idscan::IdScanner)).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// An integer id that fits in `i64`.
    Int(i64),
    /// A non-negative integer id above `i64::MAX`.
    UInt(u64),
    /// A string id.
    Str(String),
}

impl Id {
    /// Reads an id from a JSON value: a string or an integer; anything else is `None`.
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::String(s) => Some(Id::Str(s.clone())),
            // serde_json keeps the number's text (`arbitrary_precision`): `1.0` stays `1.0`.
            Value::Number(n) => Id::from_integer_text(n.as_str()),
            _ => None,
        }
    }

    /// Reads an integer id from the text of a JSON number: `i64` first, then `u64`; a
    /// fraction, an exponent or more than 64 bits is `None`.
    pub fn from_integer_text(text: &str) -> Option<Id> {
        text.parse::<i64>()
            .map(Id::Int)
            .or_else(|_| text.parse::<u64>().map(Id::UInt))
            .ok()
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Int(i) => Value::from(*i),
            Id::UInt(u) => Value::from(*u),
            Id::Str(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Int(i) => write!(f, "{i}"),
            Id::UInt(u) => write!(f, "{u}"),
            Id::Str(s) => write!(f, "{s:?}"),
        }
    }
}
