#!/usr/bin/env bash
# Runs kasmrt side by side with the process-per-action tools (xdotool, scrot,
# ImageMagick's convert), Playwright MCP and img2sixel, and a goal run
# headless against the same run watched in the live console, in one run,
# samples of the two alternating; writes the tables into docs/benchmarks.md
# between its bench-compare markers.
# Installs what only this benchmark needs when it is missing: scrot, xdotool
# and imagemagick from Debian, and @playwright/mcp from npm into a cache
# directory (KASMRT_BENCH_CACHE, default ~/.cache/kasmrt-bench), pointed at
# Debian's Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
missing=()
command -v scrot >/dev/null || missing+=(scrot)
command -v xdotool >/dev/null || missing+=(xdotool)
# Only Debian's convert: another one earlier on PATH may not be ImageMagick.
[ -x /usr/bin/convert ] || missing+=(imagemagick)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
  echo "bench-compare: installing ${missing[*]}" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cache="${KASMRT_BENCH_CACHE:-$HOME/.cache/kasmrt-bench}/playwright-mcp"
cli="$cache/node_modules/@playwright/mcp/cli.js"
if [ ! -f "$cli" ]; then
  echo "bench-compare: installing @playwright/mcp into $cache" >&2
  mkdir -p "$cache"
  npm install --silent --no-audit --no-fund --prefix "$cache" @playwright/mcp@latest >/dev/null
fi

go build -o bin/kasmrt ./cmd/kasmrt
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
# Each part's table is printed as soon as it is measured; a part that
# fails says why in its place and the others still run, so the document
# gets every table that could be measured, and the exit status says one
# could not.
status=0
go run ./scripts/benchcompare -kasmrt bin/kasmrt -playwright "$cli" -convert /usr/bin/convert "$@" | tee "$table" || status=$?

doc=docs/benchmarks.md
start='<!-- bench-compare:start -->'
end='<!-- bench-compare:end -->'
grep -qF "$start" "$doc" || { echo "bench-compare: $doc has no $start marker" >&2; exit 1; }
awk -v start="$start" -v end="$end" -v table="$table" '
  $0 == start { print; while ((getline line < table) > 0) print line; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }
' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
echo "bench-compare: wrote the tables into $doc" >&2
exit "$status"
