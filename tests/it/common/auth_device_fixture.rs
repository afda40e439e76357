//! The device authorization grant of the fixture authorization server (RFC 8628): the device
//! authorization endpoint, the verification page whose visit approves (or denies) a code, and
//! the polls of the token endpoint, each one's time recorded; the knobs are
//! `Behaviour::device_*`.

use super::*;

/// A device code's state (RFC 8628 §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DeviceState {
    Pending,
    Approved,
    Denied,
}

pub(super) struct DeviceGrant {
    pub(super) user_code: String,
    pub(super) client_id: String,
    pub(super) scopes: String,
    pub(super) state: DeviceState,
    /// The end of its real lifetime ([`Behaviour::device_lifetime_secs`]).
    pub(super) ends: std::time::Instant,
}

/// RFC 8628 §3.1: a device code and a user code for an authenticated client (a dynamic one
/// registered with the device code grant type), the scopes and the resource indicator.
pub(super) async fn device_authorization(
    State(fx): State<Arc<Fixture>>,
    headers: HeaderMap,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    fx.device_requests.lock().unwrap().push(f.clone());
    if f.get("resource").map(String::as_str) != Some(fx.resource().as_str()) {
        return token_error("invalid_target");
    }
    let client_id = match authenticate(&fx, &headers, &f) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    let b = fx.behaviour.lock().unwrap().clone();
    {
        let g = fx.grants.lock().unwrap();
        if g.clients.contains_key(&client_id) && !g.device_clients.contains(&client_id) {
            return token_error("unauthorized_client");
        }
    }
    let n = fx
        .counters
        .device_authorizations
        .fetch_add(1, Ordering::SeqCst)
        + 1;
    let device_code = fx.mint("device");
    let user_code = format!("WDJB-{n:04}");
    fx.grants.lock().unwrap().devices.insert(
        device_code.clone(),
        DeviceGrant {
            user_code: user_code.clone(),
            client_id,
            scopes: f.get("scope").cloned().unwrap_or_default(),
            state: DeviceState::Pending,
            ends: std::time::Instant::now()
                + std::time::Duration::from_secs(b.device_lifetime_secs),
        },
    );
    fx.device_authorized_at
        .lock()
        .unwrap()
        .push(std::time::Instant::now());
    let mut v = json!({
        "device_code": device_code,
        "user_code": user_code,
        "verification_uri": format!("{}/device", fx.base),
        "expires_in": b.device_expires_in_secs,
    });
    if b.device_complete_uri {
        v["verification_uri_complete"] = json!(format!("{}/device?user_code={user_code}", fx.base));
    }
    if let Some(i) = b.device_interval_secs {
        v["interval"] = json!(i);
    }
    Json(v).into_response()
}

/// The verification page: the user's visit with `user_code` approves that pending code (or
/// denies it, [`Behaviour::device_user_denies`]).
pub(super) async fn device_page(
    State(fx): State<Arc<Fixture>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let code = q.get("user_code").cloned().unwrap_or_default();
    let denies = fx.behaviour.lock().unwrap().device_user_denies;
    let mut g = fx.grants.lock().unwrap();
    let Some(d) = g
        .devices
        .values_mut()
        .find(|d| d.user_code == code && d.state == DeviceState::Pending)
    else {
        return (StatusCode::NOT_FOUND, "no such code").into_response();
    };
    d.state = if denies {
        DeviceState::Denied
    } else {
        DeviceState::Approved
    };
    (StatusCode::OK, if denies { "denied" } else { "approved" }).into_response()
}

/// One poll of a device code (RFC 8628 §3.5).
pub(super) fn device_poll(fx: &Fixture, client_id: &str, device_code: Option<&str>) -> Response {
    let n = {
        let mut polls = fx.device_polls.lock().unwrap();
        polls.push(std::time::Instant::now());
        polls.len()
    };
    let b = fx.behaviour.lock().unwrap().clone();
    let mut g = fx.grants.lock().unwrap();
    if b.device_user_acts_at_poll == Some(n) {
        for d in g.devices.values_mut() {
            if d.state == DeviceState::Pending {
                d.state = if b.device_user_denies {
                    DeviceState::Denied
                } else {
                    DeviceState::Approved
                };
            }
        }
    }
    let Some(d) = device_code.and_then(|c| g.devices.get(c)) else {
        return token_error("invalid_grant");
    };
    if d.client_id != client_id {
        return token_error("invalid_grant");
    }
    if std::time::Instant::now() >= d.ends {
        return token_error("expired_token");
    }
    if b.device_slow_down_polls.contains(&n) {
        fx.counters.device_slow_downs.fetch_add(1, Ordering::SeqCst);
        return token_error("slow_down");
    }
    match d.state {
        DeviceState::Pending => {
            fx.counters.device_pending.fetch_add(1, Ordering::SeqCst);
            token_error("authorization_pending")
        }
        DeviceState::Denied => token_error("access_denied"),
        DeviceState::Approved => {
            let scopes = d.scopes.clone();
            // A device code gives one token (RFC 8628 §3.5: it is spent).
            g.devices.remove(device_code.unwrap_or_default());
            drop(g);
            fx.counters.device_grants.fetch_add(1, Ordering::SeqCst);
            Json(issue(fx, &scopes, client_id)).into_response()
        }
    }
}
