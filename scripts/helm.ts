/**
 * Runs the helm binary that scripts/build-helm.sh caches, against the repo's chart. Used by the
 * chart unit tests (lint/template) and by test/env/chart.ts (render, then apply to the bed).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Repository root (this file lives in scripts/, or in dist/scripts/ once compiled). */
export const REPO_ROOT = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../charts')) ? '..' : '../..',
);

/** The operator chart's directory. */
export const CHART_DIR = path.join(REPO_ROOT, 'charts', 'logpipeline-operator');

/** A rendered Kubernetes object (loosely typed: tests inspect whatever fields they need). */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  [field: string]: unknown;
}

/** Release identity and values for one render. */
export interface RenderOptions {
  releaseName?: string;
  namespace?: string;
  /** Also emit the chart's crds/ (helm template leaves them out by default). */
  includeCrds?: boolean;
}

/** The helm version build-helm.sh builds, read from the script so there is one source of truth. */
export function helmVersion(): string {
  if (process.env.HELM_VERSION) return process.env.HELM_VERSION;
  const script = fs.readFileSync(path.join(REPO_ROOT, 'scripts', 'build-helm.sh'), 'utf8');
  const m = /HELM_VERSION="\$\{HELM_VERSION:-(v[0-9.]+)\}"/.exec(script);
  if (!m) throw new Error('cannot find the default HELM_VERSION in scripts/build-helm.sh');
  return m[1];
}

/** Path of the cached helm binary; throws (telling how to build it) when it is missing. */
export function helmBinary(): string {
  const cache =
    process.env.LOGPIPELINE_CACHE ?? path.join(process.env.HOME ?? os.homedir(), '.cache', 'logpipeline');
  const bin = path.join(cache, 'bin', `helm-${helmVersion()}`);
  if (!fs.existsSync(bin)) {
    throw new Error(
      `helm ${helmVersion()} not found at ${bin}: run scripts/setup.sh (or scripts/build-helm.sh) first`,
    );
  }
  return bin;
}

/** Runs helm with the chart's values written to a temp file; returns stdout, throws with stderr. */
function runHelm(args: string[], values: object): string {
  const helm = helmBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-helm-'));
  const valuesFile = path.join(dir, 'values.json');
  // JSON is YAML, so helm reads it as a values file without a YAML serializer here.
  fs.writeFileSync(valuesFile, JSON.stringify(values));
  try {
    return execFileSync(helm, [...args, '--values', valuesFile], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 32 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`helm ${args[0]} failed: ${e.stderr || e.stdout || e.message}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Renders the chart with `helm template` and returns the objects in manifest order. */
export function renderChart(values: object = {}, opts: RenderOptions = {}): RenderedObject[] {
  const args = [
    'template',
    opts.releaseName ?? 'logpipeline',
    CHART_DIR,
    '--namespace',
    opts.namespace ?? 'logpipeline-system',
  ];
  if (opts.includeCrds) args.push('--include-crds');
  const out = runHelm(args, values);
  const objects: RenderedObject[] = [];
  for (const doc of parseAllDocuments(out)) {
    if (doc.errors.length > 0)
      throw new Error(`helm template produced invalid YAML: ${doc.errors[0].message}`);
    const obj = doc.toJSON() as RenderedObject | null;
    if (obj) objects.push(obj);
  }
  return objects;
}

/** Runs `helm lint --strict` on the chart with the given values; returns helm's output. */
export function lintChart(values: object = {}): string {
  return runHelm(['lint', '--strict', CHART_DIR], values);
}
