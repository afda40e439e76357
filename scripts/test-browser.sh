#!/usr/bin/env bash
# A real browser in a sign-in and as a client of the server API over HTTP (CORS): installs chromium with apt when missing (elsewhere than in CI,
# a machine where apt-get cannot install it skips this step with one line:
# scripts/install-or-skip.sh) and runs the ignored
# test of tests/it/auth_chromium.rs (pages and screenshots in target/test-artifacts/sign-in/).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  . scripts/install-or-skip.sh
  APT_INSTALL_OPTS=--no-install-recommends install_or_skip "the browser test" chromium
fi
cargo test --locked --test it -- --ignored --exact auth_chromium::chromium_follows_the_sign_in_and_the_pages_say_what_happened \
  http_cors::a_page_from_a_loopback_origin_calls_the_server_with_fetch_and_a_foreign_one_fails
