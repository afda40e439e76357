//! Numbers keep their exact text in value trees too. serde_json with
//! `arbitrary_precision` keeps a number's digits but writes its exponent as `e` with a sign
//! (`1E5` -> `1e+5`). Where the bridge must build a value tree from JSON text (an error, a
//! notification, an input request, a list item a rule changed), [`keep_number_text`] puts the
//! written text back into every number, so the tree serializes each number as it came.
//! Members no rule touches never become a tree at all ([`super::raw`]).
//!
//! How: one scan of the text lists its number tokens in order (strings skipped with `memchr`,
//! as [`super::jsonrpc::nesting_depth`] does); the numbers of the tree, visited in document
//! order, are matched one to one. Only when every pair is the same number (the token in
//! serde_json's form equals the tree's text) are the tokens written back; otherwise (a
//! repeated key dropped a value, so the sequences differ) the tree keeps serde_json's form,
//! which is the same number.

use serde_json::{Number, Value};

/// The number tokens of a JSON text, in order (the text is valid JSON: the parser said so).
fn number_tokens(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        match b {
            b'"' => {
                i += 1;
                loop {
                    let Some(found) = text
                        .get(i..)
                        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                    else {
                        return out;
                    };
                    let at = i + found;
                    if text[at] == b'"' {
                        i = at + 1;
                        break;
                    }
                    i = at + 2;
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while text
                    .get(i)
                    .is_some_and(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    i += 1;
                }
                out.push(&text[start..i]);
            }
            _ => i += 1,
        }
    }
    out
}

/// A number token in serde_json's form: the exponent marker `e` and a sign always.
fn serde_form(token: &str) -> String {
    let Some(at) = token.find(['e', 'E']) else {
        return token.to_string();
    };
    let (mantissa, rest) = token.split_at(at);
    let exponent = &rest[1..];
    if exponent.starts_with(['+', '-']) {
        format!("{mantissa}e{exponent}")
    } else {
        format!("{mantissa}e+{exponent}")
    }
}

fn numbers_mut<'a>(v: &'a mut Value, out: &mut Vec<&'a mut Number>) {
    match v {
        Value::Number(n) => out.push(n),
        Value::Array(items) => items.iter_mut().for_each(|i| numbers_mut(i, out)),
        Value::Object(members) => members.values_mut().for_each(|m| numbers_mut(m, out)),
        _ => {}
    }
}

/// Gives every number of `value` (parsed from `text`) the exact text it has in `text` (see
/// the module doc). A text without an exponent costs one scan and changes nothing.
pub fn keep_number_text(text: &[u8], value: &mut Value) {
    let tokens = number_tokens(text);
    if !tokens
        .iter()
        .any(|t| t.contains(&b'e') || t.contains(&b'E'))
    {
        return;
    }
    let mut numbers = Vec::with_capacity(tokens.len());
    numbers_mut(value, &mut numbers);
    if numbers.len() != tokens.len() {
        return;
    }
    let mut exact = Vec::with_capacity(tokens.len());
    for (n, t) in numbers.iter().zip(&tokens) {
        let Ok(t) = std::str::from_utf8(t) else {
            return;
        };
        if serde_form(t) != n.as_str() {
            return;
        }
        exact.push(t);
    }
    for (n, t) in numbers.into_iter().zip(exact) {
        if n.as_str() != t {
            // serde_json's `arbitrary_precision` number is its text; this sets the text the
            // peer wrote, which serde_json checked to be this same number (see above).
            *n = Number::from_string_unchecked(t.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> String {
        let mut v: Value = serde_json::from_str(text).unwrap_or_default();
        keep_number_text(text.as_bytes(), &mut v);
        v.to_string()
    }

    #[test]
    fn every_number_keeps_its_text() {
        let text = r#"{"a":1E5,"b":[1e400,-0.0,1.0,1E-7,12345678901234567890123,-1e-400,"1E5\"2E5"],"c":{"d":1E+2,"e":0.10}}"#;
        assert_eq!(parsed(text), text);
        // Without this, serde_json writes the exponents its own way.
        let plain: Value = serde_json::from_str(text).unwrap_or_default();
        assert!(plain.to_string().contains("1e+5"));
    }

    #[test]
    fn a_repeated_key_that_moved_numbers_leaves_serde_jsons_form() {
        // The tree holds 2E5 where the text's first number is 1E5: the sequences differ.
        assert_eq!(
            parsed(r#"{"a":"x","b":1E5,"a":2E5}"#),
            r#"{"a":2e+5,"b":1e+5}"#
        );
        // A dropped number changes the count.
        assert_eq!(parsed(r#"{"a":1E5,"a":"x"}"#), r#"{"a":"x"}"#);
    }

    #[test]
    fn tokens_skip_strings_and_escapes() {
        let t = br#"["a\"1E5\\",-2E3,{"k-1":3}]"#;
        assert_eq!(number_tokens(t), [&b"-2E3"[..], &b"3"[..]]);
    }
}
