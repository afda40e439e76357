//! The URL form over TLS and through a proxy: a self-signed loopback TLS fixture (a test CA
//! and a certificate for `mcp.test` and `127.0.0.1`), trusted only with `--ca-file`; a CONNECT
//! proxy fixture that records each tunnel; `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, and a
//! loopback host that never goes through the proxy.

use crate::common;
use mcp_test_fixtures::http_fixture;

use common::{Bridge, error_of, text_of};
use http_fixture::HttpFixture;
use mcp_bridge::server::{Outcome, Server, ToolDef};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn server() -> Server {
    Server::builder("fixture-tls", "1.0.0")
        .tool(
            ToolDef::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build()
}

/// A TLS fixture with a certificate of a test CA, and the CA's PEM file.
fn tls_fixture() -> (HttpFixture, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("key")).expect("ca");
    let leaf_key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["mcp.test".to_string(), "127.0.0.1".to_string()])
        .expect("params")
        .signed_by(&leaf_key, &ca)
        .expect("leaf");
    let dir = common::scratch_dir("tls");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).expect("write ca");
    let key =
        tokio_rustls::rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let cfg = tokio_rustls::rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .expect("tls config");
    let f = HttpFixture::start_on(server(), vec![], Some(Arc::new(cfg)));
    (f, ca_file)
}

/// A CONNECT proxy on 127.0.0.1 that tunnels every CONNECT to `target` (whatever host it
/// names) and records each request line.
fn proxy(target: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut client) = conn else { continue };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match client.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let text = String::from_utf8_lossy(&head);
                let first = text.lines().next().unwrap_or("").to_string();
                log.lock().expect("lock").push(first);
                let Ok(mut upstream) = TcpStream::connect(target) else {
                    return;
                };
                if client
                    .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                    .is_err()
                {
                    return;
                }
                let (Ok(mut c2), Ok(mut u2)) = (client.try_clone(), upstream.try_clone()) else {
                    return;
                };
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut u2);
                    let _ = u2.shutdown(std::net::Shutdown::Write);
                });
                let _ = std::io::copy(&mut upstream, &mut client);
                let _ = client.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (addr, seen)
}

fn echo(b: &mut Bridge) -> String {
    text_of(&b.tools_call(json!(1), "echo", json!({"text": "over tls"})))
}

fn initialize_error(b: &mut Bridge) -> (i64, String, String) {
    b.send_request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    let r = b.recv_response(&json!(0));
    let (code, cause) = error_of(&r);
    let detail = r["error"]["data"]["detail"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (code, cause, detail)
}

#[test]
fn https_through_the_proxy_with_the_ca_file() {
    let (f, ca) = tls_fixture();
    let (p, seen) = proxy(f.addr);
    let url = format!("https://mcp.test:{}/mcp", f.addr.port());
    let proxy_url = format!("http://{p}");
    for var in ["HTTPS_PROXY", "ALL_PROXY"] {
        seen.lock().expect("lock").clear();
        let ca_arg = ca.to_string_lossy().into_owned();
        let mut b = Bridge::start_url(&["--ca-file", &ca_arg], &url, &[(var, proxy_url.as_str())]);
        b.initialize();
        assert_eq!(echo(&mut b), "over tls", "{var}");
        let tunnels = seen.lock().expect("lock").clone();
        assert!(!tunnels.is_empty(), "{var}");
        for t in tunnels {
            assert_eq!(
                t,
                format!("CONNECT mcp.test:{} HTTP/1.1", f.addr.port()),
                "{var}"
            );
        }
    }
}

#[test]
fn without_the_ca_file_the_self_signed_upstream_is_refused() {
    let (f, _ca) = tls_fixture();
    let url = format!("https://127.0.0.1:{}/mcp", f.addr.port());
    let mut b = Bridge::start_url(&[], &url, &[]);
    let (code, cause, detail) = initialize_error(&mut b);
    assert_eq!((code, cause.as_str()), (-32603, "discover_failed"));
    assert!(
        detail.starts_with("the connection to the upstream failed: ")
            && detail.contains("UnknownIssuer"),
        "{detail}"
    );
    assert!(f.seen().is_empty());
}

/// An `https` URL to a port that serves plain HTTP: the error says that the server does not
/// speak TLS there, not the TLS library's "corrupt message".
#[test]
fn an_https_url_to_a_plain_http_port_says_the_server_does_not_speak_tls_there() {
    let f = HttpFixture::start(server(), vec![]);
    let port = f.addr.port();
    let url = format!("https://127.0.0.1:{port}/mcp");
    let mut b = Bridge::start_url(&[], &url, &[]);
    let (code, cause, detail) = initialize_error(&mut b);
    assert_eq!((code, cause.as_str()), (-32603, "discover_failed"));
    assert_eq!(
        detail,
        format!(
            "the connection to the upstream failed: the server at 127.0.0.1:{port} does not speak TLS (https) on that port; is the URL http://?"
        )
    );
    assert!(f.seen().is_empty());
}

#[test]
fn no_proxy_and_loopback_hosts_go_direct() {
    let (f, ca) = tls_fixture();
    let (p, seen) = proxy(f.addr);
    let proxy_url = format!("http://{p}");
    let ca_arg = ca.to_string_lossy().into_owned();
    // Loopback: never through the proxy, even with both variables set.
    let url = format!("https://127.0.0.1:{}/mcp", f.addr.port());
    let mut b = Bridge::start_url(
        &["--ca-file", &ca_arg],
        &url,
        &[
            ("HTTPS_PROXY", proxy_url.as_str()),
            ("ALL_PROXY", proxy_url.as_str()),
        ],
    );
    b.initialize();
    assert_eq!(echo(&mut b), "over tls");
    assert!(seen.lock().expect("lock").is_empty());
    // NO_PROXY names the host: the bridge goes direct (and mcp.test has no address).
    let url = format!("https://mcp.test:{}/mcp", f.addr.port());
    let mut b = Bridge::start_url(
        &["--ca-file", &ca_arg],
        &url,
        &[
            ("HTTPS_PROXY", proxy_url.as_str()),
            ("NO_PROXY", "example.org,mcp.test"),
        ],
    );
    let (code, cause, detail) = initialize_error(&mut b);
    assert_eq!((code, cause.as_str()), (-32603, "discover_failed"));
    assert!(
        detail.starts_with("the connection to the upstream failed"),
        "{detail}"
    );
    assert!(seen.lock().expect("lock").is_empty());
}
