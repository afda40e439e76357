//! The top-level members of a JSON object read while its bytes pass by, without keeping them:
//! what the framing recovers from a body too large to hold (its `type`, `seq`, `request_seq`,
//! `command`, `event`), wherever in the object they stand. It keeps a few bytes of state, never
//! the body; it does not check the JSON (a body that is not an object yields nothing).
//!
//! Why a scan and not a look at the head bytes: DAP fixes no member order, and adapters differ
//! (debugpy writes `body` last, lldb-dap writes the members sorted by name, `body` first and
//! `request_seq` after it). Only a scan of the whole body finds the members in both.

use serde_json::{Map, Value};

/// The members the scan keeps, by name: the ones that say what a DAP message is.
const KEPT_MEMBERS: [&str; 5] = ["type", "seq", "request_seq", "command", "event"];

/// The longest scalar value kept, in bytes: a command's or an event's name, a number. A longer
/// value is dropped (the member then reads as absent).
const MAX_KEPT_VALUE_BYTES: usize = 128;

/// The longest member name noted, in bytes: longer than every name of [`KEPT_MEMBERS`].
const MAX_NAME_BYTES: usize = 16;

/// Where the scan is inside the top-level object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Before the object's `{`.
    Before,
    /// Where a member name (or the object's `}`) comes.
    Name,
    /// After the name, before its `:`.
    Colon,
    /// The value, until the `,` or `}` that ends it at the top level.
    Value,
    /// After the object's `}`, or in a body that is not an object.
    Done,
}

/// The scan. Feed it the body's bytes in any cuts ([`Skim::feed`]), then read the members it
/// kept ([`Skim::members`]).
#[derive(Debug)]
pub struct Skim {
    place: Place,
    /// Nesting depth inside the value: 0 at the top level of the object.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The member name read so far; `None` once it outgrew [`MAX_NAME_BYTES`].
    name: Option<Vec<u8>>,
    /// The value's bytes while it is a kept member's and short; `None` otherwise.
    value: Option<Vec<u8>>,
    kept: Map<String, Value>,
}

impl Default for Skim {
    fn default() -> Self {
        Self {
            place: Place::Before,
            depth: 0,
            in_string: false,
            escaped: false,
            name: Some(Vec::new()),
            value: None,
            kept: Map::new(),
        }
    }
}

impl Skim {
    /// Reads the next bytes of the body.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.step(byte);
        }
    }

    /// The kept members whose values were whole scalars.
    pub fn members(&self) -> &Map<String, Value> {
        &self.kept
    }

    fn step(&mut self, byte: u8) {
        match self.place {
            Place::Before => match byte {
                b'{' => self.place = Place::Name,
                b if b.is_ascii_whitespace() => {}
                _ => self.place = Place::Done,
            },
            Place::Name => {
                if self.in_string {
                    if self.string_byte(byte) {
                        return;
                    }
                    // The name's closing quote.
                    self.place = Place::Colon;
                    return;
                }
                match byte {
                    b'"' => {
                        self.in_string = true;
                        self.name = Some(Vec::new());
                    }
                    b'}' => self.place = Place::Done,
                    _ => {}
                }
            }
            Place::Colon => {
                if byte == b':' {
                    let kept = self
                        .name
                        .as_deref()
                        .and_then(|n| std::str::from_utf8(n).ok())
                        .is_some_and(|n| KEPT_MEMBERS.contains(&n));
                    self.value = kept.then(Vec::new);
                    self.place = Place::Value;
                }
            }
            Place::Value => self.value_byte(byte),
            Place::Done => {}
        }
    }

    /// One byte inside a string (after its opening quote); false at its closing quote. The
    /// bytes of a member name are noted.
    fn string_byte(&mut self, byte: u8) -> bool {
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.in_string = false;
            return false;
        }
        if let (Place::Name, Some(name)) = (self.place, &mut self.name) {
            name.push(byte);
            if name.len() > MAX_NAME_BYTES {
                self.name = None;
            }
        }
        true
    }

    fn value_byte(&mut self, byte: u8) {
        let ends = !self.in_string && self.depth == 0 && matches!(byte, b',' | b'}');
        if ends {
            self.keep();
            self.place = if byte == b',' {
                Place::Name
            } else {
                Place::Done
            };
            return;
        }
        if self.in_string {
            self.string_byte(byte);
        } else {
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    // An object or an array: not a scalar, not kept.
                    self.value = None;
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        if let Some(value) = &mut self.value {
            value.push(byte);
            if value.len() > MAX_KEPT_VALUE_BYTES {
                self.value = None;
            }
        }
    }

    fn keep(&mut self) {
        let (Some(value), Some(name)) = (self.value.take(), self.name.take()) else {
            return;
        };
        let (Ok(value), Ok(name)) = (
            serde_json::from_slice::<Value>(&value),
            String::from_utf8(name),
        ) else {
            return;
        };
        self.kept.insert(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skim_in_cuts(text: &str, cut: usize) -> Map<String, Value> {
        let mut skim = Skim::default();
        for chunk in text.as_bytes().chunks(cut) {
            skim.feed(chunk);
        }
        skim.members().clone()
    }

    #[test]
    fn members_before_and_after_a_large_body_are_kept_in_any_cuts() {
        let filler = "x".repeat(5000);
        // debugpy's order (body last) and lldb-dap's (sorted: body first).
        let debugpy = format!(
            r#"{{"seq": 9, "type": "response", "request_seq": 7, "success": true, "command": "variables", "body": {{"variables": [{{"name": "a", "value": "{filler}", "type": "response", "request_seq": 1}}]}}}}"#
        );
        let lldb = format!(
            r#"{{"body":{{"variables":[{{"name":"\"request_seq\":3,","value":"{filler}\\\"}}"}}]}},"command":"variables","request_seq":7,"seq":9,"success":true,"type":"response"}}"#
        );
        for text in [debugpy, lldb] {
            for cut in [1, 7, 4096, text.len()] {
                assert_eq!(
                    Value::Object(skim_in_cuts(&text, cut)),
                    json!({"seq": 9, "type": "response", "request_seq": 7, "command": "variables"}),
                    "cut {cut}"
                );
            }
        }
    }

    #[test]
    fn a_body_that_is_not_an_object_or_a_long_value_yields_nothing() {
        assert_eq!(skim_in_cuts("[1, 2]", 1), Map::new());
        let long = format!(r#"{{"command": "{}"}}"#, "c".repeat(MAX_KEPT_VALUE_BYTES));
        assert_eq!(skim_in_cuts(&long, 3), Map::new());
    }
}
