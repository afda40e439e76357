//! The rules of a URL upstream on a result before it goes on: the `x-mcp-header` annotations
//! of tools/list checked and kept for the tools' calls, and only `data:` icons.

use serde_json::Value;

use super::Shared;
use crate::protocol::revisions::note::{LineLevel, Note};
use crate::protocol::rules::remote;

/// The rules of a remote server on a result: tools with broken `x-mcp-header` annotations
/// dropped (and the others' annotations kept for their calls), only `data:` icons. What they
/// changed goes to the log, and to the observer when there is one.
pub(super) fn rewrite(sh: &Shared, method: &str, result: &mut Value) {
    let mut notes = Vec::new();
    if method == "tools/list" {
        let checked = remote::check_tools_list(result);
        let mut known = sh.tool_params.borrow_mut();
        let mut gone = sh.dropped_tools.borrow_mut();
        for name in &checked.kept {
            known.remove(name);
            gone.remove(name);
        }
        known.extend(checked.params);
        for (name, warning) in checked.dropped {
            tracing::warn!(target: "http", "{warning}");
            notes.push(Note {
                level: LineLevel::Warn,
                text: warning,
            });
            known.remove(&name);
            gone.insert(name);
        }
    }
    let named = remote::filter_icons_report(method, result);
    if !named.is_empty() {
        tracing::debug!(target: "http", "{method}: removed the icons of {} items that are not data: URLs (a URL upstream)", named.len());
        for item in named {
            notes.push(Note {
                level: LineLevel::Debug,
                text: format!(
                    "{method}: {item}: removed its icons that are not data: URLs (a URL upstream)"
                ),
            });
        }
    }
    if let Some(observer) = &sh.observer {
        observer.notes(method, &notes);
    }
}
