//! The syntax of a configuration file: JSON with comments and trailing commas, the dialect VS
//! Code writes its `mcp.json` in (VS Code's "JSON with Comments" mode), parsed by the
//! `jsonc-parser` crate into a tree whose every node keeps its place in the text; and the line
//! and column of a place. Nothing else of JSON5 (single quotes, bare keys, hexadecimal numbers)
//! is taken: an editor would refuse it.

use jsonc_parser::ast::{ObjectProp, Value};
use jsonc_parser::{CollectOptions, ParseOptions};

/// A place in the text: its line and its column, both from 1; a column counts characters, as
/// an editor shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// The line, from 1.
    pub line: usize,
    /// The column in characters, from 1.
    pub column: usize,
}

/// The text does not parse: where, and the parser's words (`Expected comma`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where the parser stopped.
    pub at: Position,
    /// What it expected or found.
    pub message: String,
}

/// The place of the byte `offset` of `text`: a line ends at `\n`, at `\r\n` and at a lone
/// `\r` (as JSON's whitespace and VS Code count them).
pub fn position(text: &str, offset: usize) -> Position {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut at = Position { line: 1, column: 1 };
    let bytes = text.as_bytes();
    for (i, c) in text[..end].char_indices() {
        match c {
            '\r' if bytes.get(i + 1) == Some(&b'\n') => {}
            '\n' | '\r' => {
                at.line += 1;
                at.column = 1;
            }
            _ => at.column += 1,
        }
    }
    at
}

/// Parses `text` (JSON with comments and trailing commas). Errors: [`SyntaxError`].
pub fn parse(text: &str) -> Result<Option<Value<'_>>, SyntaxError> {
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options)
        .map(|parsed| parsed.value)
        .map_err(|e| SyntaxError {
            at: position(text, e.range().start),
            message: e.kind().to_string(),
        })
}

/// The members of an object in their order, each name once: a repeated name keeps its first
/// place and its last value, as `JSON.parse` (and so an editor) reads it.
pub fn members<'t, 'a>(properties: &'t [ObjectProp<'a>]) -> Vec<(String, &'t ObjectProp<'a>)> {
    let mut out: Vec<(String, &ObjectProp<'a>)> = Vec::with_capacity(properties.len());
    for p in properties {
        let name = p.name.clone().into_string();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = p,
            None => out.push((name, p)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "{\n  \"é\": 1,\r\n\t\"b\": 2\r}";
        let at = |needle: &str| position(text, text.find(needle).unwrap_or(usize::MAX));
        assert_eq!(at("{"), Position { line: 1, column: 1 });
        assert_eq!(at("\"é\""), Position { line: 2, column: 3 });
        assert_eq!(at("1"), Position { line: 2, column: 8 });
        assert_eq!(at("\"b\""), Position { line: 3, column: 2 });
        assert_eq!(at("}"), Position { line: 4, column: 1 });
        assert_eq!(
            position(text, 12),
            Position {
                line: 2,
                column: 10
            }
        );
    }

    #[test]
    fn comments_and_trailing_commas_are_json_with_comments_and_the_rest_of_json5_is_not() {
        let ok = "// servers\n{\"servers\": {/* none */}, \"x\": [1, 2,],}\n";
        assert!(matches!(parse(ok), Ok(Some(Value::Object(_)))));
        for (text, line, column, message) in [
            ("{\"a\": 1\n \"b\": 2}", 1, 8, "Expected comma"),
            ("{'a': 1}", 1, 2, "Single-quoted strings are not allowed"),
            ("{a: 1}", 1, 2, "Expected string for object property"),
            ("{\"a\": 0x1}", 1, 7, "Hexadecimal numbers are not allowed"),
            ("{\"a\": 1", 1, 1, "Unterminated object"),
            (
                "{} {}",
                1,
                4,
                "Text cannot contain more than one JSON value",
            ),
            ("{/* open", 1, 2, "Unterminated comment block"),
        ] {
            match parse(text) {
                Err(e) => assert_eq!(
                    e,
                    SyntaxError {
                        at: Position { line, column },
                        message: message.to_owned()
                    },
                    "{text}"
                ),
                Ok(_) => panic!("{text} parsed"),
            }
        }
        assert!(matches!(parse("  // nothing\n"), Ok(None)));
    }

    #[test]
    fn a_repeated_member_keeps_its_first_place_and_its_last_value() {
        let Ok(Some(Value::Object(o))) = parse(r#"{"a": 1, "b": 2, "a": 3}"#) else {
            panic!("an object");
        };
        let got: Vec<(String, String)> = members(&o.properties)
            .into_iter()
            .map(|(n, p)| match &p.value {
                Value::NumberLit(v) => (n, v.value.to_owned()),
                _ => (n, String::new()),
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_owned(), "3".to_owned()),
                ("b".to_owned(), "2".to_owned())
            ]
        );
    }
}
