//! Raw JSON: members that no translation rule touches pass through as their original bytes
//! (numbers keep their exact text, and a large result is never copied). Pure: bytes in, bytes
//! out. This is the reading side; writing these values into a frame is [`super::parts`]'s.
//!
//! - [`RawJson`] is the text of one valid JSON value, shared with the read buffer it came from
//!   (a [`Bytes`] slice: no copy).
//! - [`members`] reads an object's members in order, each value as a [`RawJson`], without
//!   building a value tree; [`response`] and [`request`] read a JSON-RPC message's envelope
//!   and, in the same pass, the members of its `result` or `params` (one validating pass
//!   per line).

use bytes::Bytes;
use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::id::Id;
use super::jsonrpc;
use super::surrogates;

/// Members of an object beyond which a repeated key is found through an index (below it, a
/// scan of the members read so far is cheaper).
const INDEX_MIN_MEMBERS: usize = 8;

/// The text of one valid JSON value (checked by the parser that made it), without the
/// whitespace around it. Cloning shares the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct RawJson(Bytes);

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", String::from_utf8_lossy(&self.0))
    }
}

impl RawJson {
    /// The text of `v` (serde_json's compact form).
    pub fn from_value(v: &Value) -> RawJson {
        RawJson(Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
    }

    /// The bytes of the text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text as a `str` (the parser checked it is UTF-8).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("null")
    }

    /// The shared bytes of the text.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }

    /// The value tree of the text (numbers keep their exact text:
    /// [`super::numbers::keep_number_text`]); `None` never happens for a text a parser checked.
    pub fn to_value(&self) -> Option<Value> {
        parse_value(&self.0).ok()
    }

    fn first(&self) -> u8 {
        self.0.first().copied().unwrap_or(b'n')
    }

    /// The value is an object.
    pub fn is_object(&self) -> bool {
        self.first() == b'{'
    }

    /// The value is an array.
    pub fn is_array(&self) -> bool {
        self.first() == b'['
    }

    /// The value is a string.
    pub fn is_string(&self) -> bool {
        self.first() == b'"'
    }

    /// What kind of value it is, for a message: `an object`, `an array`, `a string`,
    /// `a boolean`, `null` or `a number`.
    pub fn kind(&self) -> &'static str {
        match self.first() {
            b'{' => "an object",
            b'[' => "an array",
            b'"' => "a string",
            b't' | b'f' => "a boolean",
            b'n' => "null",
            _ => "a number",
        }
    }

    /// The value is `null`.
    pub fn is_null(&self) -> bool {
        self.first() == b'n'
    }

    /// The string's content when the value is a string.
    pub fn to_str(&self) -> Option<Cow<'_, str>> {
        if !self.is_string() {
            return None;
        }
        let text = std::str::from_utf8(&self.0).ok()?;
        let mut de = serde_json::Deserializer::from_str(text);
        de.deserialize_str(StrVisitor).ok()
    }

    /// The value as a JSON-RPC id ([`Id::from_value`]'s rule, read from the text without a
    /// value tree): a string, or an integer that fits in 64 bits; anything else is `None`.
    pub fn to_id(&self) -> Option<Id> {
        match self.first() {
            b'"' => self.to_str().map(|s| Id::Str(s.into_owned())),
            b'-' | b'0'..=b'9' => Id::from_integer_text(self.as_str()),
            _ => None,
        }
    }

    /// The slice of this text that `part` (borrowed from it) covers, sharing the bytes.
    fn slice_of(&self, part: &RawValue) -> RawJson {
        let base = self.0.as_ptr() as usize;
        let at = part.get().as_ptr() as usize;
        let len = part.get().len();
        match at.checked_sub(base) {
            Some(start) if start + len <= self.0.len() => RawJson(self.0.slice(start..start + len)),
            _ => RawJson(Bytes::copy_from_slice(part.get().as_bytes())),
        }
    }

    /// The text `text` as the frame writer made it ([`RawJson::from_parts`]), not a parser:
    /// the writer's way to a `RawJson` without reaching into its bytes.
    pub(super) fn from_written(text: Bytes) -> RawJson {
        RawJson(text)
    }

    /// The bytes of this text from `start` to `end`.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Bytes {
        self.0.slice(range)
    }
}

/// Parses a JSON text whose depth the caller has bounded, without serde_json's recursion
/// limit.
fn parse_value(text: &[u8]) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_slice(text);
    de.disable_recursion_limit();
    let mut v = Value::deserialize(&mut de)?;
    de.end()?;
    super::numbers::keep_number_text(text, &mut v);
    Ok(v)
}

/// A serde visitor of a JSON string: borrowed from the input when it has no escapes, owned
/// otherwise (the shared reader of `raw` and of the HTTP transport's header probe).
pub(crate) struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// A member's key, borrowed from the text unless it holds an escape (shared with the HTTP
/// transport's header probe).
pub(crate) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(StrVisitor)
    }
}

/// Reads an object's members, each value as the slice of `base` (the text being parsed) it
/// covers: the list is built once, with no borrowed list before it.
struct MembersVisitor<'b> {
    base: &'b RawJson,
}

impl<'de> Visitor<'de> for MembersVisitor<'_> {
    type Value = Vec<(String, RawJson)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(String, RawJson)> = Vec::with_capacity(INDEX_MIN_MEMBERS);
        let mut index: HashMap<String, usize> = HashMap::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value: &'de RawValue = map.next_value()?;
            let seen = if out.len() < INDEX_MIN_MEMBERS {
                out.iter().position(|(k, _)| *k == key)
            } else {
                if index.is_empty() {
                    index = out
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i))
                        .collect();
                }
                index.get(key.as_ref()).copied()
            };
            let value = self.base.slice_of(value);
            match seen {
                // serde_json's map keeps a repeated key in its first place with its last value.
                Some(i) => out[i].1 = value,
                None => {
                    let key = key.into_owned();
                    if !index.is_empty() {
                        index.insert(key.clone(), out.len());
                    }
                    out.push((key, value));
                }
            }
        }
        Ok(out)
    }
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Vec<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<&'de RawValue>()? {
            out.push(v);
        }
        Ok(out)
    }
}

/// The members of the object `obj`, in order, each value as the raw slice of `obj` (a repeated
/// key keeps its first place and its last value, as serde_json's map does). `None` when `obj`
/// is not an object.
pub fn members(obj: &RawJson) -> Option<Vec<(String, RawJson)>> {
    if !obj.is_object() {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(checked_text(obj.as_bytes())?);
    de.disable_recursion_limit();
    let members = de.deserialize_map(MembersVisitor { base: obj }).ok()?;
    de.end().ok()?;
    Some(members)
}

/// The items of the array `arr`, in order, each as the raw slice of `arr`. `None` when `arr`
/// is not an array.
pub fn items(arr: &RawJson) -> Option<Vec<RawJson>> {
    if !arr.is_array() {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(checked_text(arr.as_bytes())?);
    de.disable_recursion_limit();
    let borrowed = de.deserialize_seq(ItemsVisitor).ok()?;
    de.end().ok()?;
    Some(borrowed.into_iter().map(|v| arr.slice_of(v)).collect())
}

/// The value of member `key` of a member list.
pub fn member<'a>(members: &'a [(String, RawJson)], key: &str) -> Option<&'a RawJson> {
    members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// `text` as a `str` for the parser, `None` when it is not UTF-8. One check of the whole
/// text, so that the parser (serde_json's `StrRead`) checks no string or raw member again
/// (a check per member costs 6 % of a small call's instructions). A text that
/// is not UTF-8 is refused here as the byte parser refused it: every byte of a valid JSON
/// text outside its strings is ASCII, and every string and raw member was checked.
fn checked_text(text: &[u8]) -> Option<&str> {
    std::str::from_utf8(text).ok()
}

/// Whether the text may hold an unpaired surrogate escape: it holds `\u` followed by `d` or
/// `D` (a cheap search; [`surrogates::replace_lone_surrogates`] decides). A text without a
/// backslash (nearly every line) costs one `memchr`.
fn may_hold_surrogate_escape(text: &[u8]) -> bool {
    memchr::memchr(b'\\', text).is_some()
        && memchr::memmem::find_iter(text, b"\\u")
            .any(|at| matches!(text.get(at + 2), Some(b'd' | b'D')))
}

/// A JSON-RPC 2.0 success response read without a value tree, in one validating pass over
/// the line: the id and the result's members, each a slice of `line` (the envelope and the
/// members in one read). `None` for any other line, also an invalid one, a
/// too deep one, a result that is not an object, or a response whose id is not usable: the
/// caller then parses it with [`jsonrpc::parse`], which gives the same classification for
/// everything else. Unpaired surrogate escapes become U+FFFD first, as on
/// [`jsonrpc::parse`]'s path.
pub fn response(line: Bytes, max_depth: usize) -> Option<(Id, RawResult)> {
    let env = checked_envelope(line, max_depth, Open::Result)?;
    if !env.is_jsonrpc_2 || env.method.is_some() || env.params.is_some() || env.error.is_some() {
        return None;
    }
    let id = env.id?.to_id()?;
    Some((id, RawResult::Object(env.opened?)))
}

/// The envelope of a line within `max_depth`, its unpaired surrogate escapes replaced, with
/// the member `open` read into its members in the same pass.
fn checked_envelope(line: Bytes, max_depth: usize, open: Open) -> Option<Envelope> {
    if !jsonrpc::depth_within(&line, max_depth) {
        return None;
    }
    let line = if may_hold_surrogate_escape(&line) {
        match surrogates::replace_lone_surrogates(&line) {
            Some(fixed) => Bytes::from(fixed),
            None => line,
        }
    } else {
        line
    };
    read_envelope(&RawJson(line), open)
}

/// The members of a JSON-RPC message, each as raw text.
#[derive(Debug, Default)]
struct Envelope {
    /// `jsonrpc` is the string `2.0`.
    is_jsonrpc_2: bool,
    method: Option<RawJson>,
    id: Option<RawJson>,
    params: Option<RawJson>,
    result: Option<RawJson>,
    error: Option<RawJson>,
    /// The members of the member opened in the same pass ([`Open`]); that member's own
    /// field (`params` or `result`) stays `None`.
    opened: Option<Vec<(String, RawJson)>>,
}

/// Which member of an envelope is read into its members in the same pass as the envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    /// `params` (a request): an object, or the envelope is not read.
    Params,
    /// `result` (a response): an object, or the envelope is not read.
    Result,
}

impl Open {
    fn key(self) -> &'static str {
        match self {
            Open::Params => "params",
            Open::Result => "result",
        }
    }
}

/// The envelope's members by name (the last value of a repeated key, as serde_json's map
/// keeps it), the member `open` read into its members in the same pass.
#[derive(Default)]
struct BorrowedEnvelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    opened: Option<Vec<(String, RawJson)>>,
}

/// Reads an envelope: the member `open` into its members, which are slices of `base`.
struct EnvelopeVisitor<'b> {
    open: Open,
    base: &'b RawJson,
}

/// Reads an object into its members, slices of `base` (an error for anything else).
struct MembersSeed<'b> {
    base: &'b RawJson,
}

impl<'de> DeserializeSeed<'de> for MembersSeed<'_> {
    type Value = Vec<(String, RawJson)>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(MembersVisitor { base: self.base })
    }
}

impl<'de> Visitor<'de> for EnvelopeVisitor<'_> {
    type Value = BorrowedEnvelope<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut env = BorrowedEnvelope::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == self.open.key() {
                env.opened = Some(map.next_value_seed(MembersSeed { base: self.base })?);
                continue;
            }
            // Every value is read (and so checked), also one of an unknown member.
            let value: &'de RawValue = map.next_value()?;
            let slot = match key.as_ref() {
                "jsonrpc" => &mut env.jsonrpc,
                "method" => &mut env.method,
                "id" => &mut env.id,
                "params" => &mut env.params,
                "result" => &mut env.result,
                "error" => &mut env.error,
                _ => continue,
            };
            *slot = Some(value);
        }
        Ok(env)
    }
}

/// Whether the raw value of `jsonrpc` is the string `2.0`: its usual text `"2.0"` at once,
/// any other string (one with escapes) decoded.
fn is_version_2(v: &RawValue) -> bool {
    v.get() == "\"2.0\"" || serde_json::from_str::<String>(v.get()).is_ok_and(|s| s == "2.0")
}

/// Reads the envelope of a message (the text must be a JSON object; whitespace around it is
/// allowed), the member `open` into its members in the same pass. `None` when it is not valid
/// JSON, not an object, or its member `open` is not an object.
fn read_envelope(line: &RawJson, open: Open) -> Option<Envelope> {
    let start = line
        .as_bytes()
        .iter()
        .position(|b| !b.is_ascii_whitespace())?;
    let trimmed = RawJson(line.0.slice(start..));
    if !trimmed.is_object() {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(checked_text(trimmed.as_bytes())?);
    de.disable_recursion_limit();
    let visitor = EnvelopeVisitor {
        open,
        base: &trimmed,
    };
    let b = de.deserialize_map(visitor).ok()?;
    de.end().ok()?;
    let raw = |v: Option<&RawValue>| v.map(|v| trimmed.slice_of(v));
    Some(Envelope {
        is_jsonrpc_2: b.jsonrpc.is_some_and(is_version_2),
        method: raw(b.method),
        id: raw(b.id),
        params: raw(b.params),
        result: raw(b.result),
        error: raw(b.error),
        opened: b.opened,
    })
}

/// A JSON-RPC 2.0 request read without a value tree, in one validating pass over the line:
/// its id, method and params read into their members, each a slice of `line`. `None` for any
/// other line (also an invalid or too deep one, one whose params are not an object, or one
/// whose id is not usable): the caller then parses it with [`jsonrpc::parse`], which
/// classifies it the same way. Unpaired surrogate escapes become U+FFFD first, as on
/// [`jsonrpc::parse`]'s path.
pub fn request(line: Bytes, max_depth: usize) -> Option<(Id, String, Option<Params>)> {
    let env = checked_envelope(line, max_depth, Open::Params)?;
    if !env.is_jsonrpc_2 || env.result.is_some() || env.error.is_some() {
        return None;
    }
    let method = env.method?.to_str()?.into_owned();
    let id = env.id?.to_id()?;
    Some((
        id,
        method,
        env.opened.map(|m| Params::Object(Object(Arc::new(m)))),
    ))
}

/// The params of a request as the bridge reads them: an object's members (read in the same
/// pass as the envelope by [`request`]), or the text of any other value (which the forwarding
/// rule refuses: only a request read by [`jsonrpc::parse`] gives one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Params {
    /// An object's members.
    Object(Object),
    /// Any other value.
    Other(RawJson),
}

impl Params {
    /// The params `v`: its members when it is an object.
    pub fn from_value(v: &Value) -> Params {
        let text = RawJson::from_value(v);
        match Object::read(&text) {
            Some(o) => Params::Object(o),
            None => Params::Other(text),
        }
    }
}

/// The result of a success response as the bridge reads it: the members of an object (read
/// in the same pass as the envelope by [`response`]), or the text of any other value (which
/// the result rules refuse: only a response read by [`jsonrpc::parse`] gives one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawResult {
    /// An object's members, in order (a repeated key: its first place, its last value).
    Object(Vec<(String, RawJson)>),
    /// Any other value.
    Other(RawJson),
}

impl RawResult {
    /// The result whose text is `text`: its members when it is an object.
    pub fn read(text: RawJson) -> RawResult {
        match members(&text) {
            Some(m) => RawResult::Object(m),
            None => RawResult::Other(text),
        }
    }

    /// The result `v`.
    pub fn from_value(v: &Value) -> RawResult {
        RawResult::read(RawJson::from_value(v))
    }
}

/// An object whose members are forwarded: each keeps its raw text unless a rule replaced it.
/// Cloning shares the members and their bytes (a request kept for a retry costs no copy; a
/// change after a clone copies the list of members, never their bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object(Arc<Vec<(String, RawJson)>>);

impl Object {
    /// The members of `obj`; `None` when it is not an object.
    pub fn read(obj: &RawJson) -> Option<Object> {
        members(obj).map(|m| Object(Arc::new(m)))
    }

    /// The members of the object `v`; `None` when it is not an object.
    pub fn from_value(v: &Value) -> Option<Object> {
        Object::read(&RawJson::from_value(v))
    }

    /// The value of member `key`.
    pub fn get(&self, key: &str) -> Option<&RawJson> {
        member(&self.0, key)
    }

    /// Takes out member `key` (the others keep their order).
    pub fn remove(&mut self, key: &str) -> Option<RawJson> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(Arc::make_mut(&mut self.0).remove(i).1)
    }

    /// Sets member `key`: in its place when it exists, else last.
    pub fn insert(&mut self, key: &str, value: RawJson) {
        let members = Arc::make_mut(&mut self.0);
        match members.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => members.push((key.to_string(), value)),
        }
    }

    /// The members, in order (what the writer's [`Object::to_parts`] writes).
    pub(super) fn members(&self) -> &[(String, RawJson)] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawJson {
        RawJson(Bytes::copy_from_slice(text.as_bytes()))
    }

    #[test]
    fn members_keep_their_text_order_and_the_last_of_a_repeated_key() {
        let m = members(&raw(
            r#"{"a":1E5,"b" : [1e400, -0.0] ,"a":{"x":1.0},"c":"\u0041"}"#,
        ))
        .unwrap_or_default();
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [
                ("a", r#"{"x":1.0}"#),
                ("b", "[1e400, -0.0]"),
                ("c", r#""\u0041""#)
            ]
        );
        assert_eq!(m[2].1.to_str().as_deref(), Some("A"));
        assert!(members(&raw("[1]")).is_none());
        assert!(members(&raw(r#"{"a":}"#)).is_none());
        assert!(members(&raw(r#"{"a":1} x"#)).is_none());
    }

    #[test]
    fn a_repeated_key_among_many_members_is_found_through_the_index() {
        let text = format!(
            "{{{},\"k3\":\"last\"}}",
            (0..20)
                .map(|i| format!("\"k{i}\":{i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let m = members(&raw(&text)).unwrap_or_default();
        assert_eq!(m.len(), 20);
        assert_eq!(m[3], ("k3".to_string(), raw("\"last\"")));
    }

    #[test]
    fn items_are_slices_of_the_array() {
        let a = raw(r#"[ 1E5 ,{"a":-1e-400},"x"]"#);
        let got: Vec<String> = items(&a)
            .unwrap_or_default()
            .iter()
            .map(|r| r.as_str().to_string())
            .collect();
        assert_eq!(got, ["1E5", r#"{"a":-1e-400}"#, r#""x""#]);
        assert!(items(&raw("{}")).is_none());
    }

    #[test]
    fn the_kind_of_a_value_is_named_by_its_first_byte() {
        let kinds: Vec<&str> = ["{}", "[1]", r#""x""#, "true", "false", "null", "-1", "7E5"]
            .iter()
            .map(|t| raw(t).kind())
            .collect();
        assert_eq!(
            kinds,
            [
                "an object",
                "an array",
                "a string",
                "a boolean",
                "a boolean",
                "null",
                "a number",
                "a number"
            ]
        );
        assert!(raw("null").is_null());
        assert!(!raw("0").is_null());
    }

    fn text(r: &RawResult) -> String {
        String::from_utf8(r.to_parts().to_vec()).unwrap_or_default()
    }

    #[test]
    fn a_success_response_is_read_without_a_tree_and_anything_else_is_left_to_the_parser() {
        let line = |t: &str| Bytes::copy_from_slice(t.as_bytes());
        let none = || (Id::Int(0), RawResult::Other(raw("null")));
        let (id, r) = response(line(r#"{"jsonrpc":"2.0","id":7,"result":{"n":1E5}}"#), 200)
            .unwrap_or_else(none);
        assert_eq!((id, text(&r)), (Id::Int(7), r#"{"n":1E5}"#.to_string()));
        for other in [
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{}}"#,
            r#"{"jsonrpc":"1.0","id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}"#,
            r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#,
            r#"{"jsonrpc":"2.0","id":7,"result":[[[1]]]}"#,
            // A result that is not an object: the parser's path (whose rules refuse it).
            r#"{"jsonrpc":"2.0","id":7,"result":5}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"result":"x"}"#,
            // Every member is checked, an unknown one too.
            r#"{"jsonrpc":"2.0","id":7,"result":{},"x":[1,}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"a":tru}}"#,
        ] {
            assert!(response(line(other), 2).is_none(), "{other}");
        }
        // A lone surrogate becomes U+FFFD, as on the parser's path; a pair stays.
        let (_, r) = response(
            line(r#"{"jsonrpc":"2.0","id":1,"result":{"s":"a\ud83d","p":"\ud83d\ude00"}}"#),
            200,
        )
        .unwrap_or_else(none);
        assert_eq!(text(&r), r#"{"s":"a\ufffd","p":"\ud83d\ude00"}"#);
    }

    #[test]
    fn the_envelope_and_the_result_members_are_read_in_one_pass_as_the_parser_reads_them() {
        let none = || (Id::Int(0), RawResult::Other(raw("null")));
        // A repeated member: its last value (serde_json's map), the result's too; an escaped
        // key is its text; whitespace anywhere.
        let line = Bytes::from_static(
            br#" { "result" : {"a":1} , "id":1, "jsonrpc":"2.0", "id" : 9 , "res\u0075lt" : { "b" : 1E5 , "c":[ 1 ] , "b":-0.0 } } "#,
        );
        let (id, r) = response(line.clone(), 200).unwrap_or_else(none);
        assert_eq!(id, Id::Int(9));
        let RawResult::Object(m) = &r else {
            panic!("not read as an object: {r:?}");
        };
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, [("b", "-0.0"), ("c", "[ 1 ]")]);
        // Each member is a slice of the line: no copy.
        let at = m[1].1.as_bytes().as_ptr() as usize - line.as_ptr() as usize;
        assert_eq!(&line[at..at + 5], b"[ 1 ]");
        assert_eq!(
            r.to_value(),
            Some(serde_json::json!({"b": serde_json::from_str::<Value>("-0.0").ok(), "c": [1]}))
        );
        // The same line through the parser: the same id and result.
        match jsonrpc::parse(&line, 200) {
            Ok(jsonrpc::Message::Response { id, result }) => {
                assert_eq!(id, Some(Id::Int(9)));
                assert_eq!(Some(result), r.to_value());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_request_is_read_without_a_tree_and_anything_else_is_left_to_the_parser() {
        let line = |t: &str| Bytes::copy_from_slice(t.as_bytes());
        let got = request(
            line(
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{"n":1E5}},"params":{"arguments":{"n":2E5}}}"#,
            ),
            64,
        );
        let (id, method, params) = got.unwrap_or((Id::Int(0), String::new(), None));
        assert_eq!((id, method.as_str()), (Id::Str("a".into()), "tools/call"));
        let Some(Params::Object(params)) = params else {
            panic!("params not read as an object: {params:?}");
        };
        assert_eq!(params.to_parts().to_vec(), br#"{"arguments":{"n":2E5}}"#);
        assert!(request(line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), 64).is_some());
        for other in [
            r#"{"jsonrpc":"2.0","method":"m","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":5}"#,
            // Params that are an array: the parser's path (the forwarding rule refuses them).
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"id":1,"method":"m"}"#,
        ] {
            assert!(request(line(other), 64).is_none(), "{other}");
        }
        let mut o = Object::read(&raw(r#"{"a":1E5,"b":2,"c":3}"#)).unwrap_or_default();
        assert_eq!(o.remove("b"), Some(raw("2")));
        o.insert("a", raw("1e400"));
        o.insert("d", raw("-0.0"));
        assert_eq!(o.to_parts().to_vec(), br#"{"a":1e400,"c":3,"d":-0.0}"#);
        assert_eq!(o.get("c"), Some(&raw("3")));
    }

    /// The text is checked as UTF-8 once, as a whole: a byte that is not UTF-8 anywhere (a
    /// key, a member the bridge reads, one it passes raw, an unknown envelope member, the
    /// whitespace) refuses the line as the byte parser did, and the parser's path then calls
    /// it a parse error.
    #[test]
    fn bytes_that_are_not_utf8_anywhere_refuse_the_line() {
        let with_bad_byte = |t: &str| {
            let at = t.find('~').unwrap_or(0);
            let mut b = t.as_bytes().to_vec();
            b[at] = 0xff;
            Bytes::from(b)
        };
        for t in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":"~"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"~":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":{"b":["~"]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"x":"~"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}~"#,
        ] {
            assert!(response(with_bad_byte(t), 200).is_none(), "{t}");
            let line = with_bad_byte(t);
            assert!(
                matches!(
                    jsonrpc::parse(&line, 200),
                    Err(jsonrpc::ParseError::NotJson { .. })
                ),
                "{t}"
            );
        }
        for t in [
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"~"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m~","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"~","method":"m"}"#,
        ] {
            assert!(request(with_bad_byte(t), 64).is_none(), "{t}");
        }
        assert_eq!(members(&RawJson(with_bad_byte(r#"{"a":"~"}"#))), None);
        assert_eq!(items(&RawJson(with_bad_byte(r#"["~"]"#))), None);
        assert_eq!(RawJson(with_bad_byte(r#""~""#)).to_str(), None);
        // Valid UTF-8 beyond ASCII passes, its bytes unchanged.
        let (_, r) = response(
            Bytes::from_static(r#"{"jsonrpc":"2.0","id":1,"result":{"é":"ü€😀"}}"#.as_bytes()),
            200,
        )
        .unwrap_or((Id::Int(0), RawResult::Other(raw("null"))));
        assert_eq!(text(&r), r#"{"é":"ü€😀"}"#);
    }

    /// `jsonrpc` is the string `2.0` in any spelling JSON gives it; nothing else is.
    #[test]
    fn the_version_is_read_through_its_escapes() {
        let line = |v: &str| Bytes::from(format!(r#"{{"jsonrpc":{v},"id":1,"result":{{}}}}"#));
        for v in [
            r#""2.0""#,
            r#""\u0032.0""#,
            r#""2\u002e0""#,
            r#""2.\u0030""#,
        ] {
            assert!(response(line(v), 200).is_some(), "{v}");
        }
        for v in [
            r#""2.0 ""#,
            r#""2""#,
            "2.0",
            r#"["2.0"]"#,
            "null",
            r#""2.00""#,
        ] {
            assert!(response(line(v), 200).is_none(), "{v}");
        }
    }
}
