/**
 * The layering contract (docs/architecture.md): common/src imports neither side, operator/src and
 * consumer/src never import each other, and inside each side a layer never imports a later one.
 * ESLint's no-restricted-imports enforces it (eslint.config.mjs); these tests prove the rule fires
 * on a reintroduced cross-import and that the tree itself names no other side.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const ESLINT = path.join(ROOT, 'node_modules', '.bin', 'eslint');

const REFUSED: Array<[string, string]> = [
  ['operator/src/controller/probe.ts', '../../../consumer/src/worker-tuning'],
  ['operator/src/desired/clickhouse/probe.ts', '../../../../consumer/src/encode/column-plan'],
  ['consumer/src/sink/probe.ts', '../../../operator/src/api/types'],
  ['consumer/src/worker-probe.ts', '../../operator/src/api/defaults'],
  ['common/src/probe.ts', '../../consumer/src/worker'],
  ['common/src/integrity/probe.ts', '../../../operator/src/desired/labels'],
  ['operator/src/api/probe.ts', '../controller/reconciler'],
  ['operator/src/status/probe.ts', '../controller/manager'],
  ['operator/src/desired/probe.ts', '../apply/kube'],
  ['consumer/src/parse/probe.ts', '../sink/retry'],
  ['consumer/src/delivery/probe.ts', '../sink/batch-delivery'],
  ['consumer/src/sink/probe.ts', '../integrity/integrity-stage'],
  ['consumer/src/encode/probe.ts', '../worker'],
  ['operator/src/controller/probe.ts', '../../../test/fixtures/samples'],
];
const ALLOWED: Array<[string, string]> = [
  ['operator/src/controller/probe.ts', '../../../common/src/log'],
  ['operator/src/controller/probe.ts', '../status/views'],
  ['consumer/src/sink/probe.ts', '../delivery/body-pool'],
  ['consumer/src/worker-probe.ts', './integrity/integrity-stage'],
  ['operator/cli/probe.ts', '../../consumer/src/parse/parser'],
  ['consumer/src/parse/probe.test.ts', '../../../test/fixtures/samples'],
];

/**
 * Lints every probe in one ESLint run: each (file, import) pair becomes its own file under a
 * scratch tree that mirrors the repository layout, linted with the repository's config (with
 * `--config`, ESLint matches `files` patterns against paths relative to the working directory).
 */
function lintProbes(cases: Array<[string, string]>): Map<string, string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  const files = cases.map(([file, spec], i) => {
    const rel = file.replace(/(\.test)?\.ts$/, (ext) => `${i}${ext}`);
    fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), `import * as x from '${spec}';\nexport const y = x;\n`);
    return rel;
  });
  try {
    const r = spawnSync(
      ESLINT,
      ['--config', path.join(ROOT, 'eslint.config.mjs'), '--format', 'json', ...files],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    const results = JSON.parse(r.stdout) as Array<{
      filePath: string;
      messages: Array<{ ruleId: string | null }>;
    }>;
    const byFile = new Map(
      results.map((f) => [path.relative(dir, f.filePath), f.messages.map((m) => String(m.ruleId))]),
    );
    return new Map(cases.map((c, i) => [c.join(' '), byFile.get(files[i]) ?? ['(not linted)']]));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('layer rule (eslint no-restricted-imports)', () => {
  let rules: Map<string, string[]>;
  beforeAll(() => {
    rules = lintProbes([...REFUSED, ...ALLOWED]);
  });

  it.each(REFUSED)('%s importing %s is refused', (file, spec) => {
    expect(rules.get(`${file} ${spec}`)).toContain('no-restricted-imports');
  });

  it.each(ALLOWED)('%s importing %s is allowed', (file, spec) => {
    const reported = rules.get(`${file} ${spec}`);
    expect(reported).toBeDefined();
    expect(reported).not.toContain('(not linted)');
    expect(reported).not.toContain('no-restricted-imports');
  });
});

function sources(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('the tree', () => {
  it.each([
    ['operator/src', 'consumer/src'],
    ['consumer/src', 'operator/src'],
  ])('nothing under %s names %s', (dir, other) => {
    const hits = sources(path.join(ROOT, dir)).filter((f) => fs.readFileSync(f, 'utf8').includes(other));
    expect(hits.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
