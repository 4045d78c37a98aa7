#!/usr/bin/env bash
# Builds the node's images daemonlessly with buildah (vfs storage, chroot isolation, no registry, no daemon): the pause
# image, the demo app image (busybox-static for a shell, plus the demo server), a Node.js base image made from Debian
# packages (mmdebstrap) and this machine's Node.js, and the operator image from the repository's Dockerfile on that
# base. Each is saved as a docker-archive in the cache, named after a hash of its inputs, and reused while they are
# unchanged. The buildah storage is a temporary directory removed at the end: nothing stays mounted or running.
#
# Usage: envtest/node/build-images.sh <binaries-dir> <operator-image-name>
#        prints one line per image: "<role> <image-name> <archive>" (roles: pause, demo, operator)
# Env:   CUSTOMAPP_CLUSTER_CACHE   cache root (default ~/.cache/customapp-operator/cluster)
#        CUSTOMAPP_DEBIAN_MIRROR   the Debian mirror of the base image (default http://deb.debian.org/debian)
#        CUSTOMAPP_OPERATOR_SOURCE the source tree of the operator image (default this repository): another commit's
#                                  tree, exported by build.ts operatorImageAt(), for the upgrade test
#        CUSTOMAPP_OPERATOR_ROLE   the operator archive's name prefix (default operator), so that another commit's
#                                  image is kept beside this tree's
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "${HERE}/../.." && pwd)"
BIN="${1:?usage: build-images.sh <binaries-dir> <operator-image-name>}"
OPERATOR_IMAGE="${2:?usage: build-images.sh <binaries-dir> <operator-image-name>}"
CACHE="${CUSTOMAPP_CLUSTER_CACHE:-${HOME}/.cache/customapp-operator/cluster}"
MIRROR="${CUSTOMAPP_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
IMAGES="${CACHE}/images"
SOURCE="$(cd "${CUSTOMAPP_OPERATOR_SOURCE:-${REPO}}" && pwd)"
OPERATOR_ROLE="${CUSTOMAPP_OPERATOR_ROLE:-operator}"
PAUSE_TAG="3.10.1"

log() { echo "cluster-images: $*" >&2; }
hash_of() { sha256sum | cut -c1-12; }

for tool in buildah mmdebstrap node; do
  if ! command -v "${tool}" >/dev/null 2>&1; then
    log "'${tool}' is missing: run 'bash envtest/node/install-deps.sh' as root (apt-get install buildah mmdebstrap …)"
    exit 1
  fi
done
BUSYBOX="$(command -v busybox || true)"
if [[ -z "${BUSYBOX}" ]] || ldd "${BUSYBOX}" >/dev/null 2>&1; then
  log "a static busybox is missing (Debian's busybox-static): run 'bash envtest/node/install-deps.sh' as root"
  exit 1
fi

mkdir -p "${IMAGES}"
# One build at a time per cache: a concurrent caller waits, then finds the archives made.
exec 9>"${CACHE}/images.lock"
flock 9

work="$(mktemp -d "${CACHE}/build-XXXXXX")"
STORAGE=(--storage-driver vfs --root "${work}/storage" --runroot "${work}/run")
# buildah with the lock's descriptor closed, so that nothing it starts can hold the lock.
b() { buildah "${STORAGE[@]}" "$@" 9>&-; }
cleanup() {
  # A build interrupted mid-RUN can leave its chrooted processes behind: end every process whose root is in ${work}.
  for proc in /proc/[0-9]*; do
    [[ "$(readlink "${proc}/root" 2>/dev/null)" == "${work}"/* ]] && kill -KILL "${proc#/proc/}" 2>/dev/null
  done
  b rm --all >/dev/null 2>&1 || true
  rm -rf "${work}"
}
trap cleanup EXIT

# save <image> <archive>: writes the archive atomically, then drops older archives of the same role.
save() {
  local image="$1" archive="$2" role
  role="$(basename "${archive}" | sed 's/-[0-9a-f]*\.tar$//')"
  b push --quiet "${image}" "docker-archive:${archive}.tmp:${image}" >&2
  mv "${archive}.tmp" "${archive}"
  # Exactly this role: the operator's archives, not another commit's (commit-<commit>-<hash>.tar).
  find "${IMAGES}" -maxdepth 1 -regextype posix-extended -regex ".*/${role}-[0-9a-f]+\.tar" ! -path "${archive}" -delete
}

# ---- pause: the static pause binary alone, as the upstream image.
pause_archive="${IMAGES}/pause-$(cat "${BIN}/pause" | hash_of).tar"
pause_image="localhost/customapp/pause:${PAUSE_TAG}"
if [[ ! -f "${pause_archive}" ]]; then
  log "pause image ${pause_image}"
  c="$(b from scratch)"
  b copy --quiet --chmod 0755 "${c}" "${BIN}/pause" /pause >/dev/null
  b config --entrypoint '["/pause"]' --user 65535:65535 "${c}"
  b commit --quiet "${c}" "${pause_image}" >/dev/null
  save "${pause_image}" "${pause_archive}"
fi

# ---- demo: busybox-static (sh and the usual tools) plus the demo server, as uid 65532.
demo_bin="$(ls "${BIN}"/demo-* | head -1)"
demo_hash="$({ echo "recipe 2"; cat "${demo_bin}" "${BUSYBOX}"; } | hash_of)"
demo_archive="${IMAGES}/demo-${demo_hash}.tar"
demo_image="localhost/customapp/demo:${demo_hash}"
if [[ ! -f "${demo_archive}" ]]; then
  log "demo image ${demo_image}"
  root="${work}/demo-root"
  mkdir -p "${root}/bin" "${root}/tmp"
  cp "${BUSYBOX}" "${root}/bin/busybox"
  for applet in $("${BUSYBOX}" --list); do
    [[ "${applet}" == busybox ]] || ln -s busybox "${root}/bin/${applet}"
  done
  cp "${demo_bin}" "${root}/bin/customapp-demo"
  chmod 1777 "${root}/tmp"
  # A passwd entry for uid 65532, so that a pod that sets only runAsUser (or none) runs with gid 65532, not 0.
  mkdir -p "${root}/etc"
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/tmp:/bin/sh\n' > "${root}/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "${root}/etc/group"
  c="$(b from scratch)"
  b copy --quiet "${c}" "${root}" / >/dev/null
  b config --entrypoint '["/bin/customapp-demo"]' --user 65532:65532 \
    --env PATH=/bin --port 8080 --label org.opencontainers.image.description="customapp demo app" "${c}"
  b commit --quiet "${c}" "${demo_image}" >/dev/null
  save "${demo_image}" "${demo_archive}"
fi

# ---- node base: Debian bookworm (minbase, ca-certificates, and libjemalloc2 for the operator image's allocator) from
# Debian's packages, plus this machine's Node.js and npm, laid out like the public node:20-bookworm-slim image
# (/usr/local/bin/node).
NODE_BIN="$(readlink -f "$(command -v node)")"
NPM_DIR="$(cd "$(dirname "${NODE_BIN}")/../lib/node_modules/npm" 2>/dev/null && pwd || true)"
if [[ -z "${NPM_DIR}" || ! -f "${NPM_DIR}/package.json" ]]; then
  log "npm not found beside ${NODE_BIN} (expected ../lib/node_modules/npm)"
  exit 1
fi
node_version="$("${NODE_BIN}" --version)"
base_hash="$({ echo "recipe 2 ${MIRROR}"; cat "${NODE_BIN}" "${NPM_DIR}/package.json"; } | hash_of)"
base_archive="${IMAGES}/node-base-${base_hash}.tar"
base_image="localhost/customapp/node:${node_version#v}-bookworm-slim-${base_hash}"
if [[ ! -f "${base_archive}" ]]; then
  log "node base image ${base_image}: mmdebstrap bookworm from ${MIRROR} (about a minute), Node.js ${node_version}"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,libjemalloc2 \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    bookworm "${work}/rootfs.tar" "${MIRROR}" >&2 9>&-
  stage="${work}/node-stage/usr/local"
  mkdir -p "${stage}/bin" "${stage}/lib/node_modules"
  cp "${NODE_BIN}" "${stage}/bin/node"
  cp -a "${NPM_DIR}" "${stage}/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "${stage}/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "${stage}/bin/npx"
  c="$(b from scratch)"
  b add --quiet "${c}" "${work}/rootfs.tar" / >/dev/null
  b copy --quiet "${c}" "${work}/node-stage" / >/dev/null
  b config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="${node_version#v}" --cmd node "${c}"
  b commit --quiet "${c}" "${base_image}" >/dev/null
  save "${base_image}" "${base_archive}"
  rm -f "${work}/rootfs.tar"
fi

# ---- operator: the repository's Dockerfile, with the local base for both stages. Named after every file the build
# copies (the COPY sources of that source tree's own Dockerfile, so that an earlier commit's tree, with other folders,
# names its own image; tests excluded as .dockerignore does) and the base.
operator_hash="$(
  cd "${SOURCE}"
  mapfile -t copied < <(awk '$1 == "COPY" && $2 !~ /^--/ { for (i = 2; i < NF; i++) print $i }' Dockerfile)
  {
    echo "${OPERATOR_IMAGE} ${base_hash}"
    find Dockerfile .dockerignore "${copied[@]}" -type f ! -name '*.test.ts' | LC_ALL=C sort | xargs sha256sum
  } | hash_of
)"
operator_archive="${IMAGES}/${OPERATOR_ROLE}-${operator_hash}.tar"
if [[ ! -f "${operator_archive}" ]]; then
  log "operator image ${OPERATOR_IMAGE}: buildah bud of the Dockerfile on ${base_image} (npm ci inside: a few minutes)"
  b pull --quiet "docker-archive:${base_archive}" >/dev/null
  # npm inside the build uses this machine's npm cache, registry and CA bundle (which may hold a proxy's CA), mounted
  # for the build only: none of it reaches the image.
  mkdir -p "${HOME}/.npm"
  ca_bundle="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
  npm_mounts=(--volume "${HOME}/.npm:/root/.npm")
  {
    echo "registry=$(npm config get registry 9>&-)"
    if [[ -f "${ca_bundle}" ]]; then
      echo "cafile=/run/customapp-build/ca.crt"
      npm_mounts+=(--volume "$(readlink -f "${ca_bundle}"):/run/customapp-build/ca.crt:ro")
    fi
  } > "${work}/npmrc"
  npm_mounts+=(--volume "${work}/npmrc:/root/.npmrc:ro")
  b bud --quiet --isolation chroot --pull=never --layers=false "${npm_mounts[@]}" \
    --build-arg "NODE_IMAGE=${base_image}" --build-arg "NODE_SLIM_IMAGE=${base_image}" \
    -t "${OPERATOR_IMAGE}" -f "${SOURCE}/Dockerfile" "${SOURCE}" >&2
  save "${OPERATOR_IMAGE}" "${operator_archive}"
fi

echo "pause ${pause_image} ${pause_archive}"
echo "demo ${demo_image} ${demo_archive}"
echo "operator ${OPERATOR_IMAGE} ${operator_archive}"
