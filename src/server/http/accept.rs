//! What a request's `Accept` takes (RFC 9110 §12.5.1): the media ranges of its values, each
//! with its quality.

use super::{HeaderMap, header};

/// `application/json`, the media type of a JSON answer.
pub(super) const JSON: &str = "application/json";
/// `text/event-stream`, the media type of an SSE answer.
pub(super) const SSE: &str = "text/event-stream";

/// The quality of a qvalue `1`: qualities are in thousandths (RFC 9110 §12.4.2: at most three
/// decimals), so no float is parsed.
pub(super) const FULL_QUALITY: u16 = 1000;

/// The quality (in thousandths) that `accept` (the values of a request's `Accept` fields, each a list of media
/// ranges) gives `media` (`type/subtype`): that of the most specific range that matches it
/// (`type/subtype` before `type/*` before `*/*`; the highest among equals), 0 when none does.
/// A range without `q` has quality [`FULL_QUALITY`]; `q=0` means "not acceptable" (RFC 9110 §12.4.2,
/// §12.5.1). Names compare without regard to case; a range whose `q` is no qvalue is ignored.
pub(super) fn quality<'a>(accept: impl IntoIterator<Item = &'a str>, media: &str) -> u16 {
    let (kind, subtype) = media.split_once('/').unwrap_or((media, ""));
    let mut best: Option<(u8, u16)> = None;
    for range in accept
        .into_iter()
        .flat_map(|value| split_unquoted(value, b','))
    {
        let mut parts = split_unquoted(range, b';');
        let name = parts.next().unwrap_or_default().trim();
        let Some((range_kind, range_subtype)) = name.split_once('/') else {
            continue;
        };
        let specificity = match (range_kind.trim(), range_subtype.trim()) {
            ("*", "*") => 1,
            (k, "*") if k.eq_ignore_ascii_case(kind) => 2,
            (k, s) if k.eq_ignore_ascii_case(kind) && s.eq_ignore_ascii_case(subtype) => 3,
            _ => continue,
        };
        let mut q = Some(FULL_QUALITY);
        for param in parts {
            if let Some((key, value)) = param.split_once('=')
                && key.trim().eq_ignore_ascii_case("q")
            {
                q = qvalue(value.trim());
            }
        }
        let Some(q) = q else { continue };
        best = match best {
            Some((s, b)) if s > specificity || (s == specificity && b >= q) => Some((s, b)),
            _ => Some((specificity, q)),
        };
    }
    best.map_or(0, |(_, q)| q)
}

/// `text` split at each `separator` outside a quoted string (RFC 9110 §5.6.4: a parameter's
/// value may be a quoted string, with `\` escapes, and a comma or semicolon in it separates
/// nothing).
fn split_unquoted(text: &str, separator: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        let (mut quoted, mut escaped) = (false, false);
        for (at, byte) in text.bytes().enumerate() {
            match byte {
                _ if escaped => escaped = false,
                b'\\' if quoted => escaped = true,
                b'"' => quoted = !quoted,
                b if b == separator && !quoted => {
                    rest = text.get(at + 1..);
                    return text.get(..at);
                }
                _ => {}
            }
        }
        rest = None;
        Some(text)
    })
}

/// Whether the `Accept` fields of `headers` name no valid media range: none, only empty
/// ones (`Accept:` with nothing, or only commas), or only members that are no media range
/// (`;;;`, `json`: no `type/subtype`; a `q` that is no qvalue, RFC 9110 §12.4.2; a value
/// that is not header text). RFC 9110 §12.5.1: without the field any media type is
/// acceptable; a field that lists nothing valid makes no answer acceptable, and the section
/// lets a server disregard it rather than answer 406. It is served as no field.
fn names_no_range(headers: &HeaderMap) -> bool {
    !headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| split_unquoted(value, b','))
        .any(is_media_range)
}

/// Whether `member` (one member of an `Accept` list) is a media range: `type/subtype`, each
/// part not empty, with a `q` parameter, if any, that is a qvalue.
fn is_media_range(member: &str) -> bool {
    let mut parts = split_unquoted(member, b';');
    let name = parts.next().unwrap_or_default().trim();
    let named = name
        .split_once('/')
        .is_some_and(|(kind, subtype)| !kind.trim().is_empty() && !subtype.trim().is_empty());
    named
        && parts.all(|param| match param.split_once('=') {
            Some((key, value)) if key.trim().eq_ignore_ascii_case("q") => {
                qvalue(value.trim()).is_some()
            }
            _ => true,
        })
}

/// A qvalue, `0` to `1` with at most three decimals (RFC 9110 §12.4.2), in thousandths.
fn qvalue(text: &str) -> Option<u16> {
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    if decimals.len() > 3 || !decimals.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut thousandths: u16 = 0;
    for place in 0..3 {
        let digit = decimals
            .as_bytes()
            .get(place)
            .map_or(0, |b| u16::from(b - b'0'));
        thousandths = thousandths * 10 + digit;
    }
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(FULL_QUALITY),
        _ => None,
    }
}

/// What a POST's `Accept` lets its answer be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Takes {
    /// No `Accept` (any), or one that takes JSON: JSON, or SSE when the answer streams.
    Json,
    /// An `Accept` that takes SSE and not JSON: every answer is an SSE stream.
    SseOnly,
    /// An `Accept` that takes neither: 406.
    Neither,
}

/// What the `Accept` fields of `headers` let a POST's answer be.
pub(super) fn post_takes(headers: &HeaderMap) -> Takes {
    if names_no_range(headers) {
        return Takes::Json;
    }
    let fields = headers.get_all(header::ACCEPT);
    let values = || fields.iter().filter_map(|v| v.to_str().ok());
    if quality(values(), JSON) > 0 {
        Takes::Json
    } else if quality(values(), SSE) > 0 {
        Takes::SseOnly
    } else {
        Takes::Neither
    }
}

/// Whether a GET's `Accept` takes SSE (no `Accept`, or one that names no range: yes).
pub(super) fn takes_sse(headers: &HeaderMap) -> bool {
    let fields = headers.get_all(header::ACCEPT);
    names_no_range(headers) || quality(fields.iter().filter_map(|v| v.to_str().ok()), SSE) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(accept: &str, media: &str) -> u16 {
        quality([accept], media)
    }

    #[test]
    fn a_named_or_wildcard_range_takes_the_media_with_its_quality() {
        assert_eq!(q("application/json", JSON), FULL_QUALITY);
        assert_eq!(q("Application/JSON", JSON), FULL_QUALITY);
        assert_eq!(q("application/json, text/event-stream", SSE), FULL_QUALITY);
        assert_eq!(q("*/*", JSON), FULL_QUALITY);
        assert_eq!(q("application/*;q=0.5", JSON), 500);
        assert_eq!(q("text/*", SSE), FULL_QUALITY);
        assert_eq!(q("text/event-stream", JSON), 0);
        assert_eq!(q("text/*", JSON), 0);
        assert_eq!(q("", JSON), 0);
        assert_eq!(q("application/json; charset=utf-8; q=0.8", JSON), 800);
        assert_eq!(q(" application/json ; Q=0.3 ", JSON), 300);
        assert_eq!(
            quality(["text/html", "application/json"], JSON),
            FULL_QUALITY
        );
    }

    #[test]
    fn q_0_is_not_acceptable_and_the_most_specific_range_decides() {
        assert_eq!(q("application/json;q=0", JSON), 0);
        assert_eq!(q("application/json;q=0.000", JSON), 0);
        assert_eq!(q("*/*, application/json;q=0", JSON), 0);
        assert_eq!(q("application/json;q=0, */*", JSON), 0);
        assert_eq!(q("application/*;q=0, */*", JSON), 0);
        assert_eq!(q("*/*;q=0, application/json", JSON), FULL_QUALITY);
        assert_eq!(q("*/*;q=0.1, application/*;q=0.2", JSON), 200);
        assert_eq!(
            q("application/json;q=0.2, application/json;q=0.7", JSON),
            700
        );
    }

    #[test]
    fn a_separator_inside_a_quoted_parameter_separates_nothing() {
        assert_eq!(
            q(r#"text/html;a="x,application/json", text/plain"#, JSON),
            0
        );
        assert_eq!(q(r#"application/json;a="1;q=0";q=0.5"#, JSON), 500);
        assert_eq!(
            q(r#"text/html;a="\",application/json", */*;q=0.2"#, JSON),
            200
        );
        assert_eq!(
            q(r#"application/json;a="x,y", text/html"#, JSON),
            FULL_QUALITY
        );
    }

    #[test]
    fn a_range_whose_q_is_no_qvalue_is_ignored() {
        for bad in ["2", "1.5", "-1", "0.1234", "x", "", "1.01"] {
            assert_eq!(q(&format!("application/json;q={bad}"), JSON), 0, "{bad}");
        }
        assert_eq!(q("application/json;q=abc, */*;q=0.4", JSON), 400);
        assert_eq!(q("application/json;q=1.000", JSON), FULL_QUALITY);
        assert_eq!(q("application/json;q=0.001", JSON), 1);
    }

    fn with(accept: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in accept {
            if let Ok(value) = super::super::HeaderValue::from_str(value) {
                headers.append(header::ACCEPT, value);
            }
        }
        headers
    }

    #[test]
    fn a_post_takes_json_sse_only_or_neither() {
        assert_eq!(post_takes(&with(&[])), Takes::Json);
        assert_eq!(
            post_takes(&with(&["application/json, text/event-stream"])),
            Takes::Json
        );
        assert_eq!(post_takes(&with(&["*/*"])), Takes::Json);
        assert_eq!(post_takes(&with(&["text/event-stream"])), Takes::SseOnly);
        assert_eq!(post_takes(&with(&["text/*"])), Takes::SseOnly);
        assert_eq!(
            post_takes(&with(&["application/json;q=0", "text/event-stream"])),
            Takes::SseOnly
        );
        assert_eq!(post_takes(&with(&["application/json;q=0"])), Takes::Neither);
        assert_eq!(post_takes(&with(&["text/html"])), Takes::Neither);
        assert_eq!(post_takes(&with(&[""])), Takes::Json);
        assert_eq!(post_takes(&with(&[" , "])), Takes::Json);
        assert_eq!(post_takes(&with(&["", "text/html"])), Takes::Neither);
    }

    #[test]
    fn an_accept_of_members_that_are_no_media_range_is_served_as_none() {
        for invalid in [
            ";;;",
            "json",
            " ;q=1 , ;",
            "application/json;q=1.5",
            "/json",
            "text/",
        ] {
            assert_eq!(post_takes(&with(&[invalid])), Takes::Json, "{invalid}");
            assert!(takes_sse(&with(&[invalid])), "{invalid}");
        }
        assert_eq!(post_takes(&with(&[";;;, text/html"])), Takes::Neither);
        assert_eq!(
            post_takes(&with(&[";;;", "text/event-stream"])),
            Takes::SseOnly
        );
        assert_eq!(
            post_takes(&with(&["json;q=2, application/json;q=0"])),
            Takes::Neither
        );
    }

    #[test]
    fn a_get_takes_sse_by_name_by_wildcard_and_without_accept() {
        assert!(takes_sse(&with(&[])));
        assert!(takes_sse(&with(&[""])));
        assert!(takes_sse(&with(&["text/event-stream"])));
        assert!(takes_sse(&with(&["application/json, */*;q=0.1"])));
        assert!(!takes_sse(&with(&["application/json"])));
        assert!(!takes_sse(&with(&["text/event-stream;q=0"])));
        assert!(!takes_sse(&with(&["*/*, text/event-stream;q=0"])));
    }
}
