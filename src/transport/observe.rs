//! What a caller that diagnoses a server (`mcp-bridge doctor`) hears of the bridge's own
//! decisions while it runs: the era of the upstream and why, and the adaptations the rules made
//! to a result (the same [`Note`]s the log gets). The bridge sends them only when its
//! configuration carries an [`Observer`]; without one nothing is built or sent.
//!
//! A message channel, not shared state: the actors and the HTTP transport send, the caller
//! receives on its own task.

use std::time::Duration;
use tokio::sync::mpsc;

use crate::protocol::revisions::note::Note;

/// How the era probe of the first `initialize` ended (`protocol::rules::era`).
#[derive(Clone, Debug, PartialEq)]
pub enum Decided {
    /// A 2026-07-28 server: the bridge translates; the version of the discover result and
    /// its `ServerCapabilities` as the server sent them.
    Modern {
        /// The protocol version the bridge speaks to it.
        protocol_version: String,
        /// The server's own 2026-07-28 capabilities.
        capabilities: serde_json::Value,
    },
    /// A 2025-11-25 or earlier server: the bridge passes the protocol through; why it took it
    /// for one (the text of `LegacySign`).
    Legacy {
        /// Why (the info line's text).
        why: String,
    },
    /// The probe failed: the `initialize` gets an error (its log text).
    Failed {
        /// The error's log text.
        error: String,
    },
    /// The server failed to start: it exited before it answered `initialize` (also after it
    /// was started again for its exit at `server/discover`); the `initialize` gets this error
    /// (its log text).
    FailedToStart {
        /// The error's log text.
        error: String,
    },
}

/// One thing the bridge reports to its [`Observer`].
#[derive(Clone, Debug, PartialEq)]
pub enum Observed {
    /// The era decision, and how long the probe (`server/discover`, with its retry) took.
    Era {
        /// The decision.
        decided: Decided,
        /// From the probe's first send to its answer (no time of the child's start).
        elapsed: Duration,
    },
    /// The server failed to start, whatever the probe decided before ([`Decided::FailedToStart`]).
    FailedToStart {
        /// The log text of the `initialize`'s error.
        error: String,
    },
    /// The adaptations of one result of `method` (repairs at debug, dropped items at warn).
    Notes {
        /// The method of the result.
        method: String,
        /// What the rules changed.
        notes: Vec<Note>,
    },
}

/// The sending end of the observation channel (cheap to clone).
#[derive(Clone, Debug)]
pub struct Observer(mpsc::UnboundedSender<Observed>);

impl Observer {
    /// A new channel: the observer for the configuration, and its receiving end.
    pub fn channel() -> (Observer, mpsc::UnboundedReceiver<Observed>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Observer(tx), rx)
    }

    /// Sends one observation; a receiver that has gone is no error (nobody listens).
    pub fn send(&self, observed: Observed) {
        let _ = self.0.send(observed);
    }

    /// Sends the notes of `method`, when there are any.
    pub fn notes(&self, method: &str, notes: &[Note]) {
        if !notes.is_empty() {
            self.send(Observed::Notes {
                method: method.to_owned(),
                notes: notes.to_vec(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::revisions::note::LineLevel;

    #[test]
    fn notes_are_sent_only_when_there_are_some() {
        let (obs, mut rx) = Observer::channel();
        obs.notes("tools/list", &[]);
        let note = Note {
            level: LineLevel::Warn,
            text: "dropped".into(),
        };
        obs.notes("tools/list", std::slice::from_ref(&note));
        assert_eq!(
            rx.try_recv().ok(),
            Some(Observed::Notes {
                method: "tools/list".into(),
                notes: vec![note]
            })
        );
        assert!(rx.try_recv().is_err());
        drop(rx);
        // A receiver that went away is no error.
        obs.notes("tools/list", &[]);
    }
}
