//! Pass-through toward a legacy (2025-11-25) upstream: the editor's frames go on as they
//! came, and the upstream's come back with only the bridge's own ids mapped.

use super::*;

impl Frontend {
    /// Pass-through: one line of the editor to the upstream as it came. The bridge still
    /// answers a bad line, a duplicate id and a request over the in-flight limit itself.
    pub(super) fn relay_from_editor(&mut self, line: &[u8]) {
        let (message, kind) = match passthrough::read(line, self.config.max_depth) {
            Ok(read) => read,
            Err(e) => return self.reply_bad_line(&e),
        };
        let (delivery, cancels) = match kind {
            MessageKind::Request(id) => {
                if self.relayed.contains_key(&id) {
                    return self.reply_error(Some(&id), Cause::DuplicateId, None);
                }
                if self.relayed.len() >= self.config.max_in_flight {
                    return self.reply_error(
                        Some(&id),
                        Cause::TooManyRequests,
                        Some(json!(self.config.max_in_flight)),
                    );
                }
                self.relayed.insert(id.clone(), Instant::now());
                (Delivery::Request(id), None)
            }
            MessageKind::Notification(method) => {
                let cancels =
                    match EditorNotification::from_notification(method, message.get("params")) {
                        EditorNotification::Cancelled {
                            request_id: Some(id),
                            ..
                        } => self.relayed.remove(&id).map(|_| id),
                        _ => None,
                    };
                if let Some(id) = &cancels {
                    self.end_initialize_wait(id);
                }
                (Delivery::Always, cancels)
            }
            MessageKind::Response(_) => (Delivery::Always, None),
        };
        self.upstream.relay.do_send(Relay {
            message,
            delivery,
            cancels,
        });
    }

    /// Pass-through: one message of the upstream to the editor as it came. A response goes
    /// out only while its request is in flight (never after the editor cancelled it, never
    /// twice); progress and log messages are dropped and counted when the queue toward the
    /// editor is over its notification bound; everything else is never dropped.
    pub(super) fn relay_to_editor(&mut self, message: Value, kind: MessageKind) {
        match kind {
            MessageKind::Response(Some(id)) => match self.relayed.remove(&id) {
                Some(started) => {
                    self.end_initialize_wait(&id);
                    tracing::debug!(target: "frontend", "id={id} answered in pass-through time_ms={:.3}",
                        started.elapsed().as_secs_f64() * 1e3);
                    self.write(&message);
                }
                None => {
                    tracing::debug!(target: "frontend", "dropped a response of the upstream for id {id}, not in flight");
                }
            },
            MessageKind::Response(None) => {
                tracing::debug!(target: "frontend", "dropped a response of the upstream without a usable id");
            }
            MessageKind::Request(_) => self.write(&message),
            MessageKind::Notification(method) if passthrough::droppable(&method) => {
                self.write_notification(&message)
            }
            MessageKind::Notification(_) => self.write(&message),
        }
    }
}
