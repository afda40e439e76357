//! Unpaired UTF-16 surrogate escapes in JSON text (`"snippet \ud83d"`, what a JavaScript writer
//! emits when it cuts an emoji in half). JSON admits them, serde_json (like every UTF-8 string
//! type) refuses them; the bridge replaces each one with `\ufffd` (U+FFFD REPLACEMENT CHARACTER)
//! and parses again. Only the error path of the parser calls this, so valid lines pay nothing.

/// The escape written in place of an unpaired surrogate escape: U+FFFD, also six bytes, so the
/// text keeps its length and every other byte keeps its place.
pub const REPLACEMENT_ESCAPE: &[u8; 6] = b"\\ufffd";

/// Replaces every `\uXXXX` escape of an unpaired surrogate inside the strings (values and
/// keys) of a JSON text with [`REPLACEMENT_ESCAPE`]: a high surrogate (`D800`-`DBFF`) not
/// directly followed by an escaped low surrogate (`DC00`-`DFFF`), and a low surrogate not
/// directly preceded by an escaped high one. A pair stays as it is.
///
/// Returns `None` when the text has no unpaired surrogate escape (nothing to change). Bytes
/// outside strings, escaped backslashes (`\\ud83d` is a backslash and the letters `ud83d`)
/// and malformed escapes are left for the parser to judge. The text need not be valid JSON or
/// UTF-8.
pub fn replace_lone_surrogates(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if text.get(i + 1) == Some(&b'u') => match hex4(text, i + 2) {
                Some(unit) if is_high(unit) => {
                    let paired = text.get(i + 6) == Some(&b'\\')
                        && text.get(i + 7) == Some(&b'u')
                        && hex4(text, i + 8).is_some_and(is_low);
                    if paired {
                        i += 12;
                    } else {
                        replace_at(&mut out, text, i);
                        i += 6;
                    }
                }
                Some(unit) if is_low(unit) => {
                    replace_at(&mut out, text, i);
                    i += 6;
                }
                Some(_) => i += 6,
                None => i += 2,
            },
            // Any other escape is two bytes: `\"` and `\\` never end or start anything.
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    out
}

fn is_high(unit: u16) -> bool {
    (0xD800..=0xDBFF).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&unit)
}

/// The four hex digits at `at` as a code unit, if they are all there.
fn hex4(text: &[u8], at: usize) -> Option<u16> {
    let digits = text.get(at..at + 4)?;
    let s = std::str::from_utf8(digits).ok()?;
    if !s.bytes().all(|d| d.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(s, 16).ok()
}

fn replace_at(out: &mut Option<Vec<u8>>, text: &[u8], at: usize) {
    let buf = out.get_or_insert_with(|| text.to_vec());
    buf[at..at + 6].copy_from_slice(REPLACEMENT_ESCAPE);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpaired_surrogate_escapes_become_the_replacement_escape() {
        // (input, expected output; None = unchanged)
        let rows: &[(&str, Option<&str>)] = &[
            (r#""snippet \ud83d""#, Some(r#""snippet \ufffd""#)),
            (r#""\ude00 low alone""#, Some(r#""\ufffd low alone""#)),
            (r#""\uD83D""#, Some(r#""\ufffd""#)),
            (r#""pair \ud83d\ude00 kept""#, None),
            (r#""pair \uD83D\uDE00 kept""#, None),
            (r#""\ud83d\ud83d\ude00""#, Some(r#""\ufffd\ud83d\ude00""#)),
            (r#""\ude00\ud83d""#, Some(r#""\ufffd\ufffd""#)),
            (r#""\ud83d\u0041""#, Some(r#""\ufffd\u0041""#)),
            (r#""\ud83dx\ude00""#, Some(r#""\ufffdx\ufffd""#)),
            (r#""\ud83d\n""#, Some(r#""\ufffd\n""#)),
            // An escaped backslash followed by the letters is not an escape.
            (r#""\\ud83d""#, None),
            (r#""\\\ud83d""#, Some(r#""\\\ufffd""#)),
            (r#""\"\ud83d""#, Some(r#""\"\ufffd""#)),
            // Outside strings nothing is touched (the parser refuses it anyway).
            (r#"\ud83d"#, None),
            (r#"{"k\udc00":"v"}"#, Some(r#"{"k\ufffd":"v"}"#)),
            (r#"["a","\ud800","b"]"#, Some(r#"["a","\ufffd","b"]"#)),
            (r#"["\"","\ud800"]"#, Some(r#"["\"","\ufffd"]"#)),
            // Malformed or cut escapes are left to the parser.
            (r#""\ud8""#, None),
            (r#""\ud83"#, None),
            (r#""\uzzzz""#, None),
            (r#""\ud83d\u""#, Some(r#""\ufffd\u""#)),
            (r#""\ud83d\udz00""#, Some(r#""\ufffd\udz00""#)),
            (r#""\u00e9 \uffff""#, None),
            (r#""ok""#, None),
            ("", None),
        ];
        for (input, want) in rows {
            let got = replace_lone_surrogates(input.as_bytes());
            assert_eq!(
                got.as_deref(),
                want.map(str::as_bytes),
                "{input}: got {:?}",
                got.as_ref().map(|g| String::from_utf8_lossy(g))
            );
        }
    }

    #[test]
    fn the_output_parses_and_keeps_the_length() {
        let input = r#"{"a":"x\ud83d","b\udfff":["\ud800\udc00","\\ud800",1e400]}"#;
        let fixed = replace_lone_surrogates(input.as_bytes()).unwrap_or_default();
        assert_eq!(fixed.len(), input.len());
        let v: serde_json::Value = serde_json::from_slice(&fixed).unwrap_or_default();
        assert_eq!(v["a"], "x\u{fffd}");
        assert_eq!(v["b\u{fffd}"][0], "\u{10000}");
        assert_eq!(v["b\u{fffd}"][1], "\\ud800");
    }

    /// Every string of up to four pieces from an alphabet of the escapes that matter: the
    /// result is what a reference decoder (UTF-16 units, unpaired ones replaced) gives.
    #[test]
    fn exhaustive_small_strings_decode_like_utf16_with_replacement() {
        let alphabet: &[(&str, &[u16])] = &[
            (r"\ud83d", &[0xD83D]),
            (r"\ude00", &[0xDE00]),
            (r"\uDBFF", &[0xDBFF]),
            (r"\uDC00", &[0xDC00]),
            (r"\\", &[0x5C]),
            (r#"\""#, &[0x22]),
            ("u", &[0x75]),
            (r"\u0041", &[0x41]),
            ("é", &[0xE9]),
        ];
        let n = alphabet.len();
        for len in 0..=4u32 {
            for mut code in 0..n.pow(len) {
                let mut text = String::from("\"");
                let mut units = Vec::new();
                for _ in 0..len {
                    let (piece, u) = alphabet[code % n];
                    code /= n;
                    text.push_str(piece);
                    units.extend_from_slice(u);
                }
                text.push('"');
                let want: String = char::decode_utf16(units.iter().copied())
                    .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect();
                let fixed =
                    replace_lone_surrogates(text.as_bytes()).unwrap_or(text.clone().into_bytes());
                let got: Result<String, _> = serde_json::from_slice(&fixed);
                assert_eq!(got.ok().as_deref(), Some(want.as_str()), "{text}");
            }
        }
    }
}
