#!/usr/bin/env bash
# Builds the local control plane (kube-apiserver, etcd, kubectl) from the Go
# modules pinned in controlplane/go.mod and caches the binaries outside the
# checkout, keyed by version:
#
#   ${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}/controlplane/<k8s>-<etcd>/bin/
#
# Does nothing when the binaries are already there. The build goes to a
# temporary directory next to the destination and is renamed into place, so
# an interrupted build never leaves a half-filled bin/ behind.
#
# Usage: scripts/build-control-plane.sh [--print-dir] [--force]
#   --print-dir  print the bin/ directory and exit (no build)
#   --force      rebuild even when the binaries exist
set -euo pipefail

log() { printf 'build-control-plane: %s\n' "$*"; }
die() { printf 'build-control-plane: error: %s\n' "$*" >&2; exit 1; }

print_dir=0
force=0
for arg in "$@"; do
  case "$arg" in
    --print-dir) print_dir=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/cache-build.sh
source "$repo_root/scripts/lib/cache-build.sh"
module_dir="$repo_root/controlplane"
read_versions "$module_dir/versions.env" KUBERNETES_VERSION ETCD_VERSION
[[ "$KUBERNETES_VERSION" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "bad KUBERNETES_VERSION in $module_dir/versions.env: '$KUBERNETES_VERSION'"
[[ "$ETCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "bad ETCD_VERSION in $module_dir/versions.env: '$ETCD_VERSION'"

cache_root="${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}"
parent="$cache_root/controlplane"
key="$KUBERNETES_VERSION-$ETCD_VERSION"
dest="$parent/$key"
bins=(kube-apiserver etcd kubectl)

if [[ $print_dir == 1 ]]; then
  printf '%s\n' "$dest/bin"
  exit 0
fi

complete() {
  local b
  for b in "${bins[@]}"; do [[ -x "$dest/bin/$b" ]] || return 1; done
}

if [[ $force == 0 ]] && complete; then
  log "up to date: $dest/bin (kubernetes $KUBERNETES_VERSION, etcd $ETCD_VERSION)"
  exit 0
fi

require_go "install Go (see controlplane/go.mod for the minimum version) and re-run. Needed once to build kube-apiserver, etcd and kubectl $KUBERNETES_VERSION/$ETCD_VERSION into $dest/bin"

# go.mod must pin what versions.env names, or the cache key would lie.
grep -qE "^[[:space:]]*k8s\.io/kubernetes $KUBERNETES_VERSION\$" "$module_dir/go.mod" \
  || die "controlplane/go.mod does not require k8s.io/kubernetes $KUBERNETES_VERSION (versions.env and go.mod disagree)"
grep -qE "^[[:space:]]*go\.etcd\.io/etcd/server/v3 $ETCD_VERSION\$" "$module_dir/go.mod" \
  || die "controlplane/go.mod does not require go.etcd.io/etcd/server/v3 $ETCD_VERSION (versions.env and go.mod disagree)"

lock_or_done "$force"
make_build_dir

minor="${KUBERNETES_VERSION#v1.}"
minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

log "go: $(go version)"
log "building kubernetes $KUBERNETES_VERSION and etcd $ETCD_VERSION into $dest/bin"
log "with cold Go caches this takes about 4 minutes on 2 cores (plus module downloads); later runs reuse the result"

build() {
  local name="$1" pkg="$2" started
  started=$(date +%s)
  log "[$3] building $name ($pkg)"
  (
    cd "$module_dir"
    CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$tmp/bin/$name" "$pkg"
  )
  log "[$3] built $name in $(( $(date +%s) - started ))s"
}

total_started=$(date +%s)
log "downloading modules (go mod download)"
(cd "$module_dir" && go mod download)
log "modules ready in $(( $(date +%s) - total_started ))s"
build etcd go.etcd.io/etcd/server/v3 1/3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver 2/3
build kubectl k8s.io/kubernetes/cmd/kubectl 3/3

cat >"$tmp/VERSIONS" <<EOF
KUBERNETES_VERSION=$KUBERNETES_VERSION
ETCD_VERSION=$ETCD_VERSION
GO_VERSION=$(go env GOVERSION)
EOF

swap_into_place
log "done in $(( $(date +%s) - total_started ))s: $dest/bin"
