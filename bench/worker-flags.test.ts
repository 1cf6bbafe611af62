import { WORKER_NODE_ARGS } from '../common/src/worker-runtime';
import { missingWorkerFlags } from './worker-flags';

describe('missingWorkerFlags', () => {
  it('names every worker flag a plain process lacks, in the worker order', () => {
    expect(missingWorkerFlags([], {})).toEqual([...WORKER_NODE_ARGS]);
    expect(missingWorkerFlags(['--inspect'], {})).toEqual([...WORKER_NODE_ARGS]);
  });

  it('is empty once the process runs with them (the re-run does not loop)', () => {
    expect(missingWorkerFlags(['--inspect', ...WORKER_NODE_ARGS], {})).toEqual([]);
  });

  it('names only the ones missing', () => {
    expect(missingWorkerFlags([WORKER_NODE_ARGS[0]], {})).toEqual(WORKER_NODE_ARGS.slice(1));
  });

  it('is empty when plain Node is asked for (A/B of a flag)', () => {
    expect(missingWorkerFlags([], { LP_BENCH_PLAIN_NODE: '1' })).toEqual([]);
  });
});
