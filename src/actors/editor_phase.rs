//! What the Frontend tells and asks of the sign-in of a URL upstream: that the editor is
//! initialized (from then on a sign-in asks the editor with a URL elicitation and never opens
//! a browser), and how long a wait lasts that leaves out the time sign-ins run (a sign-in can
//! run during `initialize`, and the user's time in the browser is not the server's silence).
//! The sign-in implements it (`actors/consent.rs`); a bridge without one has none, so the
//! Frontend needs no feature of the build to use it.

use futures_util::future::LocalBoxFuture;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

use super::pending::PendingLinks;
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

/// The editor's side of the sign-in.
pub trait EditorPhase: Send + Sync + std::fmt::Debug {
    /// `notifications/initialized` arrived.
    fn editor_initialized(&self, editor: EditorLinks);
    /// The sign-in time a wait does not count, at most (`--sign-in-timeout`).
    fn allowance(&self) -> Duration;
    /// Resolves after `limit` of time in which no sign-in runs, plus the time sign-ins run
    /// meanwhile up to [`EditorPhase::allowance`].
    fn outside_sign_in(&self, limit: Duration) -> LocalBoxFuture<'_, ()>;
}
