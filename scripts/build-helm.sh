#!/usr/bin/env bash
# Builds a helm v3 binary from its Go module into a cache outside the repo tree; the chart tests
# (helm lint / helm template) use it. Idempotent: a cached binary of the right version is reused.
#
# helm's go.mod has no replace directives, so `go install helm.sh/helm/v3/cmd/helm@vX` works
# straight from the module proxy (unlike kube-apiserver, see build-k8s.sh). GOBIN points at a
# temporary directory so a half-built binary never lands at the cached path.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
CACHE="${LOGPIPELINE_CACHE:-$HOME/.cache/logpipeline}"
BIN="$CACHE/bin"
out="$BIN/helm-$HELM_VERSION"
mkdir -p "$BIN"

if [ -x "$out" ]; then
  echo "build-helm: helm $HELM_VERSION cached at $out"
else
  command -v go >/dev/null || { echo "build-helm: the Go toolchain (go) is required to build helm" >&2; exit 1; }
  export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
  gomod=$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # helm's Makefile stamps its version and the Kubernetes version it targets (client-go v0.N ->
  # 1.N) via ldflags; without them `helm version` prints a placeholder and helm template/lint
  # assume Kubernetes 1.20 for .Capabilities and deprecation checks.
  kminor=$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2] }' "$gomod")
  ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ld="$ld -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$kminor"
  done
  tmp=$(mktemp -d)
  started=$(date +%s)
  GOBIN="$tmp" go install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  mv "$tmp/helm" "$out.tmp"; rmdir "$tmp"
  mv "$out.tmp" "$out"
  echo "build-helm: built helm $HELM_VERSION in $(( $(date +%s) - started ))s"
fi
ln -sf "$out" "$BIN/helm"
