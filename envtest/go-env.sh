# Sourced by envtest/build.sh and bench/peers/controller-runtime/build.sh: the Go environment of an offline,
# reproducible build whose module and build caches live under one cache directory, kept between runs.
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
