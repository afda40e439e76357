//! The crypto provider of every HTTPS connection: rustls with *ring*.
//!
//! reqwest's `rustls` feature brings the aws-lc-rs provider, whose C library (built with cmake)
//! took minutes of a cold `cargo install` on 2 cores and about 2 MB of the binary. The crate
//! asks reqwest for `rustls-no-provider` and installs *ring* as the process's provider before
//! it builds a client (reqwest reads rustls's process default). A program that embeds the crate
//! and installed a provider of its own keeps it.

/// Installs *ring* as rustls's process-wide provider, unless one is installed already.
/// Idempotent; every HTTP client of the crate is built after a call.
pub fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // An error means another thread installed one in between: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
