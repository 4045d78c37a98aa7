#!/bin/bash
# The 2026-11-30 operator (dacf6a9) at 25k, ours only, with kube-apiserver profiled by hand (its harness patched to --profiling=true).
cd /tmp/p25/old
mkdir -p /tmp/p25/oldprof
start=$(date +%s)
npm run bench -- --strategies ours --sizes 25000 --cold-start-only --no-progress --out /tmp/p25/old-out > /tmp/p25/oldrun.log 2>&1 &
bench=$!
# The session's envtest: the newest directory made after the start that holds an admin kubeconfig.
dir=""
while [ -z "$dir" ]; do sleep 1; for d in $(ls -td /tmp/customapp-envtest-* 2>/dev/null | head -3); do [ $(stat -c %Y $d) -ge $start ] && [ -f $d/admin.kubeconfig ] && dir=$d && break; done; done
echo "envtest $dir" > /tmp/p25/oldprof/info
server=$(grep 'server:' $dir/admin.kubeconfig | awk '{print $2}'); token=$(grep 'token:' $dir/admin.kubeconfig | awk '{print $2}')
# The operator's spawn: its runner process appears.
until pgrep -f "^/usr/bin/node .*runner-p25-old-dacf6a9.mjs" >/dev/null; do sleep 0.2; done
echo "operator spawned $(date +%s.%N)" >> /tmp/p25/oldprof/info
i=1
until grep -q "cold start:" /tmp/p25/oldrun.log; do
  f=$(printf "/tmp/p25/oldprof/ours-25000-cold-start-%03d.pb.gz" $i)
  echo "$i $(date +%s.%N)" >> /tmp/p25/oldprof/info
  curl -sk -H "Authorization: Bearer $token" "$server/debug/pprof/profile?seconds=10" -o $f || break
  i=$((i+1))
done
wait $bench
echo "done rc=$? $(date -u +%H:%M:%S)" >> /tmp/p25/oldprof/info
