//! Black-box tests of `mcp-dap`'s state against DAP's event model, thread by thread: stops
//! that name no thread or every thread, `continued` for one thread, the `continue` answer's
//! `allThreadsContinued`, a `breakpoint` event right after the `setBreakpoints` answer, and an
//! entry stop the adapter calls something else. The sequences come on demand from the
//! scripted adapter (`common/dap_script.py`): its `evaluate` sends the events it is given.

use crate::common;
use crate::dap::{call, call_error, launch_scripted, listen_to, read_text, start_scripted};

use common::*;
use serde_json::{Value, json};

const OUTPUT_URI: &str = "dap://sessions/s1/output";

/// The scripted adapter's place of `thread`: one frame, `f{thread}` at line `10 * thread`.
fn place(thread: i64) -> Value {
    json!({"file": "/scripted/prog.c", "line": 10 * thread, "name": format!("f{thread}"),
        "frameId": 100 * thread})
}

/// The session's state resource now.
fn state_of(b: &mut Bridge, id: &str) -> Value {
    parse_json(&read_text(b, id, "dap://sessions/s1/state")).expect("the state is JSON")
}

/// Has the scripted adapter send `events`, then an output line `mark`; answers once the
/// output holds it: the Session applies the adapter's events in their order, so the events
/// before it are applied.
fn send_events(b: &mut Bridge, id: &str, mut events: Vec<Value>) {
    events.push(json!({"event": "output", "body": {"category": "stdout", "output": "mark\n"}}));
    let expression = Value::Array(events).to_string();
    call(
        b,
        id,
        "evaluate",
        json!({"session": "s1", "expression": expression, "frame_id": 0}),
    );
    for n in 0..8 {
        let update = b.recv_notification("notifications/resources/updated");
        assert_eq!(update["params"]["uri"], OUTPUT_URI);
        if read_text(b, &format!("{id}-out-{n}"), OUTPUT_URI).ends_with("mark\n") {
            return;
        }
    }
    panic!("the output did not end with mark");
}

#[test]
fn a_stop_without_a_thread_asks_for_the_threads_and_the_tools_use_the_stopped_one() {
    let mut b = start_scripted();
    let launched = launch_scripted(
        &mut b,
        json!({"threads": [[1, "main"], [2, "worker"]]}),
        json!({"reason": "pause", "allThreadsStopped": true}),
    );
    // The entry stop of a launch with stopOnEntry is shown as the entry, with the adapter's
    // word beside it.
    assert_eq!(
        launched["state"],
        json!({"session": "s1", "status": "stopped", "reason": "entry",
            "adapter_reason": "pause", "thread_id": 1, "top_frame": place(1),
            "other_stopped_threads": [{"thread_id": 2, "top_frame": place(2)}]})
    );
    let stack = call(&mut b, "2", "stack_trace", json!({"session": "s1"}));
    assert_eq!(
        stack,
        json!({"threadId": 1, "frames": [{"frameId": 100, "name": "f1",
            "at": "/scripted/prog.c:10", "file": "/scripted/prog.c", "line": 10,
            "text": null}]})
    );
    let stack = call(
        &mut b,
        "3",
        "stack_trace",
        json!({"session": "s1", "thread_id": 2}),
    );
    assert_eq!(stack["threadId"], 2, "{stack}");
    // A step resumes every thread (DAP `next` without `singleThread`); the adapter stops
    // the stepped one.
    let step = call(&mut b, "4", "next", json!({"session": "s1"}));
    assert_eq!(
        step,
        json!({"session": "s1", "status": "stopped", "reason": "step", "thread_id": 1,
            "top_frame": place(1), "resumed_thread_id": 1})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn continued_resumes_only_the_threads_it_names() {
    let mut b = start_scripted();
    listen_to(&mut b, &[OUTPUT_URI]);
    let launched = launch_scripted(
        &mut b,
        json!({"threads": [[1, "main"], [2, "worker"], [3, "reader"]],
            "all_threads_continued": false}),
        json!({"reason": "entry", "threadId": 1, "allThreadsStopped": true}),
    );
    assert_eq!(
        launched["state"]["other_stopped_threads"],
        json!([{"thread_id": 2, "top_frame": place(2)}, {"thread_id": 3, "top_frame": place(3)}])
    );
    // The `continue` answer says `allThreadsContinued: false`: the other threads are stopped
    // still.
    let continued = call(
        &mut b,
        "2",
        "continue",
        json!({"session": "s1", "thread_id": 3}),
    );
    assert_eq!(
        continued,
        json!({"session": "s1", "status": "stopped", "reason": "entry", "thread_id": 1,
            "top_frame": place(1),
            "other_stopped_threads": [{"thread_id": 2, "top_frame": place(2)}],
            "resumed_thread_id": 3})
    );
    // A `continued` event for thread 2 only.
    send_events(
        &mut b,
        "3",
        vec![json!({"event": "continued", "body": {"threadId": 2,
            "allThreadsContinued": false}})],
    );
    assert_eq!(
        state_of(&mut b, "4"),
        json!({"session": "s1", "status": "stopped", "reason": "entry", "thread_id": 1,
            "top_frame": place(1)})
    );
    let stack = call(&mut b, "5", "stack_trace", json!({"session": "s1"}));
    assert_eq!(stack["threadId"], 1, "{stack}");
    // `allThreadsContinued`: the last one runs too.
    send_events(
        &mut b,
        "6",
        vec![json!({"event": "continued", "body": {"threadId": 1,
            "allThreadsContinued": true}})],
    );
    assert_eq!(
        state_of(&mut b, "7"),
        json!({"session": "s1", "status": "running"})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

#[test]
fn a_breakpoint_event_right_after_the_set_breakpoints_answer_is_the_later_word() {
    let mut b = start_scripted();
    launch_scripted(
        &mut b,
        json!({"threads": [[1, "main"]], "verify_after_set": true}),
        json!({"reason": "entry", "threadId": 1}),
    );
    let set = call(
        &mut b,
        "2",
        "set_breakpoints",
        json!({"session": "s1", "source": "/scripted/prog.c", "lines": [5]}),
    );
    // The answer itself says unverified; the event after it says verified.
    assert_eq!(
        set,
        json!({"source": "/scripted/prog.c", "breakpoints": [{"id": 100, "verified": false,
            "source": "/scripted/prog.c", "line": 5}]})
    );
    // The step's stop is read after the event: the state once the step is answered has the
    // event's word.
    let step = call(&mut b, "3", "next", json!({"session": "s1"}));
    assert_eq!(step["status"], "stopped", "{step}");
    let state: Value =
        parse_json(&read_text(&mut b, "4", "dap://sessions/s1/state")).expect("the state is JSON");
    assert_eq!(
        state["breakpoints"],
        json!([{"id": 100, "verified": true, "source": "/scripted/prog.c", "line": 5}]),
        "{state}"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}

/// A multithreaded program stops at a breakpoint in one thread while the others run: `pause`
/// stops a running thread then, the one named or, by default, the first that runs; a thread
/// that is stopped already is not paused again. `wait` answers at once while a thread is
/// stopped.
#[test]
fn pause_stops_a_running_thread_while_another_is_stopped() {
    let mut b = start_scripted();
    let launched = launch_scripted(
        &mut b,
        json!({"threads": [[1, "main"], [2, "worker"], [3, "reader"]]}),
        json!({"reason": "breakpoint", "threadId": 1}),
    );
    let at_breakpoint = json!({"session": "s1", "status": "stopped", "reason": "entry",
        "adapter_reason": "breakpoint", "thread_id": 1, "top_frame": place(1)});
    assert_eq!(launched["state"], at_breakpoint);
    assert_eq!(
        call(&mut b, "2", "wait", json!({"session": "s1"})),
        at_breakpoint
    );
    let paused = call(
        &mut b,
        "3",
        "pause",
        json!({"session": "s1", "thread_id": 3}),
    );
    assert_eq!(
        paused,
        json!({"session": "s1", "status": "stopped", "reason": "pause", "thread_id": 3,
            "top_frame": place(3), "other_stopped_threads": [
                {"thread_id": 1, "top_frame": place(1), "reason": "entry"}]})
    );
    // Without `thread_id`: the thread that runs.
    let paused = call(&mut b, "4", "pause", json!({"session": "s1"}));
    let every_thread = json!({"session": "s1", "status": "stopped", "reason": "pause",
        "thread_id": 2, "top_frame": place(2), "other_stopped_threads": [
            {"thread_id": 1, "top_frame": place(1), "reason": "entry"},
            {"thread_id": 3, "top_frame": place(3), "reason": "pause"}]});
    assert_eq!(paused, every_thread);
    // The state resource shows every stopped thread.
    assert_eq!(state_of(&mut b, "5"), every_thread);
    assert_eq!(
        call_error(
            &mut b,
            "6",
            "pause",
            json!({"session": "s1", "thread_id": 1})
        ),
        "thread 1 is stopped already"
    );
    assert_eq!(
        call_error(&mut b, "7", "pause", json!({"session": "s1"})),
        "the program is not running (status \"stopped\")"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(RECV_TIMEOUT), Some(0));
}
