#!/bin/bash
# Records what real controllers do, with `kubectl deltas record`, on a real cluster: the rollout
# recordings of docs/recordings/ and the real-controller recordings of tests/recordings/real/.
# Needs a cluster with a controller-manager, a scheduler and nodes (the kit of k8s-local:
# setup.sh --with-controllers, start.sh, start-cluster.sh) and its kubectl; each scenario runs in a
# namespace of its own, created and deleted here.
#
#   tests/tools/record-real-cluster.sh docs  [BIN]   # docs/recordings/rollout-{pods,replicasets,deployments}.jsonl
#   tests/tools/record-real-cluster.sh tests [BIN]   # tests/recordings/real/{rollout,gc}-*.jsonl
#
# BIN: the kubectl-deltas to record with (default target/debug/kubectl-deltas). KUBECTL (kubectl)
# and KUBECONFIG are taken from the environment; no connection flag is written into a recording.
set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=${1:?usage: record-real-cluster.sh docs|tests [BIN]}
BIN=${2:-${CARGO_TARGET_DIR:-target}/debug/kubectl-deltas}
KUBECTL=${KUBECTL:-kubectl}
RESOURCES=(pods replicasets deployments)

# record NS DIR PREFIX: one `record` per resource in the background, its pid in PIDS
PIDS=()
record() {
  local ns=$1 dir=$2 prefix=$3 r
  mkdir -p "$dir"
  for r in "${RESOURCES[@]}"; do
    "$BIN" record "$r" -n "$ns" -f "$dir/$prefix-$r.jsonl" --force -q &
    PIDS+=($!)
  done
  # every recorder has listed (its file exists once the server answered)
  for r in "${RESOURCES[@]}"; do
    for _ in $(seq 1 100); do [ -s "$dir/$prefix-$r.jsonl" ] && break; sleep 0.1; done
  done
  sleep 1
}
stop() {
  sleep 2
  kill -INT "${PIDS[@]}"
  wait "${PIDS[@]}" || true
  PIDS=()
}
rollout_done() { $KUBECTL -n "$1" rollout status deployment/web --timeout=60s >/dev/null; }
settle() { sleep 3; }   # the controllers' status writes after the rollout completes

namespace() {
  $KUBECTL delete namespace "$1" --ignore-not-found --wait=true >/dev/null
  $KUBECTL create namespace "$1" >/dev/null
}

case $WHAT in
docs)
  # A Deployment created with 3 replicas (maxSurge 25% = 1, maxUnavailable 25% = 0), rolled out to
  # a new image, scaled to 5, then to 2.
  ns=demo
  namespace $ns
  record $ns docs/recordings rollout
  $KUBECTL -n $ns create deployment web --image=nginx:1.25 --replicas=3 >/dev/null
  rollout_done $ns; settle
  $KUBECTL -n $ns set image deployment/web nginx=nginx:1.26 >/dev/null
  rollout_done $ns; settle
  $KUBECTL -n $ns scale deployment/web --replicas=5 >/dev/null
  rollout_done $ns; settle
  $KUBECTL -n $ns scale deployment/web --replicas=2 >/dev/null
  rollout_done $ns
  stop
  $KUBECTL delete namespace $ns --wait=false >/dev/null
  ;;
tests)
  # rollout-*: a rolling update and a scale to 4 of a 2-replica Deployment; gc-*: a Deployment
  # of 2 replicas deleted, its ReplicaSet and pods deleted by the garbage collector.
  ns=deltas-real-rollout
  namespace $ns
  record $ns tests/recordings/real rollout
  $KUBECTL -n $ns create deployment web --image=nginx:1.25 --replicas=2 >/dev/null
  rollout_done $ns; settle
  $KUBECTL -n $ns set image deployment/web nginx=nginx:1.26 >/dev/null
  rollout_done $ns; settle
  $KUBECTL -n $ns scale deployment/web --replicas=4 >/dev/null
  rollout_done $ns
  stop
  $KUBECTL delete namespace $ns --wait=false >/dev/null

  ns=deltas-real-gc
  namespace $ns
  $KUBECTL -n $ns create deployment web --image=nginx:1.25 --replicas=2 >/dev/null
  rollout_done $ns; settle
  record $ns tests/recordings/real gc
  $KUBECTL -n $ns delete deployment web --wait=false >/dev/null
  for _ in $(seq 1 60); do
    [ -z "$($KUBECTL -n $ns get pods,rs -o name)" ] && break; sleep 0.5
  done
  stop
  $KUBECTL delete namespace $ns --wait=false >/dev/null
  ;;
*) echo "usage: record-real-cluster.sh docs|tests [BIN]" >&2; exit 2 ;;
esac
