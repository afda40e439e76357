//! Property tests of "valid JSON passes through unchanged", with proptest:
//! - random valid JSON text (numbers of every size and form, every escape, unpaired surrogate
//!   escapes, repeated keys, depths up to the limit) goes through the real bridge, in the
//!   arguments of a `tools/call` (editor -> upstream -> back, the fixture's `mirror` tool) and
//!   in a result (upstream -> editor, the fixture's `respond_raw` tool), and arrives
//!   unchanged: as their exact text where the bridge passes them (the arguments at the
//!   upstream, the structuredContent at the editor; unpaired surrogate escapes become
//!   `\ufffd`), and semantically after the fixture's own parse (numbers by their text, where
//!   serde_json writes an exponent `e+N`/`e-N`; repeated keys by their last value);
//! - id recovery gives the parser's answer (the last top-level `"id"`) for every split of the
//!   bytes into reads and for line limits on both sides of 256 bytes.

use crate::common;

use bytes::BytesMut;
use common::Bridge;
use mcp_bridge::protocol::wire::framing::{Frame, FrameCodec};
use mcp_bridge::protocol::wire::id::Id;
use mcp_bridge::protocol::wire::jsonrpc::{self, MAX_CLIENT_DEPTH, MAX_UPSTREAM_DEPTH, Message};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use std::cell::RefCell;
use tokio_util::codec::Decoder;

/// Cases of each property that goes through the bridge: one round trip each (a few ms in a
/// debug build), so the file stays well under a minute on a busy machine.
const BRIDGE_CASES: u32 = 256;
/// Cases of the pure id-recovery property.
const SPLIT_CASES: u32 = 2048;
/// Levels of a `tools/call`'s `arguments` object at the editor's limit: the request object and
/// `params` are the two levels above it.
const MAX_ARGUMENTS_DEPTH: usize = MAX_CLIENT_DEPTH - 2;
/// Levels of a result's `structuredContent` at the upstream's limit.
const MAX_STRUCTURED_DEPTH: usize = MAX_UPSTREAM_DEPTH - 2;

/// What an unpaired surrogate escape becomes in text the bridge passes as its bytes.
const UNPAIRED_ARRIVES_AS: &str = "\\ufffd";

// ---- a model of JSON text: what was written, and what must arrive -----------------------------

#[derive(Clone, Debug)]
enum J {
    Null,
    Bool(bool),
    /// The number's text as written (valid JSON grammar).
    Num(String),
    Str(JStr),
    Arr(Vec<J>),
    /// Members in order, keys may repeat.
    Obj(Vec<(JStr, J)>),
}

/// A string as a sequence of pieces, each written in a chosen form.
#[derive(Clone, Debug)]
struct JStr(Vec<Piece>);

#[derive(Clone, Copy, Debug)]
enum Piece {
    Char(char, Esc),
    /// A `\uXXXX` escape of a surrogate code unit (upper-case hex digits when `true`); two in a
    /// row can form a pair.
    Surrogate(u16, bool),
}

#[derive(Clone, Copy, Debug)]
enum Esc {
    /// As it is (when JSON allows it).
    Raw,
    /// `\n`, `\"`, `\/`, ... (when the character has a short escape).
    Short,
    /// `\uXXXX` (a surrogate pair beyond the BMP).
    Hex { upper: bool },
}

fn push_hex(out: &mut String, unit: u16, upper: bool) {
    if upper {
        out.push_str(&format!("\\u{unit:04X}"));
    } else {
        out.push_str(&format!("\\u{unit:04x}"));
    }
}

impl JStr {
    fn render(&self, out: &mut String) {
        out.push('"');
        for piece in &self.0 {
            match *piece {
                Piece::Surrogate(unit, upper) => push_hex(out, unit, upper),
                Piece::Char(c, esc) => {
                    let short = match c {
                        '"' => Some("\\\""),
                        '\\' => Some("\\\\"),
                        '/' => Some("\\/"),
                        '\u{8}' => Some("\\b"),
                        '\u{c}' => Some("\\f"),
                        '\n' => Some("\\n"),
                        '\r' => Some("\\r"),
                        '\t' => Some("\\t"),
                        _ => None,
                    };
                    let must_escape = c == '"' || c == '\\' || u32::from(c) < 0x20;
                    match (esc, short) {
                        (Esc::Raw, _) if !must_escape => out.push(c),
                        (Esc::Raw | Esc::Short, Some(s)) => out.push_str(s),
                        (Esc::Hex { upper }, _) => {
                            let mut units = [0u16; 2];
                            for u in c.encode_utf16(&mut units) {
                                push_hex(out, *u, upper);
                            }
                        }
                        (_, None) => {
                            let mut units = [0u16; 2];
                            for u in c.encode_utf16(&mut units) {
                                push_hex(out, *u, false);
                            }
                        }
                    }
                }
            }
        }
        out.push('"');
    }

    /// The text that must arrive: the string as written, each unpaired surrogate escape
    /// replaced with the escape of U+FFFD (`\ufffd`, docs/errors.md); a high surrogate escape
    /// directly followed by a low one is a pair and stays.
    fn render_arrived(&self, out: &mut String) {
        let single = |p: &Piece, out: &mut String| JStr(vec![*p]).render_inner(out);
        out.push('"');
        let mut i = 0;
        while let Some(piece) = self.0.get(i) {
            match (*piece, self.0.get(i + 1)) {
                (Piece::Surrogate(hi, _), Some(next @ Piece::Surrogate(lo, _)))
                    if (0xD800..=0xDBFF).contains(&hi) && (0xDC00..=0xDFFF).contains(lo) =>
                {
                    single(piece, out);
                    single(next, out);
                    i += 2;
                    continue;
                }
                (Piece::Surrogate(..), _) => out.push_str(UNPAIRED_ARRIVES_AS),
                _ => single(piece, out),
            }
            i += 1;
        }
        out.push('"');
    }

    /// The pieces as written, without the quotes.
    fn render_inner(&self, out: &mut String) {
        let mut s = String::new();
        self.render(&mut s);
        out.push_str(&s[1..s.len() - 1]);
    }

    /// What must arrive (docs/errors.md): the UTF-16 code units decoded, each unpaired
    /// surrogate as U+FFFD.
    fn expected(&self) -> String {
        let mut units = Vec::new();
        for piece in &self.0 {
            match *piece {
                Piece::Surrogate(unit, _) => units.push(unit),
                Piece::Char(c, _) => {
                    let mut buf = [0u16; 2];
                    units.extend_from_slice(c.encode_utf16(&mut buf));
                }
            }
        }
        char::decode_utf16(units)
            .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }
}

impl J {
    fn render(&self, out: &mut String) {
        self.write(out, false);
    }

    /// Writes the text as written, or (`arrived`) as it must arrive ([`J::arrived_text`]):
    /// the two differ in the strings only.
    fn write(&self, out: &mut String, arrived: bool) {
        let string = |s: &JStr, out: &mut String| {
            if arrived {
                s.render_arrived(out)
            } else {
                s.render(out)
            }
        };
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(t) => out.push_str(t),
            J::Str(s) => string(s, out),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out, arrived);
                }
                out.push(']');
            }
            J::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    string(k, out);
                    out.push(':');
                    v.write(out, arrived);
                }
                out.push('}');
            }
        }
    }

    fn text(&self) -> String {
        let mut s = String::new();
        self.render(&mut s);
        s
    }

    /// The exact text that must arrive where the bridge passes a member as its bytes: the
    /// text as written (numbers, escapes, repeated keys and all), each unpaired surrogate
    /// escape replaced with `\ufffd`.
    fn arrived_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, true);
        out
    }

    /// Levels of `{`/`[` (a scalar has 0).
    fn depth(&self) -> usize {
        match self {
            J::Arr(items) => 1 + items.iter().map(J::depth).max().unwrap_or(0),
            J::Obj(members) => 1 + members.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }
}

/// The text a number must arrive with: its own, except that serde_json writes an exponent as
/// `e` with a sign (`1E400` and `1e400` arrive as `1e+400`), the same number to every reader.
fn expected_number(text: &str) -> String {
    let Some(at) = text.find(['e', 'E']) else {
        return text.to_string();
    };
    let (mantissa, rest) = text.split_at(at);
    let exponent = &rest[1..];
    if exponent.starts_with(['+', '-']) {
        format!("{mantissa}e{exponent}")
    } else {
        format!("{mantissa}e+{exponent}")
    }
}

/// Checks that `got` is what `model` must arrive as; the error names the first difference.
fn check(model: &J, got: &Value, path: &str) -> Result<(), String> {
    let same = match (model, got) {
        (J::Null, Value::Null) => true,
        (J::Bool(b), Value::Bool(g)) => b == g,
        (J::Num(t), Value::Number(n)) => n.as_str() == expected_number(t),
        (J::Str(s), Value::String(g)) => *g == s.expected(),
        (J::Arr(items), Value::Array(got_items)) => {
            if items.len() != got_items.len() {
                return Err(format!(
                    "{path}: {} items, got {}",
                    items.len(),
                    got_items.len()
                ));
            }
            for (i, (m, g)) in items.iter().zip(got_items).enumerate() {
                check(m, g, &format!("{path}/{i}"))?;
            }
            true
        }
        (J::Obj(members), Value::Object(got_members)) => {
            // A repeated key keeps its last value (the parser's rule).
            let mut last: Vec<(String, &J)> = Vec::new();
            for (k, v) in members {
                let k = k.expected();
                match last.iter_mut().find(|(lk, _)| *lk == k) {
                    Some(slot) => slot.1 = v,
                    None => last.push((k, v)),
                }
            }
            if last.len() != got_members.len() {
                return Err(format!(
                    "{path}: {} distinct keys, got {}",
                    last.len(),
                    got_members.len()
                ));
            }
            for (k, v) in last {
                let g = got_members
                    .get(&k)
                    .ok_or_else(|| format!("{path}: key {k:?} is missing"))?;
                check(v, g, &format!("{path}/{k}"))?;
            }
            true
        }
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!("{path}: wrote {}, got {got}", model.text()))
    }
}

// ---- strategies ------------------------------------------------------------------------------

fn esc() -> impl Strategy<Value = Esc> {
    prop_oneof![
        3 => Just(Esc::Raw),
        1 => Just(Esc::Short),
        1 => any::<bool>().prop_map(|upper| Esc::Hex { upper }),
    ]
}

fn character() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => (0x20u8..0x7f).prop_map(char::from),
        2 => any::<char>(),
        2 => prop::sample::select(vec![
            '"', '\\', '/', '\u{8}', '\u{c}', '\n', '\r', '\t', '\u{0}', '\u{1f}', '\u{7f}',
            '\u{fffd}', '\u{2028}', '\u{e9}', '\u{1f600}', '\u{10ffff}',
        ]),
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        8 => (character(), esc()).prop_map(|(c, e)| Piece::Char(c, e)),
        1 => (0xD800u16..=0xDBFF, any::<bool>()).prop_map(|(u, up)| Piece::Surrogate(u, up)),
        1 => (0xDC00u16..=0xDFFF, any::<bool>()).prop_map(|(u, up)| Piece::Surrogate(u, up)),
    ]
}

fn jstr() -> impl Strategy<Value = JStr> {
    vec(piece(), 0..12).prop_map(JStr)
}

/// A key: mostly one of a few names, each character written in a random form, so the same
/// key often repeats in different spellings (`"a"`, `"\u0061"`).
fn key() -> impl Strategy<Value = JStr> {
    let named = prop::sample::select(vec!["a", "b", "id", "\u{e9}", "\u{1f600}", ""])
        .prop_flat_map(|k| {
            let chars: Vec<char> = k.chars().collect();
            vec(esc(), chars.len()).prop_map(move |escs| {
                JStr(
                    chars
                        .iter()
                        .zip(escs)
                        .map(|(c, e)| Piece::Char(*c, e))
                        .collect(),
                )
            })
        });
    prop_oneof![3 => named, 1 => jstr()]
}

fn digits(first_nonzero: bool, len: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    vec(0u8..10, len).prop_map(move |mut d| {
        if first_nonzero && let Some(first) = d.first_mut() {
            *first = 1 + *first % 9;
        }
        d.iter().map(|x| char::from(b'0' + x)).collect()
    })
}

/// A JSON number of any size and form: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, with
/// integers up to 45 digits, fractions up to 25 digits and exponents up to 5 digits.
fn number() -> impl Strategy<Value = String> {
    let int = prop_oneof![
        1 => Just("0".to_string()),
        3 => digits(true, 1..4),
        2 => digits(true, 15..46),
    ];
    let frac = proptest::option::weighted(0.4, digits(false, 1..26));
    let exp = proptest::option::weighted(
        0.3,
        (
            prop::sample::select(vec!["e", "E"]),
            prop::sample::select(vec!["", "+", "-"]),
            digits(false, 1..6),
        ),
    );
    (any::<bool>(), int, frac, exp).prop_map(|(neg, int, frac, exp)| {
        let mut s = String::new();
        if neg {
            s.push('-');
        }
        s.push_str(&int);
        if let Some(f) = frac {
            s.push('.');
            s.push_str(&f);
        }
        if let Some((e, sign, d)) = exp {
            s.push_str(e);
            s.push_str(sign);
            s.push_str(&d);
        }
        s
    })
}

fn value() -> BoxedStrategy<J> {
    let leaf = prop_oneof![
        1 => Just(J::Null),
        1 => any::<bool>().prop_map(J::Bool),
        4 => number().prop_map(J::Num),
        4 => jstr().prop_map(J::Str),
    ];
    leaf.prop_recursive(5, 40, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(J::Arr),
            vec((key(), inner), 0..5).prop_map(J::Obj),
        ]
    })
    .boxed()
}

/// An object of at most `max_depth` levels: random members, and one value nested in a chain of
/// arrays and objects down to a random depth up to the limit.
fn document(max_depth: usize) -> impl Strategy<Value = J> {
    (
        vec((key(), value()), 0..5),
        value(),
        0..=max_depth,
        key(),
        key(),
    )
        .prop_map(move |(mut members, inner, levels, chain_key, member_key)| {
            let levels = levels.min(max_depth.saturating_sub(1 + inner.depth()));
            let mut v = inner;
            for level in 0..levels {
                v = if level % 2 == 0 {
                    J::Arr(vec![v])
                } else {
                    J::Obj(vec![(chain_key.clone(), v)])
                };
            }
            members.push((member_key, v));
            let doc = J::Obj(members);
            assert!(doc.depth() <= max_depth, "generator: depth {}", doc.depth());
            doc
        })
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn started_bridge() -> Bridge {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b
}

// ---- the properties --------------------------------------------------------------------------

#[test]
fn random_json_in_tool_arguments_arrives_at_the_upstream_and_back_unchanged() {
    let bridge = RefCell::new(started_bridge());
    let next_id = RefCell::new(1000i64);
    let result = runner(BRIDGE_CASES).run(&document(MAX_ARGUMENTS_DEPTH), |doc| {
        let mut b = bridge.borrow_mut();
        let id = {
            let mut n = next_id.borrow_mut();
            *n += 1;
            *n
        };
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"mirror","arguments":{}}}}}"#,
            doc.text()
        );
        b.send_raw_request(&json!(id), "tools/call", line.as_bytes());
        let r = b.recv_response(&json!(id));
        prop_assert_eq!(&r["result"]["content"][0]["text"], "mirrored", "{}", r);
        // The upstream got the arguments as the editor wrote them.
        let sent = format!(
            r#"{{"name":"mirror","arguments":{},"_meta":{{"#,
            doc.arrived_text()
        );
        let lines = b.upstream_lines();
        prop_assert!(
            lines.iter().any(|l| l.contains(&sent)),
            "the upstream got no line with {}; last: {:?}",
            sent,
            lines.last()
        );
        check(&doc, &r["result"]["structuredContent"], "arguments").map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn random_json_in_a_result_arrives_at_the_editor_unchanged() {
    let bridge = RefCell::new(started_bridge());
    let next_id = RefCell::new(2000i64);
    let result = runner(BRIDGE_CASES).run(&document(MAX_STRUCTURED_DEPTH), |doc| {
        let mut b = bridge.borrow_mut();
        let id = {
            let mut n = next_id.borrow_mut();
            *n += 1;
            *n
        };
        let after = format!(
            r#","result":{{"content":[{{"type":"text","text":"raw"}}],"structuredContent":{}}}}}"#,
            doc.text()
        );
        let r = b.tools_call(json!(id), "respond_raw", json!({"before": r#"{"jsonrpc":"2.0","id":"#, "after": after}));
        prop_assert_eq!(&r["result"]["content"][0]["text"], "raw", "{}", r);
        // The editor got the structuredContent as the upstream wrote it.
        prop_assert_eq!(
            b.response_line(&json!(id)),
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"raw"}}],"structuredContent":{}}}}}"#,
                doc.arrived_text()
            ) + "\n"
        );
        check(&doc, &r["result"]["structuredContent"], "structuredContent")
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ---- id recovery -----------------------------------------------------------------------------

/// A top-level member value in a line whose id is recovered.
#[derive(Clone, Debug)]
enum IdVal {
    /// An integer as written (any size, may have a sign).
    Int(String),
    /// A number that is not an integer id (`1.0`, `1e2`, `1.5`).
    NotInt(String),
    Str(JStr),
    Null,
    /// An object with its own `"id"` members (never taken).
    Nested(Vec<(JStr, i64)>),
    /// Filler: a long string (up to 700 bytes), so that lines cross the limit.
    Pad(usize),
    /// A deep array, so that lines cross the depth limit.
    Deep(usize),
}

impl IdVal {
    fn render(&self, out: &mut String) {
        match self {
            IdVal::Int(t) | IdVal::NotInt(t) => out.push_str(t),
            IdVal::Str(s) => s.render(out),
            IdVal::Null => out.push_str("null"),
            IdVal::Nested(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    k.render(out);
                    out.push_str(&format!(":{v}"));
                }
                out.push('}');
            }
            IdVal::Pad(n) => out.push_str(&format!("\"{}\"", "p".repeat(*n))),
            IdVal::Deep(n) => out.push_str(&format!("{}{}", "[".repeat(*n), "]".repeat(*n))),
        }
    }

    /// The id this value is when it is the last `"id"` member.
    fn id(&self) -> Option<Id> {
        match self {
            IdVal::Int(t) => Id::from_integer_text(t),
            IdVal::Str(s) => Some(Id::Str(s.expected())),
            // Shorter than the 1024 bytes a recovered id may have.
            IdVal::Pad(n) => Some(Id::Str("p".repeat(*n))),
            _ => None,
        }
    }
}

fn id_val() -> impl Strategy<Value = IdVal> {
    prop_oneof![
        3 => any::<i64>().prop_map(|i| IdVal::Int(i.to_string())),
        1 => any::<u64>().prop_map(|u| IdVal::Int(u.to_string())),
        1 => digits(true, 19..30).prop_map(IdVal::Int),
        1 => Just(IdVal::Int("-0".into())),
        1 => prop::sample::select(vec!["1.0", "1e2", "1E2", "1.5", "-0.0", "2e+0"])
            .prop_map(|t| IdVal::NotInt(t.into())),
        3 => jstr().prop_map(IdVal::Str),
        1 => Just(IdVal::Null),
        1 => vec((key(), any::<i64>()), 0..3).prop_map(IdVal::Nested),
        2 => (0usize..700).prop_map(IdVal::Pad),
        1 => (1usize..80).prop_map(IdVal::Deep),
    ]
}

fn id_line() -> impl Strategy<Value = (String, Option<Id>)> {
    let member_key = prop_oneof![
        3 => key(),
        1 => prop::sample::select(vec!["jsonrpc", "method", "params"]).prop_map(|k| {
            JStr(k.chars().map(|c| Piece::Char(c, Esc::Raw)).collect())
        }),
    ];
    vec((member_key, id_val()), 0..8).prop_map(|members| {
        let mut line = String::from("{");
        let mut want = None;
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            k.render(&mut line);
            line.push(':');
            v.render(&mut line);
            if k.expected() == "id" {
                want = v.id();
            }
        }
        line.push('}');
        (line, want)
    })
}

/// The id the bridge takes from one frame: the recovered one of an over-long line, else the
/// parser's (or, for a line the parser refuses, the recovered one).
fn id_of_frame(frame: &Frame) -> Option<Id> {
    match frame {
        Frame::TooLong { id, .. } => id.clone(),
        Frame::Line(l) => match jsonrpc::parse(l, MAX_CLIENT_DEPTH) {
            Ok(Message::Request { id, .. }) => Some(id),
            Ok(Message::Response { id, .. } | Message::ErrorResponse { id, .. }) => id,
            Ok(Message::Notification { .. }) => None,
            Err(e) => e.id().cloned(),
        },
    }
}

/// Frames `input` with this line limit, fed in reads of these sizes (cycled).
fn frames_of(input: &[u8], max_line_bytes: usize, sizes: &[usize]) -> Vec<Frame> {
    let mut codec = FrameCodec::new(max_line_bytes);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut rest = input;
    for size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = (*size).min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        while let Ok(Some(frame)) = codec.decode(&mut buf) {
            frames.push(frame);
        }
        rest = &rest[n..];
    }
    while let Ok(Some(frame)) = codec.decode_eof(&mut buf) {
        frames.push(frame);
    }
    frames
}

#[test]
fn id_recovery_is_the_parsers_answer_for_every_split_and_line_limit() {
    let strategy = (
        id_line(),
        prop_oneof![1usize..256, 256usize..4096],
        vec(1usize..300, 1..16),
        any::<prop::sample::Index>(),
        any::<bool>(),
    );
    let result = runner(SPLIT_CASES).run(&strategy, |((line, want), max, sizes, cut, cr)| {
        let mut input = line.clone().into_bytes();
        input.push(b'\n');
        let frames = frames_of(&input, max, &sizes);
        prop_assert_eq!(frames.len(), 1);
        prop_assert_eq!(matches!(frames[0], Frame::TooLong { .. }), line.len() > max);
        prop_assert_eq!(id_of_frame(&frames[0]), want.clone(), "{}", line);
        // The same answer from the whole line at once.
        prop_assert_eq!(jsonrpc::recover_id(line.as_bytes()), want, "{}", line);
        // A line cut anywhere (and ended with CRLF or LF) gets one answer, whether it is over
        // the limit or not and however it is read.
        let mut cut_input = line.as_bytes()[..cut.index(line.len() + 1)].to_vec();
        if cr {
            cut_input.push(b'\r');
        }
        cut_input.push(b'\n');
        let small: Vec<Option<Id>> = frames_of(&cut_input, max, &sizes)
            .iter()
            .map(id_of_frame)
            .collect();
        let whole: Vec<Option<Id>> = frames_of(&cut_input, 1 << 20, &[cut_input.len()])
            .iter()
            .map(id_of_frame)
            .collect();
        prop_assert_eq!(small, whole, "{:?}", String::from_utf8_lossy(&cut_input));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
