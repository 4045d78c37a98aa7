# Sourced by the scripts that build Go binaries into a cache outside the repository (envtest/, bench/peers/): the Go
# environment of an offline, reproducible build whose module and build caches live under one cache directory, kept
# between runs, and the two checks each makes before it builds.

# Usage: print_cached <binary>
# A build already in the cache is the answer: prints its path (the script's last line) and ends the script.
print_cached() {
  if [[ -x "$1" ]]; then
    echo "$1"
    exit 0
  fi
}

# Usage: require_go <line>...
# Ends the script when Go is not installed, saying why it is needed in these lines (through the script's own log).
require_go() {
  if ! command -v go >/dev/null 2>&1; then
    local line
    for line in "$@"; do log "${line}"; done
    exit 1
  fi
}

# Usage: go_env <cache-dir>
go_env() {
  export GOMODCACHE="$1/gomodcache"
  export GOCACHE="$1/gocache"
  export GOFLAGS="-mod=mod -buildvcs=false"
  export GOSUMDB="${GOSUMDB:-off}"     # sum.golang.org is not reachable from every machine; the proxy is
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
  export CGO_ENABLED=0
  mkdir -p "${GOMODCACHE}" "${GOCACHE}"
}
