//! What the HTTP transport reads of a JSON-RPC message without a value tree: the members of
//! an object named by the caller, each as its raw text (a borrowed [`RawValue`]), in one pass
//! that validates the whole object. Used for what a POST's headers need (`method`,
//! `params.name`/`uri`, `params._meta` protocol version) and for whether a JSON body answers
//! a request (`id`, `result`, `error`). Pure: bytes in, slices out.
//!
//! Same reading as serde_json's `Value` (the path this replaces): a repeated key keeps its
//! last value, a member that is not a string reads as absent, the members of a `params`
//! that is not an object are absent.

use bytes::Bytes;
use serde::Deserializer as _;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

use crate::protocol::revisions::modern::META_PROTOCOL_VERSION;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::raw::{KeySeed, StrVisitor};

/// What the headers of a POST read of its message (2026-07-28 basic/transports/http,
/// "Standard headers"), borrowed from the message's text.
#[derive(Debug, Default)]
pub struct Outgoing<'a> {
    /// `id` ([`Id::from_value`]'s rule: a string or an integer).
    pub id: Option<Id>,
    /// `method` (empty when absent or not a string).
    pub method: Cow<'a, str>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    pub protocol_version: Option<Cow<'a, str>>,
    /// `params.name`.
    pub name: Option<Cow<'a, str>>,
    /// `params.uri`.
    pub uri: Option<Cow<'a, str>>,
    /// The text of `params.arguments`.
    pub arguments: Option<&'a RawValue>,
}

impl<'a> Outgoing<'a> {
    /// Reads the JSON-RPC message `text`. `None` when it is not a valid JSON object.
    pub fn read(text: &'a [u8]) -> Option<Outgoing<'a>> {
        let [id_text, method, params] = members(text, &["id", "method", "params"])?;
        let mut out = Outgoing {
            id: id(id_text),
            method: string(method).unwrap_or_default(),
            ..Outgoing::default()
        };
        let Some([name, uri, meta, arguments]) = params
            .and_then(|p| members(p.get().as_bytes(), &["name", "uri", "_meta", "arguments"]))
        else {
            return Some(out);
        };
        out.name = string(name);
        out.uri = string(uri);
        out.arguments = arguments;
        out.protocol_version = meta
            .and_then(|m| members(m.get().as_bytes(), &[META_PROTOCOL_VERSION]))
            .and_then(|[v]| string(v));
        Some(out)
    }

    /// `params.name` for `tools/call` and `prompts/get`, `params.uri` for `resources/read`
    /// (the value of `Mcp-Name` before encoding); `None` for other methods.
    pub fn mcp_name(&self) -> Option<&str> {
        match self.method.as_ref() {
            "tools/call" | "prompts/get" => self.name.as_deref(),
            "resources/read" => self.uri.as_deref(),
            _ => None,
        }
    }
}

/// The request `text` (`{"jsonrpc","id","method","params"}`, as the correlation layer writes
/// it) with the id `id` in place of its own: the same `method` and `params` text, byte for
/// byte (numbers keep their text). `None` when `text` is not an object with a string
/// `method`.
pub fn with_id(text: &[u8], id: &Id) -> Option<Bytes> {
    let [method, params] = members(text, &["method", "params"])?;
    let method = method.filter(|m| m.get().starts_with('"'))?;
    let id = serde_json::to_string(&id.to_value()).ok()?;
    let params = params.map(RawValue::get);
    let mut out = Vec::with_capacity(text.len() + id.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","method":"#);
    out.extend_from_slice(method.get().as_bytes());
    if let Some(p) = params {
        out.extend_from_slice(br#","params":"#);
        out.extend_from_slice(p.as_bytes());
    }
    out.push(b'}');
    Some(Bytes::from(out))
}

/// The values of the members `keys` of the JSON object `text` (whitespace around it
/// allowed), by position in `keys`; a member absent is `None`, a repeated one gives its last
/// value. `None` when `text` is not valid JSON (within serde_json's default nesting limit of
/// 128) or not an object.
pub fn members<'a, const N: usize>(
    text: &'a [u8],
    keys: &[&str; N],
) -> Option<[Option<&'a RawValue>; N]> {
    let start = text.iter().position(|b| !b.is_ascii_whitespace())?;
    if text[start] != b'{' {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(text);
    let found = de.deserialize_map(Picker { keys }).ok()?;
    de.end().ok()?;
    Some(found)
}

/// The value of a member that is a string (`None` for any other value).
pub fn string(v: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let v = v?;
    if !v.get().starts_with('"') {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(v.get());
    de.deserialize_str(StrVisitor).ok()
}

/// The id a member holds: a string or an integer ([`Id::from_value`]'s rule); `None` for
/// anything else.
pub fn id(v: Option<&RawValue>) -> Option<Id> {
    let v = v?;
    match v.get().as_bytes().first() {
        Some(b'"') => string(Some(v)).map(|s| Id::Str(s.into_owned())),
        Some(b'-' | b'0'..=b'9') => Id::from_integer_text(v.get()),
        _ => None,
    }
}

struct Picker<'k, const N: usize> {
    keys: &'k [&'k str; N],
}

impl<'de, const N: usize> Visitor<'de> for Picker<'_, N> {
    type Value = [Option<&'de RawValue>; N];
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = [None; N];
        while let Some(key) = map.next_key_seed(KeySeed)? {
            // Every value is read (and so checked), also one of a member not asked for.
            let value: &'de RawValue = map.next_value()?;
            if let Some(i) = self.keys.iter().position(|k| *k == key) {
                found[i] = Some(value);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<const N: usize>(text: &str, keys: &[&str; N]) -> Option<Vec<Option<String>>> {
        members(text.as_bytes(), keys).map(|found| {
            found
                .iter()
                .map(|v| v.map(|v| v.get().to_owned()))
                .collect()
        })
    }

    #[test]
    fn the_members_asked_for_come_as_their_text() {
        assert_eq!(
            texts(
                r#" {"id": 7, "method":"tools/call","params":{"name":"a"}, "x": [1, {"y": 2}]} "#,
                &["method", "id", "params", "result"]
            ),
            Some(vec![
                Some(r#""tools/call""#.into()),
                Some("7".into()),
                Some(r#"{"name":"a"}"#.into()),
                None,
            ])
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_serde_json_does() {
        assert_eq!(
            texts(r#"{"id":1,"id":"b"}"#, &["id"]),
            Some(vec![Some(r#""b""#.into())])
        );
        // An escaped key is the same key.
        assert_eq!(
            texts(r#"{"i\u0064":1}"#, &["id"]),
            Some(vec![Some("1".into())])
        );
    }

    #[test]
    fn anything_but_a_valid_object_is_none() {
        for text in [
            "",
            "[1]",
            "\"id\"",
            r#"{"id":1"#,
            r#"{"id":1} x"#,
            r#"{"id":1,"r":[1,}"#,
            r#"{"id":tru}"#,
        ] {
            assert_eq!(texts(text, &["id"]), None, "{text}");
        }
    }

    #[test]
    fn an_outgoing_message_gives_what_its_headers_need() {
        let text = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"m\u00e9t\u00e9o",
            "arguments":{"region":"eu"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let m = Outgoing::read(text).expect("an object");
        assert_eq!(m.id, Some(Id::Int(3)));
        assert_eq!(m.method, "tools/call");
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(m.mcp_name(), Some("météo"));
        assert_eq!(m.arguments.map(RawValue::get), Some(r#"{"region":"eu"}"#));
        let read = Outgoing::read(
            br#"{"method":"resources/read","params":{"uri":"file:///a","name":"n"}}"#,
        )
        .expect("an object");
        assert_eq!(read.mcp_name(), Some("file:///a"));
        let list =
            Outgoing::read(br#"{"method":"tools/list","params":{"name":"n"}}"#).expect("an object");
        assert_eq!(list.mcp_name(), None);
    }

    #[test]
    fn members_of_the_wrong_type_are_absent() {
        for text in [
            r#"{"method":1,"params":["tools/call"]}"#,
            r#"{"params":"x"}"#,
            r#"{"params":{"name":2,"_meta":[]}}"#,
            r#"{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}}"#,
            r#"{}"#,
        ] {
            let m = Outgoing::read(text.as_bytes()).expect("an object");
            assert_eq!(
                (m.id, m.method.as_ref(), m.protocol_version, m.name, m.uri),
                (None, "", None, None, None),
                "{text}"
            );
            assert!(m.arguments.is_none(), "{text}");
        }
        assert!(Outgoing::read(b"[1]").is_none());
        assert!(Outgoing::read(br#"{"method":"a""#).is_none());
    }

    #[test]
    fn a_request_with_another_id_keeps_its_method_and_params_byte_for_byte() {
        let text = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"n":1.50,"big":123456789012345678901234567890}}}"#;
        let again = with_id(text, &Id::Str("mcp-bridge-reissue-1".into()));
        assert_eq!(
            again.as_deref(),
            Some(&br#"{"jsonrpc":"2.0","id":"mcp-bridge-reissue-1","method":"tools/call","params":{"name":"a","arguments":{"n":1.50,"big":123456789012345678901234567890}}}"#[..])
        );
        assert_eq!(
            with_id(br#"{"id":1,"method":"ping"}"#, &Id::Int(2)).as_deref(),
            Some(&br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#[..])
        );
        assert_eq!(with_id(br#"{"id":1,"method":3}"#, &Id::Int(2)), None);
        assert_eq!(with_id(br#"{"id":1}"#, &Id::Int(2)), None);
        assert_eq!(with_id(b"[1]", &Id::Int(2)), None);
    }

    #[test]
    fn strings_and_ids_read_as_a_value_would() {
        let found = members(
            br#"{"a":"x\ty","b":5,"c":"7","d":-3,"e":1.0,"f":null,"g":18446744073709551615}"#,
            &["a", "b", "c", "d", "e", "f", "g"],
        )
        .expect("an object");
        assert_eq!(string(found[0]).as_deref(), Some("x\ty"));
        assert_eq!(string(found[1]), None);
        assert_eq!(id(found[1]), Some(Id::Int(5)));
        assert_eq!(id(found[2]), Some(Id::Str("7".into())));
        assert_eq!(id(found[3]), Some(Id::Int(-3)));
        assert_eq!(id(found[4]), None);
        assert_eq!(id(found[5]), None);
        assert_eq!(id(found[6]), Some(Id::UInt(u64::MAX)));
        assert_eq!(id(None), None);
    }
}
