#!/usr/bin/env bash
# Installs what `npm run cluster` needs on this machine from Debian's archive when it is missing: containerd (and its
# ctr), runc, the CNI plugins, iptables, buildah, mmdebstrap, a static busybox, openssl, gcc with a static libc for
# the pause binary, and jemalloc (the operator image's allocator, which the benchmark's runner preloads as the image
# does). Does nothing when all are present; needs root (apt-get) otherwise.
#
# Usage: envtest/node/install-deps.sh
set -euo pipefail

log() { echo "cluster-deps: $*" >&2; }

if [[ "$(uname -m)" != x86_64 ]]; then
  log "$(uname -m): only x86_64 is supported (the static libc path and the images)"
  exit 1
fi

# Prints the Debian packages whose command (or, for what has no command, file) is missing.
missing_packages() {
  local check package
  while read -r check package; do
    if [[ "${check}" == /* ]]; then
      [[ -e "${check}" ]] || echo "${package}"
    else
      command -v "${check}" >/dev/null 2>&1 || echo "${package}"
    fi
  done <<'NEEDS'
containerd containerd
ctr containerd
runc runc
/usr/lib/cni/bridge containernetworking-plugins
iptables iptables
buildah buildah
mmdebstrap mmdebstrap
/bin/busybox busybox-static
openssl openssl
gcc gcc
/usr/lib/x86_64-linux-gnu/libc.a libc6-dev
unshare util-linux
nsenter util-linux
flock util-linux
ip iproute2
/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 libjemalloc2
NEEDS
  # Debian's busybox (dynamic) and busybox-static share /bin/busybox; the demo image needs the static one.
  if [[ -e /bin/busybox ]] && ldd /bin/busybox >/dev/null 2>&1; then echo busybox-static; fi
}

mapfile -t packages < <(missing_packages | sort -u)
[[ ${#packages[@]} -eq 0 ]] && exit 0
if [[ "$(id -u)" -ne 0 ]]; then
  log "missing Debian packages: ${packages[*]}; install them as root: apt-get install ${packages[*]}"
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  log "missing packages ${packages[*]}, and there is no apt-get to install them (Debian or Ubuntu expected)"
  exit 1
fi
# One install at a time (concurrent test files may all find the packages missing); the lock is this script itself.
exec 9<"${BASH_SOURCE[0]}"
flock 9
mapfile -t packages < <(missing_packages | sort -u)
[[ ${#packages[@]} -eq 0 ]] && exit 0
log "installing ${packages[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 9<&-
apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2 9<&-
log "installed ${packages[*]}"
