#!/usr/bin/env bash
# The keychain store against a real Secret Service: installs gnome-keyring, dbus and
# libsecret-tools with apt when missing (elsewhere than in CI, a machine where apt-get cannot
# install them skips this step with one line: scripts/install-or-skip.sh), starts a D-Bus session with gnome-keyring-daemon
# unlocked by a test password (its keyrings in a scratch XDG_DATA_HOME), and runs the ignored
# test of tests/it/auth_keychain.rs there; secret-tool checks the entry.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v gnome-keyring-daemon >/dev/null || need+=(gnome-keyring)
command -v dbus-run-session >/dev/null || need+=(dbus)
command -v secret-tool >/dev/null || need+=(libsecret-tools)
if [ ${#need[@]} -gt 0 ]; then
  . scripts/install-or-skip.sh
  install_or_skip "the keychain test" "${need[@]}"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -m 700 "$scratch/run" "$scratch/data" "$scratch/state"
export XDG_RUNTIME_DIR="$scratch/run" XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state"
dbus-run-session -- bash -c '
  set -euo pipefail
  eval "$(printf test-password | gnome-keyring-daemon --unlock --components=secrets)"
  cargo test --locked --test it -- --ignored --exact auth_keychain::the_keychain_holds_the_sign_in_and_logout_removes_it
'
