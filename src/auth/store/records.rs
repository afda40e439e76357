//! The stored records as JSON: a sign-in (tokens of one server URL, account and redirect
//! URI, bound to the issuer that gave them) and a dynamic client registration (bound to its
//! issuer). `Debug` never shows a token.

use serde::{Deserialize, Serialize};

/// The tokens of one stored sign-in.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The issuer of the authorization server that issued the tokens.
    pub issuer: String,
    /// The client the tokens were issued to.
    pub client_id: String,
    /// The token endpoint, for refreshes.
    pub token_endpoint: String,
    /// The canonical resource (RFC 8707) the tokens are for.
    pub resource: String,
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Expiry of the access token, in seconds since the Unix epoch (`None`: not given).
    #[serde(default)]
    pub expires_at_unix_secs: Option<u64>,
    /// The scopes requested for the tokens (the base of a step-up union).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The lifetime the authorization server gave the access token (`expires_in`), seconds.
    #[serde(default)]
    pub lifetime_secs: Option<u64>,
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("expires_at_unix_secs", &self.expires_at_unix_secs)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl TokenRecord {
    /// True when the access token needs a refresh before use at `now_unix_secs`: it expires
    /// within `margin_secs`, or within half its lifetime when that is shorter (so a token of
    /// 60 s is used for 30 s, not refreshed before every request).
    pub fn needs_refresh(&self, now_unix_secs: u64, margin_secs: u64) -> bool {
        let margin = self
            .lifetime_secs
            .map_or(margin_secs, |l| margin_secs.min(l / 2));
        self.expires_within(now_unix_secs, margin)
    }

    /// True when the access token expires within `margin_secs` of `now_unix_secs`.
    pub fn expires_within(&self, now_unix_secs: u64, margin_secs: u64) -> bool {
        self.expires_at_unix_secs
            .is_some_and(|t| t <= now_unix_secs.saturating_add(margin_secs))
    }
}

/// A client registered dynamically (RFC 7591) at one issuer for one redirect URI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRecord {
    pub issuer: String,
    pub client_id: String,
    pub redirect_uri: String,
}

/// One line of the index of stored sign-ins (what `logout` reads).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexEntry {
    /// The store key of the sign-in.
    pub key: String,
    pub url: String,
    pub account: String,
    pub redirect_uri: String,
}

/// The current time in seconds since the Unix epoch.
pub fn now_unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_token_and_expiry_has_a_margin() {
        let r = TokenRecord {
            issuer: "i".into(),
            client_id: "c".into(),
            token_endpoint: "t".into(),
            resource: "r".into(),
            access_token: "AT-SECRET".into(),
            refresh_token: Some("RT-SECRET".into()),
            expires_at_unix_secs: Some(1000),
            scopes: vec![],
            lifetime_secs: None,
        };
        let d = format!("{r:?}");
        assert!(!d.contains("SECRET"), "{d}");
        assert!(r.expires_within(950, 60));
        assert!(!r.expires_within(900, 60));
        let short = TokenRecord {
            lifetime_secs: Some(60),
            ..r.clone()
        };
        assert!(!short.needs_refresh(960, 60));
        assert!(short.needs_refresh(970, 60));
        assert!(r.needs_refresh(950, 60));
    }
}
