//! Writing a frame from parts: a JSON-RPC frame (or one JSON text of it) is built from pieces,
//! and a member read raw ([`super::raw`]) is written as its original bytes, not parsed into a
//! value tree and serialized a second time (numbers keep their exact text). Pure: values in,
//! bytes out.
//!
//! - [`FrameParts`] builds a frame from pieces: small ones are copied into the frame's own buffer,
//!   long raw slices ([`SHARE_MIN_BYTES`]) are kept as slices of the read buffer, so a large
//!   member is never copied on its way to the writer.
//! - [`object`] and [`raw_object`] write an object from its members; [`response_frame`] and
//!   [`request_frame`] write a JSON-RPC 2.0 success response or request around its body.
//! - The read values are written here too ([`RawJson::from_parts`], [`RawResult::to_parts`],
//!   [`Object::to_parts`]), so that the reading side imports nothing of the writing side.

use bytes::Bytes;
use serde_json::Value;

use super::id::Id;
use super::raw::{Object, RawJson, RawResult};

/// A raw slice at least this long goes to the writer as a slice of its read buffer; a shorter
/// one is copied into the frame's own buffer (one `iovec` instead of many small ones).
pub const SHARE_MIN_BYTES: usize = 16 * 1024;

impl RawJson {
    /// The text of `parts` (one copy unless it is one piece).
    pub fn from_parts(parts: FrameParts) -> RawJson {
        if parts.done.is_empty() {
            return RawJson::from_written(Bytes::from(parts.cur));
        }
        let mut pieces = parts.into_pieces();
        if pieces.len() == 1 {
            return RawJson::from_written(pieces.remove(0));
        }
        RawJson::from_written(Bytes::from(pieces.concat()))
    }
}

impl RawResult {
    /// The text of the result (an object is written from its members: its original text
    /// without whitespace between the members, a repeated key once).
    pub fn to_parts(&self) -> FrameParts {
        match self {
            RawResult::Object(m) => raw_object(m),
            RawResult::Other(text) => FrameParts::of_raw(text),
        }
    }

    /// The value tree (a copy; the rare paths that need a value: an input request, the
    /// discover result). Numbers keep their text.
    pub fn to_value(&self) -> Option<Value> {
        self.to_parts().to_value()
    }
}

impl Object {
    /// The object's text.
    pub fn to_parts(&self) -> FrameParts {
        raw_object(self.members())
    }

    /// The value tree (a copy; tests and transports that need a value).
    #[cfg(feature = "internals")]
    pub fn to_value(&self) -> Option<Value> {
        self.to_parts().to_value()
    }
}

/// One frame (or one JSON text of it) built from pieces: bytes copied into its own buffer and
/// long raw slices shared with their read buffer ([`SHARE_MIN_BYTES`]).
#[derive(Clone, Debug, Default)]
pub struct FrameParts {
    done: Vec<Bytes>,
    cur: Vec<u8>,
    len: usize,
}

impl FrameParts {
    /// Empty.
    pub fn new() -> Self {
        FrameParts::default()
    }

    /// Empty, with room for `bytes` copied bytes before its buffer grows.
    pub fn with_capacity(bytes: usize) -> Self {
        FrameParts {
            done: Vec::new(),
            cur: Vec::with_capacity(bytes),
            len: 0,
        }
    }

    /// The text of `v`.
    pub fn of_value(v: &Value) -> Self {
        let mut p = FrameParts::new();
        p.push_value(v);
        p
    }

    /// The raw text `r`.
    pub fn of_raw(r: &RawJson) -> Self {
        let mut p = FrameParts::new();
        p.push_raw(r);
        p
    }

    /// Bytes in all pieces.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No bytes.
    #[cfg(feature = "internals")]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a copy of `b`.
    pub fn push(&mut self, b: &[u8]) {
        self.cur.extend_from_slice(b);
        self.len += b.len();
    }

    /// Appends `b`: shared when it is long, else copied.
    pub fn push_shared(&mut self, b: Bytes) {
        if b.len() < SHARE_MIN_BYTES {
            return self.push(&b);
        }
        self.flush();
        self.len += b.len();
        self.done.push(b);
    }

    /// Appends the raw text `r` (shared when it is long, else copied without touching the
    /// count of its shared bytes).
    pub fn push_raw(&mut self, r: &RawJson) {
        if r.as_bytes().len() < SHARE_MIN_BYTES {
            return self.push(r.as_bytes());
        }
        self.push_shared(r.bytes().clone());
    }

    /// Appends the compact text of `v`.
    pub fn push_value(&mut self, v: &Value) {
        let before = self.cur.len();
        if serde_json::to_writer(&mut self.cur, v).is_err() {
            self.cur.truncate(before);
            self.cur.extend_from_slice(b"null");
        }
        self.len += self.cur.len() - before;
    }

    /// Appends `s` as a JSON string (serde_json's escapes, as for a `Value::String`). A
    /// string with nothing to escape (no control character, `"` or `\\`: every key the bridge
    /// writes) is copied between its quotes without the serializer.
    pub fn push_str(&mut self, s: &str) {
        let before = self.cur.len();
        if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
            self.cur.reserve(s.len() + 2);
            self.cur.push(b'"');
            self.cur.extend_from_slice(s.as_bytes());
            self.cur.push(b'"');
        } else if serde_json::to_writer(&mut self.cur, s).is_err() {
            self.cur.truncate(before);
            self.cur.extend_from_slice(b"\"\"");
        }
        self.len += self.cur.len() - before;
    }

    /// Appends the id as JSON (an integer or a string), as [`Id::to_value`] writes it.
    pub fn push_id(&mut self, id: &Id) {
        match id {
            Id::Int(i) => self.push(itoa::Buffer::new().format(*i).as_bytes()),
            Id::UInt(u) => self.push(itoa::Buffer::new().format(*u).as_bytes()),
            Id::Str(s) => self.push_str(s),
        }
    }

    /// Appends `"key":` of an object member, after a `,` unless it is the `first`.
    pub fn push_key(&mut self, first: bool, key: &str) {
        if !first {
            self.push(b",");
        }
        self.push_str(key);
        self.push(b":");
    }

    /// Appends `other`.
    pub fn append(&mut self, other: FrameParts) {
        if other.done.is_empty() && self.done.is_empty() && self.cur.is_empty() {
            // Nothing before it: take its buffer as it is.
            self.cur = other.cur;
            self.len = other.len;
            return;
        }
        for b in other.done {
            self.push_shared(b);
        }
        self.push(&other.cur);
    }

    fn flush(&mut self) {
        if !self.cur.is_empty() {
            self.done.push(Bytes::from(std::mem::take(&mut self.cur)));
        }
    }

    /// The pieces, in order.
    pub fn into_pieces(mut self) -> Vec<Bytes> {
        self.flush();
        self.done
    }

    /// The shared pieces and, after them, the copied bytes that end the text (no allocation:
    /// the writer takes both as they are).
    pub fn into_shared_and_tail(self) -> (Vec<Bytes>, Vec<u8>) {
        (self.done, self.cur)
    }

    /// All bytes in one buffer (a copy; for tests and the fallback of a transport that needs
    /// a value).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for b in &self.done {
            out.extend_from_slice(b);
        }
        out.extend_from_slice(&self.cur);
        out
    }

    /// The value tree of the text (a copy; tests and fallbacks).
    pub fn to_value(&self) -> Option<Value> {
        RawJson::from_written(Bytes::from(self.to_vec())).to_value()
    }
}

/// Bytes a frame's own buffer has room for beyond its body before it grows: the envelope
/// (`{"jsonrpc":"2.0","id":..,"result":` or `..,"method":..,"params":`, `}` and `\n`) with an
/// id and a method of usual length.
const FRAME_HEAD_BYTES: usize = 96;

/// Bytes of the key texts and punctuation of an object of these members (a first guess of
/// its buffer: escapes may need more).
fn object_overhead<'a>(keys: impl Iterator<Item = &'a str>) -> usize {
    2 + keys.map(|k| k.len() + 4).sum::<usize>()
}

/// Writes an object from its members: `{"k":v,...}`.
pub fn object(members: Vec<(String, FrameParts)>) -> FrameParts {
    let cap = object_overhead(members.iter().map(|(k, _)| k.as_str()))
        + members.iter().map(|(_, v)| v.cur.len()).sum::<usize>();
    let mut p = FrameParts::with_capacity(cap);
    p.push(b"{");
    for (i, (k, v)) in members.into_iter().enumerate() {
        p.push_key(i == 0, &k);
        p.append(v);
    }
    p.push(b"}");
    p
}

/// Writes an object from raw members: `{"k":v,...}`, each value its text (into one buffer,
/// long values shared: [`SHARE_MIN_BYTES`]).
pub fn raw_object(members: &[(String, RawJson)]) -> FrameParts {
    let cap = object_overhead(members.iter().map(|(k, _)| k.as_str()))
        + members
            .iter()
            .map(|(_, v)| v.as_bytes().len())
            .filter(|n| *n < SHARE_MIN_BYTES)
            .sum::<usize>();
    let mut p = FrameParts::with_capacity(cap);
    p.push(b"{");
    for (i, (k, v)) in members.iter().enumerate() {
        p.push_key(i == 0, k);
        p.push_raw(v);
    }
    p.push(b"}");
    p
}

/// A JSON-RPC 2.0 success response frame: `{"jsonrpc":"2.0","id":..,"result":..}` and `\n`.
pub fn response_frame(id: &Id, result: FrameParts) -> FrameParts {
    let mut p = FrameParts::with_capacity(FRAME_HEAD_BYTES + result.cur.len());
    p.push(b"{\"jsonrpc\":\"2.0\",\"id\":");
    p.push_id(id);
    p.push(b",\"result\":");
    p.append(result);
    p.push(b"}\n");
    p
}

/// A JSON-RPC 2.0 request frame: `{"jsonrpc":"2.0","id":..,"method":..,"params":..}` and `\n`.
pub fn request_frame(id: &Id, method: &str, params: FrameParts) -> FrameParts {
    let mut p = FrameParts::with_capacity(FRAME_HEAD_BYTES + params.cur.len());
    p.push(b"{\"jsonrpc\":\"2.0\",\"id\":");
    p.push_id(id);
    p.push(b",\"method\":");
    p.push_str(method);
    p.push(b",\"params\":");
    p.append(params);
    p.push(b"}\n");
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(text: &str) -> RawJson {
        RawJson::from_written(Bytes::copy_from_slice(text.as_bytes()))
    }

    /// Strings are written as serde_json writes them, with or without something to escape.
    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut rows: Vec<String> = (0..=0x7fu8).map(|b| format!("a{}b", b as char)).collect();
        rows.extend(
            [
                "",
                "tools/call",
                "é",
                "ü€😀",
                "\u{2028}",
                "\"",
                "\\",
                "a\\\"b",
                "\u{7f}",
            ]
            .map(String::from),
        );
        for s in rows {
            let mut p = FrameParts::new();
            p.push_str(&s);
            let want = serde_json::to_vec(&s).unwrap_or_default();
            assert_eq!(p.to_vec(), want, "{s:?}");
            assert_eq!(p.len(), want.len(), "{s:?}");
        }
    }

    #[test]
    fn ids_are_read_and_written_without_a_tree_as_through_a_value() {
        for text in [
            "7",
            "-0",
            "0",
            "-12",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "1.0",
            "1e2",
            "-1.5",
            r#""a""#,
            r#""\u0041\n""#,
            r#""""#,
            "null",
            "true",
            "[1]",
            "{}",
        ] {
            let r = raw(text);
            let through_value = r.to_value().and_then(|v| Id::from_value(&v));
            assert_eq!(r.to_id(), through_value, "{text}");
            if let Some(id) = through_value {
                let mut p = FrameParts::new();
                p.push_id(&id);
                let want = serde_json::to_vec(&id.to_value()).unwrap_or_default();
                assert_eq!(p.to_vec(), want, "{text}");
            }
        }
        for s in ["", "a\"b\\c", "\u{1}\n\t", "é😀", "</script>"] {
            let mut p = FrameParts::new();
            p.push_str(s);
            let want = serde_json::to_vec(&Value::String(s.to_string())).unwrap_or_default();
            assert_eq!((p.to_vec(), p.len()), (want.clone(), want.len()), "{s}");
        }
    }

    #[test]
    fn parts_share_long_slices_and_copy_short_ones() {
        let long = raw(&format!("\"{}\"", "x".repeat(SHARE_MIN_BYTES)));
        let mut p = FrameParts::new();
        p.push(b"[");
        p.push_raw(&raw("1E5"));
        p.push(b",");
        p.push_raw(&long);
        p.push(b"]");
        assert_eq!(p.len(), long.as_bytes().len() + 6);
        let pieces = p.clone().into_pieces();
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[1].as_ptr(), long.as_bytes().as_ptr());
        assert_eq!(&pieces[0][..], b"[1E5,");
        let frame = response_frame(&Id::Int(3), object(vec![("a".into(), p)]));
        let text = String::from_utf8(frame.to_vec()).unwrap_or_default();
        assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":3,"result":{"a":[1E5,""#));
        assert!(text.ends_with("\"]}}\n"));
        assert_eq!(frame.len(), text.len());
        assert_eq!(
            request_frame(&Id::Int(1), "m", FrameParts::of_value(&json!({}))).to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{}}\n"
        );
    }
}
