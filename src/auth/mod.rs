//! Sign-in at the upstream's authorization server (2026-07-28 basic/authorization): the pure
//! rules (challenge, metadata, URL and callback checks), the loopback receiver, the token
//! stores and the [`signin::SignIn`] provider that the HTTP transport asks for tokens. Nothing
//! here ever logs a token, a code, a verifier, a secret or a full redirect query.

pub mod callback;
pub mod challenge;
pub mod client_credentials;
pub mod clock;
pub mod errors;
pub mod gate;
pub mod http;
pub mod metadata;
pub mod opener;
pub mod receiver;
pub mod registration;
pub mod setup;
pub mod signin;
pub mod store;
pub mod url_check;
