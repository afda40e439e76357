//! How a sign-in after `notifications/initialized` asks the editor: one 2025-11-25
//! `elicitation/create` in URL mode with the authorization URL, sent as a `b-`
//! request through the PendingTable and the one stdout Writer, like the upstream's input
//! requests (`rounds.rs`). The editor opens the URL itself; the bridge never does after
//! `initialized`.

use futures_util::future::LocalBoxFuture;
use serde_json::{Value, json};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use super::pending::{Abandon, AbandonReason, PendingLinks, Register};
use super::sign_in_side::EditorLinks;
use crate::auth::gate::{Consent, ConsentAnswer};
use crate::protocol::rules::input::{self, InputAnswer, Plan};
use crate::protocol::rules::profile::ELICITATION_ID_PREFIX;
use crate::transport::queue::Delivery;
use crate::transport::writer::Writer;
/// The key of the sign-in question in the log (not an upstream input request).
const SIGN_IN_KEY: &str = "sign-in";

/// Asks the editor through the PendingTable and the Writer. The SignIn actor's own: made
/// from [`EditorLinks`] when `notifications/initialized` arrives, used by its flows on its
/// thread.
pub struct EditorConsent {
    pending: Arc<PendingLinks>,
    output: Writer,
    capabilities: Arc<Value>,
    /// The accepted sign-in URLs and their `elicitationId`s, until their sign-in ends.
    accepted: Rc<RefCell<Vec<(String, String)>>>,
}

impl EditorConsent {
    /// The consent of the editor of `editor`; `None` when its 2025-11-25 capabilities declare
    /// no URL elicitation (a sign-in then fails with `reauthorization_required`).
    pub fn for_editor(editor: EditorLinks) -> Option<Self> {
        let EditorLinks {
            capabilities,
            pending,
            output,
        } = editor;
        capabilities
            .pointer("/elicitation/url")
            .is_some()
            .then_some(EditorConsent {
                pending,
                output,
                capabilities,
                accepted: Rc::default(),
            })
    }
}

impl Consent for EditorConsent {
    fn ask_url(&self, message: String, url: String) -> LocalBoxFuture<'static, ConsentAnswer> {
        let request = json!({
            "method": "elicitation/create",
            "params": {"mode": "url", "message": message, "url": url},
        });
        let plan = input::plan(SIGN_IN_KEY, &request, &self.capabilities);
        let pending = self.pending.clone();
        let output = self.output.clone();
        let accepted = self.accepted.clone();
        Box::pin(async move {
            let Ok(Plan::Ask(q)) = plan else {
                return ConsentAnswer::Failed;
            };
            let mut slots = pending.register.send(Register(1)).await.unwrap_or_default();
            let Some((id, rx)) = slots.pop() else {
                return ConsentAnswer::Failed;
            };
            // The sign-in's time limit drops this future: the question is then abandoned.
            let guard = AbandonOnDrop {
                pending: pending.clone(),
                id: Some(id.clone()),
            };
            let elicitation_id = format!("{ELICITATION_ID_PREFIX}{id}");
            output.send_message(
                &input::editor_request(&id, &elicitation_id, &q),
                Delivery::Always,
            );
            let answer = rx.await.unwrap_or(InputAnswer::Invalid);
            drop(guard.disarm());
            match input::check_answer(&q, &answer) {
                Ok(resp) if resp["action"] == "accept" => {
                    if let Some(url) = q.url.clone() {
                        accepted.borrow_mut().push((url, elicitation_id));
                    }
                    ConsentAnswer::Accept
                }
                Ok(_) => ConsentAnswer::Decline,
                Err(_) => ConsentAnswer::Failed,
            }
        })
    }

    /// Sends `notifications/elicitation/complete` for each accepted elicitation of `url`.
    fn completed(&self, url: &str) {
        let done: Vec<String> = {
            let mut open = self.accepted.borrow_mut();
            let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut *open)
                .into_iter()
                .partition(|(u, _)| u == url);
            *open = keep;
            done.into_iter().map(|(_, id)| id).collect()
        };
        for id in done {
            self.output
                .send_message(&input::elicitation_complete(&id), Delivery::Always);
        }
    }
}

struct AbandonOnDrop {
    pending: Arc<PendingLinks>,
    id: Option<String>,
}

impl AbandonOnDrop {
    fn disarm(mut self) -> Self {
        self.id = None;
        self
    }
}

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.pending.abandon.do_send(Abandon {
                ids: vec![id],
                reason: AbandonReason::SignInEnded,
            });
        }
    }
}
