#!/usr/bin/env bash
# A real browser in a sign-in: installs chromium with apt when missing and runs the ignored
# test of tests/it/auth_chromium.rs (pages and screenshots in target/test-artifacts/sign-in/).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  echo "== apt-get install chromium"
  sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  $sudo_ apt-get install -y -q --no-install-recommends chromium >/dev/null || { $sudo_ apt-get update -q >/dev/null; $sudo_ apt-get install -y -q --no-install-recommends chromium >/dev/null; }
fi
cargo test --locked --test it -- --ignored --exact auth_chromium::chromium_follows_the_sign_in_and_the_pages_say_what_happened
