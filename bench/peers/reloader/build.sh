#!/usr/bin/env bash
# Builds stakater/Reloader, from the source vendored in src/, into a cache outside the repository; prints the binary's path.
#
# Usage: bench/peers/reloader/build.sh     prints the binary path on its last line (builds only when src/ or this
#                                         script changed since the last build)
# Env:   CUSTOMAPP_BENCH_RELOADER_CACHE   cache root (default ~/.cache/customapp-operator/bench-reloader)
#
# src/ is Reloader's own tree at the pinned release (UPSTREAM names it), kept verbatim: only what `go build .` compiles
# (main.go, internal/, pkg/ without tests), go.mod, go.sum and the licence. Its modules come from the Go module proxy.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CUSTOMAPP_BENCH_RELOADER_CACHE:-${HOME}/.cache/customapp-operator/bench-reloader}"

# The proxy does not serve github.com/openshift/api at the pseudo-version Reloader's go.mod names (403 "not
# available"). Reloader needs it only for OpenShift DeploymentConfigs, through github.com/openshift/client-go, whose own
# go.mod (at the version Reloader pins) requires this served pseudo-version one week older: the API types the
# client was built against.
OPENSHIFT_API_REPLACE="github.com/openshift/api=github.com/openshift/api@v0.0.0-20260326111139-30c2ef7a272e"

log() { echo "bench-reloader: $*" >&2; }

sources_hash() {
  { (cd "${HERE}/src" && find . -type f | LC_ALL=C sort | xargs cat); cat "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16
}
BINARY="${CACHE}/bin/reloader-$(sources_hash)"
if [[ -x "${BINARY}" ]]; then
  echo "${BINARY}"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is needed to build Reloader (https://go.dev/dl, or Debian's golang-go; its go.mod asks for $(grep '^go ' "${HERE}/src/go.mod"))"
  exit 1
fi

# shellcheck source=envtest/go-env.sh
source "${HERE}/../../../envtest/go-env.sh"
go_env "${CACHE}"
mkdir -p "${CACHE}/bin"

start=$(date +%s)
log "building stakater/Reloader $(head -1 "${HERE}/UPSTREAM")"
# The replace goes into a copy: src/ stays byte for byte what upstream released.
WORK="${CACHE}/work"
rm -rf "${WORK}"
cp -r "${HERE}/src" "${WORK}"
(cd "${WORK}" && go mod edit -replace "${OPENSHIFT_API_REPLACE}")
VERSION="$(sed -n 's/^version: //p' "${HERE}/UPSTREAM")"
(cd "${WORK}" && go build -trimpath -ldflags "-s -w -X github.com/stakater/Reloader/pkg/common.Version=${VERSION}" -o "${BINARY}.tmp" .)
mv "${BINARY}.tmp" "${BINARY}"
log "built in $(( $(date +%s) - start ))s: ${BINARY}"
echo "${BINARY}"
