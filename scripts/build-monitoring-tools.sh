#!/usr/bin/env bash
# Provides the tools the monitoring and GitOps tests run: `promtool`, built from the Prometheus Go
# module pinned in prometheus/go.mod (the same source as the server of build-prometheus.sh), and
# `gitops-health`, built from the Go module in gitops/ (Argo CD's Lua runtime and Flux's kstatus,
# see gitops/main.go). Both are cached outside the checkout, keyed by the Prometheus version and a
# hash of gitops/'s go.mod, go.sum and main.go:
#
#   ${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}/monitoring-tools/<version>-<hash>/bin/{promtool,gitops-health}
#
# Like build-prometheus.sh it leaves out the optional service discoveries (tag remove_all_sd),
# builds in a temporary directory next to the destination and renames it into place, so an
# interrupted build never leaves a half-filled bin/ behind.
#
# Usage: scripts/build-monitoring-tools.sh [--print-dir] [--force]
#   --print-dir  print the cache's bin/ directory and exit (no build)
#   --force      build even when the cached tools exist
set -euo pipefail

log() { printf 'build-monitoring-tools: %s\n' "$*"; }
die() { printf 'build-monitoring-tools: error: %s\n' "$*" >&2; exit 1; }

print_dir=0
force=0
for arg in "$@"; do
  case "$arg" in
    --print-dir) print_dir=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/cache-build.sh
source "$repo_root/scripts/lib/cache-build.sh"
prometheus_dir="$repo_root/prometheus"
gitops_dir="$repo_root/gitops"
read_versions "$prometheus_dir/versions.env" PROMETHEUS_VERSION
[[ -n "$PROMETHEUS_VERSION" ]] || die "no PROMETHEUS_VERSION in $prometheus_dir/versions.env"
gitops_hash="$(cat "$gitops_dir/go.mod" "$gitops_dir/go.sum" "$gitops_dir/main.go" | sha256sum | cut -c1-12)"

cache_root="${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}"
parent="$cache_root/monitoring-tools"
key="$PROMETHEUS_VERSION-$gitops_hash"
dest="$parent/$key"
complete() { [[ -x "$dest/bin/promtool" && -x "$dest/bin/gitops-health" ]]; }

if [[ $print_dir == 1 ]]; then
  printf '%s\n' "$dest/bin"
  exit 0
fi
if [[ $force == 0 ]] && complete; then
  log "up to date: $dest/bin"
  exit 0
fi

require_go "install Go (see prometheus/go.mod for the minimum version) and re-run. Needed once to build promtool and gitops-health into $dest/bin"
lock_or_done "$force"
make_build_dir

log "go: $(go version)"
log "building promtool ($PROMETHEUS_VERSION) and gitops-health ($gitops_hash) into $dest/bin"
log "with the Prometheus server already built this takes about 3 minutes on 2 cores (plus module downloads); later runs reuse the result"
started=$(date +%s)
(
  cd "$prometheus_dir"
  CGO_ENABLED=0 go build -trimpath -tags remove_all_sd -ldflags="-s -w" -o "$tmp/bin/promtool" \
    github.com/prometheus/prometheus/cmd/promtool
)
log "built promtool in $(( $(date +%s) - started ))s"
started=$(date +%s)
(cd "$gitops_dir" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$tmp/bin/gitops-health" .)
log "built gitops-health in $(( $(date +%s) - started ))s"

cat >"$tmp/VERSIONS" <<EOV
PROMETHEUS_VERSION=$PROMETHEUS_VERSION
GITOPS_HASH=$gitops_hash
GO_VERSION=$(go env GOVERSION)
EOV

swap_into_place
log "done: $dest/bin"
