/** jest globalTeardown: stops the bed started by globalSetup (unless LP_KEEP_TESTBED=1). */
import fs from 'node:fs';
import { stopTestBed } from './bed';
import { readTestBed } from './testbed';

export default async function globalTeardown(): Promise<void> {
  if (process.env.LP_KEEP_TESTBED === '1') return;
  const bed = readTestBed();
  await stopTestBed(bed);
  fs.rmSync(bed.dir, { recursive: true, force: true });
}
