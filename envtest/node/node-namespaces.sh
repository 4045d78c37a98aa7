#!/usr/bin/env bash
# The first process of a node's namespaces, run by `unshare --mount --net --propagation private`. It gives the node a
# private /run (a tmpfs that holds all of the node's state: containerd's store, the kubelet's directory, pod logs, CNI
# state; it vanishes with the namespace), makes the node's mounts shared among themselves (as on a systemd host, never
# with the host's), shows the kubelet the kernel tunables it insists on without changing the host's (see below), brings
# up lo, prints "ready" and sleeps: the namespaces live as long as it or any process in them does.
#
# Usage: node-namespaces.sh <tmpfs-size>
set -euo pipefail

mount --make-rshared /
mount -t tmpfs -o mode=0755,size="${1:?usage: node-namespaces.sh <tmpfs-size>}" customapp-node /run
mkdir -p /run/customapp/sysctl /run/lock

# The kubelet sets six host-wide kernel tunables (vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1, …)
# unless they already hold its values. They are global, not per namespace, so the node's mount namespace shows the
# kubelet its values through bind mounts instead: the host keeps its own settings.
while read -r path value; do
  if [[ "$(cat "/proc/sys/${path}")" != "${value}" ]]; then
    file="/run/customapp/sysctl/${path//\//.}"
    echo "${value}" > "${file}"
    mount --bind "${file}" "/proc/sys/${path}"
  fi
done <<'TUNABLES'
vm/overcommit_memory 1
vm/panic_on_oom 0
kernel/panic 10
kernel/panic_on_oops 1
kernel/keys/root_maxkeys 1000000
kernel/keys/root_maxbytes 25000000
TUNABLES

# The node routes between its pods, their Services and the host's end of the link (it has no other way out), and
# bridged pod traffic passes kube-proxy's iptables rules.
echo 1 > /proc/sys/net/ipv4/ip_forward
[[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]] && echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
ip link set lo up
echo ready
exec sleep infinity
