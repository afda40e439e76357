//! The result rules of [`translate::shape_result`](super::translate::shape_result) on raw text:
//! a complete upstream result is read into its members without a value tree, only the
//! members a rule touches are read or rebuilt, and every other member goes to the editor as
//! its original bytes (numbers keep their exact text; a large member is never copied).
//!
//! What is rebuilt: `_meta` when it loses the server info (its other members stay raw), a list
//! item that a repair or a schema rule changed (an unchanged item stays raw; a changed one is
//! written from its value tree, whose numbers keep their text:
//! [`crate::protocol::wire::numbers::keep_number_text`], but whose strings take serde_json's escapes), and
//! `content` when a text block of the `structuredContent` is appended (the existing blocks
//! stay raw).

use super::item_filter::ItemFilter;
use super::list_items::{self, ItemKind};
use super::tool_schema;
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::legacy::Forwarded;
use crate::protocol::revisions::modern::{self, ResultType};
use crate::protocol::revisions::note::{Note, debug};
use crate::protocol::wire::parts::{self, FrameParts};
use crate::protocol::wire::raw::{self, RawJson, RawResult};

/// One member of a result being shaped: its original text, or rebuilt.
#[derive(Debug)]
enum Member {
    Raw(RawJson),
    Built(FrameParts),
}

impl Member {
    fn raw(&self) -> Option<&RawJson> {
        match self {
            Member::Raw(r) => Some(r),
            Member::Built(_) => None,
        }
    }
}

/// A complete result read into its members (in the same pass as its response's envelope:
/// [`raw::response`]).
#[derive(Debug)]
pub struct ResultMembers(Vec<(String, RawJson)>);

impl ResultMembers {
    /// The members of a result. Errors: [`Cause::InvalidResponse`] when the result is not an
    /// object.
    pub fn read(result: RawResult) -> Result<ResultMembers, Cause> {
        match result {
            RawResult::Object(m) => Ok(ResultMembers(m)),
            RawResult::Other(_) => Err(Cause::InvalidResponse),
        }
    }

    /// The value tree of the result (a copy, for an `input_required` result).
    pub fn to_value(&self) -> Option<serde_json::Value> {
        RawResult::Object(self.0.clone()).to_value()
    }

    /// `resultType` as [`modern::result_type`] reads it: absent or `"complete"` is complete.
    pub fn result_type(&self) -> ResultType {
        match raw::member(&self.0, "resultType") {
            None => ResultType::Complete,
            Some(t) => match t.to_str().as_deref() {
                Some("complete") => ResultType::Complete,
                Some("input_required") => ResultType::InputRequired,
                _ => ResultType::Unknown,
            },
        }
    }
}

fn position(members: &[(String, Member)], key: &str) -> Option<usize> {
    members.iter().position(|(k, _)| k == key)
}

/// A result that the rules cannot shape without losing what the upstream sent (a `tools/call`
/// `content` that is not an array: the editor must get an array, and an empty one would drop
/// the tool's output). The request gets [`Cause::InvalidResponse`] with this text as its detail,
/// for example `tools/call: the result's content is a string, not an array`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable(pub String);

/// Shapes a complete upstream result for the editor: the rules of
/// [`translate::shape_result`](super::translate::shape_result), on raw members, and the items
/// that `filter` hides (`--allow-tool`, ...) left out of a list. Gives the result's JSON text
/// as [`FrameParts`].
///
/// Errors: [`Unusable`] when a rule would have to drop what the upstream sent.
pub fn shape_result(
    method: Forwarded,
    result: ResultMembers,
    filter: Option<&ItemFilter>,
    notes: &mut Vec<Note>,
) -> Result<FrameParts, Unusable> {
    let mut m: Vec<(String, Member)> = result
        .0
        .into_iter()
        .filter(|(k, _)| !matches!(k.as_str(), "resultType" | "ttlMs" | "cacheScope"))
        .map(|(k, v)| (k, Member::Raw(v)))
        .collect();
    shape_meta(&mut m);
    if method.is_list()
        && let Some(i) = position(&m, "nextCursor")
        && m[i].1.raw().is_some_and(|c| !c.is_string())
    {
        m.remove(i);
        debug(
            notes,
            format!(
                "{}: dropped a nextCursor that is not a string",
                method.method()
            ),
        );
    }
    match ItemKind::of(method) {
        Some(kind) => shape_list(method, kind, &mut m, filter, notes),
        None if method == Forwarded::ToolsCall => shape_call_result(&mut m, notes)?,
        None => {}
    }
    Ok(write_object(m))
}

/// The object's text: raw members copied (or shared when long) into one buffer, rebuilt ones
/// appended.
fn write_object(m: Vec<(String, Member)>) -> FrameParts {
    let cap = 2 + m
        .iter()
        .map(|(k, v)| {
            k.len()
                + 4
                + match v {
                    Member::Raw(r) if r.as_bytes().len() < parts::SHARE_MIN_BYTES => {
                        r.as_bytes().len()
                    }
                    Member::Raw(_) => 0,
                    Member::Built(p) => p.len(),
                }
        })
        .sum::<usize>();
    let mut out = FrameParts::with_capacity(cap);
    out.push(b"{");
    for (i, (k, v)) in m.into_iter().enumerate() {
        out.push_key(i == 0, &k);
        match v {
            Member::Raw(r) => out.push_raw(&r),
            Member::Built(p) => out.append(p),
        }
    }
    out.push(b"}");
    out
}

/// `_meta` loses the server info; an empty `_meta` is dropped.
fn shape_meta(m: &mut Vec<(String, Member)>) {
    let Some(i) = position(m, "_meta") else {
        return;
    };
    let Some(meta) = m[i].1.raw().and_then(raw::members) else {
        return;
    };
    if !meta.iter().any(|(k, _)| k == modern::META_SERVER_INFO) && !meta.is_empty() {
        return;
    }
    let kept: Vec<(String, FrameParts)> = meta
        .into_iter()
        .filter(|(k, _)| k != modern::META_SERVER_INFO)
        .map(|(k, v)| (k, FrameParts::of_raw(&v)))
        .collect();
    if kept.is_empty() {
        m.remove(i);
    } else {
        m[i].1 = Member::Built(parts::object(kept));
    }
}

/// The items of a list result ([`list_items::shape_item`]); an item that comes out unchanged
/// keeps its original text. An item that `filter` hides is left out first, by the key the
/// upstream sent (before any repair), the others keeping their order.
fn shape_list(
    method: Forwarded,
    kind: ItemKind,
    m: &mut [(String, Member)],
    filter: Option<&ItemFilter>,
    notes: &mut Vec<Note>,
) {
    let Some(i) = position(m, kind.member()) else {
        return;
    };
    let Some(items) = m[i].1.raw().and_then(raw::items) else {
        return;
    };
    let mut out = FrameParts::new();
    out.push(b"[");
    let mut first = true;
    let mut hidden = 0usize;
    for (index, item) in items.into_iter().enumerate() {
        let Some(value) = item.to_value() else {
            continue;
        };
        if filter.is_some_and(|f| !f.admits_item(kind, &value)) {
            hidden += 1;
            continue;
        }
        let shaped = if kind == ItemKind::Tool {
            list_items::shape_item(kind, value.clone(), index, tool_schema::adapt_tool, notes)
        } else {
            list_items::shape_item(kind, value.clone(), index, |_, _| {}, notes)
        };
        let Some(shaped) = shaped else {
            continue;
        };
        if !first {
            out.push(b",");
        }
        first = false;
        if shaped == value {
            out.push_raw(&item);
        } else {
            out.push_value(&shaped);
        }
    }
    out.push(b"]");
    m[i].1 = Member::Built(out);
    if hidden > 0 {
        debug(
            notes,
            format!("{}: {hidden} hidden by the filter options", method.method()),
        );
    }
}

/// Whether a `content` array has a text block.
fn has_text_block(content: &[RawJson]) -> bool {
    content.iter().any(|block| {
        raw::members(block).is_some_and(|b| {
            raw::member(&b, "type").and_then(RawJson::to_str).as_deref() == Some("text")
        })
    })
}

/// A `tools/call` result always has a `content` array: a missing or `null` one becomes `[]`,
/// one of another kind is [`Unusable`] (made an array, it would lose the tool's output). It
/// gets a text block of the serialized `structuredContent` (its original text) when it has
/// none; a non-object `structuredContent` is dropped after that.
fn shape_call_result(m: &mut Vec<(String, Member)>, notes: &mut Vec<Note>) -> Result<(), Unusable> {
    let empty = || Member::Built(FrameParts::of_value(&serde_json::json!([])));
    match position(m, "content").map(|i| (i, m[i].1.raw())) {
        Some((_, Some(c))) if c.is_array() => {}
        Some((i, Some(c))) if c.is_null() => {
            m[i].1 = empty();
            debug(notes, "tools/call: a null content became []".into());
        }
        Some((_, Some(c))) => {
            return Err(Unusable(format!(
                "tools/call: the result's content is {}, not an array",
                c.kind()
            )));
        }
        Some((_, None)) => {}
        None => m.push(("content".into(), empty())),
    }
    let Some(structured) = position(m, "structuredContent").and_then(|i| m[i].1.raw().cloned())
    else {
        return Ok(());
    };
    let Some(ci) = position(m, "content") else {
        return Ok(());
    };
    let blocks = m[ci].1.raw().and_then(raw::items).unwrap_or_default();
    if !has_text_block(&blocks) {
        let mut content = FrameParts::new();
        match m[ci].1.raw() {
            Some(c) => {
                let text = c.as_bytes();
                content.push_shared(c.slice(0..text.len().saturating_sub(1)));
                if !blocks.is_empty() {
                    content.push(b",");
                }
            }
            None => content.push(b"["),
        }
        content.push(b"{\"type\":\"text\",\"text\":");
        content.push_str(structured.as_str());
        content.push(b"}]");
        m[ci].1 = Member::Built(content);
        debug(
            notes,
            "tools/call: added a text block with the structuredContent".into(),
        );
    }
    if !structured.is_object()
        && let Some(i) = position(m, "structuredContent")
    {
        m.remove(i);
        debug(
            notes,
            "tools/call: dropped a structuredContent that is not an object".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn shaped(method: Forwarded, text: &str) -> (String, Vec<String>) {
        let r = raw::response(
            Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#)),
            200,
        )
        .map(|(_, r)| r);
        let members = r.and_then(|r| ResultMembers::read(r).ok());
        let Some(members) = members else {
            return (String::new(), Vec::new());
        };
        let mut notes = Vec::new();
        let out = match shape_result(method, members, None, &mut notes) {
            Ok(out) => out.to_vec(),
            Err(Unusable(why)) => format!("unusable: {why}").into_bytes(),
        };
        (
            String::from_utf8(out).unwrap_or_default(),
            notes.into_iter().map(|n| n.text).collect(),
        )
    }

    #[test]
    fn untouched_members_keep_their_exact_text() {
        let (out, notes) = shaped(
            Forwarded::ToolsCall,
            r#"{"content":[{"type":"text","text":"t"}],"structuredContent":{"a":1E5,"b":1e400,"c":-0.0,"d":1.0,"e":1E-7,"f":12345678901234567890123,"g":-1e-400},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{},"x":1E5}}"#,
        );
        assert_eq!(
            out,
            r#"{"content":[{"type":"text","text":"t"}],"structuredContent":{"a":1E5,"b":1e400,"c":-0.0,"d":1.0,"e":1E-7,"f":12345678901234567890123,"g":-1e-400},"_meta":{"x":1E5}}"#
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn the_text_block_of_structured_content_is_its_original_text() {
        let (out, notes) = shaped(
            Forwarded::ToolsCall,
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"n":1E5}}"#,
        );
        assert_eq!(
            out,
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"{\"n\":1E5}"}],"structuredContent":{"n":1E5}}"#
        );
        assert_eq!(notes.len(), 1);
        let (out, _) = shaped(Forwarded::ToolsCall, r#"{"structuredContent":[1E5]}"#);
        assert_eq!(out, r#"{"content":[{"type":"text","text":"[1E5]"}]}"#);
    }

    #[test]
    fn a_content_that_is_not_an_array_is_unusable_and_a_null_one_becomes_empty() {
        let (out, _) = shaped(Forwarded::ToolsCall, r#"{"content":7,"isError":false}"#);
        assert_eq!(
            out,
            "unusable: tools/call: the result's content is a number, not an array"
        );
        let (out, _) = shaped(
            Forwarded::ToolsCall,
            r#"{"content":"notalist","structuredContent":{"a":1}}"#,
        );
        assert_eq!(
            out,
            "unusable: tools/call: the result's content is a string, not an array"
        );
        let (out, _) = shaped(Forwarded::ToolsCall, r#"{"content":{"type":"text"}}"#);
        assert_eq!(
            out,
            "unusable: tools/call: the result's content is an object, not an array"
        );
        let (out, notes) = shaped(Forwarded::ToolsCall, r#"{"content":null,"isError":true}"#);
        assert_eq!(out, r#"{"content":[],"isError":true}"#);
        assert_eq!(notes, ["tools/call: a null content became []"]);
        let (out, _) = shaped(
            Forwarded::ToolsCall,
            r#"{"content":null,"structuredContent":{"a":1}}"#,
        );
        assert_eq!(
            out,
            r#"{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}"#
        );
        // Only a tools/call result has the rule.
        let (out, _) = shaped(Forwarded::PromptsGet, r#"{"content":"x","messages":[]}"#);
        assert_eq!(out, r#"{"content":"x","messages":[]}"#);
    }

    #[test]
    fn an_unchanged_list_item_keeps_its_text_and_a_repaired_one_is_rebuilt() {
        let (out, notes) = shaped(
            Forwarded::ToolsList,
            r#"{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1E5}}}},{"name":"b","inputSchema":{"type":"object","properties":null,"x":1E5}}],"nextCursor":5}"#,
        );
        assert_eq!(
            out,
            r#"{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1E5}}}},{"name":"b","inputSchema":{"type":"object","properties":{},"x":1E5}}]}"#
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
    }

    #[test]
    fn a_hidden_list_item_is_left_out_and_the_others_keep_their_text_and_order() {
        let deny = ["b*".to_string()];
        let tools =
            super::super::item_filter::Globs::new(("--allow-tool", &[]), ("--deny-tool", &deny))
                .unwrap_or_else(|e| panic!("{e}"));
        let filter = ItemFilter::new(tools, None, None);
        let text = r#"{"tools":[{"name":"a","inputSchema":{"type":"object","x":1E5}},{"name":"b1","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object","properties":null}},{"name":"b2","inputSchema":{"type":"object"}}],"nextCursor":"p2"}"#;
        let r = raw::response(
            Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#)),
            200,
        )
        .map(|(_, r)| r);
        let Some(members) = r.and_then(|r| ResultMembers::read(r).ok()) else {
            panic!("no result");
        };
        let mut notes = Vec::new();
        let out = shape_result(Forwarded::ToolsList, members, filter.as_ref(), &mut notes)
            .map(|p| String::from_utf8(p.to_vec()).unwrap_or_default());
        assert_eq!(
            out,
            Ok(r#"{"tools":[{"name":"a","inputSchema":{"type":"object","x":1E5}},{"name":"c","inputSchema":{"type":"object","properties":{}}}],"nextCursor":"p2"}"#.to_string())
        );
        let texts: Vec<&str> = notes.iter().map(|n| n.text.as_str()).collect();
        assert!(
            texts.contains(&"tools/list: 2 hidden by the filter options"),
            "{texts:?}"
        );
    }

    #[test]
    fn result_type_is_read_from_the_members() {
        let rt = |t: &str| {
            raw::members(&RawJson::from_value(
                &serde_json::from_str(t).unwrap_or_default(),
            ))
            .map(|m| ResultMembers(m).result_type())
        };
        assert_eq!(rt("{}"), Some(ResultType::Complete));
        assert_eq!(
            rt(r#"{"resultType":"complete"}"#),
            Some(ResultType::Complete)
        );
        assert_eq!(
            rt(r#"{"resultType":"input_required"}"#),
            Some(ResultType::InputRequired)
        );
        assert_eq!(rt(r#"{"resultType":5}"#), Some(ResultType::Unknown));
    }
}
