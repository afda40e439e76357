//! The codec (tokio_util Decoder/Encoder) of DAP's base protocol: a header part of
//! `name: value` lines, each ended by `\r\n`, closed by an empty line, then a body of exactly
//! `Content-Length` bytes (DAP specification, "Base Protocol"). The header and the body are
//! bounded, so an adapter that writes garbage or a huge message costs bounded memory: a body
//! over the limit is read through and dropped, its frame's end being known, and only the
//! members that say what it was ([`skim`](super::skim)) are kept.

use bytes::{Buf, BytesMut};
use serde_json::Value;
use tokio_util::codec::{Decoder, Encoder};

use super::skim::Skim;
use super::types::Incoming;

/// Longest header part accepted, in bytes, its closing empty line included. DAP defines only
/// `Content-Length` (and reserves `Content-Type`), so a real header is a few dozen bytes.
pub const MAX_HEADER_BYTES: usize = 1024;

/// Largest body read, in bytes. A larger body (a `variables` response of every child of a
/// huge array) is skipped: read in the reader's chunks and dropped ([`Frame::Oversized`]).
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The end of the header part: an empty line after the last header line.
const HEADER_END: &[u8] = b"\r\n\r\n";

/// One message read off the adapter's stream.
#[derive(Debug)]
pub enum Frame {
    /// A body that is a DAP message.
    Message(Incoming),
    /// A well-framed body that is not a DAP message (not JSON, or no known `type`): the
    /// frame boundaries are still known, so the stream goes on; the text says why.
    Unreadable(String),
    /// A body over [`MAX_BODY_BYTES`], read through and dropped: the stream stays in step.
    Oversized(Oversized),
}

/// What is known of a body too large to read: its length, and its top-level scalar members
/// `type`, `seq`, `request_seq`, `command`, `event` where it has them.
#[derive(Debug, Clone, PartialEq)]
pub struct Oversized {
    /// The body's length, in bytes.
    pub body_bytes: usize,
    /// Its top-level members of [`Skim`].
    pub members: serde_json::Map<String, Value>,
}

impl Oversized {
    /// The `request_seq` of a response, the request it answers.
    pub fn request_seq(&self) -> Option<i64> {
        if self.members.get("type").and_then(Value::as_str) != Some("response") {
            return None;
        }
        self.members.get("request_seq").and_then(Value::as_i64)
    }
}

/// A framing error: the stream cannot be read any further, because the next message's start
/// is unknown.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum FramingError {
    /// No empty line within [`MAX_HEADER_BYTES`].
    #[error("the header part is longer than {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    /// A header without `Content-Length`, with a value that is not a length, or not text.
    #[error("bad header: {0}")]
    BadHeader(String),
    /// The stream ended inside a message.
    #[error("the stream ended inside a message ({0} bytes unread)")]
    Truncated(usize),
    /// The read failed.
    #[error("read error: {0}")]
    Io(String),
}

impl From<std::io::Error> for FramingError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}

/// The DAP codec. Decodes [`Frame`]s; encodes a JSON value as one framed message.
#[derive(Debug, Default)]
pub struct DapCodec {
    /// The body length of the message whose header was read, until its body is complete.
    body_len: Option<usize>,
    /// The body over [`MAX_BODY_BYTES`] being skipped: its bytes still to come, and its scan.
    skipping: Option<(usize, Oversized, Skim)>,
}

/// The body length named by a header part (without its closing empty line). Header names are
/// compared without regard to case, as HTTP's are (the base protocol borrows HTTP's form);
/// other headers are ignored.
fn content_length(header: &[u8]) -> Result<usize, FramingError> {
    let text = std::str::from_utf8(header)
        .map_err(|_| FramingError::BadHeader("not UTF-8 text".into()))?;
    let mut length = None;
    for line in text.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(FramingError::BadHeader(format!(
                "no `name: value` in {line:?}"
            )));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length = Some(value.parse::<usize>().map_err(|_| {
                FramingError::BadHeader(format!("Content-Length {value:?} is not a length"))
            })?);
        }
    }
    length.ok_or_else(|| FramingError::BadHeader("no Content-Length".into()))
}

/// A body read into a message; a body that is no DAP message is [`Frame::Unreadable`].
fn read_body(body: &[u8]) -> Frame {
    match serde_json::from_slice::<Incoming>(body) {
        Ok(message) => Frame::Message(message),
        Err(e) => Frame::Unreadable(e.to_string()),
    }
}

impl Decoder for DapCodec {
    type Item = Frame;
    type Error = FramingError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        if let Some((left, mut oversized, mut skim)) = self.skipping.take() {
            // The bytes at hand are scanned and dropped: the buffer never holds more than one
            // read's worth of the body.
            let take = left.min(src.len());
            skim.feed(&src[..take]);
            src.advance(take);
            if take < left {
                self.skipping = Some((left - take, oversized, skim));
                return Ok(None);
            }
            oversized.members = skim.members().clone();
            return Ok(Some(Frame::Oversized(oversized)));
        }
        let body_len = match self.body_len {
            Some(len) => len,
            None => {
                let Some(end) = memchr::memmem::find(src, HEADER_END) else {
                    if src.len() >= MAX_HEADER_BYTES {
                        return Err(FramingError::HeaderTooLong);
                    }
                    return Ok(None);
                };
                if end + HEADER_END.len() > MAX_HEADER_BYTES {
                    return Err(FramingError::HeaderTooLong);
                }
                let len = content_length(&src[..end])?;
                src.advance(end + HEADER_END.len());
                if len > MAX_BODY_BYTES {
                    let oversized = Oversized {
                        body_bytes: len,
                        members: serde_json::Map::new(),
                    };
                    self.skipping = Some((len, oversized, Skim::default()));
                    return self.decode(src);
                }
                self.body_len = Some(len);
                len
            }
        };
        if src.len() < body_len {
            src.reserve(body_len - src.len());
            return Ok(None);
        }
        self.body_len = None;
        let body = src.split_to(body_len);
        Ok(Some(read_body(&body)))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() && self.body_len.is_none() && self.skipping.is_none() => {
                Ok(None)
            }
            None if src.is_empty() => Err(FramingError::Truncated(0)),
            None => Err(FramingError::Truncated(src.len())),
        }
    }
}

impl Encoder<&Value> for DapCodec {
    type Error = std::io::Error;

    fn encode(&mut self, message: &Value, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        let body = serde_json::to_vec(message)?;
        dst.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        dst.extend_from_slice(&body);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dap::types::Incoming;
    use serde_json::json;

    fn framed(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    fn decode_all(codec: &mut DapCodec, buf: &mut BytesMut) -> Vec<Frame> {
        let mut out = Vec::new();
        while let Some(frame) = codec.decode(buf).expect("valid stream") {
            out.push(frame);
        }
        out
    }

    #[test]
    fn a_message_split_into_single_bytes_is_read_once_whole() {
        let body = r#"{"seq":1,"type":"event","event":"initialized"}"#;
        let bytes = framed(body);
        let mut codec = DapCodec::default();
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for byte in bytes {
            buf.extend_from_slice(&[byte]);
            frames.extend(decode_all(&mut codec, &mut buf));
        }
        assert_eq!(frames.len(), 1);
        let Frame::Message(Incoming::Event(event)) = &frames[0] else {
            panic!("not an event: {frames:?}");
        };
        assert_eq!(event.event, "initialized");
        assert!(buf.is_empty());
    }

    #[test]
    fn two_messages_in_one_chunk_and_other_headers_are_read() {
        let mut bytes = b"Content-Type: application/json\r\ncontent-length: 2\r\n\r\n{}".to_vec();
        bytes.extend(framed(
            r#"{"seq":2,"type":"response","request_seq":1,"success":true,"command":"initialize"}"#,
        ));
        let mut buf = BytesMut::from(&bytes[..]);
        let frames = decode_all(&mut DapCodec::default(), &mut buf);
        assert_eq!(frames.len(), 2);
        // `{}` has no `type`: well framed, not a message.
        assert!(matches!(frames[0], Frame::Unreadable(_)));
        let Frame::Message(Incoming::Response(response)) = &frames[1] else {
            panic!("not a response: {frames:?}");
        };
        assert_eq!((response.request_seq, response.success), (1, true));
    }

    #[test]
    fn unknown_fields_and_unknown_types_pass() {
        let body = r#"{"seq":3,"type":"event","event":"newThing","body":{"x":1},"extra":[1]}"#;
        let mut buf = BytesMut::from(&framed(body)[..]);
        let frames = decode_all(&mut DapCodec::default(), &mut buf);
        let Frame::Message(Incoming::Event(event)) = &frames[0] else {
            panic!("not an event: {frames:?}");
        };
        assert_eq!(event.event, "newThing");
        assert_eq!(event.body, Some(json!({"x": 1})));
        let mut buf = BytesMut::from(&framed(r#"{"seq":4,"type":"future"}"#)[..]);
        let frames = decode_all(&mut DapCodec::default(), &mut buf);
        assert!(matches!(frames[0], Frame::Message(Incoming::Unknown)));
    }

    #[test]
    fn a_header_without_content_length_is_an_error() {
        let mut buf = BytesMut::from(&b"Content-Type: x\r\n\r\n{}"[..]);
        let error = DapCodec::default().decode(&mut buf).unwrap_err();
        assert_eq!(error, FramingError::BadHeader("no Content-Length".into()));
        let mut buf = BytesMut::from(&b"Content-Length: -1\r\n\r\n"[..]);
        let error = DapCodec::default().decode(&mut buf).unwrap_err();
        assert_eq!(
            error,
            FramingError::BadHeader("Content-Length \"-1\" is not a length".into())
        );
    }

    #[test]
    fn a_header_over_the_limit_is_an_error_before_its_end() {
        let mut buf = BytesMut::from(&vec![b'x'; MAX_HEADER_BYTES][..]);
        let error = DapCodec::default().decode(&mut buf).unwrap_err();
        assert_eq!(error, FramingError::HeaderTooLong);
    }

    #[test]
    fn a_body_over_the_limit_is_skipped_in_cuts_and_the_next_message_is_read() {
        let mut body = br#"{"body":{"variables":[{"value":""#.to_vec();
        body.resize(MAX_BODY_BYTES + 10, b'x');
        body.extend_from_slice(br#""}]},"command":"variables","request_seq":4,"type":"response"}"#);
        let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        bytes.extend_from_slice(&body);
        bytes.extend(framed(r#"{"seq":2,"type":"event","event":"initialized"}"#));
        let mut codec = DapCodec::default();
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for chunk in bytes.chunks(64 * 1024) {
            buf.extend_from_slice(chunk);
            frames.extend(decode_all(&mut codec, &mut buf));
            // Never more than one cut and a header are held.
            assert!(buf.len() <= 64 * 1024 + MAX_HEADER_BYTES);
        }
        assert_eq!(frames.len(), 2, "{frames:?}");
        let Frame::Oversized(oversized) = &frames[0] else {
            panic!("not skipped: {frames:?}");
        };
        assert_eq!(oversized.body_bytes, body.len());
        assert_eq!(oversized.request_seq(), Some(4));
        assert_eq!(oversized.members["command"], "variables");
        assert!(
            matches!(&frames[1], Frame::Message(Incoming::Event(e)) if e.event == "initialized")
        );
    }

    #[test]
    fn the_end_inside_a_skipped_body_is_an_error() {
        let header = format!("Content-Length: {}\r\n\r\n{{", MAX_BODY_BYTES + 1);
        let mut buf = BytesMut::from(header.as_bytes());
        let mut codec = DapCodec::default();
        assert!(codec.decode(&mut buf).expect("in step").is_none());
        assert_eq!(
            codec.decode_eof(&mut buf).unwrap_err(),
            FramingError::Truncated(0)
        );
    }

    #[test]
    fn the_end_inside_a_body_is_an_error() {
        let mut buf = BytesMut::from(&b"Content-Length: 10\r\n\r\n{}"[..]);
        let error = DapCodec::default().decode_eof(&mut buf).unwrap_err();
        assert_eq!(error, FramingError::Truncated(2));
    }

    #[test]
    fn an_encoded_message_decodes_to_itself() {
        let message = json!({"seq": 1, "type": "request", "command": "threads"});
        let mut buf = BytesMut::new();
        let mut codec = DapCodec::default();
        codec.encode(&message, &mut buf).expect("encodes");
        assert_eq!(
            &buf[..],
            &b"Content-Length: 46\r\n\r\n{\"seq\":1,\"type\":\"request\",\"command\":\"threads\"}"
                [..]
        );
        let Some(Frame::Message(Incoming::Request(request))) =
            codec.decode(&mut buf).expect("decodes")
        else {
            panic!("not a request");
        };
        assert_eq!(request.command, "threads");
    }
}
