# Shared steps of the scripts that build Go binaries into the project's cache
# (build-control-plane.sh, build-prometheus.sh, build-helm.sh). Sourced, not run. The caller
# defines log and die (messages with its own prefix) and complete (true when
# the cached result is all there), and sets parent (the cache folder of this
# kind of build), dest (the version-keyed folder in it) and key (the version
# key, for temporary names).

# Sets the variables named $2… from the NAME=VALUE lines of the versions file
# $1 (empty when a name is absent); dies when the file is missing.
read_versions() {
  local file="$1" name value
  shift
  [[ -f "$file" ]] || die "missing $file"
  for name in "$@"; do printf -v "$name" '%s' ""; done
  while IFS='=' read -r name value; do
    if [[ " $* " == *" $name "* ]]; then printf -v "$name" '%s' "$value"; fi
  done < <(grep -E '^[A-Z_]+=' "$file")
}

# Puts the Go toolchain on PATH, or dies saying why it is needed ($1).
require_go() {
  # The official tarball's location, for shells whose PATH does not include it.
  if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
    PATH="/usr/local/go/bin:$PATH"
  fi
  command -v go >/dev/null 2>&1 || die "the Go toolchain ('go') is not on PATH; $1"
}

# One build at a time per cache: takes $parent/.build.lock (waiting for another
# build to finish) and exits 0 when that build left a complete result, unless
# forced ($1 = 1).
lock_or_done() {
  mkdir -p "$parent"
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$parent/.build.lock"
  if ! flock -n 9; then
    log "another build is running; waiting for it"
    flock 9
  fi
  if [[ $1 == 0 ]] && complete; then
    log "up to date: $dest (built by another process)"
    exit 0
  fi
}

# A fresh temporary folder next to $dest, in $tmp, removed on exit unless
# moved into place by swap_into_place.
make_build_dir() {
  tmp="$(mktemp -d "$parent/.build-$key.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"
}

# Replaces $dest by $tmp: an incomplete or forced old one is moved aside first,
# so $dest is never half-filled.
swap_into_place() {
  if [[ -e "$dest" ]]; then
    local old
    old="$(mktemp -d "$parent/.old-$key.XXXXXX")"
    mv "$dest" "$old/"
    mv "$tmp" "$dest"
    rm -rf "$old"
  else
    mv "$tmp" "$dest"
  fi
  trap - EXIT
}

# Exits without building when a binary is there to use, in this order: the one
# the environment variable $1 names (dies when it is not an executable or
# major_ok refuses its version), the cached $binary (of version $release), the
# first $2 on PATH when major_ok accepts its version. It prints that binary's
# path with --print-binary ($print_binary = 1), else says which it uses. With
# --force ($force = 1) only the cache counts, for --print-binary. With
# --print-binary and nothing found, exits 1. $3 names the versions accepted in
# messages ("a Prometheus version 2 or later"); $4… is the command line that
# prints the version. The caller defines version_of (the version a binary
# reports, or nothing) and major_ok.
use_existing() {
  local var="$1" command="$2" accepted="$3" path v where=""
  shift 3
  if [[ $force == 0 ]]; then
    if [[ -n "${!var:-}" ]]; then
      path="${!var}"
      [[ -x "$path" ]] || die "$var=$path is not an executable file"
      v="$(version_of "$path")" || v=""
      major_ok "$v" || die "$var=$path does not report $accepted ('$("$path" "$@" 2>&1 | head -n 1)')"
      where="$var"
    elif complete; then
      path="$binary" v="$release" where="cache"
    elif path="$(command -v "$command" 2>/dev/null)" && [[ -n "$path" ]]; then
      v="$(version_of "$path")" || v=""
      major_ok "$v" && where="PATH"
    fi
  fi
  if [[ -n "$where" ]]; then
    if [[ $print_binary == 1 ]]; then
      printf '%s\n' "$path"
      exit 0
    fi
    case "$where" in
      cache) log "up to date: $path ($command $v)" ;;
      *) log "using $path ($command $v) from $where; not building" ;;
    esac
    exit 0
  fi
  if [[ $print_binary == 1 ]]; then
    [[ $force == 0 ]] && complete && { printf '%s\n' "$binary"; exit 0; }
    exit 1
  fi
}
