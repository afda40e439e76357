//! The text of a peer's bytes in a log line: control characters out, a quoted and escaped
//! excerpt of a line, and a cut that never splits a UTF-8 character. Pure: the log layer
//! writes these lines, and the protocol layer words its errors with them.

/// Replaces every control character with a space.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Bytes of a peer's line that a warning quotes ([`excerpt`]): enough to recognize a log line
/// that a server printed on its stdout, short enough for one terminal line or two.
pub const EXCERPT_BYTES: usize = 120;

/// A peer's line as a warning quotes it: its first [`EXCERPT_BYTES`] bytes (cut back to a
/// character boundary) in double quotes, escaped so that it cannot garble a terminal: control
/// characters, bidirectional formatting characters, `"` and `\` as Rust escapes (`\t`,
/// `\u{1b}`, `\u{202e}`, `\"`), each byte of invalid UTF-8 as `\xNN`. A longer line ends
/// with `… (N bytes)`. Examples: `"not json 1"`, `"\u{1b}[31mred"`, `"\xff"`,
/// `"<the first 120 bytes>"… (300 bytes)`.
pub fn excerpt(line: &[u8]) -> String {
    excerpt_of(line, line.len())
}

/// [`excerpt`] of a line of `len_bytes` bytes of which `line` holds the first (the head that
/// was kept of a line over the limit): it ends with `… (len_bytes bytes)` when `line` is cut
/// or shorter than `len_bytes`.
pub fn excerpt_of(line: &[u8], len_bytes: usize) -> String {
    use std::fmt::Write as _;
    let mut end = line.len().min(EXCERPT_BYTES);
    if end < line.len() {
        end = without_split_char(&line[..end]);
    }
    let mut out = String::with_capacity(end + 16);
    out.push('"');
    for chunk in line[..end].utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_bidi_control(c) {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            } else if c.is_control() || c == '"' || c == '\\' {
                out.extend(c.escape_debug());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('"');
    if end < len_bytes {
        let _ = write!(out, "… ({len_bytes} bytes)");
    }
    out
}

/// The characters that reorder the text around them on a terminal (Unicode bidirectional
/// formatting characters: marks, including U+061C ARABIC LETTER MARK, embeddings, overrides,
/// isolates).
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// The most continuation bytes a UTF-8 character has (after its first byte).
const UTF8_MAX_CONTINUATION_BYTES: usize = 3;

/// The length of `bytes` without a UTF-8 character that a cut split at its end (a first byte
/// whose continuation bytes are missing); bytes that are no UTF-8 elsewhere, or at the end,
/// are kept. For a line cut for a log line: `ab\xc3` (the first byte of "é") -> 2.
pub fn without_split_char(bytes: &[u8]) -> usize {
    let n = bytes.len();
    let mut start = n;
    while start > 0 && n - start < UTF8_MAX_CONTINUATION_BYTES && bytes[start - 1] & 0xC0 == 0x80 {
        start -= 1;
    }
    let Some(&first) = start.checked_sub(1).and_then(|i| bytes.get(i)) else {
        return n;
    };
    let want = match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return n,
    };
    if n - (start - 1) < want { start - 1 } else { n }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_spaces() {
        assert_eq!(sanitize("a\nb\tc\u{1b}[31m"), "a b c [31m");
    }

    #[test]
    fn a_split_character_at_the_end_is_left_out_and_nothing_else() {
        for (bytes, len) in [
            (&b""[..], 0),
            (b"ab", 2),
            (b"ab\xc3", 2),            // "é" cut after its first byte
            (b"ab\xc3\xa9", 4),        // "é" whole
            (b"a\xe2\x82", 1),         // "€" cut after two bytes
            (b"a\xe2\x82\xac", 4),     // "€" whole
            (b"a\xf0\x9f\x98", 1),     // "😀" cut after three bytes
            (b"a\xf0\x9f\x98\x80", 5), // "😀" whole
            (b"\xffa\xe2\x82", 2),     // an invalid byte earlier changes nothing
            (b"a\xff", 2),             // no UTF-8 at all: kept
            (b"a\x80\x80\x80\x80", 5), // continuation bytes only: kept
            (b"\x80", 1),
        ] {
            assert_eq!(without_split_char(bytes), len, "{bytes:?}");
        }
    }

    #[test]
    fn an_excerpt_is_quoted_escaped_and_cut_at_a_character_boundary() {
        assert_eq!(excerpt("a\u{061c}b".as_bytes()), r#""a\u{61c}b""#);
        // The head of a line over the limit names the whole line's length.
        assert_eq!(excerpt_of(b"head", 70_000), r#""head"… (70000 bytes)"#);
        assert_eq!(excerpt(b"not json 1"), r#""not json 1""#);
        assert_eq!(
            excerpt("a\tb\u{1b}[31m\"q\" \\ \u{202e}é\r".as_bytes()),
            r#""a\tb\u{1b}[31m\"q\" \\ \u{202e}é\r""#
        );
        assert_eq!(excerpt(b"ok \xff\xfe end"), r#""ok \xff\xfe end""#);
        assert_eq!(excerpt(b""), r#""""#);
        let long = "x".repeat(300);
        assert_eq!(
            excerpt(long.as_bytes()),
            format!("\"{}\"… (300 bytes)", "x".repeat(EXCERPT_BYTES))
        );
        let exact = "y".repeat(EXCERPT_BYTES);
        assert_eq!(excerpt(exact.as_bytes()), format!("\"{exact}\""));
        // A two-byte character across the cut is left out whole.
        let across = format!("{}é and more", "z".repeat(EXCERPT_BYTES - 1));
        assert_eq!(
            excerpt(across.as_bytes()),
            format!(
                "\"{}\"… ({} bytes)",
                "z".repeat(EXCERPT_BYTES - 1),
                across.len()
            )
        );
    }
}
