use super::*;

#[test]
fn each_question_becomes_one_editor_request() {
    let caps = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}});
    let ask = |request: Value| match plan("k", &request, &caps) {
        Ok(Plan::Ask(q)) => q,
        other => panic!("not asked: {other:?}"),
    };
    let url = ask(json!({"method": "elicitation/create",
        "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/a"}}));
    let schema = json!({"type": "object", "properties": {"n": {"type": "string"}}});
    let form = ask(json!({"method": "elicitation/create",
        "params": {"mode": "form", "message": "Name?", "requestedSchema": schema}}));
    let mut again = continue_question("Sign in");
    again.url = url.url.clone();
    let table = [
        (
            "b-1",
            url.clone(),
            json!({"jsonrpc": "2.0", "id": "b-1", "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/a",
                           "elicitationId": "mcp-bridge-elicitation-b-1"}}),
        ),
        (
            "b-2",
            form,
            json!({"jsonrpc": "2.0", "id": "b-2", "method": "elicitation/create",
                "params": {"mode": "form", "message": "Name?", "requestedSchema": schema}}),
        ),
        (
            "b-3",
            again,
            json!({"jsonrpc": "2.0", "id": "b-3", "method": "elicitation/create",
                "params": continue_question("Sign in").params}),
        ),
        (
            "b-4",
            ask(json!({"method": "roots/list"})),
            json!({"jsonrpc": "2.0", "id": "b-4", "method": "roots/list"}),
        ),
        (
            "b-5",
            ask(json!({"method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 5}})),
            json!({"jsonrpc": "2.0", "id": "b-5", "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 5}}),
        ),
    ];
    for (id, q, want) in table {
        let minted = format!("mcp-bridge-elicitation-{id}");
        assert_eq!(editor_request(id, &minted, &q), want, "{id}");
    }
    let accept = json!({"action": "accept"});
    assert_eq!(accepted_url(&url, &accept), Some("https://example.com/a"));
    assert_eq!(accepted_url(&url, &json!({"action": "decline"})), None);
    assert_eq!(accepted_url(&url, &json!({})), None);
    let mut again_url = continue_question("Sign in");
    again_url.url = url.url.clone();
    assert_eq!(accepted_url(&again_url, &accept), None);
    assert_eq!(
        elicitation_complete("mcp-bridge-elicitation-b-1"),
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "mcp-bridge-elicitation-b-1"}})
    );
}

fn caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}})
}

#[test]
fn input_required_results() {
    let r = json!({"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list"}}, "requestState": "s"});
    let ir = read_input_required(&r).unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(ir.input_requests.len(), 1);
    assert_eq!(ir.request_state.as_deref(), Some("s"));
    assert_eq!(
        read_input_required(&json!({"resultType": "input_required"}))
            .map(|_| ())
            .unwrap_err()
            .cause,
        Cause::InvalidInputRequest
    );
    let many: Map<String, Value> = (0..17)
        .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
        .collect();
    let f = read_input_required(&json!({"inputRequests": many})).unwrap_err();
    assert_eq!(f.cause, Cause::TooManyInputRequests);
    let sixteen: Map<String, Value> = (0..16)
        .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
        .collect();
    assert!(read_input_required(&json!({"inputRequests": sixteen})).is_ok());
}

#[test]
fn undeclared_kinds_fail_with_the_key() {
    let form = json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}});
    assert_eq!(
        plan("k1", &form, &json!({})),
        Err(InputFailure::new(Cause::UndeclaredInputRequest, "k1"))
    );
    assert!(matches!(
        plan("k1", &form, &json!({"elicitation": {}})),
        Ok(Plan::Ask(_))
    ));
    assert_eq!(
        plan("k1", &form, &json!({"elicitation": {"url": {}}})),
        Err(InputFailure::new(Cause::UndeclaredInputRequest, "k1"))
    );
    let url = json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://a.example/x"}});
    assert_eq!(
        plan("u", &url, &json!({"elicitation": {}})),
        Err(InputFailure::new(Cause::UndeclaredInputRequest, "u"))
    );
    let sampling_tools = json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5, "tools": []}});
    assert_eq!(
        plan("s", &sampling_tools, &caps()),
        Err(InputFailure::new(Cause::UndeclaredInputRequest, "s"))
    );
    assert!(matches!(
        plan("s", &sampling_tools, &json!({"sampling": {"tools": {}}})),
        Ok(Plan::Ask(_))
    ));
    assert_eq!(
        plan("r", &json!({"method": "roots/list"}), &json!({})),
        Err(InputFailure::new(Cause::UndeclaredInputRequest, "r"))
    );
    assert_eq!(
        plan("x", &json!({"method": "ping"}), &caps()),
        Err(InputFailure::new(Cause::InvalidInputRequest, "x"))
    );
}

#[test]
fn urls_are_shown_parsed_and_re_serialized() {
    use UrlRefusal::*;
    for (raw, shown) in [
        ("https://example.com/auth", Ok("https://example.com/auth")),
        ("https://EXAMPLE.com", Ok("https://example.com/")),
        (
            "https://xn--bcher-kva.example/",
            Ok("https://xn--bcher-kva.example/"),
        ),
        ("http://localhost:8080/cb", Ok("http://localhost:8080/cb")),
        ("http://LOCALHOST/cb", Ok("http://localhost/cb")),
        ("http://app.localhost/x", Ok("http://app.localhost/x")),
        ("http://127.0.0.5/x", Ok("http://127.0.0.5/x")),
        ("http://[::1]:9/x", Ok("http://[::1]:9/x")),
        // Parsers disagree on these; the editor gets what the bridge parsed.
        ("https:evil.example", Ok("https://evil.example/")),
        ("https:/evil.example/a", Ok("https://evil.example/a")),
        ("https:///evil.example/a", Ok("https://evil.example/a")),
        ("http://0x7f000001/", Ok("http://127.0.0.1/")),
        ("http://127.1/", Ok("http://127.0.0.1/")),
        ("http://2130706433:80/", Ok("http://127.0.0.1/")),
        ("http://0177.0.0.1/x", Ok("http://127.0.0.1/x")),
        (
            "https://example.com/a/../b?q=1#f",
            Ok("https://example.com/b?q=1#f"),
        ),
        // Non-ASCII outside the authority is percent-encoded, so it is shown visibly.
        (
            "https://example.com/\u{202e}gpj.exe",
            Ok("https://example.com/%E2%80%AEgpj.exe"),
        ),
        // The loopback rule applies to the parsed host.
        ("http://0x7f000001.example/", Err(NotHttpsOrLoopbackHttp)),
        ("http://0x08080808/", Err(NotHttpsOrLoopbackHttp)),
        (
            "http://localhost.evil.example/",
            Err(NotHttpsOrLoopbackHttp),
        ),
        ("http://example.com/x", Err(NotHttpsOrLoopbackHttp)),
        ("file:///etc/passwd", Err(NotHttpsOrLoopbackHttp)),
        ("javascript:alert(1)", Err(NotHttpsOrLoopbackHttp)),
        ("vscode://x", Err(NotHttpsOrLoopbackHttp)),
        ("https://trusted@evil.example/", Err(UserInfo)),
        ("https://user:pw@example.com/", Err(UserInfo)),
        ("https:trusted@evil.example", Err(UserInfo)),
        ("https://example.com\\@evil.example/", Err(Malformed)),
        ("https://exa mple.com/", Err(Malformed)),
        ("https://example.com/\n", Err(Malformed)),
        ("not a url", Err(Malformed)),
        ("https://", Err(Malformed)),
        // Invisible, bidi, format and other non-ASCII characters in the authority.
        ("https://x.example\u{200b}/", Err(HiddenCharacters)),
        ("https://x\u{200b}.example/", Err(HiddenCharacters)),
        ("https:x.example\u{200b}", Err(HiddenCharacters)),
        ("https://x.example\u{200c}/", Err(HiddenCharacters)),
        ("https://x.example\u{200d}/", Err(HiddenCharacters)),
        ("https://x.example\u{2060}/", Err(HiddenCharacters)),
        ("https://x.example\u{feff}/", Err(HiddenCharacters)),
        ("https://x.ex\u{ad}ample/", Err(HiddenCharacters)),
        ("https://\u{202e}elpmaxe.x/", Err(HiddenCharacters)),
        ("https://x.example\u{e0001}/", Err(HiddenCharacters)),
        ("https://b\u{fc}cher.example/", Err(HiddenCharacters)),
        ("https://evil\u{3002}example/", Err(HiddenCharacters)),
        ("https://\u{430}pple.com/", Err(HiddenCharacters)),
        ("https://x.example:443\u{200b}/", Err(HiddenCharacters)),
        ("https://x.example%E2%80%8B/", Err(HiddenCharacters)),
        ("https://ex%61mple.com/", Err(HiddenCharacters)),
    ] {
        let shown = shown.map(str::to_string);
        assert_eq!(shown_url(raw), shown, "{raw:?}");
        let req = json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": raw}});
        let expected = match shown {
            Ok(url) => Plan::Ask(Question {
                kind: InputKind::Url,
                method: methods::ELICITATION_CREATE,
                params: Some(json!({"mode": "url", "message": "m", "url": url})),
                schema: None,
                continue_form: false,
                url: Some(url),
            }),
            Err(why) => Plan::Decline(why),
        };
        assert_eq!(plan("k", &req, &caps()), Ok(expected), "{raw:?}");
    }
}

#[test]
fn the_raw_authority_is_what_a_whatwg_parser_reads_as_one() {
    for (raw, authority) in [
        ("https://a.example:1/p?q#f", "a.example:1"),
        ("https:a.example", "a.example"),
        ("https:///a.example/x", "a.example"),
        ("https://a.example?x", "a.example"),
        ("https://a.example#x", "a.example"),
        ("no colon", ""),
    ] {
        assert_eq!(raw_authority(raw), authority, "{raw:?}");
    }
}

#[test]
fn a_form_without_properties_becomes_a_continue_form() {
    let req = json!({"method": "elicitation/create", "params": {"message": "Proceed?", "requestedSchema": {"type": "object", "properties": {}}}});
    let Ok(Plan::Ask(q)) = plan("c", &req, &caps()) else {
        panic!("expected a question")
    };
    assert!(q.continue_form);
    assert_eq!(
        q.params.as_ref().map(|p| p["message"].clone()),
        Some(json!("Proceed?"))
    );
    let accepted = check_answer(
        &q,
        &InputAnswer::Result(json!({"action": "accept", "content": {"choice": "Continue"}})),
    );
    assert_eq!(accepted, Ok(json!({"action": "accept", "content": {}})));
}

#[cfg(not(feature = "schema-check"))]
#[test]
fn without_schema_check_accepted_content_passes_unchecked() {
    let form = json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {
        "type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}}});
    let Ok(Plan::Ask(q)) = plan("f", &form, &caps()) else {
        panic!()
    };
    let wrong = json!({"action": "accept", "content": {"age": "x"}});
    assert_eq!(
        check_answer(&q, &InputAnswer::Result(wrong.clone())),
        Ok(wrong)
    );
}

/// The accepted content against the requestedSchema (feature `schema-check`).
#[cfg(feature = "schema-check")]
#[test]
fn answers_are_checked() {
    let form = json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {
        "type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}}});
    let Ok(Plan::Ask(q)) = plan("f", &form, &caps()) else {
        panic!()
    };
    assert_eq!(
        check_answer(
            &q,
            &InputAnswer::Result(json!({"action": "accept", "content": {"age": 3}}))
        ),
        Ok(json!({"action": "accept", "content": {"age": 3}}))
    );
    assert_eq!(
        check_answer(
            &q,
            &InputAnswer::Result(json!({"action": "accept", "content": {"age": "x"}}))
        ),
        Err(AnswerFailure::Invalid)
    );
    assert_eq!(
        check_answer(
            &q,
            &InputAnswer::Result(json!({"action": "accept", "content": {}}))
        ),
        Err(AnswerFailure::Invalid)
    );
    assert_eq!(
        check_answer(
            &q,
            &InputAnswer::Result(json!({"action": "decline", "content": {"age": 1}}))
        ),
        Ok(json!({"action": "decline"}))
    );
    assert_eq!(
        check_answer(&q, &InputAnswer::Result(json!({"action": "maybe"}))),
        Err(AnswerFailure::Invalid)
    );
    assert_eq!(
        check_answer(
            &q,
            &InputAnswer::Error(json!({"code": -1, "message": "no"}))
        ),
        Ok(json!({"action": "cancel"}))
    );
    assert_eq!(
        check_answer(&q, &InputAnswer::Invalid),
        Err(AnswerFailure::Invalid)
    );

    let Ok(Plan::Ask(roots)) = plan("r", &json!({"method": "roots/list"}), &caps()) else {
        panic!()
    };
    assert_eq!(
        check_answer(
            &roots,
            &InputAnswer::Result(
                json!({"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "https://b"}]})
            )
        ),
        Ok(json!({"roots": [{"uri": "file:///a", "name": "a"}]}))
    );
    let err = json!({"code": -32000, "message": "refused"});
    assert_eq!(
        check_answer(&roots, &InputAnswer::Error(err.clone())),
        Err(AnswerFailure::EditorError(err))
    );

    let s = json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}});
    let Ok(Plan::Ask(sq)) = plan("s", &s, &caps()) else {
        panic!()
    };
    assert_eq!(
        check_answer(
            &sq,
            &InputAnswer::Result(
                json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "_meta": {}})
            )
        ),
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}))
    );
    assert_eq!(
        check_answer(&sq, &InputAnswer::Result(json!({"role": "assistant"}))),
        Err(AnswerFailure::Invalid)
    );
    let no_text = json!({"role": "assistant", "content": {"type": "text"}, "model": "m"});
    assert_eq!(
        check_answer(&sq, &InputAnswer::Result(no_text)),
        Err(AnswerFailure::Invalid)
    );
    let image = json!({"role": "assistant", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "model": "m"});
    assert!(check_answer(&sq, &InputAnswer::Result(image)).is_ok());
}

#[test]
fn the_retry_carries_the_answers_and_the_state_unchanged() {
    let original = Object::from_value(
        &json!({"name": "t", "arguments": {"n": 1E5}, "_meta": {"progressToken": "bp-1"}}),
    )
    .unwrap_or_default();
    let mut r = Map::new();
    r.insert("k".into(), json!({"action": "accept", "content": {"a": 1}}));
    let state = "opaque \"state\" \u{1F600}";
    assert_eq!(
        retry_params(&original, r, Some(state), true)
            .to_value()
            .unwrap_or_default(),
        json!({"name": "t", "arguments": {"n": 1E5}, "_meta": {"progressToken": "bp-1"},
               "inputResponses": {"k": {"action": "accept", "content": {"a": 1}}}, "requestState": state})
    );
    assert_eq!(
        retry_params(&original, Map::new(), Some("s"), false)
            .to_value()
            .unwrap_or_default()["inputResponses"],
        Value::Null
    );
}
