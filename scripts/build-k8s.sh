#!/usr/bin/env bash
# Builds real etcd, kube-apiserver and kube-controller-manager binaries from the Go module proxy into a cache
# outside the repo tree. Idempotent: a cached binary of the right version is reused.
#
# Why a scratch module: k8s.io/kubernetes replaces every k8s.io/* staging module with
# ./staging/src/..., so `go install k8s.io/kubernetes/cmd/kube-apiserver@vX` is refused.
# We write a go.mod that requires k8s.io/kubernetes vX and replaces each staging module
# with its published v0.Y.Z tag, generated from the tag's own go.mod.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CACHE="${LOGPIPELINE_CACHE:-$HOME/.cache/logpipeline}"
BIN="$CACHE/bin"
mkdir -p "$BIN"

command -v go >/dev/null || { echo "build-k8s: the Go toolchain (go) is required to build etcd and kube-apiserver" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

build_etcd() {
  local out="$BIN/etcd-$ETCD_VERSION"
  if [ -x "$out" ]; then echo "build-k8s: etcd $ETCD_VERSION cached at $out"; return; fi
  local dir="$CACHE/src/etcd-$ETCD_VERSION"
  rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  go mod init scratch/etcd >/dev/null 2>&1
  # etcd's server module also replaces its sibling modules with ../; requiring the published
  # tags of the siblings explicitly keeps them consistent.
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "go.etcd.io/etcd/api/v3@$ETCD_VERSION" \
    "go.etcd.io/etcd/client/pkg/v3@$ETCD_VERSION" "go.etcd.io/etcd/client/v3@$ETCD_VERSION" \
    "go.etcd.io/etcd/pkg/v3@$ETCD_VERSION" >/dev/null
  go build -trimpath -ldflags "-s -w" -o "$out.tmp" go.etcd.io/etcd/server/v3
  mv "$out.tmp" "$out"
  echo "build-k8s: built etcd $ETCD_VERSION"
}

# Builds one command of k8s.io/kubernetes (kube-apiserver, kube-controller-manager) at K8S_VERSION,
# so the control-plane binaries of the bed always come from the same module version.
build_k8s_cmd() {
  local cmd="$1"
  local out="$BIN/$cmd-$K8S_VERSION"
  if [ -x "$out" ]; then echo "build-k8s: $cmd $K8S_VERSION cached at $out"; return; fi
  local dir="$CACHE/src/$cmd-$K8S_VERSION"
  rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  local minor staging gomod
  minor="v0.${K8S_VERSION#v1.}"
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  staging=$(grep -Eo '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | sort -u)
  {
    echo "module scratch/$cmd"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//')"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    for m in $staging; do echo "replace $m => $m $minor"; done
  } > go.mod
  go get "k8s.io/kubernetes/cmd/$cmd@$K8S_VERSION" >/dev/null
  local major="${K8S_VERSION#v}"; major="${major%%.*}"
  local kminor="${K8S_VERSION#v*.}"; kminor="${kminor%%.*}"
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$kminor -X $p.gitTreeState=clean"
  done
  go build -trimpath -ldflags "$ld" -o "$out.tmp" "k8s.io/kubernetes/cmd/$cmd"
  mv "$out.tmp" "$out"
  echo "build-k8s: built $cmd $K8S_VERSION"
}

case "${1:-all}" in
  etcd) build_etcd ;;
  apiserver) build_k8s_cmd kube-apiserver ;;
  controller-manager) build_k8s_cmd kube-controller-manager ;;
  all) build_etcd; build_k8s_cmd kube-apiserver; build_k8s_cmd kube-controller-manager ;;
esac
ln -sf "$BIN/etcd-$ETCD_VERSION" "$BIN/etcd" 2>/dev/null || true
ln -sf "$BIN/kube-apiserver-$K8S_VERSION" "$BIN/kube-apiserver" 2>/dev/null || true
ln -sf "$BIN/kube-controller-manager-$K8S_VERSION" "$BIN/kube-controller-manager" 2>/dev/null || true
