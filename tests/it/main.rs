//! The integration tests, one crate: black-box tests that start the real binaries over real
//! pipes or real HTTP (`common::Bridge`, the HTTP and sign-in fixtures of `common`), and
//! tests of the actors and transports in this process. Run one module with
//! `cargo test --test it <module>::`.
//!
//! Without the features `http` and `auth` (an embedded server's build) only the embedded
//! bridge's tests are built, and they use a part of the harness of `common`.
#![cfg_attr(not(all(feature = "http", feature = "auth")), allow(dead_code))]

#[cfg(all(feature = "http", feature = "auth"))]
mod actors_memory;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_actor;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_chromium;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_client_credentials;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_device;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_discovery;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_e2e;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_keychain;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_logout;
#[cfg(all(feature = "http", feature = "auth"))]
mod auth_signin;
#[cfg(all(feature = "http", feature = "auth"))]
mod bad_input;
#[cfg(all(feature = "http", feature = "auth", target_os = "linux"))]
mod child_registry;
#[cfg(all(feature = "http", feature = "auth"))]
mod cli;
mod common;
#[cfg(all(feature = "http", feature = "auth"))]
mod concurrency;
#[cfg(all(feature = "http", feature = "auth"))]
mod doctor;
#[cfg(all(feature = "http", feature = "auth"))]
mod doctor_config;
mod embedded;
// mcp-dap needs no feature of the URL form; it drives real debugpy (tests/interop/.venv).
#[cfg(target_os = "linux")]
mod dap;
#[cfg(target_os = "linux")]
mod dap_children;
#[cfg(target_os = "linux")]
mod dap_clients;
#[cfg(target_os = "linux")]
mod dap_inputs;
#[cfg(target_os = "linux")]
mod dap_lldb;
#[cfg(target_os = "linux")]
mod dap_sessions;
#[cfg(target_os = "linux")]
mod dap_start;
#[cfg(target_os = "linux")]
mod dap_threads;
#[cfg(target_os = "linux")]
mod dap_tools;
#[cfg(target_os = "linux")]
mod dap_variables;
#[cfg(all(feature = "http", feature = "auth"))]
mod era_fallback;
#[cfg(all(feature = "http", feature = "auth"))]
mod example_server;
#[cfg(all(feature = "http", feature = "auth"))]
mod fixture_server;
#[cfg(all(feature = "http", feature = "auth"))]
mod forwarding;
#[cfg(all(feature = "http", feature = "auth", target_os = "linux"))]
mod gateway;
#[cfg(all(feature = "http", feature = "auth", target_os = "linux"))]
mod gateway_sign_in;
#[cfg(target_os = "linux")]
mod harness;
#[cfg(all(feature = "http", feature = "auth"))]
mod http_legacy;
// The server API over HTTP, with reqwest (feature `http`) as the client.
#[cfg(all(feature = "http-server", feature = "http"))]
mod http_server;
// The edges of the server API over HTTP: the examples' command lines, `Accept`, failed
// initializes, a GET stream that takes over, ids of closed streams, the end on SIGTERM.
#[cfg(all(feature = "http-server", feature = "http"))]
mod http_edges;
// 2025-11-25 sessions of the server API over HTTP (through the embedded bridge).
#[cfg(all(feature = "http-server", feature = "http"))]
mod http_sessions;
// How the server API over HTTP closes a connection: the lingering close at its stop.
#[cfg(all(feature = "http-server", feature = "http"))]
mod http_close;
// Browser clients of the server API over HTTP: CORS, and a real headless Chromium.
#[cfg(all(feature = "http-server", feature = "http"))]
mod http_cors;
#[cfg(all(feature = "http", feature = "auth"))]
mod http_sign_in;
#[cfg(all(feature = "http", feature = "auth"))]
mod http_sleep;
#[cfg(all(feature = "http", feature = "auth"))]
mod http_tls_proxy;
#[cfg(all(feature = "http", feature = "auth"))]
mod http_upstream;
#[cfg(all(feature = "http", feature = "auth"))]
mod input_requests;
#[cfg(all(feature = "http", feature = "auth", target_os = "linux"))]
mod isolation;
#[cfg(all(feature = "http", feature = "auth"))]
mod json_passthrough;
#[cfg(all(feature = "http", feature = "auth"))]
mod json_properties;
#[cfg(all(feature = "http", feature = "auth"))]
mod large_results;
#[cfg(all(feature = "http", feature = "auth"))]
mod lifecycle;
#[cfg(all(feature = "http", feature = "auth"))]
mod list_items;
#[cfg(all(feature = "http", feature = "auth"))]
mod notifications;
mod packages;
#[cfg(all(feature = "http", feature = "auth"))]
mod queues;
#[cfg(all(feature = "http", feature = "auth"))]
mod schema_adaptations;
#[cfg(all(feature = "http", feature = "auth", target_os = "linux"))]
mod serve_http;
#[cfg(all(feature = "http", feature = "auth"))]
mod shutdown;
#[cfg(all(feature = "http", feature = "auth"))]
mod stderr;
#[cfg(all(feature = "http", feature = "auth"))]
mod terminal;
#[cfg(all(feature = "http", feature = "auth"))]
mod tool_filter;
#[cfg(all(feature = "http", feature = "auth"))]
mod transport_seam;
