//! The `Bearer` challenge of a 401 or 403 response (RFC 6750 section 3, RFC 9728 section 5.1):
//! its `resource_metadata`, `scope` and `error` parameters. Pure: values in, values out.

/// The parameters of the `Bearer` challenge the bridge acts on; every other scheme and
/// parameter is ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// RFC 9728 `resource_metadata`: the URL of the protected resource metadata.
    pub resource_metadata: Option<String>,
    /// The space-separated scopes the operation needs (authoritative for it, 2026-07-28 AUTH).
    pub scope: Option<String>,
    /// RFC 6750 `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
}

impl BearerChallenge {
    /// True for RFC 6750 `error="insufficient_scope"` (the step-up case).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The first `Bearer` challenge among the `WWW-Authenticate` header values (RFC 9110 section
/// 11.6.1: one value may hold several challenges separated by commas); `None` when no value
/// has one. Parameters are `token=token` or `token="quoted string"` (RFC 9110 section 11.2);
/// names compare without case, a repeated parameter keeps its first value.
pub fn parse_bearer(values: &[String]) -> Option<BearerChallenge> {
    values.iter().find_map(|v| bearer_in(v))
}

fn bearer_in(value: &str) -> Option<BearerChallenge> {
    let mut rest = value;
    let mut in_bearer = false;
    let mut found: Option<BearerChallenge> = None;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return found;
        }
        let name_end = rest.find(['=', ',', ' ', '\t']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        let after = rest[name_end..].trim_start_matches([' ', '\t']);
        if let Some(v) = after.strip_prefix('=')
            && !v.starts_with('=')
        {
            // A parameter of the current challenge.
            let v = v.trim_start_matches([' ', '\t']);
            let (val, tail) = if let Some(q) = v.strip_prefix('"') {
                quoted(q)?
            } else {
                let end = v.find([',', ' ', '\t']).unwrap_or(v.len());
                (v[..end].to_string(), &v[end..])
            };
            if in_bearer && let Some(c) = found.as_mut() {
                let slot = match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => Some(&mut c.resource_metadata),
                    "scope" => Some(&mut c.scope),
                    "error" => Some(&mut c.error),
                    _ => None,
                };
                if let Some(slot) = slot
                    && slot.is_none()
                {
                    *slot = Some(val);
                }
            }
            rest = tail;
        } else {
            // A new auth-scheme (possibly followed by token68, which is skipped).
            if found.is_some() {
                return found;
            }
            in_bearer = name.eq_ignore_ascii_case("bearer");
            if in_bearer {
                found = Some(BearerChallenge::default());
            }
            rest = after;
            // token68 after a scheme: `Basic abc==`
            if !in_bearer {
                let end = rest.find(',').unwrap_or(rest.len());
                if !rest[..end].contains('=') || rest[..end].trim_end().ends_with('=') {
                    rest = &rest[end..];
                }
            }
        }
    }
}

/// A quoted-string body (after the opening quote): its unescaped value and the rest.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => out.push(chars.next()?.1),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Option<BearerChallenge> {
        parse_bearer(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_bearer_parameters_are_read_quoted_or_not() {
        let c = p(&[r#"Bearer resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", scope="a b""#]).unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://r.example/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(c.error, None);
        let c = p(&["bearer error=insufficient_scope,scope=\"x\""]).unwrap();
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("x"));
    }

    #[test]
    fn other_schemes_are_skipped_in_one_value_and_across_values() {
        let c = p(&[r#"Basic realm="x", Bearer scope="s""#]).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
        let c = p(&["Basic abc==", r#"Bearer error="invalid_token""#]).unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        let c = p(&[r#"Bearer scope="a", Basic realm="r""#]).unwrap();
        assert_eq!(c.scope.as_deref(), Some("a"));
    }

    #[test]
    fn escapes_in_quoted_strings_are_undone_and_bad_quoting_is_no_challenge() {
        let c = p(&[r#"Bearer scope="a\"b""#]).unwrap();
        assert_eq!(c.scope.as_deref(), Some("a\"b"));
        assert_eq!(p(&[r#"Bearer scope="open"#]), None);
        assert_eq!(p(&["Basic realm=x"]), None);
        assert_eq!(p(&[]), None);
        assert_eq!(p(&["Bearer"]), Some(BearerChallenge::default()));
    }
}
