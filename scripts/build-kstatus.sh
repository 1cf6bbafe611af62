#!/usr/bin/env bash
# Builds scripts/kstatus (a tiny wrapper around the REAL kstatus library of
# sigs.k8s.io/cli-utils, what Flux uses to judge health) into the cache, like etcd in
# build-k8s.sh. Idempotent: the binary is keyed by the library version and the source hash.
set -euo pipefail
cd "$(dirname "$0")/.."

CLI_UTILS_VERSION="${CLI_UTILS_VERSION:-v0.37.2}"
CACHE="${LOGPIPELINE_CACHE:-$HOME/.cache/logpipeline}"
BIN="$CACHE/bin"
mkdir -p "$BIN"
command -v go >/dev/null || { echo "build-kstatus: the Go toolchain (go) is required" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

src="$(pwd)/scripts/kstatus/main.go"
hash=$(sha256sum "$src" | cut -c1-12)
out="$BIN/kstatus-$CLI_UTILS_VERSION-$hash"
if [ ! -x "$out" ]; then
  dir="$CACHE/src/kstatus-$CLI_UTILS_VERSION-$hash"
  rm -rf "$dir"; mkdir -p "$dir"; cp "$src" "$dir/main.go"; cd "$dir"
  go mod init scratch/kstatus >/dev/null 2>&1
  # No -u: cli-utils pins its k8s.io modules to one release; upgrading them breaks the build.
  go get "sigs.k8s.io/cli-utils@$CLI_UTILS_VERSION" >/dev/null
  go mod tidy >/dev/null
  go build -trimpath -ldflags "-s -w" -o "$out.tmp" .
  mv "$out.tmp" "$out"
  echo "build-kstatus: built kstatus (cli-utils $CLI_UTILS_VERSION)"
else
  echo "build-kstatus: kstatus (cli-utils $CLI_UTILS_VERSION) cached at $out"
fi
ln -sf "$out" "$BIN/kstatus"
