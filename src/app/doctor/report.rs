//! What doctor found, the rule of its verdict (usable through the bridge or not, and why), and
//! its two forms: the text for a person and one JSON object for scripts (docs/usage.md,
//! "mcp-bridge doctor", describes both).

use serde_json::{Value, json};

use super::sign_in::SignInFound;
use super::snippets::{self, Snippet};
use crate::protocol::revisions::note::{LineLevel, Note};
use crate::protocol::rules::list_items::{self, ItemKind};
use crate::transport::observe::Decided;

/// What one list gave, over all its pages.
#[derive(Clone, Debug)]
pub struct ListSeen {
    /// The kind of its items.
    pub kind: ItemKind,
    /// The method (`tools/list`, ...).
    pub method: &'static str,
    /// The items the editor gets, over every page.
    pub count: usize,
    /// The pages read.
    pub pages: usize,
    /// Why the list failed (the bridge's error to the editor), if it did.
    pub error: Option<String>,
    /// Pass-through only: the items a 2025-11-25 editor refuses, which the bridge passes as
    /// they came (`<label>: <reason>`).
    pub refused: Vec<String>,
    /// The name (or URI, or URI template) of each item the editor gets, in order: what the
    /// names behind one bridge are made of (`doctor --config`).
    pub keys: Vec<String>,
}

/// An adaptation the bridge made to an item or a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemChange {
    /// The method of the result.
    pub method: String,
    /// `repaired` (the item reaches the editor, changed) or `dropped` (it does not).
    pub action: &'static str,
    /// The rule's own words (the bridge's log line).
    pub text: String,
}

/// The changes of a session's notes, in their order: a warning is an item dropped, the rest
/// repairs; the repairs of an item that was dropped after them are left out (the editor gets
/// no such item).
pub fn changes(notes: &[(String, Note)]) -> Vec<ItemChange> {
    let dropped: Vec<&str> = notes
        .iter()
        .filter_map(|(_, n)| list_items::dropped_item(n))
        .collect();
    notes
        .iter()
        .filter(|(_, n)| {
            n.level == LineLevel::Warn
                || !dropped.iter().any(|item| {
                    n.text
                        .strip_prefix(item)
                        .is_some_and(|r| r.starts_with(": "))
                })
        })
        .map(|(m, n)| ItemChange::of(m, n))
        .collect()
}

impl ItemChange {
    /// The change a rule's note reports: a warning is an item dropped, the rest repairs.
    pub fn of(method: &str, note: &Note) -> ItemChange {
        ItemChange {
            method: method.to_owned(),
            action: if note.level == LineLevel::Warn {
                "dropped"
            } else {
                "repaired"
            },
            text: note.text.clone(),
        }
    }
}

/// Everything doctor found.
#[derive(Debug, Default)]
pub struct Report {
    /// `command` or `url`.
    pub target: &'static str,
    /// How the era probe ended.
    pub decided: Option<Decided>,
    /// The server reached over HTTP.
    pub http: bool,
    /// The `initialize` result the editor got (`None`: it failed).
    pub initialize: Option<Value>,
    /// Why `initialize` failed: the bridge's error text.
    pub initialize_error: Option<String>,
    /// The lists read.
    pub lists: Vec<ListSeen>,
    /// The adaptations of the bridge's rules.
    pub changes: Vec<ItemChange>,
    /// The sign-in found (`None`: the server asked for none, or it is no URL).
    pub sign_in: Option<SignInFound>,
    /// `server/discover`'s time (the probe, with its retry), ms.
    pub discover_ms: Option<f64>,
    /// The `initialize` round trip as the editor sees it, ms.
    pub initialize_ms: Option<f64>,
    /// The first page of the first list, ms.
    pub list_ms: Option<(String, f64)>,
    /// The editors' configuration.
    pub snippets: Vec<Snippet>,
    /// The warnings of the command line (an option of the bridge after the server's
    /// program), as the bridge logs them.
    pub warnings: Vec<String>,
}

/// The revision, the mode and the transport of a decision.
fn revision(report: &Report) -> (Option<String>, Option<&'static str>, &'static str) {
    let transport_modern = if report.http {
        "streamable-http"
    } else {
        "stdio"
    };
    match &report.decided {
        Some(Decided::Modern {
            protocol_version, ..
        }) => (
            Some(protocol_version.clone()),
            Some("translate"),
            transport_modern,
        ),
        Some(Decided::Legacy { .. }) => {
            let version = report
                .initialize
                .as_ref()
                .and_then(|r| r.get("protocolVersion"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let transport = if report.http { "legacy-http" } else { "stdio" };
            (version, Some("pass-through"), transport)
        }
        _ => (None, None, transport_modern),
    }
}

/// Why the bridge decided so, in words.
fn why(report: &Report) -> Option<String> {
    match &report.decided {
        Some(Decided::Modern {
            protocol_version, ..
        }) => Some(format!(
            "it answered server/discover with a DiscoverResult that supports {protocol_version}"
        )),
        Some(Decided::Legacy { why }) => Some(why.clone()),
        Some(Decided::Failed { error }) => Some(format!("server/discover failed: {error}")),
        Some(Decided::FailedToStart { error }) => Some(format!("it failed to start: {error}")),
        None => None,
    }
}

impl Report {
    /// The verdict: usable through the bridge, and why (or why not).
    ///
    /// A URL that asked for a sign-in (and doctor did not sign in) is usable when doctor found
    /// its metadata and a registration the bridge uses (the bridge signs in when the server
    /// asks), and not usable otherwise. Else not usable: `initialize` failed, a list failed,
    /// or a list of a legacy server holds items a 2025-11-25 editor refuses (the bridge passes
    /// it unchanged, and such an editor refuses the whole list). Usable: everything else.
    pub fn verdict(&self) -> (bool, String) {
        if let Some(s) = &self.sign_in
            && s.signed_in.is_none()
        {
            return match (&s.error, &s.bridge_uses) {
                (None, Ok(_)) if s.nothing_published => (
                    false,
                    format!(
                        "the server asks for a sign-in (HTTP {}) but publishes no sign-in metadata: the bridge would try the default endpoints of 2025-03-26 authorization, which the server may not have; if it wants an API key or another header, give it with --header-env; doctor --sign-in tries the sign-in",
                        s.status
                    ),
                ),
                (None, Ok(kind)) => (
                    true,
                    format!(
                        "the server asks for a sign-in (HTTP {}), which the bridge does when the server asks ({kind}); doctor --sign-in checks the server behind it",
                        s.status
                    ),
                ),
                (Some(e), _) => (
                    false,
                    format!(
                        "the server asks for a sign-in (HTTP {}) that the bridge cannot do: {e}",
                        s.status
                    ),
                ),
                (None, Err(why)) => (
                    false,
                    format!(
                        "the server asks for a sign-in (HTTP {}) that the bridge cannot do: {why}",
                        s.status
                    ),
                ),
            };
        }
        if self.initialize.is_none() {
            let e = self
                .initialize_error
                .clone()
                .unwrap_or_else(|| "no answer".into());
            if matches!(self.decided, Some(Decided::FailedToStart { .. })) {
                return (false, format!("the server failed to start: {e}"));
            }
            return (false, format!("initialize failed: {e}"));
        }
        for l in &self.lists {
            if let Some(e) = &l.error {
                return (false, format!("{} failed: {e}", l.method));
            }
        }
        for l in &self.lists {
            if !l.refused.is_empty() {
                return (
                    false,
                    format!(
                        "a 2025-11-25 editor refuses the whole {} of this server: {} of its items break the 2025-11-25 schema, and the bridge passes a 2025-11-25 server's lists unchanged",
                        l.method,
                        l.refused.len()
                    ),
                );
            }
        }
        let dropped = self
            .changes
            .iter()
            .filter(|c| c.action == "dropped")
            .count();
        if dropped > 0 {
            return (
                true,
                format!("the server works through the bridge ({dropped} items dropped)"),
            );
        }
        (true, "the server works through the bridge".into())
    }

    /// The report as one JSON object.
    pub fn to_json(&self) -> Value {
        let (rev, mode, transport) = revision(self);
        let (usable, reason) = self.verdict();
        let init = self.initialize.as_ref();
        let lists: serde_json::Map<String, Value> = self
            .lists
            .iter()
            .map(|l| {
                (
                    l.kind.member().to_owned(),
                    json!({
                        "method": l.method,
                        "count": l.count,
                        "pages": l.pages,
                        "error": l.error,
                        "refused": l.refused,
                    }),
                )
            })
            .collect();
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| json!({"method": c.method, "action": c.action, "text": c.text}))
            .collect();
        let upstream_capabilities = match &self.decided {
            Some(Decided::Modern { capabilities, .. }) => capabilities.clone(),
            _ => Value::Null,
        };
        json!({
            "target": self.target,
            "revision": rev,
            "mode": mode,
            "transport": transport,
            "why": why(self),
            "server": init.and_then(|r| r.get("serverInfo")).cloned(),
            "protocol_version": init.and_then(|r| r.get("protocolVersion")).cloned(),
            "capabilities": init.and_then(|r| r.get("capabilities")).cloned(),
            "upstream_capabilities": upstream_capabilities,
            "initialize_error": self.initialize_error,
            "lists": lists,
            "changes": changes,
            "sign_in": self.sign_in.as_ref().map(SignInFound::to_json),
            "timings_ms": {
                "discover": self.discover_ms,
                "initialize": self.initialize_ms,
                "list": self.list_ms.as_ref().map(|(_, ms)| *ms),
                "list_method": self.list_ms.as_ref().map(|(m, _)| m.clone()),
            },
            "config": snippets::to_json(&self.snippets),
            "warnings": self.warnings,
            "usable": usable,
            "reason": reason,
        })
    }

    /// The report as text: one `key: value` line per finding, the snippets, and the verdict
    /// as the last line (`usable: ...` or `not usable: ...`).
    pub fn to_text(&self) -> String {
        let mut out: Vec<String> = self
            .warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect();
        let (rev, mode, transport) = revision(self);
        let init = self.initialize.as_ref();
        if let Some(info) = init.and_then(|r| r.get("serverInfo")) {
            let s = |k: &str| {
                info.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned()
            };
            // An empty version (servers send "") leaves no trailing space.
            let line = format!("server: {} {}", s("name"), s("version"));
            out.push(line.trim_end().to_owned());
        }
        match (&rev, mode) {
            (Some(r), Some("translate")) => out.push(format!(
                "revision: {r} (translated for the 2025-11-25 editor)"
            )),
            (Some(r), Some(_)) => out.push(format!("revision: {r} (passed through unchanged)")),
            (None, Some(_)) => out.push("revision: 2025-11-25 or earlier (passed through)".into()),
            _ if matches!(self.decided, Some(Decided::FailedToStart { .. })) => {
                out.push("revision: none (the server failed to start)".into());
            }
            _ => out.push("revision: unknown".into()),
        }
        if let Some(w) = why(self) {
            out.push(format!("why: {w}"));
        }
        out.push(format!("transport: {transport}"));
        if let Some(caps) = init
            .and_then(|r| r.get("capabilities"))
            .and_then(Value::as_object)
        {
            let names: Vec<&str> = caps.keys().map(String::as_str).collect();
            out.push(format!("capabilities: {}", names.join(", ")));
        }
        if let Some(e) = &self.initialize_error {
            out.push(format!("initialize: failed: {e}"));
        }
        for l in &self.lists {
            let name = match l.kind {
                ItemKind::ResourceTemplate => "resource templates",
                k => k.member(),
            };
            match &l.error {
                Some(e) => out.push(format!("{name}: failed: {e}")),
                None => out.push(format!("{name}: {}", l.count)),
            }
            for r in &l.refused {
                out.push(format!(
                    "  refused: {}: {r} (passed through unchanged)",
                    l.method
                ));
            }
        }
        for c in &self.changes {
            out.push(format!("  {}: {}", c.action, c.text));
        }
        match &self.sign_in {
            None if self.http => out.push("sign-in: none asked for".into()),
            None => {}
            Some(s) => out.extend(sign_in_lines(s)),
        }
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1} ms"));
        let list = match &self.list_ms {
            Some((m, v)) => format!(", {m} {}", ms(Some(*v))),
            None => String::new(),
        };
        out.push(format!(
            "time: server/discover {}, initialize {}{list}",
            ms(self.discover_ms),
            ms(self.initialize_ms)
        ));
        for s in &self.snippets {
            out.push(String::new());
            out.push(format!("{} ({}):", s.editor, s.file));
            out.push(serde_json::to_string_pretty(&s.json).unwrap_or_default());
        }
        out.push(String::new());
        let (usable, reason) = self.verdict();
        out.push(if usable {
            format!("usable: {reason}")
        } else {
            format!("not usable: {reason}")
        });
        out.join("\n") + "\n"
    }
}

/// The lines of the sign-in.
fn sign_in_lines(s: &SignInFound) -> Vec<String> {
    let mut out = vec![format!("sign-in: required (HTTP {})", s.status)];
    if let Some(r) = &s.resource {
        out.push(format!(
            "  protected resource: {} (authorization servers: {})",
            r.resource,
            r.authorization_servers.join(", ")
        ));
    }
    if let Some(m) = &s.server {
        let implied = if s.nothing_published {
            " (none published: the default endpoints of 2025-03-26 authorization)"
        } else {
            ""
        };
        out.push(format!("  authorization server: {}{implied}", m.issuer));
    }
    if !s.offered.is_empty() {
        out.push(format!("  registration offered: {}", s.offered.join(", ")));
    }
    match (&s.error, &s.bridge_uses) {
        (Some(e), _) => out.push(format!("  discovery failed: {e}")),
        (None, Ok(kind)) => out.push(format!("  the bridge uses: {kind}")),
        (None, Err(why)) => out.push(format!("  the bridge cannot register: {why}")),
    }
    if let Some(ok) = s.signed_in {
        out.push(format!("  signed in: {}", if ok { "yes" } else { "no" }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(kind: ItemKind, method: &'static str, count: usize) -> ListSeen {
        ListSeen {
            kind,
            method,
            count,
            pages: 1,
            error: None,
            refused: Vec::new(),
            keys: Vec::new(),
        }
    }

    #[test]
    fn the_repairs_of_a_dropped_item_are_left_out() {
        let n = |level, text: &str| {
            (
                "tools/list".to_string(),
                Note {
                    level,
                    text: text.into(),
                },
            )
        };
        let notes = [
            n(LineLevel::Debug, "tools/list: tool \"a\": fixed"),
            n(LineLevel::Debug, "tools/list: tool \"b\": fixed"),
            n(LineLevel::Debug, "tools/list: tool \"bb\": fixed"),
            n(
                LineLevel::Warn,
                &format!("tools/list: tool \"b\": {}: why", list_items::DROPPED),
            ),
        ];
        let got: Vec<(&str, String)> = changes(&notes)
            .into_iter()
            .map(|c| (c.action, c.text))
            .collect();
        assert_eq!(
            got,
            [
                ("repaired", "tools/list: tool \"a\": fixed".to_string()),
                ("repaired", "tools/list: tool \"bb\": fixed".to_string()),
                (
                    "dropped",
                    format!("tools/list: tool \"b\": {}: why", list_items::DROPPED)
                ),
            ]
        );
    }

    #[test]
    fn a_server_with_an_empty_version_gets_no_trailing_space() {
        let r = Report {
            initialize: Some(
                serde_json::json!({"serverInfo": {"name": "py-upstream", "version": ""}}),
            ),
            ..Report::default()
        };
        assert_eq!(r.to_text().lines().next(), Some("server: py-upstream"));
    }

    #[test]
    fn the_verdict_names_the_first_thing_that_keeps_the_editor_from_the_server() {
        let mut r = Report {
            initialize_error: Some("upstream_exited".into()),
            ..Report::default()
        };
        assert_eq!(
            r.verdict(),
            (false, "initialize failed: upstream_exited".to_string())
        );
        r.initialize = Some(json!({}));
        r.initialize_error = None;
        r.lists = vec![list(ItemKind::Tool, "tools/list", 2)];
        assert_eq!(
            r.verdict(),
            (true, "the server works through the bridge".to_string())
        );
        r.changes.push(ItemChange::of(
            "tools/list",
            &Note {
                level: LineLevel::Warn,
                text: "x".into(),
            },
        ));
        assert_eq!(
            r.verdict(),
            (
                true,
                "the server works through the bridge (1 items dropped)".to_string()
            )
        );
        r.lists[0].refused.push("\"t\": bad".into());
        assert!(!r.verdict().0);
        r.lists[0].error = Some("timeout".into());
        assert_eq!(
            r.verdict(),
            (false, "tools/list failed: timeout".to_string())
        );
    }
}
