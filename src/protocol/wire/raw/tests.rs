use super::*;
use serde_json::json;

fn raw(text: &str) -> RawJson {
    RawJson(Bytes::copy_from_slice(text.as_bytes()))
}

#[test]
fn members_keep_their_text_order_and_the_last_of_a_repeated_key() {
    let m = members(&raw(
        r#"{"a":1E5,"b" : [1e400, -0.0] ,"a":{"x":1.0},"c":"\u0041"}"#,
    ))
    .unwrap_or_default();
    let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        got,
        [
            ("a", r#"{"x":1.0}"#),
            ("b", "[1e400, -0.0]"),
            ("c", r#""\u0041""#)
        ]
    );
    assert_eq!(m[2].1.to_str().as_deref(), Some("A"));
    assert!(members(&raw("[1]")).is_none());
    assert!(members(&raw(r#"{"a":}"#)).is_none());
    assert!(members(&raw(r#"{"a":1} x"#)).is_none());
}

#[test]
fn a_repeated_key_among_many_members_is_found_through_the_index() {
    let text = format!(
        "{{{},\"k3\":\"last\"}}",
        (0..20)
            .map(|i| format!("\"k{i}\":{i}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let m = members(&raw(&text)).unwrap_or_default();
    assert_eq!(m.len(), 20);
    assert_eq!(m[3], ("k3".to_string(), raw("\"last\"")));
}

#[test]
fn items_are_slices_of_the_array() {
    let a = raw(r#"[ 1E5 ,{"a":-1e-400},"x"]"#);
    let got: Vec<String> = items(&a)
        .unwrap_or_default()
        .iter()
        .map(|r| r.as_str().to_string())
        .collect();
    assert_eq!(got, ["1E5", r#"{"a":-1e-400}"#, r#""x""#]);
    assert!(items(&raw("{}")).is_none());
}

#[test]
fn the_kind_of_a_value_is_named_by_its_first_byte() {
    let kinds: Vec<&str> = ["{}", "[1]", r#""x""#, "true", "false", "null", "-1", "7E5"]
        .iter()
        .map(|t| raw(t).kind())
        .collect();
    assert_eq!(
        kinds,
        [
            "an object",
            "an array",
            "a string",
            "a boolean",
            "a boolean",
            "null",
            "a number",
            "a number"
        ]
    );
    assert!(raw("null").is_null());
    assert!(!raw("0").is_null());
}

fn text(r: &RawResult) -> String {
    String::from_utf8(r.to_parts().to_vec()).unwrap_or_default()
}

#[test]
fn a_success_response_is_read_without_a_tree_and_anything_else_is_left_to_the_parser() {
    let line = |t: &str| Bytes::copy_from_slice(t.as_bytes());
    let none = || (Id::Int(0), RawResult::Other(raw("null")));
    let (id, r) =
        response(line(r#"{"jsonrpc":"2.0","id":7,"result":{"n":1E5}}"#), 200).unwrap_or_else(none);
    assert_eq!((id, text(&r)), (Id::Int(7), r#"{"n":1E5}"#.to_string()));
    for other in [
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","method":"m","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{}}"#,
        r#"{"jsonrpc":"1.0","id":7,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{}"#,
        r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#,
        r#"{"jsonrpc":"2.0","id":7,"result":[[[1]]]}"#,
        // A result that is not an object: the parser's path (whose rules refuse it).
        r#"{"jsonrpc":"2.0","id":7,"result":5}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{},"result":"x"}"#,
        // Every member is checked, an unknown one too.
        r#"{"jsonrpc":"2.0","id":7,"result":{},"x":[1,}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"a":tru}}"#,
    ] {
        assert!(response(line(other), 2).is_none(), "{other}");
    }
    // A lone surrogate becomes U+FFFD, as on the parser's path; a pair stays.
    let (_, r) = response(
        line(r#"{"jsonrpc":"2.0","id":1,"result":{"s":"a\ud83d","p":"\ud83d\ude00"}}"#),
        200,
    )
    .unwrap_or_else(none);
    assert_eq!(text(&r), r#"{"s":"a\ufffd","p":"\ud83d\ude00"}"#);
}

#[test]
fn the_envelope_and_the_result_members_are_read_in_one_pass_as_the_parser_reads_them() {
    let none = || (Id::Int(0), RawResult::Other(raw("null")));
    // A repeated member: its last value (serde_json's map), the result's too; an escaped
    // key is its text; whitespace anywhere.
    let line = Bytes::from_static(
        br#" { "result" : {"a":1} , "id":1, "jsonrpc":"2.0", "id" : 9 , "res\u0075lt" : { "b" : 1E5 , "c":[ 1 ] , "b":-0.0 } } "#,
    );
    let (id, r) = response(line.clone(), 200).unwrap_or_else(none);
    assert_eq!(id, Id::Int(9));
    let RawResult::Object(m) = &r else {
        panic!("not read as an object: {r:?}");
    };
    let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, [("b", "-0.0"), ("c", "[ 1 ]")]);
    // Each member is a slice of the line: no copy.
    let at = m[1].1.as_bytes().as_ptr() as usize - line.as_ptr() as usize;
    assert_eq!(&line[at..at + 5], b"[ 1 ]");
    assert_eq!(
        r.to_value(),
        Some(serde_json::json!({"b": serde_json::from_str::<Value>("-0.0").ok(), "c": [1]}))
    );
    // The same line through the parser: the same id and result.
    match jsonrpc::parse(&line, 200) {
        Ok(jsonrpc::Message::Response { id, result }) => {
            assert_eq!(id, Some(Id::Int(9)));
            assert_eq!(Some(result), r.to_value());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_request_is_read_without_a_tree_and_anything_else_is_left_to_the_parser() {
    let line = |t: &str| Bytes::copy_from_slice(t.as_bytes());
    let got = request(
        line(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{"n":1E5}},"params":{"arguments":{"n":2E5}}}"#,
        ),
        64,
    );
    let (id, method, params) = got.unwrap_or((Id::Int(0), String::new(), None));
    assert_eq!((id, method.as_str()), (Id::Str("a".into()), "tools/call"));
    let Some(Params::Object(params)) = params else {
        panic!("params not read as an object: {params:?}");
    };
    assert_eq!(params.to_parts().to_vec(), br#"{"arguments":{"n":2E5}}"#);
    assert!(request(line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), 64).is_some());
    for other in [
        r#"{"jsonrpc":"2.0","method":"m","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":5}"#,
        // Params that are an array: the parser's path (the forwarding rule refuses them).
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
        r#"{"id":1,"method":"m"}"#,
    ] {
        assert!(request(line(other), 64).is_none(), "{other}");
    }
    let mut o = Object::read(&raw(r#"{"a":1E5,"b":2,"c":3}"#)).unwrap_or_default();
    assert_eq!(o.remove("b"), Some(raw("2")));
    o.insert("a", raw("1e400"));
    o.insert("d", raw("-0.0"));
    assert_eq!(o.to_parts().to_vec(), br#"{"a":1e400,"c":3,"d":-0.0}"#);
    assert_eq!(o.get("c"), Some(&raw("3")));
}

/// The text is checked as UTF-8 once, as a whole: a byte that is not UTF-8 anywhere (a
/// key, a member the bridge reads, one it passes raw, an unknown envelope member, the
/// whitespace) refuses the line as the byte parser did, and the parser's path then calls
/// it a parse error.
#[test]
fn bytes_that_are_not_utf8_anywhere_refuse_the_line() {
    let with_bad_byte = |t: &str| {
        let at = t.find('~').unwrap_or(0);
        let mut b = t.as_bytes().to_vec();
        b[at] = 0xff;
        Bytes::from(b)
    };
    for t in [
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":"~"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"~":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":{"b":["~"]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"x":"~"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}~"#,
    ] {
        assert!(response(with_bad_byte(t), 200).is_none(), "{t}");
        let line = with_bad_byte(t);
        assert!(
            matches!(
                jsonrpc::parse(&line, 200),
                Err(jsonrpc::ParseError::NotJson { .. })
            ),
            "{t}"
        );
    }
    for t in [
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"~"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m~","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":"~","method":"m"}"#,
    ] {
        assert!(request(with_bad_byte(t), 64).is_none(), "{t}");
    }
    assert_eq!(members(&RawJson(with_bad_byte(r#"{"a":"~"}"#))), None);
    assert_eq!(items(&RawJson(with_bad_byte(r#"["~"]"#))), None);
    assert_eq!(RawJson(with_bad_byte(r#""~""#)).to_str(), None);
    // Valid UTF-8 beyond ASCII passes, its bytes unchanged.
    let (_, r) = response(
        Bytes::from_static(r#"{"jsonrpc":"2.0","id":1,"result":{"é":"ü€😀"}}"#.as_bytes()),
        200,
    )
    .unwrap_or((Id::Int(0), RawResult::Other(raw("null"))));
    assert_eq!(text(&r), r#"{"é":"ü€😀"}"#);
}

/// `jsonrpc` is the string `2.0` in any spelling JSON gives it; nothing else is.
#[test]
fn the_version_is_read_through_its_escapes() {
    let line = |v: &str| Bytes::from(format!(r#"{{"jsonrpc":{v},"id":1,"result":{{}}}}"#));
    for v in [
        r#""2.0""#,
        r#""\u0032.0""#,
        r#""2\u002e0""#,
        r#""2.\u0030""#,
    ] {
        assert!(response(line(v), 200).is_some(), "{v}");
    }
    for v in [
        r#""2.0 ""#,
        r#""2""#,
        "2.0",
        r#"["2.0"]"#,
        "null",
        r#""2.00""#,
    ] {
        assert!(response(line(v), 200).is_none(), "{v}");
    }
}

/// Strings are written as serde_json writes them, with or without something to escape.
#[test]
fn strings_are_written_as_serde_json_writes_them() {
    let mut rows: Vec<String> = (0..=0x7fu8).map(|b| format!("a{}b", b as char)).collect();
    rows.extend(
        [
            "",
            "tools/call",
            "é",
            "ü€😀",
            "\u{2028}",
            "\"",
            "\\",
            "a\\\"b",
            "\u{7f}",
        ]
        .map(String::from),
    );
    for s in rows {
        let mut p = FrameParts::new();
        p.push_str(&s);
        let want = serde_json::to_vec(&s).unwrap_or_default();
        assert_eq!(p.to_vec(), want, "{s:?}");
        assert_eq!(p.len(), want.len(), "{s:?}");
    }
}

#[test]
fn ids_are_read_and_written_without_a_tree_as_through_a_value() {
    for text in [
        "7",
        "-0",
        "0",
        "-12",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "1.0",
        "1e2",
        "-1.5",
        r#""a""#,
        r#""\u0041\n""#,
        r#""""#,
        "null",
        "true",
        "[1]",
        "{}",
    ] {
        let r = raw(text);
        let through_value = r.to_value().and_then(|v| Id::from_value(&v));
        assert_eq!(r.to_id(), through_value, "{text}");
        if let Some(id) = through_value {
            let mut p = FrameParts::new();
            p.push_id(&id);
            let want = serde_json::to_vec(&id.to_value()).unwrap_or_default();
            assert_eq!(p.to_vec(), want, "{text}");
        }
    }
    for s in ["", "a\"b\\c", "\u{1}\n\t", "é😀", "</script>"] {
        let mut p = FrameParts::new();
        p.push_str(s);
        let want = serde_json::to_vec(&Value::String(s.to_string())).unwrap_or_default();
        assert_eq!((p.to_vec(), p.len()), (want.clone(), want.len()), "{s}");
    }
}

#[test]
fn parts_share_long_slices_and_copy_short_ones() {
    let long = raw(&format!("\"{}\"", "x".repeat(SHARE_MIN_BYTES)));
    let mut p = FrameParts::new();
    p.push(b"[");
    p.push_raw(&raw("1E5"));
    p.push(b",");
    p.push_raw(&long);
    p.push(b"]");
    assert_eq!(p.len(), long.as_bytes().len() + 6);
    let pieces = p.clone().into_pieces();
    assert_eq!(pieces.len(), 3);
    assert_eq!(pieces[1].as_ptr(), long.as_bytes().as_ptr());
    assert_eq!(&pieces[0][..], b"[1E5,");
    let frame = response_frame(&Id::Int(3), object(vec![("a".into(), p)]));
    let text = String::from_utf8(frame.to_vec()).unwrap_or_default();
    assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":3,"result":{"a":[1E5,""#));
    assert!(text.ends_with("\"]}}\n"));
    assert_eq!(frame.len(), text.len());
    assert_eq!(
        request_frame(&Id::Int(1), "m", FrameParts::of_value(&json!({}))).to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{}}\n"
    );
}
