/**
 * jest globalSetup for the integration project: starts the real test bed once per run and tells
 * every test file where it is (LP_TESTBED_FILE). If a component cannot start, this throws and every
 * integration test fails with the component's log tail: nothing is skipped.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestBed } from './bed';

export default async function globalSetup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-jest-'));
  process.env.LP_TESTBED_FILE = path.join(dir, 'state.json');
  // The bed dies with this jest process even when jest is interrupted (see supervise.js).
  await startTestBed({ ownerPid: process.pid, dir });
}
