//! `mcp-bridge logout [--account <label>] <url>` and `mcp-bridge logout --all`: deletes stored
//! sign-ins from the token store (the authorization server is not told). Exit codes: 0 when
//! the deletion succeeded (also when there was nothing to delete), 1 when a deletion failed, 2
//! for invalid arguments or a token store that does not open.
//!
//! `logout <url>` deletes that sign-in only: the client registration it used is keyed by the
//! issuer and the redirect URI and serves the other servers and accounts of that issuer.
//! `logout --forget-client <url>` deletes that registration too, for an authorization server
//! that forgot its clients (a restart of one that keeps them in memory: its authorization page
//! refuses the stored client, so the sign-in never completes): the next sign-in registers
//! again. The issuer is the stored sign-in's; without a stored sign-in it is not known, and
//! every stored registration for the redirect URI goes (each is registered again at its next
//! sign-in; stored sign-ins keep their own copy of their client).
//! `logout --all` deletes everything the bridge stored: every indexed sign-in, every indexed
//! client registration, then the index itself. The sign-in marker of every deleted (or absent)
//! sign-in goes too (`store::marker`).

use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

use crate::auth::receiver::{DEFAULT_REDIRECT_PORT, redirect_uri};
use crate::auth::store::records::TokenRecord;
use crate::auth::store::{
    self, CLIENT_KEY_PREFIX, StoreChoice, StoreError, TOKEN_KEY_ENV, TokenStore, client_key, index,
    lock, marker, sign_in_key,
};
use crate::cli::LogLevelArg;

/// Exit code: deleted (or nothing to delete).
pub const EXIT_OK: i32 = 0;
/// Exit code: a deletion failed.
pub const EXIT_FAILED: i32 = 1;
/// Exit code: invalid arguments, or the token store does not open.
pub const EXIT_USAGE: i32 = 2;

/// The command line of `mcp-bridge logout`.
#[derive(Parser, Debug)]
#[command(
    name = "mcp-bridge logout",
    about = "Deletes stored sign-ins of mcp-bridge (the authorization server is not told).",
    override_usage = "mcp-bridge logout [--account <LABEL>] [--forget-client] <URL>\n       mcp-bridge logout --all"
)]
pub struct LogoutCli {
    /// The account of the stored sign-in
    #[arg(long, value_name = "LABEL", conflicts_with = "all")]
    pub account: Option<String>,
    /// Delete every stored sign-in of the bridge
    #[arg(long)]
    pub all: bool,
    /// Also delete the client registration the sign-in used (the authorization server forgot it)
    #[arg(long, conflicts_with = "all")]
    pub forget_client: bool,
    /// The redirect port of the server entry
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_REDIRECT_PORT,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub redirect_port: u16,
    /// The token store of the server entry
    #[arg(long, value_enum, value_name = "STORE", default_value = "auto")]
    pub token_store: StoreChoice,
    /// The key file of the file store
    #[arg(long, value_name = "PATH")]
    pub token_key_file: Option<PathBuf>,
    /// Accepted for symmetry with the server entry (the sign-in requests are not made here)
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// Lowest level of the stderr lines
    #[arg(long, value_enum, value_name = "LEVEL", default_value = "info")]
    pub log_level: LogLevelArg,
    /// The server URL of the stored sign-in
    #[arg(
        value_name = "URL",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub url: Option<String>,
}

/// Runs `logout` with `args` (the program name first, then `logout`); gives the exit code.
/// `token_key` is `MCP_BRIDGE_TOKEN_KEY`, read (and removed from the environment) at start.
pub fn run<I, T>(args: I, token_key: Option<&str>) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if args.len() > 1 {
        args.remove(1); // "logout"
    }
    let cli = match LogoutCli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            return if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                print!("{text}");
                EXIT_OK
            } else {
                eprint!("{}: logout: error: {text}", crate::log::TAG);
                EXIT_USAGE
            };
        }
    };
    crate::log::init(cli.log_level.filter());
    let code = logout(&cli, token_key);
    crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
    code
}

fn logout(cli: &LogoutCli, token_key: Option<&str>) -> i32 {
    let url = match &cli.url {
        Some(u) => match crate::auth::url_check::check_server_url(u) {
            Ok(u) => Some(u),
            Err(why) => {
                tracing::error!(target: "logout", "{why}");
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    let store =
        match store::open_with_key(cli.token_store, token_key, cli.token_key_file.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(target: "logout", "{e}");
                return EXIT_USAGE;
            }
        };
    warn_of_a_file_store_left(cli, &store);
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return EXIT_FAILED;
    };
    rt.block_on(async move {
        let redirect = redirect_uri(cli.redirect_port);
        let targets: Vec<String> = match &url {
            Some(u) => {
                let key = sign_in_key(
                    u.as_str(),
                    cli.account.as_deref().unwrap_or("default"),
                    &redirect,
                );
                // An entry that does not open with this key is not deleted as if absent.
                let k = key.clone();
                match store.run(move |s| s.get_strict(&k)).await {
                    Ok(stored) if cli.forget_client => {
                        match client_keys(&store, stored.as_deref(), &redirect).await {
                            Ok(clients) => std::iter::once(key).chain(clients).collect(),
                            Err(code) => return code,
                        }
                    }
                    Ok(_) => vec![key],
                    Err(StoreError::Unreadable(why)) => {
                        return unreadable(&store, "the stored sign-in", &why);
                    }
                    Err(e) => {
                        tracing::error!(target: "logout", "the stored sign-in cannot be read: {e}");
                        return EXIT_FAILED;
                    }
                }
            }
            None => match store.run(index::read_strict).await {
                Ok(entries) => entries.into_iter().map(|e| e.key).collect(),
                Err(StoreError::Unreadable(why)) => {
                    return unreadable(&store, "the index of sign-ins", &why);
                }
                Err(e) => {
                    tracing::error!(target: "logout", "the index of sign-ins cannot be read: {e}");
                    return EXIT_FAILED;
                }
            },
        };
        delete(&store, targets, url.is_none(), cli.forget_client).await
    })
}

/// The keys of the client registrations `logout --forget-client` deletes: the one of the
/// stored sign-in's issuer (`stored`, the sign-in's bytes) and `redirect`; without a stored
/// sign-in, every indexed registration for `redirect`. Errors: the exit code.
async fn client_keys(
    store: &TokenStore,
    stored: Option<&[u8]>,
    redirect: &str,
) -> Result<Vec<String>, i32> {
    if let Some(rec) = stored.and_then(|b| serde_json::from_slice::<TokenRecord>(b).ok()) {
        return Ok(vec![client_key(&rec.issuer, redirect)]);
    }
    match store.run(index::read_strict).await {
        Ok(entries) => Ok(entries
            .into_iter()
            .filter(|e| e.key.starts_with(CLIENT_KEY_PREFIX) && e.redirect_uri == redirect)
            .map(|e| e.key)
            .collect()),
        Err(StoreError::Unreadable(why)) => Err(unreadable(store, "the index of sign-ins", &why)),
        Err(e) => {
            tracing::error!(target: "logout", "the index of sign-ins cannot be read: {e}");
            Err(EXIT_FAILED)
        }
    }
}

/// A stored entry exists but does not open with the key given: nothing is deleted, exit 2 (a
/// store that does not open with this key).
fn unreadable(store: &TokenStore, what: &str, why: &str) -> i32 {
    tracing::error!(target: "logout", "{what} in {} cannot be read ({why}): give the key it was written with (--token-key-file or {TOKEN_KEY_ENV}); nothing was deleted", store.describe());
    EXIT_USAGE
}

/// `auto` fell to the memory store while a file store holds entries on disk: its sign-ins are
/// not deleted without its key, said in one warning line.
fn warn_of_a_file_store_left(cli: &LogoutCli, store: &TokenStore) {
    let dir = store::state_dir().join("tokens");
    let holds_entries = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
    if cli.token_store == StoreChoice::Auto && store.is_memory() && holds_entries {
        tracing::warn!(target: "logout", "the encrypted file store in {} is not touched: give its key (--token-key-file or {TOKEN_KEY_ENV}) to delete its sign-ins", dir.display());
    }
}

async fn delete(store: &TokenStore, keys: Vec<String>, all: bool, clients_too: bool) -> i32 {
    let mut code = EXIT_OK;
    let (mut sign_ins, mut clients) = (0usize, 0usize);
    // The keys that are gone (deleted, or absent already); a key that failed stays in the
    // index, so that the next logout finds it again.
    let mut gone = Vec::new();
    for key in keys {
        let k = key.clone();
        match store.run(move |s| s.delete(&k)).await {
            Ok(deleted) => {
                if deleted && key.starts_with(CLIENT_KEY_PREFIX) {
                    clients += 1;
                } else if deleted {
                    sign_ins += 1;
                }
                gone.push(key);
            }
            Err(e) => {
                tracing::error!(target: "logout", "a stored entry was not deleted: {e}");
                code = EXIT_FAILED;
            }
        }
    }
    // Their markers: a bridge started later does not open the store for them.
    if let Some(dir) = &store.marker_dir {
        for key in &gone {
            if let Err(e) = marker::remove(dir, key) {
                tracing::warn!(target: "logout", "the sign-in marker in {} was not removed: {e}", dir.display());
            }
        }
    }
    let index_done = if all && code == EXIT_OK {
        // Everything the bridge stored is gone: the index goes too.
        match lock::lock(
            store.lock_dir.as_deref(),
            index::INDEX_KEY,
            index::INDEX_LOCK_TIMEOUT,
        )
        .await
        {
            Ok(_guard) => store
                .run(|s| s.delete(index::INDEX_KEY).map(|_| ()))
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(format!("index lock: {e}")),
        }
    } else {
        index::update(store, move |v| v.retain(|e| !gone.contains(&e.key)))
            .await
            .map_err(|e| e.to_string())
    };
    if let Err(e) = index_done {
        tracing::error!(target: "logout", "the index of sign-ins was not updated: {e}");
        code = EXIT_FAILED;
    }
    if all && code == EXIT_OK {
        files_left(store);
    }
    if store.is_memory() {
        // The memory store lives as long as one bridge: a logout's own store is always empty.
        tracing::info!(target: "logout", "nothing to delete: the memory store holds no sign-in between runs (each bridge that uses it signs in anew)");
    } else if code == EXIT_OK && sign_ins == 0 && clients == 0 {
        tracing::info!(target: "logout", "nothing to delete: {} holds no {}", store.describe(), if all { "sign-in of the bridge" } else { "such sign-in" });
    } else if all || clients_too {
        tracing::info!(target: "logout", "deleted {sign_ins} stored sign-in(s) and {clients} client registration(s) from {}", store.describe());
    } else {
        tracing::info!(target: "logout", "deleted {sign_ins} stored sign-in(s) from {}", store.describe());
    }
    code
}

/// After `logout --all` with the file store: the files still in its directory are none of the
/// indexed entries (another program's, or written by a bridge whose index was lost), kept and
/// counted in one line so that "deleted" is not read as "the directory is empty".
fn files_left(store: &TokenStore) {
    let Some(dir) = store.file_dir() else {
        return;
    };
    let left = std::fs::read_dir(&dir).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .count()
    });
    if left > 0 {
        tracing::warn!(target: "logout", "{left} file(s) left in {}: not in the index of sign-ins, so not the bridge's to delete (remove them by hand if they are yours)", dir.display());
    }
}
