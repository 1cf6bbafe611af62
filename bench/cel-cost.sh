#!/usr/bin/env bash
# CEL cost of one LogPipeline write in kube-apiserver's own validator (issue 18), per CRD file:
#   bench/cel-cost.sh [OBJECT.json] [CRD.yaml ...]   (defaults: the bench's pipeline, crds/ of this tree)
# Compare two trees: bench/cel-cost.sh bench/cel-cost/pipeline.json /other/tree/crds/*.yaml crds/*.yaml
# Built offline against the module graph scripts/build-k8s.sh resolved for the bed's kube-apiserver
# (same apiextensions-apiserver version), into the cache; allocations per write are exact, times
# move with the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION="${K8S_VERSION:-v1.34.4}"
CACHE="${LOGPIPELINE_CACHE:-$HOME/.cache/logpipeline}"
src="$CACHE/src/kube-apiserver-$K8S_VERSION"
[ -f "$src/go.mod" ] || bash scripts/build-k8s.sh apiserver >&2
out="$CACHE/src/cel-cost-$K8S_VERSION"
mkdir -p "$out"
sed '1s#.*#module scratch/celcost#' "$src/go.mod" > "$out/go.mod"
cp "$src/go.sum" "$out/go.sum"
cp bench/cel-cost/main.go "$out/main.go"
(cd "$out" && GOFLAGS=-mod=mod go build -o cel-cost .)
obj="${1:-bench/cel-cost/pipeline.json}"
shift || true
[ $# -gt 0 ] || set -- crds/logpipeline.io_logpipelines.yaml
exec "$out/cel-cost" "$obj" "$@"
