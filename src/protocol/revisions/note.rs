//! The lines for the log that the pure layer gives its caller (this layer has no logger): the
//! adaptations of a translated result and the events of the listen stream.

/// The level of a log line that the protocol layer words for its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineLevel {
    Debug,
    Info,
    Warn,
}

/// A line for the log about an adaptation of a result (the actor writes it; this layer has no
/// logger).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The level of the line: debug for an adaptation, info where marked, warn for an item
    /// dropped from a list ([`list_items`](crate::protocol::rules::list_items)).
    pub level: LineLevel,
    /// What was changed, without any content of the message.
    pub text: String,
}

pub(crate) fn debug(notes: &mut Vec<Note>, text: String) {
    notes.push(Note {
        level: LineLevel::Debug,
        text,
    });
}
