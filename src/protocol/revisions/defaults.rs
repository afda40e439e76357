//! Defaults that the bridge and the server API share: the bound of requests in flight and the
//! waits of a shutdown, so that a bridge and a server built on this crate behave alike.

use std::time::Duration;

/// Default wait for requests in flight and for the child at each shutdown step.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Default limit of requests in flight.
pub const MAX_IN_FLIGHT_REQUESTS: usize = 256;
