//! Id recovery for a line that cannot be parsed (too long, too deep, not JSON): one streaming
//! pass over the whole line, fed at any split into reads, that keeps the value of the LAST
//! top-level `"id"` member, the member serde_json keeps when a key repeats. Pure: bytes in,
//! an id out; it never guesses.

use super::id::Id;
use super::surrogates;

/// Most bytes of an `"id"` value the scanner keeps (without quotes). A longer id cannot be
/// known for sure, so the line gets its error without an id.
pub const MAX_RECOVERED_ID_BYTES: usize = 1024;
/// Longest raw key (without quotes) that can still decode to `id`: `\u0069\u0064`.
const MAX_ID_KEY_BYTES: usize = 12;

/// The UTF-8 byte order mark (U+FEFF), which Windows tools write before text.
pub const UTF8_BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// Where the scanner is in the top-level value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Top {
    /// Nothing read yet.
    Start,
    /// The first `n` bytes of a byte order mark at the start of the line.
    Bom(u8),
    /// Only whitespace so far (after the byte order mark, if any).
    Before,
    /// Inside the top-level object.
    Object,
    /// The top-level object is closed; only whitespace may follow.
    After,
    /// The line is not one object as far as its top level goes: no id can be known.
    Confused,
}

/// What the top-level object expects next (only meaningful at depth 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// A key, or `}` (after `{` or `,`).
    Key,
    /// The `:` after a key.
    Colon,
    /// A member value.
    Value,
    /// Inside a number or literal member value.
    Scalar,
    /// `,` or `}` after a member value.
    Comma,
}

/// A streaming recoverer of the top-level request id of one line.
///
/// Rules (docs/errors.md): only a member of the top-level object counts, never an `"id"`
/// nested in params; the key is compared after decoding its escapes (`"\u0069d"` is `id`);
/// when the key repeats, the last member wins, as in the parser; the id is what
/// [`Id::from_value`] would accept: a string (unpaired surrogates replaced as the parser
/// does) or an integer written without fraction or exponent that fits in 64 bits. The answer
/// is `None` (the error goes out without an id) when the last `"id"` member's value is not
/// such an id, is cut off by the end of the line or longer than [`MAX_RECOVERED_ID_BYTES`],
/// or when the line's top level is not a single object (a closer too many, a second value,
/// a token out of place), because then no id is known for sure.
#[derive(Clone, Debug)]
pub struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    top: Top,
    slot: Slot,
    /// The member whose key is being read or whose value follows is `"id"`.
    key_is_id: bool,
    /// Raw bytes of the key or `"id"` value being read at depth 1.
    capture: Vec<u8>,
    capturing: bool,
    capture_cut: bool,
    /// The value of the last `"id"` member so far (`None`: none, unusable or cut).
    last: Option<Id>,
    /// A number or literal `"id"` value read, taken into `last` at the `,` or `}` after it: a
    /// number that only whitespace and the end of the line follow may have been cut.
    scalar_id: Option<Option<Id>>,
}

impl Default for IdScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl IdScanner {
    /// A scanner at the start of a line.
    pub fn new() -> Self {
        IdScanner {
            depth: 0,
            in_string: false,
            escaped: false,
            top: Top::Start,
            slot: Slot::Key,
            key_is_id: false,
            capture: Vec::new(),
            capturing: false,
            capture_cut: false,
            last: None,
            scalar_id: None,
        }
    }

    /// Feeds the next bytes of the line (without its newline).
    pub fn push(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            if self.top == Top::Confused {
                return;
            }
            if self.in_string && !self.escaped {
                // Skip the inside of a string up to the next quote or backslash at once.
                let rest = &bytes[i..];
                let stop = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                self.keep(&rest[..stop]);
                i += stop;
                if i == bytes.len() {
                    return;
                }
            }
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// Ends the line: the recovered id, or `None` (see the rules on [`IdScanner`]).
    pub fn finish(self) -> Option<Id> {
        match self.top {
            Top::Object | Top::After => self.last,
            Top::Start | Top::Bom(_) | Top::Before | Top::Confused => None,
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if !self.capturing || bytes.is_empty() {
            return;
        }
        let limit = if self.slot == Slot::Key {
            MAX_ID_KEY_BYTES
        } else {
            MAX_RECOVERED_ID_BYTES
        };
        let room = limit.saturating_sub(self.capture.len());
        if bytes.len() > room {
            self.capture_cut = true;
        }
        self.capture
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn start_capture(&mut self, first: Option<u8>) {
        self.capture.clear();
        self.capture_cut = false;
        self.capturing = true;
        if let Some(b) = first {
            self.keep(&[b]);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
                self.keep(&[b]);
            } else if b == b'\\' {
                self.escaped = true;
                self.keep(&[b]);
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 1 {
                    self.string_ended();
                }
            } else {
                self.keep(&[b]);
            }
            return;
        }
        match self.top {
            Top::Start if b == UTF8_BOM[0] => self.top = Top::Bom(1),
            Top::Bom(n) => {
                self.top = match UTF8_BOM.get(usize::from(n)) {
                    Some(&want) if want == b && usize::from(n) + 1 == UTF8_BOM.len() => Top::Before,
                    Some(&want) if want == b => Top::Bom(n + 1),
                    _ => Top::Confused,
                };
            }
            Top::Start | Top::Before => match b {
                b'{' => {
                    self.top = Top::Object;
                    self.depth = 1;
                    self.slot = Slot::Key;
                }
                b' ' | b'\t' | b'\r' | b'\n' => self.top = Top::Before,
                _ => self.top = Top::Confused,
            },
            Top::After => {
                if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                    self.top = Top::Confused;
                }
            }
            Top::Confused => {}
            Top::Object if self.depth > 1 => match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => self.depth -= 1,
                _ => {}
            },
            Top::Object => self.member_byte(b),
        }
    }

    /// A byte outside strings at depth 1: the members of the top-level object.
    fn member_byte(&mut self, b: u8) {
        if self.slot == Slot::Scalar {
            if !matches!(
                b,
                b',' | b'}' | b']' | b':' | b'"' | b'{' | b'[' | b' ' | b'\t' | b'\r' | b'\n'
            ) {
                self.keep(&[b]);
                return;
            }
            self.scalar_ended();
        }
        let ws = matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        match (self.slot, b) {
            (_, _) if ws => {}
            (Slot::Key, b'"') => {
                self.in_string = true;
                self.start_capture(None);
            }
            (Slot::Key | Slot::Comma, b'}') => {
                self.take_scalar_id();
                self.depth = 0;
                self.top = Top::After;
            }
            (Slot::Colon, b':') => self.slot = Slot::Value,
            (Slot::Value, b'"') => {
                self.in_string = true;
                if self.key_is_id {
                    self.start_capture(None);
                }
            }
            (Slot::Value, b'{' | b'[') => {
                // An object or array is never an id; the member ends where depth 1 resumes.
                self.depth += 1;
                self.slot = Slot::Comma;
                self.key_is_id = false;
            }
            (Slot::Value, b'-' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'+' | b'.') => {
                self.slot = Slot::Scalar;
                if self.key_is_id {
                    self.start_capture(Some(b));
                }
            }
            (Slot::Comma, b',') => {
                self.take_scalar_id();
                self.slot = Slot::Key;
            }
            _ => self.top = Top::Confused,
        }
    }

    /// A string at depth 1 ended: a key, or a member value.
    fn string_ended(&mut self) {
        let raw = std::mem::take(&mut self.capture);
        let cut = self.capture_cut;
        let captured = std::mem::replace(&mut self.capturing, false);
        match self.slot {
            Slot::Key => {
                self.key_is_id = !cut && key_is_id(&raw);
                if self.key_is_id {
                    // The last "id" member wins; until its value is read it is unknown.
                    self.last = None;
                }
                self.slot = Slot::Colon;
            }
            _ => {
                if self.key_is_id && captured {
                    self.last = if cut { None } else { string_id(&raw) };
                }
                self.key_is_id = false;
                self.slot = Slot::Comma;
            }
        }
        self.capture = raw;
        self.capture.clear();
    }

    fn take_scalar_id(&mut self) {
        if let Some(id) = self.scalar_id.take() {
            self.last = id;
        }
    }

    fn scalar_ended(&mut self) {
        if self.key_is_id && self.capturing {
            self.scalar_id = Some(if self.capture_cut {
                None
            } else {
                integer_id(&self.capture)
            });
        }
        self.capturing = false;
        self.key_is_id = false;
        self.slot = Slot::Comma;
    }
}

/// Recovers the id of a whole line in one pass (see [`IdScanner`]).
pub fn recover_id(line: &[u8]) -> Option<Id> {
    let mut s = IdScanner::new();
    s.push(line);
    s.finish()
}

fn key_is_id(raw: &[u8]) -> bool {
    if raw == b"id" {
        return true;
    }
    raw.contains(&b'\\') && decode_string(raw).as_deref() == Some("id")
}

/// Decodes the raw inside of a JSON string as the parser would, unpaired surrogates replaced.
fn decode_string(raw: &[u8]) -> Option<String> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    if let Some(fixed) = surrogates::replace_lone_surrogates(&quoted) {
        quoted = fixed;
    }
    serde_json::from_slice(&quoted).ok()
}

fn string_id(raw: &[u8]) -> Option<Id> {
    decode_string(raw).map(Id::Str)
}

/// An integer id as JSON writes one (`-?(0|[1-9][0-9]*)`) that fits in `i64` or `u64`.
fn integer_id(text: &[u8]) -> Option<Id> {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    let grammar = match digits {
        [] => false,
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !grammar {
        return None;
    }
    let s = std::str::from_utf8(text).ok()?;
    Id::from_integer_text(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::wire::jsonrpc::nested_arrays;

    fn int(i: i64) -> Option<Id> {
        Some(Id::Int(i))
    }

    fn s(v: &str) -> Option<Id> {
        Some(Id::Str(v.into()))
    }

    fn table() -> Vec<(&'static str, Option<Id>)> {
        vec![
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, int(1)),
            (r#"{"id":"abc"}"#, s("abc")),
            (r#"  { "id" : -3 } "#, int(-3)),
            (r#"{"id":0}"#, int(0)),
            (r#"{"id":-0}"#, int(0)),
            (r#"{"id":18446744073709551615}"#, Some(Id::UInt(u64::MAX))),
            (r#"{"id":18446744073709551616}"#, None),
            (r#"{"id":-9223372036854775808}"#, int(i64::MIN)),
            // The last member wins, as in the parser.
            (r#"{"id":1,"method":"x","id":2}"#, int(2)),
            (r#"{"id":"a","id":"b","id":3}"#, int(3)),
            (r#"{"id":1,"id":null}"#, None),
            (r#"{"id":1,"id":{"x":2}}"#, None),
            (r#"{"id":1,"id":[2]}"#, None),
            (r#"{"id":null,"id":4}"#, int(4)),
            // Escaped keys are decoded; an escaped quote is no key.
            (r#"{"\u0069d":5}"#, int(5)),
            (r#"{"\u0069\u0064":5,"i\u0064":6}"#, int(6)),
            (r#"{"t":"\"id\": 5"}"#, None),
            (r#"{"idx":5}"#, None),
            (r#"{"ID":5}"#, None),
            // Strings are decoded; unpaired surrogates as the parser reads them.
            (r#"{"id":"a\"b\\c\u00e9"}"#, s("a\"b\\c\u{e9}")),
            (r#"{"id":"x\ud83d"}"#, s("x\u{fffd}")),
            (r#"{"id":"\ud83d\ude00"}"#, s("\u{1f600}")),
            // Not usable ids (JSON-RPC: a string or an integer; 1.0 and 1e2 are not).
            (r#"{"id":1.0}"#, None),
            (r#"{"id":1e2}"#, None),
            (r#"{"id":1.5}"#, None),
            (r#"{"id":true}"#, None),
            (r#"{"id":null}"#, None),
            (r#"{"id":01}"#, None),
            (r#"{"id":+1}"#, None),
            (r#"{"id":"bad \x escape"}"#, None),
            // Nested ids are never taken.
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"lookup","arguments":{"id":50}},"id":51,}"#,
                int(51),
            ),
            (r#"{"params":{"id":5},"x":[{"id":6}]}"#, None),
            (r#"{"params":{"id":5},"id":7,"x":[{"id":6}]}"#, int(7)),
            (r#"{"a":"}","id":8}"#, int(8)),
            (r#"{"a":"\\","id":9}"#, int(9)),
            // Cut off: the value of the last "id" is not known.
            (r#"{"id":"7","method":"x""#, s("7")),
            (r#"{"id":"7","id":"8"#, None),
            (r#"{"id":12"#, None),
            // A framer keeps the `\r` of an over-long line: the same answer as without it.
            ("{\"id\":12\r", None),
            (r#"{"id":12 "#, None),
            (r#"{"id":12 ,"p":"#, int(12)),
            (r#"{"id":12 }"#, int(12)),
            ("{\"id\":\"7\"\r", s("7")),
            (r#"{"id":"#, None),
            (r#"{"id""#, None),
            (r#"{"id":3,"params":{"a":[[[["#, int(3)),
            // Not one object at the top level.
            (r#"[{"id":1}]"#, None),
            (r#"{"id":1}{"id":2}"#, None),
            (r#"{"id":1}}"#, None),
            (r#"{"id":1} x"#, None),
            (r#"{"id" 1}"#, None),
            (r#"{"id":1 2}"#, None),
            (r#"{"a" "id":1}"#, None),
            (r#""id""#, None),
            (r#"42"#, None),
            ("", None),
            (r#"{}"#, None),
            (r#"{"id":1}  "#, int(1)),
            // A trailing comma before the top-level `}` leaves the id known (docs/errors.md);
            // other stray commas do not.
            (r#"{"jsonrpc":"2.0","id":7,"method":"ping",}"#, int(7)),
            (r#"{"id":7 , }"#, int(7)),
            (r#"{"id":"7",}"#, s("7")),
            (r#"{"id":7,,}"#, None),
            (r#"{,"id":7}"#, None),
            (r#"{"id":7,"p":[1,],}"#, int(7)),
            // One byte order mark at the very start of the line is read past; anywhere
            // else, or cut short, it is a token out of place.
            (
                "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                int(1),
            ),
            ("\u{feff} {\"id\":\"b\"}", s("b")),
            ("\u{feff}\u{feff}{\"id\":1}", None),
            (" \u{feff}{\"id\":1}", None),
            ("{\"id\":1}\u{feff}", None),
            ("\u{feff}", None),
        ]
    }

    #[test]
    fn recovery_table() {
        for (line, want) in table() {
            assert_eq!(recover_id(line.as_bytes()), want, "{line}");
        }
    }

    #[test]
    fn every_split_into_reads_gives_the_same_id() {
        for (line, want) in table() {
            let bytes = line.as_bytes();
            for cut in 0..=bytes.len() {
                let mut sc = IdScanner::new();
                sc.push(&bytes[..cut]);
                sc.push(&bytes[cut..]);
                assert_eq!(sc.finish(), want, "{line} cut at {cut}");
            }
            let mut sc = IdScanner::new();
            for b in bytes {
                sc.push(std::slice::from_ref(b));
            }
            assert_eq!(sc.finish(), want, "{line} byte by byte");
        }
    }

    #[test]
    fn long_values_are_skipped_and_long_ids_are_not_guessed() {
        let pad = "x".repeat(100_000);
        let line = format!(r#"{{"id":1,"params":{{"t":"{pad}"}},"id":"last"}}"#);
        assert_eq!(recover_id(line.as_bytes()), s("last"));
        let ok = "i".repeat(MAX_RECOVERED_ID_BYTES);
        assert_eq!(recover_id(format!(r#"{{"id":"{ok}"}}"#).as_bytes()), s(&ok));
        let long = "i".repeat(MAX_RECOVERED_ID_BYTES + 1);
        assert_eq!(
            recover_id(format!(r#"{{"id":1,"id":"{long}"}}"#).as_bytes()),
            None
        );
        let long_key = format!(r#"{{"{}":1}}"#, "k".repeat(100));
        assert_eq!(recover_id(long_key.as_bytes()), None);
        let deep = format!(r#"{{"id":1,"p":{},"id":2}}"#, nested_arrays(10_000));
        assert_eq!(recover_id(deep.as_bytes()), int(2));
    }
}
