#!/usr/bin/env bash
# Builds the envtest binaries (kube-apiserver, etcd, kube-controller-manager) from Go modules into a cache outside
# the repository. kube-controller-manager is optional at run time: the harness starts it only for its garbage
# collector and namespace controllers, which a bare kube-apiserver lacks.
#
# Usage: envtest/build.sh            prints the assets directory on its last line
# Env:   KUBEBUILDER_ASSETS          when set, used as is (the controller-runtime convention); nothing is built
#        CUSTOMAPP_ENVTEST_CACHE     cache root (default ~/.cache/customapp-operator/envtest)
#        ENVTEST_K8S_VERSION         kube-apiserver version (default 1.34.4, the newest 1.34.x: one minor from kubectl 1.33)
#        ENVTEST_ETCD_VERSION        etcd version (default 3.6.16; Debian's 3.4.23 is too old, see envtest/README.md)
set -euo pipefail

K8S_VERSION="${ENVTEST_K8S_VERSION:-1.34.4}"
ETCD_VERSION="${ENVTEST_ETCD_VERSION:-3.6.16}"
CACHE="${CUSTOMAPP_ENVTEST_CACHE:-${HOME}/.cache/customapp-operator/envtest}"

log() { echo "envtest: $*" >&2; }

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for bin in kube-apiserver etcd; do  # setup-envtest ships these two; kube-controller-manager is optional
    if [[ ! -x "${KUBEBUILDER_ASSETS}/${bin}" ]]; then
      log "KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} has no executable '${bin}'"
      exit 1
    fi
  done
  log "using KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} as is"
  echo "${KUBEBUILDER_ASSETS}"
  exit 0
fi

ASSETS="${CACHE}/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
if [[ -x "${ASSETS}/kube-apiserver" && -x "${ASSETS}/etcd" && -x "${ASSETS}/kube-controller-manager" ]]; then
  echo "${ASSETS}"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "neither KUBEBUILDER_ASSETS nor Go is available."
  log "Install Go >= 1.24 (https://go.dev/dl, or Debian's golang-go) so this script can build kube-apiserver"
  log "and etcd from the Go module proxy, or set KUBEBUILDER_ASSETS to a directory holding kube-apiserver"
  log "and etcd (for example from 'setup-envtest use ${K8S_VERSION%.*}')."
  exit 1
fi

# shellcheck source=envtest/go-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-env.sh"
# shellcheck source=envtest/k8s-module.sh
source "$(dirname "${BASH_SOURCE[0]}")/k8s-module.sh"
go_env "${CACHE}"
mkdir -p "${ASSETS}"

# Go's own output (module downloads, compiler messages) goes to a log file; the terminal gets this script's few
# summary lines, and the log's tail if the build fails.
BUILD_LOG="${CACHE}/build.log"
exec 3>&2 2>"${BUILD_LOG}"
log() { echo "envtest: $*" >&3; echo "envtest: $*" >&2; }
log "building kube-apiserver and etcd from the Go module proxy (the first run takes about 10 minutes; full output: ${BUILD_LOG})"

start=$(date +%s)
work="$(mktemp -d)"
trap 'status=$?; rm -rf "${work}"; if (( status != 0 )); then echo "envtest: build failed (exit ${status}); the end of ${BUILD_LOG}:" >&3; tail -n 20 "${BUILD_LOG}" >&3; fi' EXIT

build_apiserver() {
  local dir="${work}/apiserver"
  k8s_module "${dir}" "${K8S_VERSION}" envtest
  mkdir -p "${work}/bin"
  log "kube-apiserver and kube-controller-manager v${K8S_VERSION}: building ($(grep -c '^replace' "${dir}/go.mod") staging replaces)"
  (cd "${dir}" && go build -trimpath -ldflags "$(k8s_ldflags "${K8S_VERSION}")" \
      -o "${work}/bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
  mv "${work}/bin/kube-apiserver" "${work}/bin/kube-controller-manager" "${ASSETS}/"
}

build_etcd() {
  local dir="${work}/etcd"
  mkdir -p "${dir}"
  log "etcd v${ETCD_VERSION}: building go.etcd.io/etcd/server/v3"
  (cd "${dir}" && go mod init envtest-etcd >/dev/null 2>&1 \
    && echo "require go.etcd.io/etcd/server/v3 v${ETCD_VERSION}" >> go.mod \
    && go build -trimpath -ldflags "-s -w" -o "${ASSETS}/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "${ASSETS}/etcd.tmp" "${ASSETS}/etcd"
}

[[ -x "${ASSETS}/etcd" ]] || build_etcd
[[ -x "${ASSETS}/kube-apiserver" && -x "${ASSETS}/kube-controller-manager" ]] || build_apiserver
log "built in $(( $(date +%s) - start ))s into ${ASSETS} ($(du -sh "${CACHE}" | cut -f1) cache)"
echo "${ASSETS}"
