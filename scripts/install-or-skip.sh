# Sourced by the steps of scripts/test that need system packages (scripts/test-keychain.sh,
# scripts/test-browser.sh).
#
# install_or_skip STEP PACKAGE...: installs the packages with apt-get (through sudo when not
# root; the options in APT_INSTALL_OPTS). With CI set, a failure fails the step: CI runs every
# step. Elsewhere (no apt-get on a machine that is not Debian or Ubuntu, no sudo, no network)
# it writes one line that names the step and the packages, and exits 0: the step is skipped
# and scripts/test goes on.
install_or_skip() {
  local step=$1
  shift
  local sudo_=""
  [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  # shellcheck disable=SC2086 # APT_INSTALL_OPTS is a list of options
  if [ -n "${CI:-}" ]; then
    echo "== apt-get install $*"
    $sudo_ apt-get install -y -q ${APT_INSTALL_OPTS:-} "$@" >/dev/null || { $sudo_ apt-get update -q >/dev/null; $sudo_ apt-get install -y -q ${APT_INSTALL_OPTS:-} "$@" >/dev/null; }
    return
  fi
  if command -v apt-get >/dev/null; then
    echo "== apt-get install $*"
    # shellcheck disable=SC2086
    if $sudo_ apt-get install -y -q ${APT_INSTALL_OPTS:-} "$@" >/dev/null \
      || { $sudo_ apt-get update -q >/dev/null && $sudo_ apt-get install -y -q ${APT_INSTALL_OPTS:-} "$@" >/dev/null; }; then
      return
    fi
  fi
  echo "== skipped: $step (it needs $*, which apt-get cannot install here; CI runs it)"
  exit 0
}
