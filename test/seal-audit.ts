/**
 * The auditor's procedure of docs/compliance.md ("The auditor's procedure"), run verbatim with
 * bash, openssl, gzip and sha256sum: the tests check the documented commands, not a copy of them.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The shell block after the `auditor-procedure` marker in docs/compliance.md. */
export function auditorScript(): string {
  const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'compliance.md'), 'utf8');
  const at = doc.indexOf('<!-- auditor-procedure');
  const m = /```sh\n([\s\S]*?)```/.exec(doc.slice(at));
  if (at < 0 || !m) throw new Error('docs/compliance.md has no auditor-procedure block');
  return m[1];
}

/** Runs the procedure in `sealDir` for `<table>-<day>` with the given public key and TSA CA files. */
export function audit(
  sealDir: string,
  s: string,
  pubFile: string,
  caFile: string,
): { code: number; out: string } {
  const script = auditorScript()
    .replace(/^S=.*$/m, `S=${s}`)
    .replace(/^PUB=.*$/m, `PUB=${pubFile}`)
    .replace(/^CA=.*$/m, `CA=${caFile}`);
  const r = spawnSync('bash', ['-c', script], { cwd: sealDir, encoding: 'utf8' });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}
