#!/usr/bin/env bash
# Provides the Prometheus server used by integration tests and `demo`: builds
# it from the Go module pinned in prometheus/go.mod and caches the binary
# outside the checkout, keyed by version:
#
#   ${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}/prometheus/<version>/bin/prometheus
#
# Uses an existing binary instead, and says which, when
#   - SIGNALR_AUTOSCALER_PROMETHEUS names one (it must report version 2 or later), or
#   - none is cached and a `prometheus` of version 2 or later is on PATH.
# The build leaves out the optional service discoveries (tag remove_all_sd:
# static, file and HTTP discovery stay) and the web UI (no builtinassets tag:
# the HTTP API is all that is used). It goes to a temporary directory next to
# the destination and is renamed into place, so an interrupted build never
# leaves a half-filled bin/ behind.
#
# Usage: scripts/build-prometheus.sh [--print-dir] [--print-binary] [--force]
#   --print-dir     print the cache's bin/ directory and exit (no build)
#   --print-binary  print the binary that would be used and exit (no build; exit 1 if none)
#   --force         build into the cache even when a binary exists, here or elsewhere
set -euo pipefail

log() { printf 'build-prometheus: %s\n' "$*"; }
die() { printf 'build-prometheus: error: %s\n' "$*" >&2; exit 1; }

print_dir=0
print_binary=0
force=0
for arg in "$@"; do
  case "$arg" in
    --print-dir) print_dir=1 ;;
    --print-binary) print_binary=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/cache-build.sh
source "$repo_root/scripts/lib/cache-build.sh"
module_dir="$repo_root/prometheus"
read_versions "$module_dir/versions.env" PROMETHEUS_VERSION
# Prometheus 3.Y.Z is the Go module version v0.3YY.Z.
[[ "$PROMETHEUS_VERSION" =~ ^v0\.([1-9])([0-9][0-9])\.([0-9]+)$ ]] \
  || die "bad PROMETHEUS_VERSION in $module_dir/versions.env: '$PROMETHEUS_VERSION' (expected v0.3YY.Z)"
release="${BASH_REMATCH[1]}.$((10#${BASH_REMATCH[2]})).${BASH_REMATCH[3]}"

cache_root="${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}"
parent="$cache_root/prometheus"
key="$PROMETHEUS_VERSION"
dest="$parent/$key"
binary="$dest/bin/prometheus"
complete() { [[ -x "$binary" ]]; }

if [[ $print_dir == 1 ]]; then
  printf '%s\n' "$dest/bin"
  exit 0
fi

# The version a prometheus binary reports ("prometheus, version 3.16.0 (branch: ...)"), or nothing.
version_of() {
  local out
  out="$("$1" --version 2>&1 | head -n 1)" || true
  [[ "$out" =~ version\ ([0-9]+\.[0-9]+\.[0-9]+) ]] && printf '%s\n' "${BASH_REMATCH[1]}"
}
major_ok() { [[ -n "$1" && "${1%%.*}" -ge 2 ]]; }

use_existing SIGNALR_AUTOSCALER_PROMETHEUS prometheus "a Prometheus version 2 or later" --version

require_go "install Go (see prometheus/go.mod for the minimum version) and re-run, or set SIGNALR_AUTOSCALER_PROMETHEUS to a prometheus binary (version 2 or later). Needed once to build Prometheus $release into $dest/bin"

# go.mod must pin what versions.env names, or the cache key would lie.
grep -qE "^(require )?[[:space:]]*github\.com/prometheus/prometheus $PROMETHEUS_VERSION\$" "$module_dir/go.mod" \
  || die "prometheus/go.mod does not require github.com/prometheus/prometheus $PROMETHEUS_VERSION (versions.env and go.mod disagree)"

lock_or_done "$force"
make_build_dir

pkg=github.com/prometheus/prometheus/cmd/prometheus
tags=remove_all_sd
ldflags="-s -w"
for kv in "Version=$release" "Revision=$PROMETHEUS_VERSION" "Branch=" "BuildUser=signalr-autoscaler" "BuildDate=19700101-00:00:00"; do
  ldflags+=" -X github.com/prometheus/common/version.$kv"
done

log "go: $(go version)"
log "building prometheus $release ($PROMETHEUS_VERSION, tags $tags) into $dest/bin"
log "with cold Go caches this takes about 4 minutes on 2 cores (plus module downloads); later runs reuse the result"

total_started=$(date +%s)
log "[1/2] downloading the modules it imports"
(cd "$module_dir" && go list -deps -tags "$tags" "$pkg" >/dev/null)
log "[1/2] modules ready in $(( $(date +%s) - total_started ))s"
started=$(date +%s)
log "[2/2] building prometheus ($pkg)"
(
  cd "$module_dir"
  CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags="$ldflags" -o "$tmp/bin/prometheus" "$pkg"
)
log "[2/2] built prometheus in $(( $(date +%s) - started ))s ($(( $(stat -c %s "$tmp/bin/prometheus") / 1048576 )) MiB)"

cat >"$tmp/VERSIONS" <<EOF
PROMETHEUS_VERSION=$PROMETHEUS_VERSION
PROMETHEUS_RELEASE=$release
BUILD_TAGS=$tags
GO_VERSION=$(go env GOVERSION)
EOF

swap_into_place
log "done in $(( $(date +%s) - total_started ))s: $binary"
