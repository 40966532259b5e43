#!/usr/bin/env bash
# Provides the Helm CLI used by the chart's tests: builds it from the Go module
# pinned in helm/go.mod and caches the binary outside the checkout, keyed by
# version:
#
#   ${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}/helm/<version>/bin/helm
#
# Uses an existing binary instead, and says which, when
#   - SIGNALR_AUTOSCALER_HELM names one (it must report version 3 or later), or
#   - none is cached and a `helm` of version 3 or later is on PATH.
# The build goes to a temporary directory next to the destination and is
# renamed into place, so an interrupted build never leaves a half-filled bin/
# behind.
#
# Usage: scripts/build-helm.sh [--print-dir] [--print-binary] [--force]
#   --print-dir     print the cache's bin/ directory and exit (no build)
#   --print-binary  print the binary that would be used and exit (no build; exit 1 if none)
#   --force         build into the cache even when a binary exists, here or elsewhere
set -euo pipefail

log() { printf 'build-helm: %s\n' "$*"; }
die() { printf 'build-helm: error: %s\n' "$*" >&2; exit 1; }

print_dir=0
print_binary=0
force=0
for arg in "$@"; do
  case "$arg" in
    --print-dir) print_dir=1 ;;
    --print-binary) print_binary=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/cache-build.sh
source "$repo_root/scripts/lib/cache-build.sh"
module_dir="$repo_root/helm"
read_versions "$module_dir/versions.env" HELM_VERSION
[[ "$HELM_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] \
  || die "bad HELM_VERSION in $module_dir/versions.env: '$HELM_VERSION' (expected v3.Y.Z)"

cache_root="${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}"
parent="$cache_root/helm"
key="$HELM_VERSION"
release="$HELM_VERSION"
dest="$parent/$key"
binary="$dest/bin/helm"
complete() { [[ -x "$binary" ]]; }

if [[ $print_dir == 1 ]]; then
  printf '%s\n' "$dest/bin"
  exit 0
fi

# The version a helm binary reports ("v3.22.0"), or nothing.
version_of() {
  local out
  out="$("$1" version --short 2>&1 | head -n 1)" || true
  [[ "$out" =~ ^v([0-9]+\.[0-9]+\.[0-9]+) ]] && printf 'v%s\n' "${BASH_REMATCH[1]}"
}
major_ok() { [[ "$1" =~ ^v([0-9]+)\. ]] && [[ "${BASH_REMATCH[1]}" -ge 3 ]]; }

use_existing SIGNALR_AUTOSCALER_HELM helm "a Helm version 3 or later" version --short

require_go "install Go (see helm/go.mod for the minimum version) and re-run, or set SIGNALR_AUTOSCALER_HELM to a helm binary (version 3 or later). Needed once to build Helm $HELM_VERSION into $dest/bin"

# go.mod must pin what versions.env names, or the cache key would lie.
grep -qE "^(require )?[[:space:]]*helm\.sh/helm/v3 $HELM_VERSION\$" "$module_dir/go.mod" \
  || die "helm/go.mod does not require helm.sh/helm/v3 $HELM_VERSION (versions.env and go.mod disagree)"

lock_or_done "$force"
make_build_dir

pkg=helm.sh/helm/v3/cmd/helm
# As Helm's Makefile: the version, and the Kubernetes version that `helm lint` and
# `helm template` assume (client-go v0.M.m is Kubernetes 1.m).
client_go="$(cd "$module_dir" && go list -m -f '{{.Version}}' k8s.io/client-go)"
[[ "$client_go" =~ ^v0\.([0-9]+)\.[0-9]+$ ]] || die "unexpected k8s.io/client-go version '$client_go' in helm/go.mod"
k8s_minor="${BASH_REMATCH[1]}"
ldflags="-s -w"
for kv in "internal/version.version=$HELM_VERSION" "internal/version.gitTreeState=clean" \
  "pkg/lint/rules.k8sVersionMajor=1" "pkg/lint/rules.k8sVersionMinor=$k8s_minor" \
  "pkg/chartutil.k8sVersionMajor=1" "pkg/chartutil.k8sVersionMinor=$k8s_minor"; do
  ldflags+=" -X helm.sh/helm/v3/$kv"
done

log "go: $(go version)"
log "building helm $HELM_VERSION into $dest/bin"
log "with cold Go caches this takes about 5 minutes on 2 cores (plus module downloads); later runs reuse the result"

total_started=$(date +%s)
log "[1/2] downloading the modules it imports"
(cd "$module_dir" && go list -deps "$pkg" >/dev/null)
log "[1/2] modules ready in $(( $(date +%s) - total_started ))s"
started=$(date +%s)
log "[2/2] building helm ($pkg)"
(
  cd "$module_dir"
  CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$tmp/bin/helm" "$pkg"
)
log "[2/2] built helm in $(( $(date +%s) - started ))s ($(( $(stat -c %s "$tmp/bin/helm") / 1048576 )) MiB)"

cat >"$tmp/VERSIONS" <<EOV
HELM_VERSION=$HELM_VERSION
KUBERNETES_CLIENT=$client_go
GO_VERSION=$(go env GOVERSION)
EOV

swap_into_place
log "done in $(( $(date +%s) - total_started ))s: $binary"
