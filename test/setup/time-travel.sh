#!/usr/bin/env bash
# `npm run test:time-travel`: the Node suite with the system clock moved three years ahead
# (Debian's faketime), so that a fixture date written for today fails now, not on that day.
set -euo pipefail
cd "$(dirname "$0")/../.."
offset="${TIME_TRAVEL_OFFSET:-+3y}"

if ! command -v faketime >/dev/null 2>&1; then
  echo "faketime is missing: bash test/setup/ensure-tools.sh (or apt-get install -y faketime)" >&2
  exit 1
fi

# faketime works by preloading a library; if that ever fails silently the suite would run on
# today's date and prove nothing. Check that the clock Node sees has moved at least two years.
real=$(date +%s)
faked=$(faketime -f "$offset" node -e 'process.stdout.write(String(Math.floor(Date.now() / 1000)))')
if [ $((faked - real)) -lt $((2 * 365 * 86400)) ]; then
  echo "faketime did not move Node's clock (real $real, under faketime $faked)" >&2
  exit 1
fi
echo "Node suite with the clock at $(faketime -f "$offset" date -u +%Y-%m-%dT%H:%M:%SZ)"
exec faketime -f "$offset" npm run --silent test:node
