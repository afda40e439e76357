//! The stored records as JSON: a sign-in (tokens of one server URL, account and redirect
//! URI, bound to the issuer that gave them) and a dynamic client registration (bound to its
//! issuer), each with the client's authentication at the token endpoint. `Debug` never shows
//! a token or a client secret.

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
    /// The canonical URI of the server URL: the key a stored record must match.
    pub resource: String,
    /// The resource indicator (RFC 8707) the tokens were asked for: the protected resource
    /// metadata's `resource`, verbatim (RFC 9728 §3.3), sent again at each refresh. A record
    /// stored by an older bridge has none; its refresh sends `resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_indicator: Option<String>,
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
    /// How `client_id` authenticates at the token endpoint, for every refresh (a dynamic
    /// registration's secret is kept here too; a pre-registered client's secret is never
    /// stored: it comes from `MCP_BRIDGE_CLIENT_SECRET` at each start).
    #[serde(flatten)]
    pub auth: ClientAuth,
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
    /// The `resource` parameter of this sign-in's token requests.
    pub fn indicator(&self) -> &str {
        self.resource_indicator.as_deref().unwrap_or(&self.resource)
    }

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

/// The client authentication methods at the token endpoint that the bridge speaks (RFC 7591
/// §2 `token_endpoint_auth_method`, RFC 6749 §2.3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TokenAuthMethod {
    /// A public client: `client_id` in the body, no secret.
    #[default]
    #[serde(rename = "none")]
    None,
    /// HTTP Basic with the form-urlencoded `client_id` and `client_secret`.
    #[serde(rename = "client_secret_basic")]
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    #[serde(rename = "client_secret_post")]
    ClientSecretPost,
}

impl TokenAuthMethod {
    /// The method named `name` (`None` for one the bridge does not speak, such as
    /// `private_key_jwt`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(TokenAuthMethod::None),
            "client_secret_basic" => Some(TokenAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(TokenAuthMethod::ClientSecretPost),
            _ => None,
        }
    }

    /// The RFC 7591 name.
    pub fn name(self) -> &'static str {
        match self {
            TokenAuthMethod::None => "none",
            TokenAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenAuthMethod::ClientSecretPost => "client_secret_post",
        }
    }
}

/// How a client authenticates at the token endpoint: what its registration named (RFC 7591
/// §3.2.1), kept whole.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientAuth {
    #[serde(default)]
    pub token_endpoint_auth_method: TokenAuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// When the secret expires, in seconds since the Unix epoch; 0: never (RFC 7591 §3.2.1).
    #[serde(default)]
    pub client_secret_expires_at: u64,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth")
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("client_secret", &self.client_secret.as_ref().map(|_| ".."))
            .field("client_secret_expires_at", &self.client_secret_expires_at)
            .finish()
    }
}

impl ClientAuth {
    /// The secret the token endpoint gets: none for the method `none`.
    pub fn secret(&self) -> Option<&str> {
        match self.token_endpoint_auth_method {
            TokenAuthMethod::None => None,
            _ => self.client_secret.as_deref(),
        }
    }

    /// True when the secret in use expires within `margin_secs` of `now_unix_secs` (never for
    /// a client without one, or one whose `client_secret_expires_at` is 0).
    pub fn secret_expires_within(&self, now_unix_secs: u64, margin_secs: u64) -> bool {
        self.secret().is_some()
            && self.client_secret_expires_at != 0
            && self.client_secret_expires_at <= now_unix_secs.saturating_add(margin_secs)
    }
}

/// A client registered dynamically (RFC 7591) at one issuer for one redirect URI.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRecord {
    pub issuer: String,
    pub client_id: String,
    pub redirect_uri: String,
    /// The authentication the registration named (absent in a record of an older bridge: a
    /// public client).
    #[serde(flatten)]
    pub auth: ClientAuth,
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("redirect_uri", &self.redirect_uri)
            .field("auth", &self.auth)
            .finish()
    }
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
            resource_indicator: None,
            access_token: "AT-SECRET".into(),
            refresh_token: Some("RT-SECRET".into()),
            expires_at_unix_secs: Some(1000),
            scopes: vec![],
            lifetime_secs: None,
            auth: ClientAuth {
                token_endpoint_auth_method: TokenAuthMethod::ClientSecretBasic,
                client_secret: Some("CS-SECRET".into()),
                client_secret_expires_at: 0,
            },
        };
        let d = format!("{r:?}");
        assert!(!d.contains("SECRET"), "{d}");
        let c = ClientRecord {
            issuer: "i".into(),
            client_id: "c".into(),
            redirect_uri: "r".into(),
            auth: r.auth.clone(),
        };
        let d = format!("{c:?}");
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

#[cfg(test)]
mod auth_tests {
    use super::*;

    #[test]
    fn a_record_keeps_the_registration_whole_and_an_old_one_reads_as_a_public_client() {
        let c = ClientRecord {
            issuer: "https://as".into(),
            client_id: "c1".into(),
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            auth: ClientAuth {
                token_endpoint_auth_method: TokenAuthMethod::ClientSecretPost,
                client_secret: Some("s".into()),
                client_secret_expires_at: 1000,
            },
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"issuer": "https://as", "client_id": "c1",
                "redirect_uri": "http://127.0.0.1:1/callback",
                "token_endpoint_auth_method": "client_secret_post", "client_secret": "s",
                "client_secret_expires_at": 1000})
        );
        assert_eq!(serde_json::from_value::<ClientRecord>(v).unwrap(), c);
        let old: ClientRecord = serde_json::from_str(
            r#"{"issuer": "https://as", "client_id": "c1", "redirect_uri": "r"}"#,
        )
        .unwrap();
        assert_eq!(old.auth, ClientAuth::default());
        assert_eq!(old.auth.secret(), None);
    }

    #[test]
    fn a_sign_in_keeps_its_resource_indicator_and_an_old_one_refreshes_with_the_canonical_uri() {
        let old: TokenRecord = serde_json::from_str(
            r#"{"issuer": "https://as", "client_id": "c1", "token_endpoint": "https://as/token",
                "resource": "https://r.example/mcp", "access_token": "a"}"#,
        )
        .unwrap();
        assert_eq!(old.resource_indicator, None);
        assert_eq!(old.indicator(), "https://r.example/mcp");
        let new = TokenRecord {
            resource_indicator: Some("https://r.example".into()),
            ..old
        };
        assert_eq!(new.indicator(), "https://r.example");
        let v = serde_json::to_value(&new).unwrap();
        assert_eq!(v["resource_indicator"], "https://r.example");
        assert_eq!(v["resource"], "https://r.example/mcp");
        assert_eq!(serde_json::from_value::<TokenRecord>(v).unwrap(), new);
    }

    #[test]
    fn a_secret_expires_at_its_time_less_the_margin_and_zero_is_never() {
        let mut a = ClientAuth {
            token_endpoint_auth_method: TokenAuthMethod::ClientSecretBasic,
            client_secret: Some("s".into()),
            client_secret_expires_at: 1000,
        };
        assert!(a.secret_expires_within(1000, 0));
        assert!(a.secret_expires_within(950, 60));
        assert!(!a.secret_expires_within(900, 60));
        a.client_secret_expires_at = 0;
        assert!(!a.secret_expires_within(u64::MAX - 1, 60));
        // The method `none` sends no secret, so its expiry does not matter.
        a.client_secret_expires_at = 1;
        a.token_endpoint_auth_method = TokenAuthMethod::None;
        assert_eq!(a.secret(), None);
        assert!(!a.secret_expires_within(1000, 0));
    }
}
