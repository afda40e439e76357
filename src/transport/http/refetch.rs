//! A `tools/call` refused with -32020 (HeaderMismatch) because the bridge's `x-mcp-header`
//! annotations are older than the server's: `tools/list` is fetched again and the call is
//! sent once more with the new `Mcp-Param-*` headers (2026-07-28 transports/http; the rules
//! are pure, in
//! [`crate::transport::http::tools_refetch`]). One re-fetch and at most one retry per call: the
//! retry's answer, a -32020 too, goes to the editor as it came.

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;
use std::cell::Cell;
use std::rc::Rc;

use super::Shared;
use super::headers;
use super::limit;
use super::probe::Outgoing;
use super::rewrite::rewrite;
use super::signed::post;
use crate::protocol::rules::remote::HeaderParam;
use crate::transport::http::tools_refetch::{self, Found};
use crate::transport::upstream::RequestFailure;

/// The id of the re-fetch's `tools/list` requests (answered on their own POST, never seen by
/// the correlation layer).
pub const REFETCH_ID: &str = "mcp-bridge-tools-refetch";

/// After the `tools/call` `call`, sent with the annotations `sent`, got `failure`: the
/// annotations to send it again with, when `failure` is a -32020 and a fresh `tools/list`
/// gives the tool other annotations. `None`: no retry, `failure` stands (another error, the
/// re-fetch failed, the tool is gone or dropped, or its annotations did not change). The
/// re-fetched tools' annotations replace the known ones for every later call.
pub(super) async fn fresh_params(
    sh: &Shared,
    call: &Value,
    sent: &[HeaderParam],
    failure: &RequestFailure,
) -> Option<Vec<HeaderParam>> {
    if !failure
        .error
        .as_ref()
        .is_some_and(tools_refetch::is_header_mismatch)
    {
        return None;
    }
    let name = call.get("params")?.get("name")?.as_str()?;
    let mut cursor = None;
    for _ in 0..tools_refetch::MAX_PAGES {
        let request = tools_refetch::list_request(REFETCH_ID, call, cursor.as_ref());
        let Some(mut result) = fetch(sh, &request).await else {
            tracing::debug!(target: "http", "tools/call {name}: -32020, and fetching tools/list again failed: no retry");
            return None;
        };
        rewrite(sh, "tools/list", &mut result);
        let params = sh.tool_params.borrow().get(name).cloned();
        match tools_refetch::look_up(&result, name, params.as_deref(), sent) {
            Found::Retry(p) => {
                tracing::info!(target: "http", "tools/call {name}: the upstream refused its Mcp-Param headers (-32020); its x-mcp-header annotations changed in tools/list: sending it once more");
                return Some(p);
            }
            Found::Same => {
                tracing::debug!(target: "http", "tools/call {name}: -32020 with the annotations of a fresh tools/list: no retry");
                return None;
            }
            Found::Missing => {
                tracing::debug!(target: "http", "tools/call {name}: -32020, and the tool is not in a fresh tools/list: no retry");
                return None;
            }
            Found::Next(c) => cursor = Some(c),
        }
    }
    None
}

/// POSTs one `tools/list` of the re-fetch and returns its result (JSON or an SSE stream whose
/// other messages are dropped); `None` for any failure.
async fn fetch(sh: &Shared, request: &Value) -> Option<Value> {
    let body = Bytes::from(serde_json::to_vec(request).ok()?);
    let message = Outgoing::read(&body)?;
    let headers = || headers::for_message(&message, None, &sh.headers);
    let resp = post(sh, headers(), &body, headers).await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let sse = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
    if !sse {
        let body = limit::read_body(resp, sh.max_response_bytes).await.ok()?;
        return result_of(&body);
    }
    let bytes = limit::sse_bytes(resp, sh.max_response_bytes, Rc::new(Cell::new(false)));
    let mut events = std::pin::pin!(sse_stream::SseByteStream::new(bytes));
    while let Some(Ok(event)) = events.next().await {
        if let Some(r) = event.data.and_then(|d| result_of(d.as_bytes())) {
            return Some(r);
        }
    }
    None
}

/// The result of the response to [`REFETCH_ID`], if `body` is that.
fn result_of(body: &[u8]) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(body).ok()?;
    if v.get("id")?.as_str()? != REFETCH_ID {
        return None;
    }
    v.get_mut("result").map(Value::take)
}
