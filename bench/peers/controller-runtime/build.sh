#!/usr/bin/env bash
# Builds the controller-runtime peer of the benchmark into a cache outside the repository; prints the binary's path.
#
# Usage: bench/peers/controller-runtime/build.sh     prints the binary path on its last line (builds only when the
#                                                   sources changed since the last build)
# Env:   CUSTOMAPP_BENCH_PEER_CACHE   cache root (default ~/.cache/customapp-operator/bench-peer)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CUSTOMAPP_BENCH_PEER_CACHE:-${HOME}/.cache/customapp-operator/bench-peer}"
ENVTEST_MODCACHE="${HOME}/.cache/customapp-operator/envtest/gomodcache/cache/download"

log() { echo "bench-peer: $*" >&2; }

# The binary is named after its sources; go.mod and go.sum are hashed as `go mod tidy` leaves them.
sources_hash() { { cat "${HERE}"/go.mod "${HERE}"/*.go "${HERE}"/go.sum 2>/dev/null || true; } | sha256sum | cut -c1-16; }
# shellcheck source=envtest/go-env.sh
source "${HERE}/../../../envtest/go-env.sh"
print_cached "${CACHE}/bin/controller-runtime-peer-$(sources_hash)"
# One build at a time (concurrent benchmark tests may all find the binary missing, and would share its .tmp file); the
# lock is this script itself. A caller that waited finds the binary the other one built.
exec 9<"${BASH_SOURCE[0]}"
flock 9
print_cached "${CACHE}/bin/controller-runtime-peer-$(sources_hash)"
require_go "Go is needed to build the controller-runtime peer (https://go.dev/dl, or Debian's golang-go)"
go_env "${CACHE}"
# Reuse the modules envtest already downloaded (same k8s.io line), then the proxy.
if [[ -z "${GOPROXY:-}" && -d "${ENVTEST_MODCACHE}" ]]; then
  export GOPROXY="file://${ENVTEST_MODCACHE},https://proxy.golang.org"
fi
mkdir -p "${CACHE}/bin" "${GOMODCACHE}" "${GOCACHE}"

start=$(date +%s)
log "building the sigs.k8s.io/controller-runtime peer"
(cd "${HERE}" && go mod tidy >&2)
BINARY="${CACHE}/bin/controller-runtime-peer-$(sources_hash)"
(cd "${HERE}" && go build -trimpath -ldflags "-s -w" -o "${BINARY}.tmp" .)
mv "${BINARY}.tmp" "${BINARY}"
log "built in $(( $(date +%s) - start ))s: ${BINARY}"
echo "${BINARY}"
