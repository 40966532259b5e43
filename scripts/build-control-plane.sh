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
module_dir="$repo_root/controlplane"
versions_file="$module_dir/versions.env"
[[ -f "$versions_file" ]] || die "missing $versions_file"

KUBERNETES_VERSION=""
ETCD_VERSION=""
while IFS='=' read -r key value; do
  case "$key" in
    KUBERNETES_VERSION) KUBERNETES_VERSION="$value" ;;
    ETCD_VERSION) ETCD_VERSION="$value" ;;
  esac
done < <(grep -E '^[A-Z_]+=' "$versions_file")
[[ "$KUBERNETES_VERSION" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "bad KUBERNETES_VERSION in $versions_file: '$KUBERNETES_VERSION'"
[[ "$ETCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "bad ETCD_VERSION in $versions_file: '$ETCD_VERSION'"

cache_root="${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}"
parent="$cache_root/controlplane"
dest="$parent/$KUBERNETES_VERSION-$ETCD_VERSION"
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

# The official tarball's location, for shells whose PATH does not include it.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the Go toolchain ('go') is not on PATH; install Go (see controlplane/go.mod for the minimum version) and re-run. Needed once to build kube-apiserver, etcd and kubectl $KUBERNETES_VERSION/$ETCD_VERSION into $dest/bin"

# go.mod must pin what versions.env names, or the cache key would lie.
grep -qE "^[[:space:]]*k8s\.io/kubernetes $KUBERNETES_VERSION\$" "$module_dir/go.mod" \
  || die "controlplane/go.mod does not require k8s.io/kubernetes $KUBERNETES_VERSION (versions.env and go.mod disagree)"
grep -qE "^[[:space:]]*go\.etcd\.io/etcd/server/v3 $ETCD_VERSION\$" "$module_dir/go.mod" \
  || die "controlplane/go.mod does not require go.etcd.io/etcd/server/v3 $ETCD_VERSION (versions.env and go.mod disagree)"

mkdir -p "$parent"

# One build at a time per cache; a second caller waits, then finds the result.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$parent/.build.lock"
  if ! flock -n 9; then
    log "another build is running; waiting for it"
    flock 9
  fi
  if [[ $force == 0 ]] && complete; then
    log "up to date: $dest/bin (built by another process)"
    exit 0
  fi
fi

tmp="$(mktemp -d "$parent/.build-$KUBERNETES_VERSION-$ETCD_VERSION.XXXXXX")"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
chmod 755 "$tmp"

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

if [[ -e "$dest" ]]; then
  # Incomplete or forced: move the old one aside, then swap in the new one.
  old="$(mktemp -d "$parent/.old-$KUBERNETES_VERSION-$ETCD_VERSION.XXXXXX")"
  mv "$dest" "$old/"
  mv "$tmp" "$dest"
  rm -rf "$old"
else
  mv "$tmp" "$dest"
fi
trap - EXIT
log "done in $(( $(date +%s) - total_started ))s: $dest/bin"
