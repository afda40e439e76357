//! The lingering close of a connection that hyper has finished with (RFC 9112 §9.6): the
//! server closes its write half, then reads and drops what the client still sends until the
//! client closes, or for [`LINGER_TIME_LIMIT`] at most. Closing a socket whose input is
//! unread makes the kernel send a reset, which discards the answers the client has not read
//! yet (a client that pipelined requests, a stop while answers are in transit).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a finished connection reads (and drops) its client's input before it closes
/// (2 s): time for a client to read the answers in transit and see their end. A client
/// that keeps sending holds its connection no longer than this.
pub const LINGER_TIME_LIMIT: Duration = Duration::from_secs(2);
/// The bytes of one read of the input that is dropped.
const LINGER_READ_BYTES: usize = 8 * 1024;

/// Closes `stream` lingering: its write half first (the client reads every answer, then the
/// end), then its input read and dropped until the client's end, an error or
/// [`LINGER_TIME_LIMIT`].
pub(super) async fn close(mut stream: TcpStream) {
    if stream.shutdown().await.is_err() {
        // The connection is gone (a reset): nothing is in transit any more.
        return;
    }
    let drain = async {
        let mut dropped = [0; LINGER_READ_BYTES];
        while let Ok(read) = stream.read(&mut dropped).await {
            if read == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME_LIMIT, drain).await;
}
