//! Test tools that misbehave on the output: floods, raw lines (also after a cancel), lines
//! written past the server's queue, a closed stdout, a response written by hand.

use std::time::Duration;

use mcp_bridge::server::{ListenEvent, LogLevel, Outcome, RequestContext, RpcError};
use serde_json::{Value, json};

use crate::tool::{Failure, ToolResult, field, integer, string};

/// Longest text of `large_text`, in bytes (16 MiB).
pub(crate) const LARGE_TEXT_MAX_BYTES: i64 = 16 * 1024 * 1024;

pub(crate) async fn large_text(a: Value, _: RequestContext) -> ToolResult {
    let bytes = integer(&a, "bytes", 0..=LARGE_TEXT_MAX_BYTES)?;
    Ok(Outcome::text(
        "x".repeat(usize::try_from(bytes).unwrap_or(0)),
    ))
}

/// A server that closes its stdout but does not exit: fd 1 becomes `/dev/null` (the server
/// writes fd 1 itself, so the pipe to the client has no writer left), the process lives on.
pub(crate) async fn close_stdout(_: Value, _: RequestContext) -> ToolResult {
    let null = std::fs::File::open("/dev/null")
        .map_err(|e| Failure::Rpc(RpcError::internal(format!("open /dev/null: {e}"))))?;
    // SAFETY: dup2 onto fd 1, which this process owns; /dev/null stays open as fd 1.
    let rc = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 1) };
    if rc != 1 {
        return Err(Failure::Rpc(RpcError::internal("dup2 failed")));
    }
    Ok(Outcome::text("closed"))
}

pub(crate) async fn emit(a: Value, ctx: RequestContext) -> ToolResult {
    let bad = || Failure::Arguments("argument lines must be an array of strings".into());
    let lines = field(&a, "lines")?.as_array().ok_or_else(bad)?;
    let lines: Vec<String> = lines
        .iter()
        .map(|line| line.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    for line in lines {
        ctx.write_raw_line(line).await;
    }
    Ok(Outcome::text("emitted"))
}

/// Most lines of `emit_and_exit`.
const EMIT_AND_EXIT_MAX_LINES: i64 = 1_000_000;

/// Misbehaves on purpose: its last lines and its answer are written straight to fd 1
/// (blocking, past the server's output queue, which is empty while it waits for this call),
/// and the process exits the moment the last byte is in the pipe, long before the client has
/// read it all.
pub(crate) async fn emit_and_exit(a: Value, ctx: RequestContext) -> ToolResult {
    use std::io::Write;
    let line = string(&a, "line")?;
    let count = integer(&a, "count", 0..=EMIT_AND_EXIT_MAX_LINES)?;
    let code = integer(&a, "code", i64::from(i32::MIN)..=i64::from(i32::MAX))?;
    let answer = json!({"jsonrpc": "2.0", "id": ctx.request_id(),
        "result": {"content": [{"type": "text", "text": "emitted"}]}});
    let mut text = format!("{line}\n").repeat(usize::try_from(count).unwrap_or(0));
    text.push_str(&format!("{answer}\n"));
    let _ = tokio::task::spawn_blocking(move || {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        std::process::exit(i32::try_from(code).unwrap_or(1));
    })
    .await;
    Ok(Outcome::text("not reached"))
}

pub(crate) async fn garbage_flood(a: Value, ctx: RequestContext) -> ToolResult {
    use std::io::Write;
    let count = integer(&a, "count", 0..=1_000_000)?;
    let stderr_count = integer(&a, "stderr_count", 0..=1_000_000)?;
    let tag = a
        .get("tag")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    for n in 1..=count {
        ctx.write_raw_line(format!("not json {n}")).await;
    }
    let lines: String = (1..=stderr_count)
        .map(|n| format!("fixture stderr {tag} {n}\n"))
        .collect();
    let _ =
        tokio::task::spawn_blocking(move || std::io::stderr().write_all(lines.as_bytes())).await;
    Ok(Outcome::text("flooded"))
}

pub(crate) async fn progress_flood(a: Value, ctx: RequestContext) -> ToolResult {
    let count = integer(&a, "count", 0..=1_000_000)?;
    for n in 1..=count {
        ctx.progress(n as f64, Some(count as f64), None).await;
    }
    Ok(Outcome::text("flooded"))
}

/// Misbehaves on purpose after a cancel, like a server whose work does not stop at once: the
/// late lines reach the client after its `notifications/cancelled`. The tools list change
/// after them tells a test that every late line came before it (one output queue).
pub(crate) async fn chatter(a: Value, ctx: RequestContext) -> ToolResult {
    let interval = Duration::from_millis(integer(&a, "interval_ms", 1..=600_000)?.unsigned_abs());
    let late = integer(&a, "late", 0..=10_000)?;
    let after = ctx.clone();
    tokio::spawn(async move {
        after.cancelled().await;
        for n in 1..=late {
            let text = format!("late {n}");
            if let Some(token) = after.progress_token() {
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1_000_000 + n, "message": text}});
                after
                    .write_raw_line_even_after_the_end(progress.to_string())
                    .await;
            }
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "chatter", "data": text}});
            after
                .write_raw_line_even_after_the_end(log.to_string())
                .await;
        }
        after.server().notify(ListenEvent::ToolsListChanged);
    });
    for n in 1u64.. {
        let text = format!("tick {n}");
        ctx.progress(n as f64, None, Some(&text)).await;
        ctx.log(LogLevel::Info, Some("chatter"), Value::String(text))
            .await;
        tokio::time::sleep(interval).await;
    }
    Ok(Outcome::text("never"))
}

pub(crate) async fn log_flood(a: Value, ctx: RequestContext) -> ToolResult {
    let count = integer(&a, "count", 0..=100_000_000)?;
    for n in 1..=count {
        let data = Value::String(format!("flood {n}"));
        if !ctx.log(LogLevel::Info, None, data).await {
            break;
        }
    }
    Ok(Outcome::text("flooded"))
}

/// Misbehaves on purpose: writes its own response line, unchecked (big numbers, unpaired
/// surrogate escapes, repeated keys, lines too deep or too long), around the request's id.
pub(crate) async fn respond_raw(a: Value, ctx: RequestContext) -> ToolResult {
    let before = string(&a, "before")?;
    let after = string(&a, "after")?;
    let line = format!("{before}{}{after}", ctx.request_id());
    ctx.write_raw_line(line).await;
    // The answer is out; this request never answers again.
    ctx.cancelled().await;
    Ok(Outcome::text("cancelled"))
}
