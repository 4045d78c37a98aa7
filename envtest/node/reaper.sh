#!/usr/bin/env bash
# Holds one node slot of `npm run cluster` for the process that starts it. It takes the slot's lock (exit 75 when a live
# cluster holds it), tears down whatever a killed predecessor left in the slot, prints "ready", then waits until its
# owner exits (however: SIGKILL included) or sends SIGUSR1, and tears the slot down. Runs in its own session, outside
# the slot's cgroups, so neither Ctrl-C nor the teardown kills it.
#
# Usage: envtest/node/reaper.sh <slot> <owner-pid>     exit status: the teardown's, or 75 (slot busy)
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SLOT="${1:?usage: reaper.sh <slot> <owner-pid>}"
OWNER="${2:?usage: reaper.sh <slot> <owner-pid>}"
RUN=/var/lib/customapp-cluster # fixed, like the slot's cgroup and interface names: a slot is one per machine
LOCK="${RUN}/slot-${SLOT}.lock"

# The previous holder unlinks the lock file when it leaves; a lock taken on an unlinked file is retried.
for _ in 1 2 3 4 5; do
  mkdir -p "${RUN}" && exec 9>>"${LOCK}" || continue
  flock -n 9 || exit 75
  [[ "$(stat -c %i "${LOCK}" 2>/dev/null)" == "$(stat -L -c %i /proc/$$/fd/9)" ]] && break
  exec 9>&-
done
[[ -e /proc/$$/fd/9 ]] || { echo "reaper: cannot lock ${LOCK}" >&2; exit 1; }

release() {
  rm -f "${LOCK}"
  rmdir "${RUN}" 2>/dev/null
}

# Before "ready": the owner may send SIGUSR1 the moment it reads it (a predecessor's leftovers, cleared and released at
# once), and bash's default for SIGUSR1 is to die, leaving the slot locked and the teardown not run.
stop=0
trap 'stop=1' USR1
trap '' INT TERM HUP
if ! bash "${HERE}/teardown.sh" "${SLOT}"; then
  echo "reaper: slot ${SLOT} holds leftovers that cannot be removed" >&2
  release
  exit 1
fi
echo ready

while [[ ${stop} -eq 0 ]] && kill -0 "${OWNER}" 2>/dev/null; do
  sleep 0.5 &
  wait $!
done
bash "${HERE}/teardown.sh" "${SLOT}"
status=$?
release
exit ${status}
