//! Benchmarks of the pure protocol layer: the work the bridge adds to each request and
//! response, without processes or pipes. Run with `cargo bench --bench protocol`.

use bytes::BytesMut;
use criterion::{Criterion, criterion_group, criterion_main};
use mcp_bridge::protocol::revisions::legacy::Forwarded;
use mcp_bridge::protocol::revisions::modern::RequestMeta;
use mcp_bridge::protocol::rules::list_items::ItemKind;
use mcp_bridge::protocol::rules::shape;
use mcp_bridge::protocol::rules::translate;
use mcp_bridge::protocol::wire::framing::{Frame, FrameCodec};
use mcp_bridge::protocol::wire::id::Id;
use mcp_bridge::protocol::wire::jsonrpc::{self, MAX_CLIENT_DEPTH, MAX_UPSTREAM_DEPTH};
use mcp_bridge::protocol::wire::parts;
use mcp_bridge::protocol::wire::raw;
use serde_json::json;
use std::hint::black_box;
use tokio_util::codec::Decoder;

/// Frames of `chunks` as the codec gives them over its read buffer (each chunk appended as a
/// read appends it).
fn decode_chunks<'a>(
    codec: &mut FrameCodec,
    buf: &mut BytesMut,
    chunks: impl Iterator<Item = &'a [u8]>,
    frames: &mut Vec<Frame>,
) {
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Ok(Some(f)) = codec.decode(buf) {
            frames.push(f);
        }
    }
}

fn meta() -> RequestMeta {
    RequestMeta {
        protocol_version: "2026-07-28".into(),
        client_capabilities: json!({"elicitation": {"form": {}}, "roots": {}}),
        client_info: Some(json!({"name": "mcp-bridge", "version": "0.1.0"})),
        log_level: Some(mcp_bridge::protocol::revisions::log_level::LogLevel::Info),
    }
}

fn benches(c: &mut Criterion) {
    let request = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":"p-42","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#;
    let response = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"echo":"hello world"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}}}}"#;

    c.bench_function("editor request: frame + raw read + forward_params", |b| {
        let mut codec = FrameCodec::new(64 * 1024 * 1024);
        let mut buf = BytesMut::new();
        let mut line = request.to_vec();
        line.push(b'\n');
        let mut frames = Vec::new();
        let m = translate::MetaKeys::of(&meta());
        b.iter(|| {
            decode_chunks(
                &mut codec,
                &mut buf,
                std::iter::once(black_box(&line[..])),
                &mut frames,
            );
            for f in frames.drain(..) {
                if let Frame::Line(l) = f
                    && let Some((_, _, params)) = raw::request(l, MAX_CLIENT_DEPTH)
                {
                    let fwd = translate::forward_params(params, &m, || Some(json!("bp-1")));
                    let out = parts::request_frame(
                        &Id::Int(1),
                        "tools/call",
                        fwd.map(|f| f.params.to_parts()).unwrap_or_default(),
                    );
                    black_box(out.len());
                }
            }
        })
    });

    c.bench_function("upstream response: raw read + shape_result + frame", |b| {
        let line = bytes::Bytes::from_static(response);
        b.iter(|| {
            if let Some((_, result)) = raw::response(black_box(line.clone()), MAX_UPSTREAM_DEPTH)
                && let Ok(members) = shape::ResultMembers::read(result)
                && let Ok(shaped) =
                    shape::shape_result(Forwarded::ToolsCall, members, None, &mut Vec::new())
            {
                let out = parts::response_frame(&Id::Int(42), shaped);
                black_box(out.len());
            }
        })
    });

    let big: Vec<u8> = {
        let mut v =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#.to_vec();
        v.extend(std::iter::repeat_n(b'x', 1024 * 1024));
        v.extend_from_slice(b"\"}]}}\n");
        v
    };
    c.bench_function("framing: 1 MiB line in 64 KiB chunks", |b| {
        b.iter(|| {
            let mut codec = FrameCodec::new(64 * 1024 * 1024);
            let mut buf = BytesMut::new();
            let mut frames = Vec::new();
            decode_chunks(
                &mut codec,
                &mut buf,
                big.chunks(64 * 1024).map(black_box),
                &mut frames,
            );
            black_box(frames.len())
        })
    });

    c.bench_function("depth check: 1 MiB line", |b| {
        b.iter(|| black_box(jsonrpc::nesting_depth(black_box(&big), MAX_CLIENT_DEPTH)))
    });

    // What keeping numbers' text, replacing unpaired surrogates and recovering
    // ids from whole lines cost.
    let numbers: Vec<u8> = {
        let items: Vec<String> = (0..200)
            .map(|i| match i % 4 {
                0 => format!("{i}"),
                1 => format!("-{i}.25"),
                2 => format!("{i}e-3"),
                _ => format!("12345678901234567890{i}"),
            })
            .collect();
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"n"}}],"structuredContent":{{"n":[{}]}}}}}}"#,
            items.join(",")
        )
        .into_bytes()
    };
    c.bench_function(
        "upstream response with 200 numbers: parse + shape_result + serialize",
        |b| {
            b.iter(|| {
                if let Ok(jsonrpc::Message::Response { result, .. }) =
                    jsonrpc::parse(black_box(&numbers), MAX_UPSTREAM_DEPTH)
                {
                    let mut notes = Vec::new();
                    let shaped = translate::shape_result(Forwarded::ToolsCall, result, &mut notes)
                        .unwrap_or_default();
                    let out = serde_json::to_vec(&jsonrpc::response(&Id::Int(42), shaped));
                    black_box(out.map(|v| v.len()).unwrap_or(0));
                }
            })
        },
    );

    let surrogate: Vec<u8> = format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"{} \ud83d"}}]}}}}"#,
        "s".repeat(1024)
    )
    .into_bytes();
    c.bench_function(
        "upstream response, 1 KiB text with an unpaired surrogate: parse",
        |b| b.iter(|| black_box(jsonrpc::parse(black_box(&surrogate), MAX_UPSTREAM_DEPTH).is_ok())),
    );

    c.bench_function(
        "framing: 1 MiB line over a 64 KiB limit (id recovery)",
        |b| {
            b.iter(|| {
                let mut codec = FrameCodec::new(64 * 1024);
                let mut buf = BytesMut::new();
                let mut frames = Vec::new();
                decode_chunks(
                    &mut codec,
                    &mut buf,
                    big.chunks(64 * 1024).map(black_box),
                    &mut frames,
                );
                black_box(frames.len())
            })
        },
    );

    // A valid tools/list of 50 tools as servers write them: the cost of the 2025-11-25 check of
    // each item (list_items) against the whole shaping, and one check alone.
    let tool = json!({"name": "search_files", "title": "Search files",
        "description": "Searches the files of the workspace for a pattern.",
        "inputSchema": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "A regular expression"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "max_results": {"type": "integer", "minimum": 1}},
            "required": ["pattern"]},
        "annotations": {"readOnlyHint": true}});
    let tools: Vec<serde_json::Value> = (0..50)
        .map(|i| {
            let mut t = tool.clone();
            t["name"] = json!(format!("tool_{i}"));
            t
        })
        .collect();
    let list = json!({"resultType": "complete", "tools": tools});
    let _ = ItemKind::Tool.check(&tool); // compiles the schema before the measurement
    c.bench_function("tools/list of 50 tools: shape_result", |b| {
        b.iter(|| {
            let mut notes = Vec::new();
            let shaped =
                translate::shape_result(Forwarded::ToolsList, black_box(list.clone()), &mut notes);
            black_box(shaped.is_ok())
        })
    });
    c.bench_function("tools/list of 50 tools: clone only", |b| {
        b.iter(|| black_box(black_box(&list).clone()))
    });
    c.bench_function("one tool: 2025-11-25 check (list_items)", |b| {
        b.iter(|| black_box(ItemKind::Tool.check(black_box(&tool)).is_ok()))
    });
}

criterion_group!(protocol, benches);
criterion_main!(protocol);
