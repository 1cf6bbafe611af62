#!/usr/bin/env bash
# Copies the CRDs from crds/ (the source of truth, applied by the test bed) into the Helm chart's
# crds/ directory, removing chart copies whose source is gone. scripts/chart-crds.test.ts fails
# whenever the two directories differ, so run this after every CRD change.
set -euo pipefail
cd "$(dirname "$0")/.."
src=crds
dst=charts/logpipeline-operator/crds
mkdir -p "$dst"
for f in "$dst"/*.yaml "$dst"/*.yml; do
  [ -e "$f" ] || continue
  [ -e "$src/$(basename "$f")" ] || { rm -f "$f"; echo "sync-chart-crds: removed stale $f"; }
done
for f in "$src"/*.yaml "$src"/*.yml; do
  [ -e "$f" ] || continue
  cmp -s "$f" "$dst/$(basename "$f")" || { cp "$f" "$dst/"; echo "sync-chart-crds: updated $dst/$(basename "$f")"; }
done
