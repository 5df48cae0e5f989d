#!/usr/bin/env bash
# Installs the Debian packages the tests drive when they are missing: Chromium (browser and
# end-to-end tests; no test tool downloads a browser of its own), redis-server (the tests of
# several instances start their own) and faketime (`npm run test:time-travel`).
set -euo pipefail

missing=()
if [ -z "${CHROMIUM_PATH:-}" ] || [ ! -x "${CHROMIUM_PATH:-}" ]; then
  [ -x /usr/bin/chromium ] || missing+=(chromium)
fi
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != "0" ]; then
  echo "Missing Debian packages, and installing them needs root: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing Debian's ${missing[*]} (apt-get)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
for tool in chromium redis-server faketime; do
  [[ " ${missing[*]} " == *" $tool "* ]] && echo "  $tool: $(command -v "$tool")"
done
exit 0
