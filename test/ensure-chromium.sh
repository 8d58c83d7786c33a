#!/usr/bin/env bash
# Runs before `npm test` (package.json "pretest"): the dashboard test (test/node/operator-loop.test.ts)
# drives a real Chromium through playwright-core (bench/e2e/dashboard-browser.ts), Debian's package by
# default. A test tool's own browser download (npx playwright install, puppeteer) needs the tool's CDN;
# Debian's package needs only the distribution's mirror. Nothing to do when the browser is there.
set -euo pipefail

path="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$path" ]; then exit 0; fi

warn() {
  echo "ensure-chromium: $1; the dashboard test will fail until $path exists (or CHROMIUM_PATH names a Chromium)" >&2
  exit 0
}
if [ -n "${CHROMIUM_PATH:-}" ]; then warn "CHROMIUM_PATH=$path is not an executable"; fi
command -v apt-get >/dev/null || warn "no $path and no apt-get to install Debian's chromium"
SUDO=()
if [ "$(id -u)" != "0" ]; then
  sudo -n true 2>/dev/null || warn "installing Debian's chromium needs root: run 'sudo apt-get install chromium'"
  SUDO=(sudo -n)
fi

echo "== chromium: apt-get install chromium (the dashboard test drives it; once per machine)"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq chromium >/dev/null
"$path" --version
