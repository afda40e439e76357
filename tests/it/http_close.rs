//! Black-box tests of how the server API over HTTP (`server::http`, `embed::serve_http`)
//! closes a connection: a client that pipelined requests and reads their answers only once
//! the server has stopped reads each answer whole, to the end of the connection, and no reset
//! takes them from it (RFC 9112 §9.6: a lingering close). The client is a raw TCP socket.

use crate::common::http_serve::*;
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// Requests pipelined on the one connection: their answers are far more than the socket
/// buffers of both ends hold, so the server is still writing when it stops.
const PIPELINED_REQUESTS: u64 = 2000;
/// The text each `echo` call sends (and its answer carries back).
const ECHO_TEXT_BYTES: usize = 4000;

/// A 2026-07-28 `tools/call` of the example's `echo` with `text`, as one HTTP/1.1 request.
fn echo_request(authority: &str, id: u64, text: &str) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": text},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn echo_result(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
        "content": [{"type": "text", "text": text}],
        "_meta": {"io.modelcontextprotocol/serverInfo":
            {"name": "embedded-example", "version": "1.0.0"}}}})
}

/// Bytes that arrived on `stream` and are not read yet (FIONREAD).
fn unread_bytes(stream: &TcpStream) -> i32 {
    use std::os::fd::AsRawFd;
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int to a valid pointer; the descriptor is open.
    let rc = unsafe { libc::ioctl(stream.as_raw_fd(), libc::FIONREAD, &mut unread) };
    assert_eq!(rc, 0, "FIONREAD");
    unread
}

/// Waits (at most [`WAIT`]) until `done` holds, checking every 10 ms.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < end, "{what} not within {WAIT:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The JSON bodies of the HTTP answers in `bytes`, each `200` with `Content-Length`; an
/// answer cut short fails the test.
fn answers(mut bytes: &[u8]) -> Vec<Value> {
    let mut bodies = Vec::new();
    while !bytes.is_empty() {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("an answer's head cut short after {} answers", bodies.len()));
        let head = String::from_utf8_lossy(&bytes[..end]);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().ok())?
            })
            .unwrap_or_else(|| panic!("no Content-Length in {head}"));
        let body_start = end + 4;
        assert!(
            bytes.len() >= body_start + length,
            "an answer's body cut short after {} answers",
            bodies.len()
        );
        let body = &bytes[body_start..body_start + length];
        bodies.push(serde_json::from_slice(body).unwrap_or(Value::Null));
        bytes = &bytes[body_start + length..];
    }
    bodies
}

#[tokio::test]
async fn pipelined_answers_read_after_the_stop_arrive_whole_up_to_the_end_without_a_reset() {
    let server = HttpServer::example();
    let authority = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let text = "x".repeat(ECHO_TEXT_BYTES);
    let requests: Vec<u8> = (1..=PIPELINED_REQUESTS)
        .flat_map(|id| echo_request(&authority, id, &text))
        .collect();
    let mut stream = TcpStream::connect(&authority).expect("connect");
    let mut writer = stream.try_clone().expect("a second handle of the socket");
    // The writes block once both ends' buffers are full: a thread of their own. The server
    // reads (and drops) what follows its last answer until the client closes: no write
    // meets a reset.
    let writing = std::thread::spawn(move || writer.write_all(&requests).map_err(|e| e.kind()));
    let (stream, read) = tokio::task::spawn_blocking(move || {
        // The server has answered some of the requests, and nothing of it is read.
        wait_until("a first answer", || unread_bytes(&stream) > 0);
        server.signal("-TERM");
        // The stop is in effect once the listener is closed.
        wait_until("the closed listener", || {
            TcpStream::connect(&authority)
                .is_err_and(|error| error.kind() == ErrorKind::ConnectionRefused)
        });
        let mut read = Vec::new();
        let ended = stream.read_to_end(&mut read).map(|_| ());
        (stream, (ended, read, server))
    })
    .await
    .expect("the reading task");
    let (ended, read, mut server) = read;
    assert_eq!(
        ended.map_err(|error| error.kind()),
        Ok(()),
        "the connection ended with an error after {} bytes",
        read.len()
    );
    let answers = answers(&read);
    assert!(!answers.is_empty());
    for (n, answer) in answers.iter().enumerate() {
        assert_eq!(*answer, echo_result(n as u64 + 1, &text), "answer {n}");
    }
    assert_eq!(writing.join().ok(), Some(Ok(())), "the requests' writes");
    drop(stream);
    let status = server.wait_exit(WAIT).await;
    assert_eq!(status.and_then(|s| s.code()), Some(0));
}
