//! A real browser: headless Chromium opens the start URL of a sign-in. It follows the one-time
//! start URL, the fixture authorization server's redirect and the loopback callback; the
//! receiver's success page and its failure page (a forged state) are checked by their text
//! (`--dump-dom`), and a screenshot of each is kept in `target/test-artifacts/sign-in/`.
//! `scripts/test-browser.sh` (run by scripts/test) installs Chromium when missing and runs this
//! file with `--ignored`.

use mcp_test_fixtures::auth_fixture;

use auth_fixture::{call, default_behaviour, free_port, start};
use mcp_bridge::auth::opener::BrowserOpener;
use mcp_bridge::auth::signin::{SignIn, SignInConfig};
use mcp_bridge::auth::store::TokenStore;
use mcp_bridge::auth::store::memory::MemoryStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/sign-in");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs one sign-in with Chromium as the browser; gives the call's outcome and the page's DOM.
fn sign_in_with_chromium(
    name: &str,
    forged_state: bool,
) -> (Result<(), String>, String, Vec<String>) {
    let art = artifacts();
    let html = art.join(format!("{name}.html"));
    let png = art.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&html);
    let _ = std::fs::remove_file(&png);
    let script = art.join(format!("chromium-{name}"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nchromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='{d}/profile-{name}' --window-size=900,500 --dump-dom --screenshot='{png}' \"$1\" > '{html}.part' 2>/dev/null && mv '{html}.part' '{html}'\n",
            d = art.display(),
            png = png.display(),
            html = html.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut b = default_behaviour();
    if forged_state {
        b.redirect_state = Some("forged".into());
    }
    let fx = start(b);
    let mut cfg = SignInConfig::new(url::Url::parse(&fx.mcp_url()).unwrap());
    cfg.redirect_port = free_port();
    cfg.sign_in_timeout = Duration::from_secs(if forged_state { 30 } else { 120 });
    cfg.browser = BrowserOpener::Program(script.clone());
    let store = TokenStore::new(vec![Arc::new(MemoryStore::default())], art.join("locks"));
    let out = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let p = SignIn::new(cfg, store).unwrap();
            call(&p, &fx).await
        });
    // Chromium writes the DOM when the page has loaded; wait for the file.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !html.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "chromium wrote no page for {name}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Chromium's profile is scratch; the pages and screenshots are the artifacts.
    let _ = std::fs::remove_dir_all(art.join(format!("profile-{name}")));
    let _ = std::fs::remove_file(&script);
    let secrets = fx.secrets.lock().unwrap().clone();
    (out, std::fs::read_to_string(&html).unwrap(), secrets)
}

#[test]
#[ignore = "needs chromium: scripts/test-browser.sh runs it"]
fn chromium_follows_the_sign_in_and_the_pages_say_what_happened() {
    let (out, dom, secrets) = sign_in_with_chromium("success", false);
    assert_eq!(out, Ok(()));
    assert!(dom.contains("<h1>Signed in</h1>"), "{dom}");
    assert!(
        dom.contains("You can close this tab and go back to your editor."),
        "{dom}"
    );
    for s in &secrets {
        assert!(!dom.contains(s.as_str()), "a code or token on the page");
    }
    assert!(artifacts().join("success.png").exists());

    let (out, dom, secrets) = sign_in_with_chromium("failure", true);
    let err = out.unwrap_err();
    assert!(err.starts_with("sign_in_timeout:"), "{err}");
    assert!(dom.contains("<h1>Sign-in not recognized</h1>"), "{dom}");
    assert!(dom.contains("use the newest sign-in link"), "{dom}");
    for s in &secrets {
        assert!(!dom.contains(s.as_str()), "a code or token on the page");
    }
    assert!(artifacts().join("failure.png").exists());
}
