#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test/cluster/run.sh -- the example service (bindings/go/example) on three
# go-dqlite nodes, each its own process and data directory, with idem in
# every node through idem.Register(); an outside HTTP target that honours
# Idempotency-Key and counts arrivals per key; and the faults:
#
#   1  duplicates: clients send every call several times through all nodes
#   2  the leader SIGKILLed at each point of both recipes (local: before
#      and after the COMMIT; external: before and after the claim's
#      COMMIT, during the request to the target, before the record)
#   3  lost COMMIT answers: a proxy between a client and the leader drops
#      the answer to COMMITs that took effect (closing the connection, or
#      leaving it silent until the client's deadline)
#   4  a network partition of the leader (network namespaces and veth
#      pairs made and removed here), clients on both sides sending the
#      same calls, healed and repeated; the majority side must make
#      progress within PROGRESS_BOUND seconds of the cut
#
# After each fault, check: every local call has exactly one order row if
# done and none otherwise; every external call arrived at most once (0 keys
# with two arrivals sent as first), done calls carry the target's shipment;
# no call is left pending or unknown (unknown ones are reconciled by their
# owner node from the target's records, and counted).  Every client attempt
# ends by its deadline; one that the client had to cut is a stall, counted.
#
#   make test-cluster              short (CI): every fault once, ~2-3 min
#   make test-cluster-long         every fault several rounds
#   IDEM_CLUSTER_MODE=long bash test/cluster/run.sh
#
# Everything runs on 127.0.0.1 (ports from IDEM_CLUSTER_PORT, default
# 29101) and, for the partition, on addresses inside the namespaces only.
# Every process is killed by its PID and every namespace deleted at the
# end, also on failure or interrupt.  The last line is "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${IDEM_CLUSTER_BUILD:-build/cluster}
case $B in /*) ;; *) B=$PWD/$B ;; esac
EX=$B/idem-example
MODE=${IDEM_CLUSTER_MODE:-short}
PORT=${IDEM_CLUSTER_PORT:-29101}
PROGRESS_BOUND=${IDEM_PROGRESS_BOUND:-20}   # seconds, majority side after a cut
case $MODE in
  short) KILL_ROUNDS=1 PART_ROUNDS=2 PART_HOLD=10 KEYS=20 LOST_N=10 PACE=600 ;;
  long)  KILL_ROUNDS=3 PART_ROUNDS=4 PART_HOLD=25 KEYS=60 LOST_N=60 PACE=700 ;;
  *) echo "IDEM_CLUSTER_MODE is short or long"; exit 2 ;;
esac
[ -x "$EX" ] || { echo "missing $EX: run make test-cluster"; exit 2; }
command -v timeout >/dev/null || { echo "missing timeout"; exit 2; }

T=$(mktemp -d /tmp/idem-cluster.XXXXXX) || exit 2
NS=${IDEM_CLUSTER_NS:-idemt}$$            # namespace prefix, unique to this run
pass=0 fail=0
START=$(date +%s)
PIDS=()                          # every process started here
declare -A NODEPID

cleanup() {
  local p n
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  for n in hub n1 n2 n3 qs; do ip netns del "$NS-$n" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM HUP

ok() { pass=$((pass+1)); echo "ok: $*"; }
phase() { echo "== $* (at +$(( $(date +%s) - START )) s)"; }
not_ok() { fail=$((fail+1)); echo "FAILED: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
finish() {
  if [ $fail -gt 0 ]; then
    for f in "$T"/*.log; do [ -s "$f" ] && { echo "--- $(basename "$f") (tail)"; tail -4 "$f"; }; done
  fi
  echo "cluster test ($MODE): $(( $(date +%s) - START )) s"
  echo "$pass passed, $fail failed"
  [ $fail -eq 0 ]
  exit
}

# ---- a cluster: run_in NS CMD... runs CMD in namespace NS ("" = here) ------
run_in() { local ns=$1; shift; if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi; }

# start_node I: node I (address DB[I], service HTTP[I]) in NSOF[I].
start_node() {
  local i=$1 join=""
  [ "$i" != 1 ] && [ ! -d "$T/$TAG-n$i" ] && join="-join ${DB[1]}"
  local cmd=("$EX" node -name "n$i" -dir "$T/$TAG-n$i" -db "${DB[$i]}" $join ${SENDVIA:+-send-via "$SENDVIA"}
             -cluster "$ALL" -http "${HTTP[$i]}" -target "$TARGET" -faults)
  # a simple command in the background: $! is the node's own PID
  if [ -n "${NSOF[$i]}" ]; then
    ip netns exec "${NSOF[$i]}" "${cmd[@]}" >>"$T/$TAG-n$i.log" 2>&1 &
  else
    "${cmd[@]}" >>"$T/$TAG-n$i.log" 2>&1 &
  fi
  NODEPID[$i]=$!; PIDS+=($!)
}
kill_node() { kill -KILL "${NODEPID[$1]}" 2>/dev/null; wait "${NODEPID[$1]}" 2>/dev/null; NODEPID[$1]=""; }

# up_all: wait until every service answers (each serves once its node is
# ready and the schema is there).
wait_up() {
  local i t0; t0=$(now)
  for i in "$@"; do
    while ! run_in "${NSOF[$i]}" timeout 2 bash -c "exec 3<>/dev/tcp/${HTTP[$i]%:*}/${HTTP[$i]#*:}" 2>/dev/null; do
      [ "$(awk -v s="$(since "$t0")" 'BEGIN{print (s > 60)}')" = 1 ] && return 1
      sleep 0.2
    done
  done
}

leader_node() {
  local a i
  a=$(run_in "${NSOF[1]}" timeout 30 "$EX" leader -cluster "$ALL" -timeout 25s) || return 1
  for i in 1 2 3; do [ "${DB[$i]}" = "$a" ] && { echo $i; return 0; }; done
  return 1
}

urls() { local s="" i; for i in "$@"; do s=$s,http://${HTTP[$i]}; done; echo "${s#,}"; }

# check NAME PREFIX...: the effects against the claims.
check() {
  local name=$1 out; shift
  if out=$(run_in "${NSOF[1]}" timeout 90 "$EX" check -cluster "$ALL" -target "$TARGET" \
             -prefix "$(IFS=,; echo "$*")" -settle 45s 2>&1); then
    ok "$name: $out"
  else
    not_ok "$name: $out"
  fi
}

# load NAME NS URLS PREFIX [ARGS]: a client, bounded; its summary in $T/NAME.json
load() {
  local name=$1 ns=$2 u=$3 prefix=$4; shift 4
  local cmd=(timeout 150 "$EX" load -name "$name" -nodes "$u" -prefix "$prefix" -out "$T/$name.json" "$@")
  if [ -n "$ns" ]; then exec ip netns exec "$ns" "${cmd[@]}"; else exec "${cmd[@]}"; fi
}

# ---- cluster 1: 127.0.0.1 --------------------------------------------------
TAG=lo
DB=("" 127.0.0.1:$PORT 127.0.0.1:$((PORT+1)) 127.0.0.1:$((PORT+2)))
HTTP=("" 127.0.0.1:$((PORT+10)) 127.0.0.1:$((PORT+11)) 127.0.0.1:$((PORT+12)))
NSOF=("" "" "" "")
ALL=${DB[1]},${DB[2]},${DB[3]}
TARGET=http://127.0.0.1:$((PORT+20))
# The nodes send to the target through a holding queue (hold), whose delay
# is 0 until the test of requests held on the wire (5) sets it.
SENDVIA=http://127.0.0.1:$((PORT+22))
for p in $PORT $((PORT+1)) $((PORT+2)) $((PORT+10)) $((PORT+11)) $((PORT+12)) $((PORT+20)) $((PORT+21)) $((PORT+22)) $((PORT+23)); do
  if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
    echo "port $p on 127.0.0.1 is in use: set IDEM_CLUSTER_PORT"; exit 2
  fi
done

"$EX" target -http "${TARGET#http://}" -delay 60 ${IDEM_CLUSTER_TARGET_FLAGS:-} >>"$T/lo-target.log" 2>&1 & PIDS+=($!)
"$EX" hold -listen "${SENDVIA#http://}" -to "${TARGET#http://}" -control 127.0.0.1:$((PORT+23)) >>"$T/lo-hold.log" 2>&1 & PIDS+=($!)
t=$(now)
start_node 1; wait_up 1 || { not_ok "node 1 did not start"; finish; }
start_node 2; start_node 3
if wait_up 2 3 && L=$(leader_node); then
  ok "3 nodes up in $(since "$t") s on $ALL, leader node $L"
else
  not_ok "the cluster did not form"; finish
fi

# 1. duplicates through every node
phase "1: duplicates"
if out=$(load dup "" "$(urls 1 2 3)" dup -keys $KEYS -workers 4 -budget 60s); then
  ok "1: $out"
else
  not_ok "1: $out"
fi
check "1: duplicates" dup

# 2. the leader SIGKILLed at each point of both recipes
phase "2: the leader SIGKILLed at each point"
POINTS="local-before-commit local-after-commit ext-before-claim-commit ext-after-claim-commit ext-during-request ext-before-record"
for r in $(seq 1 $KILL_ROUNDS); do
  for pt in $(printf '%s\n' $POINTS | shuf); do
    L=$(leader_node) || { not_ok "2: no leader"; finish; }
    others=""; for i in 1 2 3; do [ $i != $L ] && others="$others $i"; done
    pfx=kill$r-$pt
    grep -h 'reconciled ' "$T"/lo-n*.log 2>/dev/null | sort >"$T/rec.before"
    t=$(now)
    load "$pfx" "" "$(urls $L $others)" "$pfx" -keys 6 -workers 2 -budget 60s -crash-at "$pt" >"$T/$pfx.out" 2>&1 &
    lp=$!; PIDS+=($lp)
    # the leader kills itself at the point; wait for it (bounded)
    for _ in $(seq 1 300); do kill -0 "${NODEPID[$L]}" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "${NODEPID[$L]}" 2>/dev/null; then
      not_ok "2: leader node $L did not reach $pt"; kill_node $L
    fi
    wait "${NODEPID[$L]}" 2>/dev/null
    killed=$(since "$t")
    start_node $L
    wait $lp; rc=$?
    wait_up $L || not_ok "2: node $L did not come back"
    if [ $rc = 0 ]; then
      ok "2: leader node $L SIGKILLed at $pt after $killed s, restarted; $(cat "$T/$pfx.out")"
    else
      not_ok "2: at $pt: $(cat "$T/$pfx.out")"
    fi
    check "2: $pt" "$pfx"
    # The call the leader died holding: after its claim's COMMIT it never
    # left (reconciled: not arrived); from the request on it had (arrived).
    got=$(grep -h 'reconciled ' "$T"/lo-n*.log | sort | comm -13 "$T/rec.before" - | awk '{print $5}' | sort | uniq -c | awk '{printf "%s %s ", $2, $1}')
    case $pt in
      ext-after-claim-commit) want=not_arrived ;;
      ext-during-request|ext-before-record) want=arrived ;;
      *) want="" ;;
    esac
    if [ -z "$want" ] || [[ " $got" == *" $want "* ]]; then
      ok "2: $pt: calls reconciled from the target's records by the restarted node: ${got:-none}"
    else
      not_ok "2: $pt: expected a call reconciled as $want, got: ${got:-none}"
    fi
  done
done
echo "   unknown calls reconciled by their nodes from the target's records: $(grep -h 'reconciled ' "$T"/lo-n*.log | awk '{c[$5]++} END {for (k in c) printf "%s %d ", k, c[k]}')"

# 3. lost COMMIT answers, through a proxy in front of the leader
phase "3: lost COMMIT answers"
L=$(leader_node) || { not_ok "3: no leader"; finish; }
for how in close hang; do
  pp=$((PORT+21))
  h=""; [ $how = hang ] && h=-hang
  "$EX" proxy -listen 127.0.0.1:$pp -to "${DB[$L]}" -drop-every 2 $h >>"$T/lo-proxy-$how.log" 2>&1 &
  pxp=$!; PIDS+=($pxp)
  sleep 0.3
  if out=$(timeout 300 "$EX" call -cluster "$ALL" -via "${DB[$L]}=127.0.0.1:$pp" -target "$TARGET" \
             -n $LOST_N -prefix lost-$how 2>>"$T/lo-call.log"); then
    ok "3: lost answers ($how), leader node $L: $(grep -c dropped "$T/lo-proxy-$how.log") COMMIT answers dropped; $out"
  else
    not_ok "3: lost answers ($how): $out"
  fi
  kill $pxp 2>/dev/null; wait $pxp 2>/dev/null
  [ "$(grep -c dropped "$T/lo-proxy-$how.log")" -gt 0 ] || not_ok "3: the proxy dropped no answer ($how)"
  check "3: lost answers ($how)" lost-$how
done

# 5. requests held on the wire: the queue in front of the target holds
# every request 6 s, past the client's 3 s deadline; the senders give up,
# their calls become unknown, and the reconciler asks the target, which
# has not seen the key.  Released then, a retry's request would arrive
# with the held one (the bug of the reconciler that took "not seen" for
# "not sent"); the target fences the key instead, and the held request
# is refused when it comes.  Counted at the target: arrivals, refused
# arrivals, and keys taken twice as a first send (must be 0).
phase "5: requests held on the wire"
hold() { curl -s --max-time 5 "http://127.0.0.1:$((PORT+23))/delay?ms=$1" >/dev/null; }
hold 6000
load held "" "$(urls 1 2 3)" held -keys 10 -workers 2 -budget 90s >"$T/held.out" 2>&1 &
lp=$!; PIDS+=($lp)
sleep 10; hold 0
wait $lp; rc=$?
refused=$(curl -s --max-time 5 "$TARGET/stats" | grep -o '"refused":[0-9]*' | awk -F: '{s+=$2} END {print s+0}')
if [ $rc = 0 ] && [ "$refused" -gt 0 ]; then
  ok "5: held 6 s on the wire for 10 s, then released: $(cat "$T/held.out"); $refused held or late arrivals refused by a fenced key"
else
  not_ok "5: held on the wire (refused $refused): $(cat "$T/held.out")"
fi
check "5: held on the wire" held

# 6. doc/cluster.md's quick start, pasted as it is (its fixed ports, on a
# loopback of its own: a network namespace; the node directories under
# this run's scratch directory), with the binary built here.
phase "6: the quick start of doc/cluster.md"
QS=$NS-qs
if ip netns add "$QS" 2>/dev/null && ip -n "$QS" link set lo up; then
  awk '/^```sh$/ && prev ~ /not run: a three-node cluster/ {on=1; next} on && /^```$/ {exit} on {print} {prev=$0}' \
    doc/cluster.md | sed -e 's#^make go .*##' -e "s#build/cluster/idem-example#$EX#" -e "s#/tmp/n#$T/qs-n#g" >"$T/qs.sh"
  t=$(now)
  timeout 120 ip netns exec "$QS" bash -e "$T/qs.sh" >"$T/qs.out" 2>"$T/qs.err"; rc=$?
  for p in $(ip netns pids "$QS"); do kill -KILL "$p" 2>/dev/null; done
  ip netns del "$QS"
  won=$(grep -c '"status":"won"' "$T/qs.out"); rep=$(grep -c '"status":"replayed"' "$T/qs.out")
  if [ $rc = 0 ] && [ "$won" = 2 ] && [ "$rep" = 1 ] && grep -q '"double first arrivals":0' "$T/qs.out"; then
    ok "6: the quick start, pasted, in $(since "$t") s: won $won, replayed $rep; $(grep '^check:' "$T/qs.out")"
  else
    not_ok "6: the quick start (rc $rc): $(tr '\n' ' ' <"$T/qs.out") $(tail -3 "$T/qs.err" | tr '\n' ' ')"
  fi
else
  echo "   skipped: no network namespace for the quick start's fixed ports (needs CAP_NET_ADMIN)"
fi

# ---- cluster 2: network namespaces, the leader cut off ---------------------
phase "4: a partition"
for i in 1 2 3; do kill_node $i; done
SENDVIA=""                       # straight to the target, inside the namespaces
NET=10.231.$(( $$ % 200 + 20 ))
# make_net: the namespaces, a bridge in the hub, a veth pair to each node;
# any step that fails (no CAP_NET_ADMIN, no veth or bridge support) fails it.
make_net() {
  local i
  ip netns add "$NS-hub" && ip netns add "$NS-n1" && ip netns add "$NS-n2" && ip netns add "$NS-n3" &&
  ip -n "$NS-hub" link add br0 type bridge &&
  ip -n "$NS-hub" addr add "$NET.254/24" dev br0 &&
  ip -n "$NS-hub" link set br0 up &&
  ip -n "$NS-hub" link set lo up || return 1
  for i in 1 2 3; do
    ip link add "idv$$-$i" netns "$NS-n$i" type veth peer name "v$i" netns "$NS-hub" &&
    ip -n "$NS-n$i" link set "idv$$-$i" name eth0 &&
    ip -n "$NS-n$i" addr add "$NET.$i/24" dev eth0 &&
    ip -n "$NS-n$i" link set eth0 up &&
    ip -n "$NS-n$i" link set lo up &&
    ip -n "$NS-hub" link set "v$i" master br0 &&
    ip -n "$NS-hub" link set "v$i" up || return 1
  done
}
if ! command -v ip >/dev/null || ! err=$(make_net 2>&1); then
  for n in hub n1 n2 n3 qs; do ip netns del "$NS-$n" 2>/dev/null; done
  echo "SKIPPED: 4 (partition): cannot make network namespaces and veth pairs here" \
       "(they need root, CAP_NET_ADMIN and CAP_SYS_ADMIN): ${err:-no ip command}" | head -c 400; echo
  finish
fi
TAG=ns
DB=("" $NET.1:9001 $NET.2:9001 $NET.3:9001)
HTTP=("" $NET.1:8000 $NET.2:8000 $NET.3:8000)
NSOF=("" "$NS-n1" "$NS-n2" "$NS-n3")
ALL=${DB[1]},${DB[2]},${DB[3]}
TARGET=http://$NET.254:8080
ip netns exec "$NS-hub" "$EX" target -http "$NET.254:8080" -delay 60 >>"$T/ns-target.log" 2>&1 & PIDS+=($!)
t=$(now)
start_node 1; wait_up 1 || { not_ok "4: node 1 did not start in its namespace"; finish; }
start_node 2; start_node 3
if wait_up 2 3 && L=$(leader_node); then
  ok "4: 3 nodes up in 3 namespaces in $(since "$t") s ($ALL), leader node $L"
else
  not_ok "4: the cluster did not form in the namespaces"; finish
fi

worst=0
for r in $(seq 1 $PART_ROUNDS); do
  L=$(leader_node) || { not_ok "4: no leader"; break; }
  F=$(( L % 3 + 1 ))
  pfx=part$r
  load "maj$r" "${NSOF[$F]}" "$(urls $F)" "$pfx" -keys $KEYS -workers 2 -deadline 3000 -pace $PACE -budget 120s >"$T/maj$r.out" 2>&1 & m=$!; PIDS+=($m)
  load "min$r" "${NSOF[$L]}" "$(urls $L)" "$pfx" -keys $KEYS -workers 2 -deadline 3000 -pace $PACE -budget 120s >"$T/min$r.out" 2>&1 & n=$!; PIDS+=($n)
  sleep 1.5
  cut=$(now)
  ip -n "$NS-hub" link set "v$L" down
  echo "   round $r: leader node $L cut off at +1.5 s; majority client through node $F, minority client through node $L"
  sleep $PART_HOLD
  ip -n "$NS-hub" link set "v$L" up
  healed=$(now)
  wait $m; rm_=$?
  wait $n; rn=$?
  # the majority side's first done answer to an attempt that began after the cut
  first=$(awk -v cut="$cut" '{ while (match($0, /\[[0-9.]+,[0-9.]+\]/)) { split(substr($0, RSTART+1, RLENGTH-2), a, ",");
            if (a[1] > cut && (best == "" || a[2] < best)) best = a[2]; $0 = substr($0, RSTART+RLENGTH) } }
          END { if (best == "") print "none"; else printf "%.1f\n", best - cut }' "$T/maj$r.json" 2>/dev/null || echo none)
  if [ "$first" != none ] && awk -v f="$first" -v b="$PROGRESS_BOUND" 'BEGIN { exit !(f <= b) }'; then
    ok "4: round $r: the majority side answered $first s after the cut (bound $PROGRESS_BOUND s); $(cat "$T/maj$r.out")"
    worst=$(awk -v a="$worst" -v b="$first" 'BEGIN { print (b > a) ? b : a }')
  else
    not_ok "4: round $r: no progress on the majority side within $PROGRESS_BOUND s of the cut (first: $first); $(cat "$T/maj$r.out")"
  fi
  if [ $rn = 0 ] && [ $rm_ = 0 ]; then
    ok "4: round $r: the minority side (cut for $PART_HOLD s, healed) finished too; $(cat "$T/min$r.out")"
  else
    not_ok "4: round $r: minority rc $rn, majority rc $rm_; $(cat "$T/min$r.out")"
  fi
  check "4: round $r" "$pfx"
done
echo "   partition: the slowest majority-side progress after a cut: $worst s (bound $PROGRESS_BOUND s)"
echo "   unknown calls reconciled by their nodes: $(grep -h 'reconciled ' "$T"/ns-n*.log 2>/dev/null | awk '{c[$5]++} END {for (k in c) printf "%s %d ", k, c[k]}')"
finish
