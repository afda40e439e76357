//! Sign-in at the upstream's authorization server (2026-07-28 basic/authorization): the pure
//! rules (challenge, metadata, URL and callback checks), the loopback receiver, the token
//! stores and the `signin::SignIn` provider that the HTTP transport asks for tokens. Nothing
//! here ever logs a token, a code, a verifier, a secret or a full redirect query.
//!
//! All of it needs the feature `auth` but [`clock`], whose receiving end the Frontend names in
//! every build (it has one only when a SignIn actor runs).

#[cfg(feature = "auth")]
pub mod callback;
#[cfg(feature = "auth")]
pub mod challenge;
#[cfg(feature = "auth")]
pub mod client_credentials;
pub mod clock;
#[cfg(feature = "auth")]
pub mod device;
#[cfg(feature = "auth")]
pub mod errors;
#[cfg(feature = "auth")]
pub mod gate;
#[cfg(feature = "auth")]
pub mod http;
#[cfg(feature = "auth")]
pub mod metadata;
#[cfg(feature = "auth")]
pub mod opener;
#[cfg(feature = "auth")]
pub mod receiver;
#[cfg(feature = "auth")]
pub mod registration;
#[cfg(feature = "auth")]
pub mod setup;
#[cfg(feature = "auth")]
pub mod signin;
#[cfg(feature = "auth")]
pub mod store;
#[cfg(feature = "auth")]
pub mod url_check;
