#!/usr/bin/env bash
# Builds the helm binary (helm.sh/helm/v3) from the Go module proxy into a cache outside the repository, for the tests
# that lint, template and install the chart in dist-helm/.
#
# Usage: envtest/build-helm.sh       prints the helm binary's path on its last line
# Env:   CUSTOMAPP_HELM              when set, the helm binary to use as is; nothing is built
#        CUSTOMAPP_HELM_CACHE        cache root (default ~/.cache/customapp-operator/helm)
#        HELM_VERSION                helm version (default 3.22.0)
set -euo pipefail

VERSION="${HELM_VERSION:-3.22.0}"
CACHE="${CUSTOMAPP_HELM_CACHE:-${HOME}/.cache/customapp-operator/helm}"

log() { echo "helm: $*" >&2; }

if [[ -n "${CUSTOMAPP_HELM:-}" ]]; then
  if [[ ! -x "${CUSTOMAPP_HELM}" ]]; then
    log "CUSTOMAPP_HELM=${CUSTOMAPP_HELM} is not an executable"
    exit 1
  fi
  echo "${CUSTOMAPP_HELM}"
  exit 0
fi

BIN="${CACHE}/helm-v${VERSION}"
# shellcheck source=envtest/go-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-env.sh"
print_cached "${BIN}"
require_go "neither CUSTOMAPP_HELM nor Go is available: install Go >= 1.26 (helm ${VERSION}'s go.mod asks for it) so this" \
  "script can build helm from the Go module proxy, or set CUSTOMAPP_HELM to a helm v3 binary."
go_env "${CACHE}"

# Go's own output (module downloads, compiler messages) goes to a log file; the terminal gets this script's few
# summary lines, and the log's tail if the build fails.
mkdir -p "${CACHE}"
BUILD_LOG="${CACHE}/build.log"
start=$(date +%s)
work="$(mktemp -d)"
trap 'status=$?; rm -rf "${work}"; if (( status != 0 )); then log "build failed (exit ${status}); the end of ${BUILD_LOG}:"; tail -n 20 "${BUILD_LOG}" >&2; fi' EXIT
log "helm v${VERSION}: building helm.sh/helm/v3/cmd/helm from the Go module proxy (about 2 minutes; full output: ${BUILD_LOG})"
(cd "${work}" && go mod init customapp-helm >/dev/null 2>&1 \
  && echo "require helm.sh/helm/v3 v${VERSION}" >> go.mod \
  && go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v${VERSION}" \
       -o "${BIN}.tmp" helm.sh/helm/v3/cmd/helm) >"${BUILD_LOG}" 2>&1
mv "${BIN}.tmp" "${BIN}"
log "built in $(( $(date +%s) - start ))s into ${BIN}"
echo "${BIN}"
