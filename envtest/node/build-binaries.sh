#!/usr/bin/env bash
# Builds the node's binaries into a cache outside the repository: kubelet, kube-scheduler and kube-proxy from
# k8s.io/kubernetes (the same version as envtest's kube-apiserver), the pause binary from that module's own
# build/pause/linux/pause.c (gcc -static), and the demo app (envtest/node/demo). Reused when present.
#
# Usage: envtest/node/build-binaries.sh      prints the binaries directory on its last line
# Env:   CUSTOMAPP_CLUSTER_CACHE   cache root (default ~/.cache/customapp-operator/cluster)
#        CUSTOMAPP_ENVTEST_CACHE   envtest's cache root, whose Go module and build caches are shared
#        ENVTEST_K8S_VERSION       Kubernetes version (default 1.34.4, as envtest)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
K8S_VERSION="${ENVTEST_K8S_VERSION:-1.34.4}"
PAUSE_TAG="3.10.1" # build/pause/Makefile's TAG in k8s.io/kubernetes v1.34
CACHE="${CUSTOMAPP_CLUSTER_CACHE:-${HOME}/.cache/customapp-operator/cluster}"
ENVTEST_CACHE="${CUSTOMAPP_ENVTEST_CACHE:-${HOME}/.cache/customapp-operator/envtest}"
BIN="${CACHE}/k8s-${K8S_VERSION}"

log() { echo "cluster-build: $*" >&2; }

demo_hash() { cat "${HERE}"/demo/go.mod "${HERE}"/demo/*.go | sha256sum | cut -c1-12; }
DEMO="${BIN}/demo-$(demo_hash)"

if [[ -x "${BIN}/kubelet" && -x "${BIN}/kube-scheduler" && -x "${BIN}/kube-proxy" && -x "${BIN}/pause" && -x "${DEMO}" ]]; then
  echo "${BIN}"
  exit 0
fi

for tool in go gcc; do
  if ! command -v "${tool}" >/dev/null 2>&1; then
    log "'${tool}' is needed for the first build (Go >= 1.24 from https://go.dev/dl or Debian's golang-go; gcc and"
    log "libc6-dev from Debian for the static pause binary)"
    exit 1
  fi
done

# One build at a time (concurrent test files may all find the binaries missing); the lock is this script itself. A caller
# that waited finds the binaries the other one built.
exec 9<"${BASH_SOURCE[0]}"
flock 9
if [[ -x "${BIN}/kubelet" && -x "${BIN}/kube-scheduler" && -x "${BIN}/kube-proxy" && -x "${BIN}/pause" && -x "${DEMO}" ]]; then
  echo "${BIN}"
  exit 0
fi

# shellcheck source=envtest/go-env.sh
source "${HERE}/../go-env.sh"
# shellcheck source=envtest/k8s-module.sh
source "${HERE}/../k8s-module.sh"
go_env "${ENVTEST_CACHE}" # the same k8s.io modules as envtest's build: downloaded and compiled once
mkdir -p "${BIN}"

start=$(date +%s)
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

if [[ ! -x "${BIN}/kubelet" || ! -x "${BIN}/kube-scheduler" || ! -x "${BIN}/kube-proxy" ]]; then
  k8s_module "${work}/k8s" "${K8S_VERSION}" cluster-build
  log "kubelet, kube-scheduler and kube-proxy v${K8S_VERSION}: building"
  mkdir -p "${work}/bin"
  (cd "${work}/k8s" && go build -trimpath -ldflags "$(k8s_ldflags "${K8S_VERSION}")" -o "${work}/bin/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy)
  mv "${work}/bin/kubelet" "${work}/bin/kube-scheduler" "${work}/bin/kube-proxy" "${BIN}/"
fi

if [[ ! -x "${BIN}/pause" ]]; then
  src="$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')/build/pause/linux/pause.c"
  log "pause ${PAUSE_TAG}: gcc -static ${src}"
  gcc -Os -Wall -Werror -static "-DVERSION=v${PAUSE_TAG}-customapp" -o "${BIN}/pause.tmp" "${src}"
  mv "${BIN}/pause.tmp" "${BIN}/pause"
fi

if [[ ! -x "${DEMO}" ]]; then
  log "demo app: building envtest/node/demo"
  rm -f "${BIN}"/demo-*
  (cd "${HERE}/demo" && go build -trimpath -ldflags "-s -w" -o "${DEMO}.tmp" .)
  mv "${DEMO}.tmp" "${DEMO}"
fi

log "built in $(( $(date +%s) - start ))s into ${BIN}"
echo "${BIN}"
