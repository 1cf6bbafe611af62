import { spawnSync } from 'node:child_process';
import { procThreadCpu, procUsage } from './e2e-process';

describe('procThreadCpu', () => {
  it("splits this process's CPU by thread, within the process's own figure", () => {
    // This process loaded and compiled the test on its main thread: at least a clock tick there.
    const t = procThreadCpu(process.pid);
    const after = procUsage(process.pid);
    expect(t.main).toBeGreaterThan(0);
    expect(t.v8Workers).toBeGreaterThanOrEqual(0);
    expect(t.other).toBeGreaterThanOrEqual(0);
    // The threads still running make up the process's CPU (ended threads count only in the total).
    expect(t.main + t.v8Workers + t.other).toBeLessThanOrEqual(after.user + after.system + 1e-9);
  });

  it('reads zeros for a process that is gone', () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    expect(procThreadCpu(gone)).toEqual({ main: 0, v8Workers: 0, other: 0 });
  });
});
