//! A session's per-thread event model: DAP's `stopped` and `continued` events name their
//! thread, or all (StoppedEvent `allThreadsStopped`, ContinuedEvent `allThreadsContinued`),
//! so the session keeps which threads are stopped and where, and shows the one that stopped
//! last in its state.

use std::collections::BTreeMap;

use actix::prelude::*;
use serde_json::{Value, json};

use crate::dap::types::{ContinuedBody, StackFrame, StoppedBody};

use super::{MAX_STOPPED_THREADS_SHOWN, Session, Status};
use crate::adapter::Request;

/// Where one stopped thread is.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ThreadStop {
    /// The reason of its own `stopped` event; `None` for a thread stopped with all others.
    reason: Option<String>,
    /// The adapter's reason, where `reason` says otherwise.
    adapter_reason: Option<String>,
    /// Its top frame, as [`top_frame`] gives it.
    top_frame: Option<Value>,
}

impl Session {
    /// The state's stop fields from the stopped threads: `stopped` while one thread is,
    /// `running` once none is (an ended session stays ended).
    pub(super) fn show_threads(&mut self) {
        if matches!(self.state.status, Status::Exited | Status::Terminated) {
            return;
        }
        if self.focus.is_none_or(|t| !self.stopped.contains_key(&t)) {
            self.focus = self.stopped.keys().next().copied();
        }
        let focus = self.focus.and_then(|t| Some((t, self.stopped.get(&t)?)));
        match focus {
            Some((thread, stop)) => {
                self.state.status = Status::Stopped;
                self.state.reason = stop.reason.clone();
                self.state.adapter_reason = stop.adapter_reason.clone();
                self.state.thread_id = Some(thread);
                self.state.top_frame = stop.top_frame.clone();
            }
            None => {
                if self.state.status == Status::Stopped {
                    self.state.status = Status::Running;
                }
                self.state.reason = None;
                self.state.adapter_reason = None;
                self.state.thread_id = None;
                self.state.top_frame = None;
            }
        }
        self.state.other_stopped_threads = self
            .stopped
            .iter()
            .filter(|(t, _)| Some(**t) != self.focus)
            .map(|(t, stop)| {
                let mut entry = json!({"thread_id": t, "top_frame": stop.top_frame});
                if let Some(reason) = &stop.reason {
                    entry["reason"] = json!(reason);
                }
                entry
            })
            .collect();
    }

    /// Resumed threads: `thread`, or all. The stops fetched meanwhile are old.
    pub(super) fn resumed(&mut self, thread: Option<i64>) {
        self.stops += 1;
        self.entry_pending = false;
        match thread {
            Some(thread) => {
                self.stopped.remove(&thread);
                self.thread_moments.insert(thread, self.stops);
            }
            None => {
                self.stopped.clear();
                self.all_resumed_at = self.stops;
            }
        }
        self.show_threads();
    }

    /// A `continued` event: DAP ContinuedEvent, only `threadId` continued, unless
    /// `allThreadsContinued`.
    pub(super) fn continued(&mut self, body: ContinuedBody) {
        let thread = body.thread_id.filter(|_| !body.all_threads_continued);
        self.resumed(thread);
        if self.state.status == Status::Starting && self.stopped.is_empty() {
            self.state.status = Status::Running;
        }
        self.changed_state();
    }

    /// A `stopped` event. The state changes only once the adapter has said where the stop is
    /// (one frame of `stackTrace` per stopped thread), so that no reader sees a stop without
    /// its place. A stop of every thread (`allThreadsStopped`), and a stop that names no
    /// thread, ask the adapter for its `threads` first (DAP StoppedEvent: `threadId` is
    /// optional).
    pub(super) fn stopped(&mut self, body: StoppedBody, ctx: &mut Context<Self>) {
        self.stops += 1;
        let stop = self.stops;
        let adapter = self.adapter.clone();
        let named = body.thread_id;
        if let Some(thread) = named {
            self.thread_moments.insert(thread, stop);
        }
        let every = body.all_threads_stopped || named.is_none();
        let last_focus = self.focus;
        let places = async move {
            let mut threads: Vec<i64> = named.into_iter().collect();
            if every {
                let listed = adapter
                    .send(Request {
                        command: "threads".into(),
                        arguments: None,
                    })
                    .await;
                if let Ok(Ok(listed)) = listed {
                    let ids = listed
                        .get("threads")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|t| t.get("id")?.as_i64());
                    for id in ids {
                        if !threads.contains(&id) {
                            threads.push(id);
                        }
                    }
                }
            }
            // The thread of the event, else the one the user was on, else the first.
            let focus = named
                .or(last_focus.filter(|t| threads.contains(t)))
                .or(threads.first().copied());
            if let Some(focus) = focus {
                threads.retain(|t| *t != focus);
                threads.insert(0, focus);
            }
            let mut places = Vec::new();
            for thread in threads.into_iter().take(MAX_STOPPED_THREADS_SHOWN) {
                let trace = adapter.send(Request {
                    command: "stackTrace".into(),
                    arguments: Some(json!({"threadId": thread, "levels": 1})),
                });
                let top = match trace.await {
                    Ok(Ok(body)) => top_frame(&body),
                    _ => None,
                };
                places.push((thread, top));
            }
            (focus, places)
        };
        ctx.spawn(places.into_actor(self).map(move |(focus, places), act, _| {
            act.apply_stop(stop, body, focus, places);
        }));
    }

    /// Applies the stop of moment `stop` with the places fetched for it. A later resume of
    /// every thread makes it old; a later resume or stop of one thread makes that thread's
    /// part old (DAP events of other threads may come between a stop and its `stackTrace`).
    fn apply_stop(
        &mut self,
        stop: u64,
        body: StoppedBody,
        focus: Option<i64>,
        places: Vec<(i64, Option<Value>)>,
    ) {
        if self.all_resumed_at > stop {
            return;
        }
        let old = |act: &Self, thread: i64| act.thread_moments.get(&thread) > Some(&stop);
        let places: Vec<(i64, Option<Value>)> =
            places.into_iter().filter(|(t, _)| !old(self, *t)).collect();
        let had_focus = focus.is_some();
        let focus = focus.filter(|t| places.iter().any(|(p, _)| p == t));
        if had_focus && focus.is_none() {
            // Its own thread ran on meanwhile: the others are stopped still.
            let kept = places
                .into_iter()
                .filter(|(t, _)| !self.stopped.contains_key(t))
                .map(|(t, top)| {
                    let stop = ThreadStop {
                        reason: None,
                        adapter_reason: None,
                        top_frame: top,
                    };
                    (t, stop)
                });
            self.stopped.extend(kept.collect::<Vec<_>>());
            self.show_threads();
            self.changed_state();
            return;
        }
        let (mut reason, mut adapter_reason) = (body.reason, None);
        if std::mem::take(&mut self.entry_pending) && reason != "entry" {
            adapter_reason = Some(std::mem::replace(&mut reason, "entry".into()));
        }
        for (thread, top) in places {
            let own = Some(thread) == focus;
            let entry = ThreadStop {
                reason: own.then(|| reason.clone()),
                adapter_reason: adapter_reason.clone().filter(|_| own),
                top_frame: top,
            };
            // A thread stopped by its own event keeps that reason when all others stop.
            if !own && self.stopped.contains_key(&thread) {
                if let Some(known) = self.stopped.get_mut(&thread) {
                    known.top_frame = entry.top_frame;
                }
                continue;
            }
            self.stopped.insert(thread, entry);
        }
        if focus.is_some() {
            self.focus = focus;
        } else {
            // No thread at all: the stop is shown without one.
            self.state.status = Status::Stopped;
            self.state.reason = Some(reason);
            self.state.adapter_reason = adapter_reason;
            self.changed_state();
            return;
        }
        self.show_threads();
        self.changed_state();
    }
}

/// The first frame of a `stackTrace` body as `{file, line, name, frameId}`.
fn top_frame(body: &Value) -> Option<Value> {
    let frames = body.get("stackFrames")?.as_array()?;
    let frame: StackFrame = serde_json::from_value(frames.first()?.clone()).ok()?;
    let file = frame.source.and_then(|s| s.path).unwrap_or_default();
    Some(json!({"file": file, "line": frame.line, "name": frame.name, "frameId": frame.id}))
}

/// The threads a `continue` left stopped (its response's `allThreadsContinued: false`).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct StillStopped {
    pub(super) others: BTreeMap<i64, ThreadStop>,
    /// The resume's count of [`Session::stops`]: a later stop or resume made this old.
    pub(super) resumed_at: u64,
}

impl Handler<StillStopped> for Session {
    type Result = ();

    fn handle(&mut self, still: StillStopped, _: &mut Context<Self>) {
        if self.stops != still.resumed_at {
            return;
        }
        for (thread, stop) in still.others {
            self.stopped.entry(thread).or_insert(stop);
        }
        self.show_threads();
        self.changed_state();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::Adapter;
    use mcp_bridge::server::Server;

    /// A session of id `s1` whose adapter and server are never reached: the model is plain
    /// data, and a notification without a listener goes nowhere.
    fn session() -> Session {
        let adapter = Context::<Adapter>::new().address();
        let mut session = Session::new("s1".into(), adapter, Server::builder("t", "0").build());
        session.state.status = Status::Running;
        session
    }

    fn stopped(reason: &str, thread: Option<i64>, all: bool) -> StoppedBody {
        let body = json!({"reason": reason, "threadId": thread, "allThreadsStopped": all});
        serde_json::from_value(body).unwrap_or_else(|e| panic!("a stopped body: {e}"))
    }

    fn frame(line: i64) -> Option<Value> {
        Some(json!({"file": "/p.py", "line": line, "name": "f", "frameId": line}))
    }

    /// The part of the state resource that the thread model writes.
    fn shown(session: &Session) -> Value {
        let state = serde_json::to_value(&session.state).unwrap_or_default();
        let keys = [
            "status",
            "reason",
            "adapter_reason",
            "thread_id",
            "top_frame",
            "other_stopped_threads",
        ];
        keys.iter()
            .filter_map(|k| Some((k.to_string(), state.get(*k)?.clone())))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    /// A stop at the next moment (as `stopped` counts them) with `places`, as the adapter's
    /// answers to `stackTrace` bring them; the first place is the focus of an event that names
    /// no thread.
    fn stop(session: &mut Session, body: StoppedBody, places: Vec<(i64, Option<Value>)>) {
        session.stops += 1;
        if let Some(thread) = body.thread_id {
            session.thread_moments.insert(thread, session.stops);
        }
        let focus = body.thread_id.or(places.first().map(|(t, _)| *t));
        session.apply_stop(session.stops, body, focus, places);
    }

    #[test]
    fn a_thread_that_stops_is_shown_until_it_resumes() {
        let mut s = session();
        stop(
            &mut s,
            stopped("breakpoint", Some(7), false),
            vec![(7, frame(3))],
        );
        assert_eq!(
            shown(&s),
            json!({"status": "stopped", "reason": "breakpoint", "thread_id": 7,
                "top_frame": frame(3)})
        );
        s.resumed(Some(7));
        assert_eq!(shown(&s), json!({"status": "running"}));
    }

    #[test]
    fn a_stop_of_every_thread_keeps_the_reason_of_a_thread_that_stopped_by_its_own_event() {
        let mut s = session();
        stop(
            &mut s,
            stopped("breakpoint", Some(1), false),
            vec![(1, frame(3))],
        );
        stop(
            &mut s,
            stopped("pause", Some(2), true),
            vec![(2, frame(9)), (1, frame(4))],
        );
        assert_eq!(
            shown(&s),
            json!({"status": "stopped", "reason": "pause", "thread_id": 2, "top_frame": frame(9),
                "other_stopped_threads": [
                    {"thread_id": 1, "top_frame": frame(4), "reason": "breakpoint"}]})
        );
        // One thread continues (DAP ContinuedEvent without allThreadsContinued): the other
        // is shown.
        let continued = serde_json::from_value(json!({"threadId": 2})).unwrap_or_default();
        s.continued(continued);
        assert_eq!(
            shown(&s),
            json!({"status": "stopped", "reason": "breakpoint", "thread_id": 1,
                "top_frame": frame(4)})
        );
    }

    #[test]
    fn a_place_fetched_before_every_thread_resumed_is_not_applied() {
        let mut s = session();
        s.stops += 1;
        s.thread_moments.insert(5, s.stops);
        let moment = s.stops;
        s.resumed(None);
        s.apply_stop(
            moment,
            stopped("step", Some(5), false),
            Some(5),
            vec![(5, frame(8))],
        );
        assert_eq!(shown(&s), json!({"status": "running"}));
    }

    #[test]
    fn the_threads_of_a_stop_whose_own_thread_ran_on_stay_stopped_without_a_reason() {
        let mut s = session();
        s.stops += 1;
        s.thread_moments.insert(1, s.stops);
        let moment = s.stops;
        // Thread 1 resumes before the places of its stop come back.
        s.resumed(Some(1));
        s.apply_stop(
            moment,
            stopped("breakpoint", Some(1), true),
            Some(1),
            vec![(1, frame(3)), (2, frame(6))],
        );
        assert_eq!(
            shown(&s),
            json!({"status": "stopped", "thread_id": 2, "top_frame": frame(6)})
        );
    }

    #[test]
    fn the_first_stop_after_stop_on_entry_is_the_entry_with_the_adapters_reason_beside_it() {
        let mut s = session();
        s.entry_pending = true;
        stop(
            &mut s,
            stopped("exception", Some(1), false),
            vec![(1, frame(1))],
        );
        assert_eq!(
            shown(&s),
            json!({"status": "stopped", "reason": "entry", "adapter_reason": "exception",
                "thread_id": 1, "top_frame": frame(1)})
        );
        stop(
            &mut s,
            stopped("exception", Some(1), false),
            vec![(1, frame(2))],
        );
        assert_eq!(
            shown(&s),
            json!({"status": "stopped", "reason": "exception", "thread_id": 1,
                "top_frame": frame(2)})
        );
    }

    #[test]
    fn the_top_frame_of_a_stack_trace_is_its_file_line_name_and_id() {
        let body = json!({"stackFrames": [
            {"id": 1000, "name": "main", "line": 12, "column": 1,
                "source": {"name": "p.py", "path": "/w/p.py"}},
            {"id": 1001, "name": "<module>", "line": 30, "column": 1}]});
        assert_eq!(
            top_frame(&body),
            Some(json!({"file": "/w/p.py", "line": 12, "name": "main", "frameId": 1000}))
        );
        let without_source = json!({"stackFrames": [{"id": 1, "name": "??", "line": 0,
            "column": 0}]});
        assert_eq!(
            top_frame(&without_source),
            Some(json!({"file": "", "line": 0, "name": "??", "frameId": 1}))
        );
        assert_eq!(top_frame(&json!({"stackFrames": []})), None);
    }
}
