#!/usr/bin/env bash
# Removes everything one node slot of `npm run cluster` made, whether it stopped cleanly or was SIGKILLed: every process
# in the slot's cgroups (the node's daemons, containerd's shims and every container), hence the node's network and
# mount namespaces with all they hold (interfaces, iptables rules, routes, mounts, the tmpfs with the node's state),
# then the cgroups and the slot's host directory. Idempotent: a slot with nothing left is a no-op.
#
# Usage: envtest/node/teardown.sh <slot>              everything
#        envtest/node/teardown.sh <slot> workloads    only the processes, except the one holding the namespaces
set -uo pipefail

SLOT="${1:?usage: teardown.sh <slot> [workloads]}"
MODE="${2:-all}"
[[ "${SLOT}" =~ ^[0-9]+$ ]] || { echo "teardown: slot '${SLOT}' is not a number" >&2; exit 2; }
RUN=/var/lib/customapp-cluster # fixed, like the slot's cgroup and interface names: a slot is one per machine
NAME="customapp-node-${SLOT}"
CGROUPS=/sys/fs/cgroup
FREEZER="${CGROUPS}/freezer/${NAME}"
HOST_IF="customapp${SLOT}"

log() { echo "teardown: slot=${SLOT} $*" >&2; }

# Every cgroup directory of the slot in every hierarchy, deepest first.
slot_cgroups() { find "${CGROUPS}"/*/"${NAME}" -depth -type d 2>/dev/null; }
# The processes of the slot, except those in the cgroups under $1 (a path prefix; empty: none excepted).
slot_pids() {
  slot_cgroups | { [[ -n "$1" ]] && grep -v "^$1" || cat; } | while read -r dir; do cat "${dir}/cgroup.procs" 2>/dev/null; done \
    | sort -un
}

# kill_all <except>: SIGKILLs the slot's processes (except those under <except>) until none is left.
kill_all() {
  local except="$1" pids round
  for round in $(seq 1 100); do
    pids="$(slot_pids "${except}")"
    [[ -z "${pids}" ]] && return 0
    [[ ${round} -eq 1 ]] && log "killing $(echo "${pids}" | wc -l) processes"
    # shellcheck disable=SC2086
    kill -KILL ${pids} 2>/dev/null
    [[ -d "${FREEZER}" ]] && echo THAWED > "${FREEZER}/freezer.state" 2>/dev/null
    sleep 0.1
  done
  log "processes survived SIGKILL: $(slot_pids "${except}" | tr '\n' ' ')"
  return 1
}

if [[ "${MODE}" == workloads ]]; then
  # Everything but the namespaces' holder: the node's daemons and containers end while the node's network still
  # exists, so that their connections to the API server close (a vanished interface leaves them half-open).
  kill_all "${FREEZER}/namespaces"
  exit $?
fi

if [[ -d "${FREEZER}" ]]; then
  # Freeze first so that nothing forks while it is being killed; the kills land when it thaws.
  echo FROZEN > "${FREEZER}/freezer.state" 2>/dev/null || true
  for _ in $(seq 1 50); do
    [[ "$(cat "${FREEZER}/freezer.state" 2>/dev/null)" != FREEZING ]] && break
    sleep 0.1
  done
fi
kill_all "" || exit 1

# The namespaces died with their last process; the host end of the node's veth goes with them.
for _ in $(seq 1 50); do
  ip link show "${HOST_IF}" >/dev/null 2>&1 || break
  sleep 0.1
done
if ip link show "${HOST_IF}" >/dev/null 2>&1; then
  log "interface ${HOST_IF} is still there; deleting it"
  ip link delete "${HOST_IF}" || exit 1
fi

slot_cgroups | while read -r dir; do rmdir "${dir}" 2>/dev/null || log "cannot remove cgroup ${dir}"; done
[[ -z "$(slot_cgroups)" ]] || exit 1

rm -rf "${RUN:?}/${SLOT}"
exit 0
