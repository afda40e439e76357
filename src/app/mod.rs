//! The application's start-up wiring of the executable: what the command line asks for, put
//! into the configuration before the actor system runs.

#[cfg(feature = "auth")]
pub mod logout;
#[cfg(feature = "auth")]
pub mod sign_in;
