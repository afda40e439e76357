//! Test tools of the server process itself: a cancellable wait, an exit without an answer, a
//! grandchild that outlives the server.

use std::time::Duration;

use mcp_bridge::server::{Outcome, RequestContext, RpcError};
use serde_json::Value;

use crate::tool::{Failure, ToolResult, integer};

pub(crate) async fn sleep(a: Value, _: RequestContext) -> ToolResult {
    let ms = integer(&a, "ms", 0..=i64::from(u32::MAX))?;
    // Cancellation drops this future, which ends the sleep.
    tokio::time::sleep(Duration::from_millis(ms.unsigned_abs())).await;
    Ok(Outcome::text("slept"))
}

pub(crate) async fn crash(a: Value, _: RequestContext) -> ToolResult {
    let code = integer(&a, "code", i64::from(i32::MIN)..=i64::from(i32::MAX))?;
    std::process::exit(i32::try_from(code).unwrap_or(1));
}

/// `sleep 300` inherits stdout and stderr on purpose: a real server's children often do, and
/// the bridge must not wait for the pipe to close when it stops the server.
pub(crate) async fn spawn_grandchild(_: Value, _: RequestContext) -> ToolResult {
    let child = std::process::Command::new("sleep")
        .arg("300")
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| Failure::Rpc(RpcError::internal(format!("spawn failed: {e}"))))?;
    Ok(Outcome::text(child.id().to_string()))
}
