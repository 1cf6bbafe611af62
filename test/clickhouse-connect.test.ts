/**
 * A second official ClickHouse client against the test bed: clickhouse-connect (Python, installed
 * by scripts/setup.sh into a venv in the cache) inserts 10,000 rows in Native and in RowBinary,
 * uncompressed and with gzip, lz4 and zstd request compression, and reads every row back. It
 * sends what the Node client never does (the statement inside the body, LZ4 frames, an HTTP
 * session per client), so the bed is proven against more than one client's habits. A missing
 * venv fails the test (run scripts/setup.sh), it never skips.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cacheDir } from './env/process';
import { readTestBed } from './env/testbed';

const SCRIPT = path.join(__dirname, 'clickhouse-connect-check.py');
/** The venv scripts/setup.sh creates. */
const PYTHON = path.join(cacheDir(), 'pyclient', 'bin', 'python');

interface CaseResult {
  case: string;
  ok: boolean;
  written_rows: number;
  detail: string | null;
}

function runCheck(url: string, user: string, password: string, database: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      [SCRIPT, url, user, database],
      // The password travels in the environment, never on a command line.
      { env: { ...process.env, CH_PASSWORD: password }, maxBuffer: 16 * 1024 * 1024 },
      // A failing case exits 1 but still prints its results: the assertions below report them.
      (err, stdout, stderr) =>
        stdout.trim() ? resolve(stdout) : reject(new Error(`${err?.message ?? ''}\n${stderr}`)),
    );
  });
}

describe('clickhouse-connect against the test bed', () => {
  it('inserts and reads back 10,000 rows in Native and RowBinary under every request compression', async () => {
    expect({ venv: PYTHON, exists: fs.existsSync(PYTHON) }).toEqual({ venv: PYTHON, exists: true });
    const bed = readTestBed().clickhouse;
    if (!bed) throw new Error('the test bed has no ClickHouse part: integration tests need a real engine');
    const out = await runCheck(bed.url, bed.username, bed.password, `cc_${process.pid}`);
    const results = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as CaseResult);
    expect(results.map((r) => r.case).sort()).toEqual(
      ['none', 'gzip', 'lz4', 'zstd'].flatMap((c) => [`Native/${c}`, `RowBinary/${c}`]).sort(),
    );
    for (const r of results)
      expect(r).toEqual({ case: r.case, ok: true, written_rows: 10_000, detail: null });
  });
});
