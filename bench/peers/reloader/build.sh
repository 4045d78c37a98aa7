#!/usr/bin/env bash
# Builds stakater/Reloader from the source archive beside it into a cache outside the repository; prints the binary's path.
#
# Usage: bench/peers/reloader/build.sh     prints the binary path on its last line (builds only when the archive or
#                                         this script changed since the last build)
# Env:   CUSTOMAPP_BENCH_RELOADER_CACHE   cache root (default ~/.cache/customapp-operator/bench-reloader)
#
# The archive is Reloader's own tree at the pinned release (UPSTREAM names it and its sha256; pack.sh made it), kept
# verbatim: only what `go build .` compiles (main.go, internal/, pkg/ without tests), go.mod, go.sum and the licence.
# It is committed as an archive because the Go module proxy does not serve stakater/Reloader, and packed so that its
# upstream code stays out of the tree our tools read (the duplicate finder, the linters). Its modules come from the
# Go module proxy.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CUSTOMAPP_BENCH_RELOADER_CACHE:-${HOME}/.cache/customapp-operator/bench-reloader}"

# The proxy does not serve github.com/openshift/api at the pseudo-version Reloader's go.mod names (403 "not
# available"). Reloader needs it only for OpenShift DeploymentConfigs, through github.com/openshift/client-go, whose own
# go.mod (at the version Reloader pins) requires this served pseudo-version one week older: the API types the
# client was built against.
OPENSHIFT_API_REPLACE="github.com/openshift/api=github.com/openshift/api@v0.0.0-20260326111139-30c2ef7a272e"

log() { echo "bench-reloader: $*" >&2; }

upstream() { sed -n "s/^$1: //p" "${HERE}/UPSTREAM"; }
VERSION="$(upstream version)"
ARCHIVE="${HERE}/$(upstream archive)"

# A changed or truncated archive stops here rather than building something other than the release UPSTREAM names.
if ! echo "$(upstream sha256)  ${ARCHIVE}" | sha256sum --check --status; then
  log "${ARCHIVE}: sha256 $(sha256sum "${ARCHIVE}" 2>/dev/null | cut -d' ' -f1 || echo '(unreadable)') is not UPSTREAM's $(upstream sha256)"
  exit 1
fi

sources_hash() {
  { cat "${ARCHIVE}" "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16
}
BINARY="${CACHE}/bin/reloader-$(sources_hash)"
# One build at a time (concurrent benchmark tests may all find the binary missing, and would share its work directory
# and .tmp file); the lock is this script itself. A caller that waited finds the binary the other one built.
exec 9<"${BASH_SOURCE[0]}"
flock 9
if [[ -x "${BINARY}" ]]; then
  echo "${BINARY}"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is needed to build Reloader (https://go.dev/dl, or Debian's golang-go; its go.mod asks for $(tar -xzOf "${ARCHIVE}" go.mod | grep '^go '))"
  exit 1
fi

# shellcheck source=envtest/go-env.sh
source "${HERE}/../../../envtest/go-env.sh"
go_env "${CACHE}"
mkdir -p "${CACHE}/bin"

start=$(date +%s)
log "building stakater/Reloader $(head -1 "${HERE}/UPSTREAM")"
# Unpacked into the cache, where the replace is made: the archive stays byte for byte what upstream released.
WORK="${CACHE}/work"
rm -rf "${WORK}"
mkdir -p "${WORK}"
tar -xzf "${ARCHIVE}" -C "${WORK}"
(cd "${WORK}" && go mod edit -replace "${OPENSHIFT_API_REPLACE}")
(cd "${WORK}" && go build -trimpath -ldflags "-s -w -X github.com/stakater/Reloader/pkg/common.Version=${VERSION}" -o "${BINARY}.tmp" .)
mv "${BINARY}.tmp" "${BINARY}"
log "built in $(( $(date +%s) - start ))s: ${BINARY}"
echo "${BINARY}"
