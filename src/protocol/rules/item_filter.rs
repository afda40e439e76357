//! The item filter of `--allow-tool`/`--deny-tool`, `--allow-prompt`/`--deny-prompt` and
//! `--allow-resource`/`--deny-resource`: which tools, prompts and resources the editor sees.
//! It owns the glob sets, the decision, the filtering of a list result's items and the answer
//! to a request that names a hidden item; the actors only hand it what they read. No I/O.
//!
//! The rule, for each kind: an item is shown when no deny glob matches its key and, when
//! allow globs are given, one of them matches it (deny wins over allow). The key is a tool's
//! or a prompt's `name`, a resource's `uri`, and a resource template's `uriTemplate` text (so
//! `--deny-resource 'file:///secret/*'` hides the template `file:///secret/{name}` too, and
//! every URI read through it).
//!
//! A hidden item is absent from its list, in place (the others keep their order; a page keeps
//! its `nextCursor`, so it may come out shorter or empty), and a request that names it gets
//! what a server that lacks it answers (2025-11-25 server/tools, server/prompts and
//! server/resources, "Error Handling"): it is never sent upstream.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::{Value, json};
use std::borrow::Cow;

use super::list_items::ItemKind;
use crate::protocol::revisions::errors::{ErrorCode, ErrorObject};
use crate::protocol::revisions::legacy::{self, Forwarded, RequestClass};
use crate::protocol::wire::raw::{self, Object, RawJson};

/// A glob that does not parse, or a set of them that does not build: the option, the glob as
/// given (control characters as spaces) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid glob '{glob}' for {option}: {reason}")]
pub struct GlobError {
    /// The option that gave it (`--allow-tool`, ...).
    pub option: &'static str,
    /// The glob as given.
    pub glob: String,
    /// What is wrong.
    pub reason: GlobSyntax,
}

/// Why one glob does not parse, or a set of them does not build, in globset's words
/// (`unclosed character class; missing ']'`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GlobSyntax(pub globset::ErrorKind);

/// One glob of the filter's syntax: `*` any text (also `/`), `?` one character, `[abc]`,
/// `[!abc]`, `[a-z]`, `{a,b}`, `\` before a character matches it literally; case-sensitive,
/// the whole key must match. The same syntax on every system (globset would read `\` as a
/// path separator on Windows). Errors: the reason, in globset's words.
fn glob(text: &str) -> Result<globset::Glob, GlobSyntax> {
    GlobBuilder::new(text)
        .literal_separator(false)
        .backslash_escape(true)
        .case_insensitive(false)
        .build()
        .map_err(|e| GlobSyntax(e.kind().clone()))
}

/// Checks one glob as the command line gives it: `Ok` with the glob unchanged, or the reason
/// (for clap's `invalid value '<glob>' for '<option>': <reason>`).
pub fn check_glob(text: &str) -> Result<String, GlobSyntax> {
    glob(text).map(|_| text.to_string())
}

/// The allow and deny globs of one kind of item.
#[derive(Clone, Debug)]
pub struct Globs {
    /// `None`: no allow glob given, every item not denied is shown.
    allow: Option<GlobSet>,
    deny: GlobSet,
}

impl Globs {
    /// The globs of one kind (`allow_option`, `deny_option` name them in errors); `None` when
    /// neither list has one (the kind is not filtered). Errors: [`GlobError`].
    pub fn new(
        (allow_option, allow): (&'static str, &[String]),
        (deny_option, deny): (&'static str, &[String]),
    ) -> Result<Option<Globs>, GlobError> {
        if allow.is_empty() && deny.is_empty() {
            return Ok(None);
        }
        let set = |option: &'static str, globs: &[String]| -> Result<GlobSet, GlobError> {
            let error = |glob: &str, reason: GlobSyntax| GlobError {
                option,
                glob: crate::protocol::wire::excerpt::sanitize(glob),
                reason,
            };
            let mut b = GlobSetBuilder::new();
            for g in globs {
                b.add(glob(g).map_err(|reason| error(g, reason))?);
            }
            b.build()
                .map_err(|e| error(&globs.join(" "), GlobSyntax(e.kind().clone())))
        };
        Ok(Some(Globs {
            allow: match allow.is_empty() {
                true => None,
                false => Some(set(allow_option, allow)?),
            },
            deny: set(deny_option, deny)?,
        }))
    }

    /// Whether the item with this key is shown: no deny glob matches it, and an allow glob
    /// does when there are any. An item without a key (`None`) matches no glob.
    pub fn admits(&self, key: Option<&str>) -> bool {
        match key {
            Some(key) => {
                !self.deny.is_match(key) && self.allow.as_ref().is_none_or(|a| a.is_match(key))
            }
            None => self.allow.is_none(),
        }
    }
}

/// The filter of every kind: tools, prompts, resources (with their templates).
#[derive(Clone, Debug)]
pub struct ItemFilter {
    pub tools: Option<Globs>,
    pub prompts: Option<Globs>,
    pub resources: Option<Globs>,
}

/// The member of an item that the filter reads: `name`, `uri` or `uriTemplate`.
pub fn key_member(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool | ItemKind::Prompt => "name",
        ItemKind::Resource => "uri",
        ItemKind::ResourceTemplate => "uriTemplate",
    }
}

/// What a request names, for the filter: the kind and the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named<'a> {
    pub kind: ItemKind,
    pub key: Cow<'a, str>,
}

impl ItemFilter {
    /// The filter of these globs; `None` when no kind has any (the bridge then does no work
    /// for it: no list is read, no request is looked at).
    pub fn new(
        tools: Option<Globs>,
        prompts: Option<Globs>,
        resources: Option<Globs>,
    ) -> Option<ItemFilter> {
        if tools.is_none() && prompts.is_none() && resources.is_none() {
            return None;
        }
        Some(ItemFilter {
            tools,
            prompts,
            resources,
        })
    }

    /// The globs of a kind; a resource template is filtered with the resources.
    pub fn globs(&self, kind: ItemKind) -> Option<&Globs> {
        match kind {
            ItemKind::Tool => self.tools.as_ref(),
            ItemKind::Prompt => self.prompts.as_ref(),
            ItemKind::Resource | ItemKind::ResourceTemplate => self.resources.as_ref(),
        }
    }

    /// The kind of items of a list method's result that this filter reads, `None` when the
    /// method is no list or its kind is not filtered.
    pub fn list_kind(&self, method: Forwarded) -> Option<ItemKind> {
        ItemKind::of(method).filter(|k| self.globs(*k).is_some())
    }

    /// Whether a list item of `kind` is shown (an item of a kind without globs always is).
    pub fn admits_item(&self, kind: ItemKind, item: &Value) -> bool {
        self.globs(kind)
            .is_none_or(|g| g.admits(item.get(key_member(kind)).and_then(Value::as_str)))
    }

    /// Removes the hidden items of a list result (a value: the pass-through path) in place,
    /// the others in their order; every other member (`nextCursor` too) stays. Gives how many
    /// it removed. A result without an array under [`ItemKind::member`] is left as it is.
    pub fn filter_result(&self, kind: ItemKind, result: &mut Value) -> usize {
        let Some(Value::Array(items)) = result.get_mut(kind.member()) else {
            return 0;
        };
        let before = items.len();
        items.retain(|item| self.admits_item(kind, item));
        before - items.len()
    }

    /// The answer to a request that names a hidden item (`tools/call`, `prompts/get`,
    /// `completion/complete` of a prompt, `resources/read`), `None` when the request may go
    /// on. A request that names nothing the filter reads (no string `name`, `uri`) goes on:
    /// the server answers it.
    pub fn refusal(&self, named: Option<Named<'_>>) -> Option<ErrorObject> {
        let named = named?;
        if self
            .globs(named.kind)
            .is_none_or(|g| g.admits(Some(&named.key)))
        {
            return None;
        }
        Some(unknown(named.kind, &named.key))
    }

    /// [`ItemFilter::refusal`] of a forwarded request read raw (the translating path).
    pub fn refusal_raw(
        &self,
        method: Forwarded,
        params: Option<&raw::Params>,
    ) -> Option<ErrorObject> {
        let Some(raw::Params::Object(params)) = params else {
            return None;
        };
        self.refusal(named_raw(method, params))
    }

    /// [`ItemFilter::refusal`] of a request read into a value (the pass-through path).
    pub fn refusal_value(&self, method: &str, params: Option<&Value>) -> Option<ErrorObject> {
        let RequestClass::Forward(f) = legacy::classify_request(method) else {
            return None;
        };
        self.refusal(named_value(f, params?))
    }
}

/// What a server that lacks the item answers: the 2025-11-25 spec's `-32602 Unknown tool:
/// <name>` (server/tools, "Error Handling"), the same for a prompt (server/prompts: an invalid
/// prompt name is -32602), and `-32002 Resource not found` with `data.uri`
/// (server/resources); `data` as the crate's server API gives it through the bridge
/// (`{"name": ...}`, `{"uri": ...}`), so a hidden item cannot be told from a missing one.
pub fn unknown(kind: ItemKind, key: &str) -> ErrorObject {
    match kind {
        ItemKind::Tool => ErrorObject::invalid_params(format!("Unknown tool: {key}"))
            .with_data(json!({ "name": key })),
        ItemKind::Prompt => ErrorObject::invalid_params(format!("Unknown prompt: {key}"))
            .with_data(json!({ "name": key })),
        ItemKind::Resource | ItemKind::ResourceTemplate => {
            ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found")
                .with_data(json!({ "uri": key }))
        }
    }
}

/// The kind and the member of a request that names one item, and for `completion/complete`
/// whether its `ref` names a prompt.
fn target(method: Forwarded) -> Option<(ItemKind, &'static str)> {
    match method {
        Forwarded::ToolsCall => Some((ItemKind::Tool, "name")),
        Forwarded::PromptsGet => Some((ItemKind::Prompt, "name")),
        Forwarded::ResourcesRead => Some((ItemKind::Resource, "uri")),
        _ => None,
    }
}

/// The completion reference of a prompt (2025-11-25 `PromptReference`).
const PROMPT_REF: &str = "ref/prompt";

/// What a forwarded request read raw names.
fn named_raw<'a>(method: Forwarded, params: &'a Object) -> Option<Named<'a>> {
    let string = |r: &'a RawJson| r.to_str();
    if method == Forwarded::CompletionComplete {
        let reference = raw::members(params.get("ref")?)?;
        if raw::member(&reference, "type")?.to_str()?.as_ref() != PROMPT_REF {
            return None;
        }
        let name = raw::member(&reference, "name")?.to_str()?.into_owned();
        return Some(Named {
            kind: ItemKind::Prompt,
            key: Cow::Owned(name),
        });
    }
    let (kind, member) = target(method)?;
    Some(Named {
        kind,
        key: string(params.get(member)?)?,
    })
}

/// What a request read into a value names.
fn named_value(method: Forwarded, params: &Value) -> Option<Named<'_>> {
    if method == Forwarded::CompletionComplete {
        let reference = params.get("ref")?;
        if reference.get("type")?.as_str()? != PROMPT_REF {
            return None;
        }
        return Some(Named {
            kind: ItemKind::Prompt,
            key: Cow::Borrowed(reference.get("name")?.as_str()?),
        });
    }
    let (kind, member) = target(method)?;
    Some(Named {
        kind,
        key: Cow::Borrowed(params.get(member)?.as_str()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use serde_json::json;

    fn strings(globs: &[&str]) -> Vec<String> {
        globs.iter().map(|g| g.to_string()).collect()
    }

    fn globs(allow: &[&str], deny: &[&str]) -> Option<Globs> {
        Globs::new(
            ("--allow-tool", &strings(allow)),
            ("--deny-tool", &strings(deny)),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn tools(allow: &[&str], deny: &[&str]) -> ItemFilter {
        ItemFilter::new(globs(allow, deny), None, None).unwrap_or_else(|| panic!("no filter"))
    }

    #[test]
    fn deny_wins_over_allow_and_no_allow_glob_allows_every_item() {
        let table: &[(&[&str], &[&str], &str, bool)] = &[
            // Allow only: what no allow glob matches is hidden.
            (&["read_*", "list_*"], &[], "read_file", true),
            (&["read_*", "list_*"], &[], "list_dir", true),
            (&["read_*", "list_*"], &[], "delete_file", false),
            (&["read_*"], &[], "xread_file", false),
            // Deny only: everything else is shown.
            (&[], &["delete_*"], "delete_file", false),
            (&[], &["delete_*"], "read_file", true),
            // Both: deny wins.
            (&["*_file"], &["delete_*"], "delete_file", false),
            (&["*_file"], &["delete_*"], "read_file", true),
            (&["*_file"], &["delete_*"], "read_dir", false),
            // The syntax: ?, classes, alternatives, escapes; case-sensitive; whole key.
            (&["get?"], &[], "get1", true),
            (&["get?"], &[], "get12", false),
            (&["[rl]*"], &[], "list", true),
            (&["[!rl]*"], &[], "list", false),
            (&["{read,list}_*"], &[], "list_x", true),
            (&["{read,list}_*"], &[], "write_x", false),
            (&["a\\*"], &[], "a*", true),
            (&["a\\*"], &[], "ab", false),
            (&["Read*"], &[], "read", false),
            (&["read"], &[], "read_more", false),
            // `*` matches `/` too (URIs, names with slashes), and `**` is `*`.
            (&["file:///pub/*"], &[], "file:///pub/a/b.txt", true),
            (&["a**b"], &[], "a/x/b", true),
            (&["*"], &[], "", true),
        ];
        for (allow, deny, name, shown) in table {
            let g = globs(allow, deny).unwrap_or_else(|| panic!("globs"));
            assert_eq!(g.admits(Some(name)), *shown, "{allow:?} {deny:?} {name:?}");
        }
    }

    #[test]
    fn an_item_without_a_key_matches_no_glob() {
        assert!(globs(&[], &["*"]).is_some_and(|g| g.admits(None)));
        assert!(globs(&["*"], &[]).is_some_and(|g| !g.admits(None)));
    }

    #[test]
    fn no_glob_is_no_filter() {
        assert!(globs(&[], &[]).is_none());
        assert!(ItemFilter::new(None, None, None).is_none());
    }

    #[test]
    fn an_invalid_glob_is_named_with_its_option_and_the_reason() {
        assert_eq!(check_glob("read_*"), Ok("read_*".to_string()));
        let reason = |g| check_glob(g).map_err(|e| e.to_string());
        assert_eq!(
            check_glob("read_["),
            Err(GlobSyntax(globset::ErrorKind::UnclosedClass))
        );
        assert_eq!(
            reason("read_["),
            Err("unclosed character class; missing ']'".to_string())
        );
        assert_eq!(
            reason("{a,b"),
            Err("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)".to_string())
        );
        assert_eq!(reason("a\\"), Err("dangling '\\'".to_string()));
        let e = Globs::new(
            ("--allow-prompt", &strings(&["ok"])),
            ("--deny-prompt", &strings(&["[z-a]"])),
        )
        .err();
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some("invalid glob '[z-a]' for --deny-prompt: invalid range; 'z' > 'a'")
        );
    }

    #[test]
    fn a_list_keeps_the_order_of_the_shown_items_and_its_cursor() {
        let f = tools(&[], &["b*"]);
        let mut result = json!({
            "tools": [{"name": "a"}, {"name": "b1"}, {"name": "c"}, {"name": "b2"}, {"name": "d"}],
            "nextCursor": "p2",
        });
        assert_eq!(f.filter_result(ItemKind::Tool, &mut result), 2);
        assert_eq!(
            result,
            json!({"tools": [{"name": "a"}, {"name": "c"}, {"name": "d"}], "nextCursor": "p2"})
        );
        // A page whose items are all hidden is an empty page with its cursor.
        let mut page = json!({"tools": [{"name": "b3"}], "nextCursor": "p3"});
        assert_eq!(f.filter_result(ItemKind::Tool, &mut page), 1);
        assert_eq!(page, json!({"tools": [], "nextCursor": "p3"}));
        // Not a list: left alone; another kind: not filtered.
        let mut odd = json!({"tools": {"name": "b"}});
        assert_eq!(f.filter_result(ItemKind::Tool, &mut odd), 0);
        assert_eq!(odd, json!({"tools": {"name": "b"}}));
        let mut prompts = json!({"prompts": [{"name": "b"}]});
        assert_eq!(f.filter_result(ItemKind::Prompt, &mut prompts), 0);
        assert_eq!(f.list_kind(Forwarded::PromptsList), None);
        assert_eq!(f.list_kind(Forwarded::ToolsList), Some(ItemKind::Tool));
        assert_eq!(f.list_kind(Forwarded::ToolsCall), None);
    }

    #[test]
    fn resources_are_filtered_by_uri_and_templates_by_their_uri_template() {
        let resources = Globs::new(
            ("--allow-resource", &[]),
            ("--deny-resource", &strings(&["file:///secret/*"])),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let f = ItemFilter::new(None, None, resources).unwrap_or_else(|| panic!("no filter"));
        let mut list = json!({"resources": [
            {"uri": "file:///secret/key", "name": "key"},
            {"uri": "file:///pub/readme", "name": "readme"},
        ]});
        f.filter_result(ItemKind::Resource, &mut list);
        assert_eq!(
            list,
            json!({"resources": [{"uri": "file:///pub/readme", "name": "readme"}]})
        );
        let mut templates = json!({"resourceTemplates": [
            {"uriTemplate": "file:///secret/{name}", "name": "secret"},
            {"uriTemplate": "file:///pub/{name}", "name": "pub"},
        ]});
        f.filter_result(ItemKind::ResourceTemplate, &mut templates);
        assert_eq!(
            templates,
            json!({"resourceTemplates": [{"uriTemplate": "file:///pub/{name}", "name": "pub"}]})
        );
        assert_eq!(
            f.refusal_value(
                "resources/read",
                Some(&json!({"uri": "file:///secret/key"}))
            ),
            Some(
                ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found")
                    .with_data(json!({"uri": "file:///secret/key"}))
            )
        );
        assert_eq!(
            f.refusal_value("resources/read", Some(&json!({"uri": "file:///pub/x"}))),
            None
        );
    }

    /// The params of a request read raw, as the Frontend reads a forwarded request.
    fn raw_params(params: &str) -> Option<raw::Params> {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{params}}}"#);
        raw::request(Bytes::from(line), 64).and_then(|(_, _, p)| p)
    }

    #[test]
    fn a_request_that_names_a_hidden_item_gets_the_answer_of_a_missing_one() {
        let prompts = Globs::new(
            ("--allow-prompt", &strings(&["greet"])),
            ("--deny-prompt", &[]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let f = ItemFilter::new(globs(&[], &["delete_*"]), prompts, None)
            .unwrap_or_else(|| panic!("no filter"));
        let unknown_tool = ErrorObject::invalid_params("Unknown tool: delete_all")
            .with_data(json!({"name": "delete_all"}));
        let unknown_prompt = ErrorObject::invalid_params("Unknown prompt: secret")
            .with_data(json!({"name": "secret"}));
        let table: &[(Forwarded, &str, Option<&ErrorObject>)] = &[
            (
                Forwarded::ToolsCall,
                r#"{"name":"delete_all","arguments":{}}"#,
                Some(&unknown_tool),
            ),
            // Escapes are read as the server reads them.
            (
                Forwarded::ToolsCall,
                r#"{"name":"delete\u005fall"}"#,
                Some(&unknown_tool),
            ),
            (
                Forwarded::ToolsCall,
                r#"{"name":"read","arguments":{}}"#,
                None,
            ),
            // No string name: the server answers.
            (Forwarded::ToolsCall, r#"{"name":5}"#, None),
            (Forwarded::ToolsCall, r#"{}"#, None),
            (
                Forwarded::PromptsGet,
                r#"{"name":"secret"}"#,
                Some(&unknown_prompt),
            ),
            (Forwarded::PromptsGet, r#"{"name":"greet"}"#, None),
            (
                Forwarded::CompletionComplete,
                r#"{"ref":{"type":"ref/prompt","name":"secret"},"argument":{"name":"a","value":"b"}}"#,
                Some(&unknown_prompt),
            ),
            (
                Forwarded::CompletionComplete,
                r#"{"ref":{"type":"ref/resource","uri":"secret"},"argument":{"name":"a","value":"b"}}"#,
                None,
            ),
            (Forwarded::ToolsList, r#"{"name":"delete_all"}"#, None),
            // Resources are not filtered here.
            (Forwarded::ResourcesRead, r#"{"uri":"delete_all"}"#, None),
        ];
        for (method, params, want) in table {
            let raw = raw_params(params);
            assert_eq!(
                f.refusal_raw(*method, raw.as_ref()).as_ref(),
                *want,
                "raw {method:?} {params}"
            );
            let value: Value = serde_json::from_str(params).unwrap_or_default();
            assert_eq!(
                f.refusal_value(method.method(), Some(&value)).as_ref(),
                *want,
                "value {method:?} {params}"
            );
        }
        assert_eq!(f.refusal_value("tools/call", None), None);
        assert_eq!(f.refusal_raw(Forwarded::ToolsCall, None), None);
        assert_eq!(
            f.refusal_value("ping", Some(&json!({"name": "delete_all"}))),
            None
        );
    }

    #[test]
    fn list_items_are_shown_by_their_key() {
        let f = tools(&["a*"], &[]);
        assert!(f.admits_item(ItemKind::Tool, &json!({"name": "ab"})));
        assert!(!f.admits_item(ItemKind::Tool, &json!({"name": "b"})));
        assert!(!f.admits_item(ItemKind::Tool, &json!({"title": "a"})));
        // A kind without globs shows everything.
        assert!(f.admits_item(ItemKind::Prompt, &json!({"name": "b"})));
    }
}
