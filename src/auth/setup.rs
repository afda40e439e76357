//! What the SignIn actor starts with: the settings of one sign-in and its opened token store,
//! made by the application at start and carried in the configuration.

use super::signin::SignInConfig;
use super::store::TokenStore;

/// What the Supervisor starts the SignIn actor with: the settings and the opened store.
#[derive(Clone)]
pub struct SignInSetup {
    /// The sign-in settings of the command line.
    pub config: SignInConfig,
    /// The token store (`auto`: opened at its first use; another choice: opened at start).
    pub store: TokenStore,
}

impl std::fmt::Debug for SignInSetup {
    /// The server's host, the account and the store's name: never a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInSetup")
            .field("host", &self.config.server_url.host_str())
            .field("account", &self.config.account)
            .field("store", &self.store.describe())
            .finish()
    }
}
