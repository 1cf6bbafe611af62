/**
 * The kstatus verdict of an object, computed by the REAL library (sigs.k8s.io/cli-utils
 * pkg/kstatus/status, what Flux uses) through the small Go program scripts/kstatus, built into the
 * cache by scripts/build-kstatus.sh (run by scripts/setup.sh). A missing binary fails the test.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One verdict: Current, InProgress, Failed, Terminating, ... and the library's message. */
export interface KstatusVerdict {
  status: string;
  message: string;
}

/** Path of the kstatus binary in the cache. */
export function kstatusBinary(): string {
  const cache = process.env.LOGPIPELINE_CACHE ?? path.join(os.homedir(), '.cache', 'logpipeline');
  const bin = path.join(cache, 'bin', 'kstatus');
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run ./scripts/setup.sh (it builds it)`);
  return bin;
}

/** Computes kstatus for `obj` (a whole object as the apiserver returns it). */
export function kstatus(obj: object): KstatusVerdict {
  const out = execFileSync(kstatusBinary(), { input: `${JSON.stringify(obj)}\n`, encoding: 'utf8' });
  const v = JSON.parse(out.trim()) as KstatusVerdict & { error?: string };
  if (v.error) throw new Error(`kstatus: ${v.error}`);
  return v;
}
