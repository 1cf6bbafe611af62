/**
 * `npm run demo` end to end, non-interactively: the compiled demo runs as a child process with its
 * OWN stack (test bed, operator, pod runner, workers — nothing shared with jest's bed), produces
 * 20 s of traffic and must account for every line (rows + dead letters == produced), answer the
 * legal query with records, and leave nothing running behind.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from './env/process';
import { stateFile } from './env/testbed';

const ROOT = path.resolve(__dirname, '..');
const MAIN = path.join(ROOT, 'dist/scripts/demo/main.js');

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runDemo(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<DemoRun> {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run 'npm run build' first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      // SIGTERM is the demo's Ctrl-C: it stops and tears its stack down.
      child.kill('SIGTERM');
      reject(new Error(`demo did not finish within ${timeoutMs} ms\n${stderr}\n${stdout}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm run demo', () => {
  it('documents its flags', async () => {
    const run = await runDemo(['--help'], process.env, 30_000);
    expect(run.code).toBe(0);
    for (const flag of [
      '--rate',
      '--lines-per-message',
      '--duration',
      '--keep',
      '--json-summary',
      '--plain',
    ]) {
      expect(run.stdout).toContain(flag);
    }
    const bad = await runDemo(['--rate', 'fast'], process.env, 30_000);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--rate: 'fast' is not an integer");
  });

  it('runs its own stack, stores every line exactly once and answers the legal query', async () => {
    const jestState = fs.readFileSync(stateFile(), 'utf8');
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-demo-test-'));
    const env = { ...process.env, LP_TESTBED_FILE: path.join(scratch, 'state.json') };
    const run = await runDemo(
      ['--duration', '20s', '--rate', '2000', '--json-summary', '--plain'],
      env,
      420_000,
    );
    const context = `exit ${run.code}\n--- stderr ---\n${run.stderr}\n--- stdout ---\n${run.stdout}`;
    const last = run.stdout.trim().split('\n').pop() ?? '';
    if (!last.startsWith('{"demoSummary"')) throw new Error(`no JSON summary line\n${context}`);
    const summary = JSON.parse(last);

    expect({ code: run.code, complete: summary.complete }).toEqual({ code: 0, complete: true });
    expect(summary.inserted + summary.deadLettered).toBe(summary.produced);
    // 20 s at 2,000 lines/s, in whole messages of 50 lines.
    expect(summary.produced).toBeGreaterThan(30_000);
    expect(summary.produced).toBeLessThanOrEqual(42_000);
    expect(summary.produced % 50).toBe(0);
    expect(summary.failedSends).toBe(0);
    // 0.5 % of the lines are deliberately malformed; most of them must end in the dead-letter table.
    expect(summary.malformed).toBeGreaterThan(0);
    expect(summary.deadLettered).toBeGreaterThan(summary.malformed / 2);
    expect(summary.deadLettered).toBeLessThanOrEqual(summary.malformed * 2);
    expect(summary.legalQuery.rows).toBeGreaterThanOrEqual(1);
    // Exactly the well-formed lines sent with the IP as source or destination, none lost or doubled.
    expect(summary.legalQuery.rows).toBe(summary.legalQuery.expected);
    expect(summary.legalQuery.latencyMs).toBeGreaterThan(0);
    expect(summary.endToEndSeconds).toBeGreaterThan(0);
    expect(summary.interrupted).toBe(false);
    // By default the traffic goes as syslog over TCP through the pipeline's receiver (issue 16).
    expect(run.stderr + run.stdout).toContain('of syslog over TCP to the receiver on 127.0.0.1:');

    // Not a terminal: plain periodic status lines instead of the live view.
    expect(run.stdout).toMatch(/\[00:\d\d\] producing produced=\d+ \(\d+\/s\) inserted=\d+/);
    expect(run.stdout).not.toContain('\x1b[');
    expect(run.stdout).toContain('every produced line is stored or dead-lettered');

    // Nothing left behind, and jest's own bed untouched.
    const pids = /operator pid (\d+) .*pod runner pid (\d+)/.exec(run.stderr);
    const dir = /starting the local stack in (\S+)/.exec(run.stderr);
    expect(pids && dir).toBeTruthy();
    expect([isAlive(Number(pids![1])), isAlive(Number(pids![2]))]).toEqual([false, false]);
    expect(fs.existsSync(dir![1])).toBe(false);
    expect(fs.existsSync(env.LP_TESTBED_FILE)).toBe(false);
    expect(fs.readFileSync(stateFile(), 'utf8')).toBe(jestState);
    fs.rmSync(scratch, { recursive: true, force: true });
  }, 480_000);
});
