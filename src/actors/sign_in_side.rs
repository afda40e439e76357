//! What passes between the Frontend and the SignIn actor of a URL upstream: the message that
//! the editor is initialized ([`EditorInitialized`]: from then on a sign-in asks the editor
//! with a URL elicitation and never opens a browser), and the sign-in's clock, which the
//! Frontend only receives ([`SignInTimes`]: a wait for `server/discover` leaves out the time
//! sign-ins run, since a sign-in can run during `initialize` and the user's time in the
//! browser is not the server's silence). The Frontend holds them as a [`SignInSide`]; a
//! bridge without sign-in has none, so the Frontend needs no feature of the build.

use actix::prelude::*;
use serde_json::Value;
use std::sync::Arc;

use super::link::Link;
use super::pending::PendingLinks;
use crate::auth::clock::SignInTimes;
use crate::transport::writer::Writer;

/// What a sign-in after `notifications/initialized` asks the editor with.
pub struct EditorLinks {
    /// The editor's 2025-11-25 capabilities (`elicitation.url` or not).
    pub capabilities: Arc<Value>,
    /// The table of the bridge's requests to the editor.
    pub pending: Arc<PendingLinks>,
    /// The writer toward the editor.
    pub output: Writer,
}

/// `notifications/initialized` arrived (the Frontend to the SignIn actor). The SignIn actor
/// handles it at once, also while a flow runs (its mailbox never waits for a flow): a flow
/// that has not delivered its URL yet asks the editor too, and every later one does.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorInitialized(pub EditorLinks);

/// The Frontend's side of the SignIn actor.
#[derive(Clone)]
pub struct SignInSide {
    /// Where `notifications/initialized` goes.
    pub initialized: Link<EditorInitialized>,
    /// When sign-ins run (the receiving end of the sign-in's clock).
    pub times: SignInTimes,
}
