//! The application around the actors: the executable's body (`executable`), its start-up
//! wiring (what the command line asks for, put into the configuration before the actor system
//! runs) and the process the actors run in.

#[cfg(feature = "auth")]
pub mod doctor;
#[cfg(all(feature = "http", feature = "auth"))]
pub mod executable;
#[cfg(feature = "auth")]
pub mod gateway;
#[cfg(feature = "auth")]
pub mod logout;
pub mod process;
#[cfg(all(feature = "http", feature = "auth"))]
pub mod serve_http;
#[cfg(feature = "auth")]
pub mod sign_in;
