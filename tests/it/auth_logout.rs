//! `mcp-bridge logout` over the real binary against an encrypted file store filled through the
//! library: `logout <url>`, `logout --account`, `logout --all`, and the exit codes (0 deleted
//! or nothing to delete, 2 invalid arguments or a store that does not open). Also: without a
//! D-Bus session, `auto` falls back to the file store with one info line.

use crate::common;
use mcp_bridge::auth::receiver::redirect_uri;
use mcp_bridge::auth::store::file::{FileKey, FileStore};
use mcp_bridge::auth::store::records::IndexEntry;
use mcp_bridge::auth::store::{Backend, TokenStore, index, sign_in_key};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

const URL_A: &str = "https://a.example/mcp";
const URL_B: &str = "https://b.example/mcp";

fn store(xdg: &Path) -> TokenStore {
    let dir = xdg.join("mcp-bridge");
    let f = FileStore::open(
        dir.join("tokens"),
        FileKey::from_hex(common::KEY_HEX).unwrap(),
    )
    .unwrap();
    TokenStore::new(vec![Arc::new(f) as Arc<dyn Backend>], dir.join("locks"))
}

/// Stores a sign-in for `url` and `account` (redirect port 41894) and lists it in the index.
fn put(xdg: &Path, url: &str, account: &str) -> String {
    let s = store(xdg);
    let redirect = redirect_uri(41894);
    let key = sign_in_key(url, account, &redirect);
    s.set(&key, b"{\"opaque\":true}").unwrap();
    let entry = IndexEntry {
        key: key.clone(),
        url: url.into(),
        account: account.into(),
        redirect_uri: redirect,
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(index::add(&s, entry))
        .unwrap();
    key
}

fn present(xdg: &Path, key: &str) -> bool {
    store(xdg).get(key).unwrap().is_some()
}

fn logout(xdg: &Path, args: &[&str], key: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"));
    c.arg("logout").args(args).env("XDG_STATE_HOME", xdg);
    // No D-Bus session: the keychain does not answer.
    c.env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", xdg);
    if key {
        c.env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX);
    } else {
        c.env_remove("MCP_BRIDGE_TOKEN_KEY");
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The lines of the `logout` target (not the token store's info line).
fn logout_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("mcp-bridge: logout: "))
        .map(String::from)
        .collect()
}

/// `logout --all` deletes what the index lists; a file of the store's directory that the
/// index does not list is kept and counted, and a second `--all` says there is nothing to
/// delete.
#[test]
fn logout_all_counts_the_files_it_leaves_and_then_says_nothing_is_left_to_delete() {
    let xdg = common::scratch_dir("left");
    let a = put(&xdg, URL_A, "default");
    let tokens = xdg.join("mcp-bridge").join("tokens");
    std::fs::write(tokens.join("signin-stray"), b"not an entry").unwrap();
    let o = logout(&xdg, &["--all", "--token-store", "file"], true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!present(&xdg, &a));
    assert_eq!(
        logout_lines(&o),
        vec![
            format!(
                "mcp-bridge: logout: warn: 1 file(s) left in {}: not in the index of sign-ins, so not the bridge's to delete (remove them by hand if they are yours)",
                tokens.display()
            ),
            format!(
                "mcp-bridge: logout: info: deleted 1 stored sign-in(s) and 0 client registration(s) from encrypted files in {}",
                tokens.display()
            ),
        ],
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(tokens.join("signin-stray")).unwrap();
    let o = logout(&xdg, &["--all", "--token-store", "file"], true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        logout_lines(&o),
        vec![format!(
            "mcp-bridge: logout: info: nothing to delete: encrypted files in {} holds no sign-in of the bridge",
            tokens.display()
        )],
        "{}",
        stderr(&o)
    );
}

#[test]
fn logout_of_a_url_deletes_that_sign_in_of_the_default_account_only() {
    let xdg = common::scratch_dir("url");
    let a = put(&xdg, URL_A, "default");
    let a_work = put(&xdg, URL_A, "work");
    let b = put(&xdg, URL_B, "default");
    let o = logout(&xdg, &["--token-store", "file", URL_A], true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!present(&xdg, &a));
    assert!(present(&xdg, &a_work) && present(&xdg, &b));
    // Nothing left to delete is still success, said as such.
    let o = logout(&xdg, &["--token-store", "file", URL_A], true);
    assert_eq!(o.status.code(), Some(0));
    let tokens = xdg.join("mcp-bridge").join("tokens");
    assert_eq!(
        logout_lines(&o),
        vec![format!(
            "mcp-bridge: logout: info: nothing to delete: encrypted files in {} holds no such sign-in",
            tokens.display()
        )],
        "{}",
        stderr(&o)
    );
    let o = logout(
        &xdg,
        &["--token-store", "file", "--account", "work", URL_A],
        true,
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(!present(&xdg, &a_work) && present(&xdg, &b));
    assert!(
        stderr(&o).contains("deleted 1 stored sign-in(s)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn logout_all_deletes_every_indexed_sign_in_and_the_index() {
    let xdg = common::scratch_dir("all");
    let keys = [
        put(&xdg, URL_A, "default"),
        put(&xdg, URL_A, "work"),
        put(&xdg, URL_B, "x"),
    ];
    // auto without D-Bus: the file store, named in one info line.
    let o = logout(&xdg, &["--all"], true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for k in &keys {
        assert!(!present(&xdg, k));
    }
    let s = stderr(&o);
    let store_lines: Vec<_> = s.lines().filter(|l| l.contains("token store:")).collect();
    assert_eq!(store_lines.len(), 1, "{s}");
    assert!(
        store_lines[0].starts_with("mcp-bridge: sign-in: info: token store: encrypted files in "),
        "{s}"
    );
    assert!(s.contains("deleted 3 stored sign-in(s)"), "{s}");
    assert!(!s.contains("file(s) left"), "{s}");
    assert_eq!(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async { store(&xdg).run(index::read).await })
            .unwrap(),
        vec![]
    );
}

#[test]
fn invalid_arguments_and_a_store_that_does_not_open_exit_2() {
    let xdg = common::scratch_dir("usage");
    for (args, key) in [
        (&["--all", URL_A][..], true),
        (&["--all", "--account", "w"][..], true),
        (&[][..], true),
        (&["ftp://a.example/x"][..], true),
        (&["https://user@a.example/x"][..], true),
        (&["--token-store", "file", URL_A][..], false),
        (&["--token-store", "keychain", URL_A][..], true),
        (&["--token-key-file", "/nonexistent/key", URL_A][..], false),
    ] {
        let o = logout(&xdg, args, key);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("mcp-bridge: logout: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // The key never appears in any message.
    let o = logout(&xdg, &["--token-store", "file", URL_A], true);
    assert!(!stderr(&o).contains(common::KEY_HEX));
}

const OTHER_KEY_HEX: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

/// A private key file holding a valid key that is not the one the store was written with.
fn other_key_file(xdg: &Path) -> PathBuf {
    use std::os::unix::fs::OpenOptionsExt;
    let path = xdg.join("other.key");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, OTHER_KEY_HEX.as_bytes()).unwrap();
    path
}

fn index_present(xdg: &Path) -> bool {
    present(xdg, index::INDEX_KEY)
}

#[test]
fn a_key_that_does_not_open_the_store_deletes_nothing_and_exits_2() {
    let xdg = common::scratch_dir("wrongkey");
    let a = put(&xdg, URL_A, "default");
    let b = put(&xdg, URL_B, "default");
    let wrong = other_key_file(&xdg);
    let wrong = wrong.to_str().unwrap();
    let hint = "give the key it was written with (--token-key-file or MCP_BRIDGE_TOKEN_KEY); nothing was deleted";
    for (args, what) in [
        (
            &["--all", "--token-store", "file", "--token-key-file", wrong][..],
            "the index of sign-ins",
        ),
        (
            &["--all", "--token-key-file", wrong][..],
            "the index of sign-ins",
        ),
        (
            &["--token-store", "file", "--token-key-file", wrong, URL_A][..],
            "the stored sign-in",
        ),
    ] {
        let o = logout(&xdg, args, false);
        let s = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {s}");
        let errors: Vec<_> = s.lines().filter(|l| l.contains(": error: ")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {s}");
        assert!(
            errors[0].starts_with(&format!(
                "mcp-bridge: logout: error: {what} in encrypted files in "
            )) && errors[0].contains("cannot be read (a token file does not open with this key)")
                && errors[0].ends_with(hint),
            "{args:?}: {s}"
        );
        assert!(!s.contains("deleted "), "{args:?}: {s}");
        assert!(!s.contains("signs in again"), "{args:?}: {s}");
        assert!(index_present(&xdg) && present(&xdg, &a) && present(&xdg, &b));
    }
    // The right key then deletes both.
    let o = logout(&xdg, &["--all", "--token-store", "file"], true);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("deleted 2 stored sign-in(s)"),
        "{}",
        stderr(&o)
    );
    assert!(!index_present(&xdg) && !present(&xdg, &a) && !present(&xdg, &b));
}

#[test]
fn logout_all_in_memory_names_a_file_store_left_on_disk() {
    let xdg = common::scratch_dir("memleft");
    let a = put(&xdg, URL_A, "default");
    // auto, no D-Bus, no key: the memory store.
    let o = logout(&xdg, &["--all"], false);
    let s = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{s}");
    let warnings: Vec<_> = s.lines().filter(|l| l.contains(": warn")).collect();
    assert_eq!(
        warnings,
        vec![format!(
            "mcp-bridge: logout: warn: the encrypted file store in {} is not touched: give its key (--token-key-file or MCP_BRIDGE_TOKEN_KEY) to delete its sign-ins",
            xdg.join("mcp-bridge/tokens").display()
        )],
        "{s}"
    );
    assert!(present(&xdg, &a) && index_present(&xdg));
}

/// `logout` with the memory store (`--token-store memory`, or `auto` without a keychain and
/// without a key) says that the memory store holds nothing between runs, not "deleted 0".
#[test]
fn logout_from_the_memory_store_says_that_it_holds_nothing_between_runs() {
    let xdg = common::scratch_dir("memory");
    for args in [
        &["--token-store", "memory", URL_A][..],
        &[URL_A][..],
        &["--all"][..],
    ] {
        let o = logout(&xdg, args, false);
        let s = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {s}");
        let lines: Vec<&str> = s
            .lines()
            .filter(|l| l.starts_with("mcp-bridge: logout: "))
            .collect();
        assert_eq!(
            lines,
            [
                "mcp-bridge: logout: info: nothing to delete: the memory store holds no sign-in between runs (each bridge that uses it signs in anew)"
            ],
            "{args:?}: {s}"
        );
    }
}

/// Stores a client registration of `issuer` for the redirect port `port` and lists it in the
/// index (as a dynamic registration does).
fn put_client(xdg: &Path, issuer: &str, port: u16) -> String {
    let s = store(xdg);
    let redirect = redirect_uri(port);
    let key = mcp_bridge::auth::store::client_key(issuer, &redirect);
    s.set(&key, b"{\"opaque\":true}").unwrap();
    let entry = IndexEntry {
        key: key.clone(),
        url: issuer.into(),
        account: String::new(),
        redirect_uri: redirect,
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(index::add(&s, entry))
        .unwrap();
    key
}

/// `--forget-client` without a stored sign-in for the URL (its issuer is not known): every
/// registration for the redirect URI goes, one for another redirect port stays; the stored
/// sign-ins of other servers stay.
#[test]
fn logout_forget_client_without_a_stored_sign_in_deletes_the_registrations_of_its_redirect_uri() {
    let xdg = common::scratch_dir("forget-client");
    let c1 = put_client(&xdg, "https://as1.example", 41894);
    let c2 = put_client(&xdg, "https://as2.example", 41894);
    let other_port = put_client(&xdg, "https://as1.example", 41895);
    let b = put(&xdg, URL_B, "default");
    let o = logout(
        &xdg,
        &["--token-store", "file", "--forget-client", URL_A],
        true,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "deleted 0 stored sign-in(s) and 2 client registration(s) from encrypted files in "
        ),
        "{err}"
    );
    assert!(!present(&xdg, &c1) && !present(&xdg, &c2));
    assert!(present(&xdg, &other_port) && present(&xdg, &b));
    let left: Vec<String> = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { store(&xdg).run(index::read).await })
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(left, vec![other_port, b]);
    // With --all it is refused (--all deletes every registration anyway).
    let o = logout(&xdg, &["--all", "--forget-client"], true);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
