import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const read = (p: string) => fs.readFileSync(path.join(root, p), 'utf8');

describe('npm run --silent bench prints one JSON document on stdout', () => {
  it('sends the build’s output to stderr before the runner starts', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.bench).toBe('npm run build --silent 1>&2 && node dist/bench/run.js');
  });

  it('starts the bed with a stderr log instead of swapping console.log, and offers --out', () => {
    const runner = read('bench/run.ts');
    expect(runner).not.toMatch(/console\.log\s*=/);
    expect(runner).toMatch(/startTestBed\(\{[^}]*log: \(line\) => process\.stderr\.write/);
    expect(runner).toMatch(/flag\(argv, 'out'\)/);
    expect(read('test/env/bed.ts')).toMatch(/\(opts\.log \?\? console\.log\)\(`test bed up/);
  });

  it('documents the silent command in the README', () => {
    expect(read('README.md')).toContain('scripts/with-node npm run --silent bench > bench.json');
  });
});
