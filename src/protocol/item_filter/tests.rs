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
    let unknown_prompt =
        ErrorObject::invalid_params("Unknown prompt: secret").with_data(json!({"name": "secret"}));
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
