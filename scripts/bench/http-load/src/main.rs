//! The load generator of scripts/bench/http-serve.py: one client for every arm, so that the
//! arms differ only in the server.
//!
//! `--clients N` keep-alive HTTP/1.1 connections (hyper's client), each doing one
//! `tools/call` POST after another (`--protocol 2026-07-28`, the default: the headers and
//! `_meta` of scripts/bench/http-direct.py; `--protocol 2025-11-25`: each client's own session,
//! `initialize` first), first for `--warmup-secs`, then, all clients starting together, for
//! `--secs`. Every answer must be 200 with the echoed text in a JSON-RPC result, or the run
//! fails. Prints one JSON line: calls, calls/s, latency median / p90 / p99 (us) of the calls
//! of the measured window, all calls (warm-up included), and this process's CPU seconds over
//! the whole run (so that a run whose client saturated its core can be seen).
//!
//!   http-load URL [--clients N] [--secs S] [--warmup-secs S] [--threads T] [--tool NAME]
//!             [--args JSON] [--expect TEXT] [--protocol 2026-07-28|2025-11-25]

use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Barrier;

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"http-load","version":"1"}}"#;

struct Options {
    authority: String,
    path: String,
    clients: usize,
    secs: f64,
    warmup_secs: f64,
    threads: usize,
    tool: String,
    args: String,
    expect: String,
    protocol: Protocol,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

fn parse(argv: &[String]) -> Result<Options, Error> {
    let url = argv
        .first()
        .ok_or("usage: http-load URL [--clients N] [--secs S] ...")?;
    let rest = url
        .strip_prefix("http://")
        .ok_or("the URL must be http://HOST:PORT/PATH")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (rest[..i].to_owned(), rest[i..].to_owned()),
        None => (rest.to_owned(), "/".to_owned()),
    };
    let mut o = Options {
        authority,
        path,
        clients: 1,
        secs: 3.0,
        warmup_secs: 0.5,
        threads: 1,
        tool: "echo".into(),
        args: r#"{"text":"hello"}"#.into(),
        expect: "hello".into(),
        protocol: Protocol::Stateless,
    };
    let mut it = argv[1..].iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--clients" => o.clients = value.parse()?,
            "--secs" => o.secs = value.parse()?,
            "--warmup-secs" => o.warmup_secs = value.parse()?,
            "--threads" => o.threads = value.parse()?,
            "--tool" => o.tool = value.clone(),
            "--args" => o.args = value.clone(),
            "--expect" => o.expect = value.clone(),
            "--protocol" => {
                o.protocol = match value.as_str() {
                    "2026-07-28" => Protocol::Stateless,
                    "2025-11-25" => Protocol::Session,
                    _ => return Err(format!("unknown --protocol {value}").into()),
                }
            }
            _ => return Err(format!("unknown option {flag}").into()),
        }
    }
    if o.clients == 0 || o.threads == 0 {
        return Err("--clients and --threads must be at least 1".into());
    }
    Ok(o)
}

/// The revision a client speaks.
#[derive(Clone, Copy, PartialEq)]
enum Protocol {
    /// 2026-07-28: every POST stands alone, with the standard headers and `_meta`.
    Stateless,
    /// 2025-11-25: `initialize`, then `notifications/initialized`, then the calls, all with
    /// the `Mcp-Session-Id` the server gave.
    Session,
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// POSTs `body` with the headers of the client's revision; the status, the session id the
/// answer carries and the whole body (JSON, or an SSE stream that ends with the response).
async fn post(
    sender: &mut Sender,
    o: &Options,
    session: Option<&str>,
    method: &str,
    body: String,
) -> Result<(StatusCode, Option<String>, String), Error> {
    let mut request = Request::post(&o.path)
        .header("host", &o.authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    match o.protocol {
        Protocol::Stateless => {
            request = request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method)
                .header("mcp-name", &o.tool);
        }
        Protocol::Session if method != "initialize" => {
            request = request.header("mcp-protocol-version", "2025-11-25");
        }
        Protocol::Session => {}
    }
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    sender.ready().await?;
    let response = sender
        .send_request(request.body(Full::new(Bytes::from(body)))?)
        .await?;
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let data = response.into_body().collect().await?.to_bytes();
    Ok((status, session, String::from_utf8_lossy(&data).into_owned()))
}

fn short(text: &str) -> String {
    text.chars().take(300).collect()
}

/// One client: its own connection (and session); warm-up calls, the barrier, then calls until
/// the window ends. Returns the latencies (us) of the calls that ended within the window and
/// the number of all its calls.
async fn client(
    o: Arc<Options>,
    barrier: Arc<Barrier>,
    start: Arc<tokio::sync::OnceCell<Instant>>,
) -> Result<(Vec<u32>, u64), Error> {
    let stream = TcpStream::connect(&o.authority).await?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut session = None;
    if o.protocol == Protocol::Session {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"http-load","version":"1"}}}"#;
        let (status, id, text) = post(&mut sender, &o, None, "initialize", init.into()).await?;
        if status != StatusCode::OK || !text.contains("\"result\"") {
            return Err(format!("initialize: HTTP {status}: {}", short(&text)).into());
        }
        session = Some(id.ok_or("initialize: no Mcp-Session-Id in the answer")?);
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, text) = post(
            &mut sender,
            &o,
            session.as_deref(),
            "notifications/initialized",
            note.into(),
        )
        .await?;
        if status != StatusCode::ACCEPTED {
            return Err(
                format!("notifications/initialized: HTTP {status}: {}", short(&text)).into(),
            );
        }
    }
    let meta = match o.protocol {
        Protocol::Stateless => format!(r#","_meta":{META}"#),
        Protocol::Session => String::new(),
    };
    let mut id: u64 = 0;
    let mut call = async |id: u64| -> Result<(), Error> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{}","arguments":{}{meta}}}}}"#,
            o.tool, o.args
        );
        let (status, _, text) =
            post(&mut sender, &o, session.as_deref(), "tools/call", body).await?;
        if status != StatusCode::OK || !text.contains("\"result\"") || !text.contains(&o.expect) {
            return Err(format!("call {id}: HTTP {status}: {}", short(&text)).into());
        }
        Ok(())
    };
    let warm_end = Instant::now() + Duration::from_secs_f64(o.warmup_secs);
    while Instant::now() < warm_end {
        id += 1;
        call(id).await?;
    }
    barrier.wait().await;
    let t0 = *start.get_or_init(|| async { Instant::now() }).await;
    let end = t0 + Duration::from_secs_f64(o.secs);
    let mut lat = Vec::new();
    loop {
        let t = Instant::now();
        if t >= end {
            break;
        }
        id += 1;
        call(id).await?;
        let done = Instant::now();
        if done <= end {
            lat.push(u32::try_from((done - t).as_micros()).unwrap_or(u32::MAX));
        }
    }
    Ok((lat, id))
}

/// This process's user + system CPU seconds (/proc/self/stat, fields 14 and 15, in clock
/// ticks of 1/100 s on Linux).
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn pct(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64) * p) as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn run(o: Options) -> Result<String, Error> {
    let o = Arc::new(o);
    let barrier = Arc::new(Barrier::new(o.clients));
    let start = Arc::new(tokio::sync::OnceCell::new());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..o.clients {
        tasks.spawn(client(o.clone(), barrier.clone(), start.clone()));
    }
    // The first failure ends the run (the other clients may be waiting at the barrier).
    let mut lat = Vec::new();
    let mut all_calls = 0;
    while let Some(done) = tasks.join_next().await {
        let (l, n) = done??;
        lat.extend(l);
        all_calls += n;
    }
    lat.sort_unstable();
    let calls = lat.len();
    Ok(format!(
        r#"{{"clients":{},"secs":{},"calls":{},"calls_per_s":{:.1},"median_us":{},"p90_us":{},"p99_us":{},"all_calls":{},"client_cpu_s":{:.2}}}"#,
        o.clients,
        o.secs,
        calls,
        calls as f64 / o.secs,
        pct(&lat, 0.5),
        pct(&lat, 0.9),
        pct(&lat, 0.99),
        all_calls,
        cpu_secs()
    ))
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&argv).and_then(|o| {
        let runtime = if o.threads == 1 {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(o.threads)
                .enable_all()
                .build()?
        };
        runtime.block_on(run(o))
    });
    match result {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("http-load: {e}");
            std::process::exit(1);
        }
    }
}
