import { InFlightLimiter } from './in-flight';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('InFlightLimiter', () => {
  it('runs at most `limit` calls per key at once, in arrival order, and keys independently', async () => {
    const limiter = new InFlightLimiter(() => 2);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      limiter.run('ch-a', async () => {
        started.push(i);
        await g.promise;
      }),
    );
    const other = limiter.run('ch-b', async () => 'b');
    await expect(other).resolves.toBe('b');
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(limiter.load('ch-a')).toEqual({ active: 2, waiting: 1 });
    gates[1].resolve();
    await runs[1];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    gates[0].resolve();
    gates[2].resolve();
    await Promise.all(runs);
    expect(limiter.load('ch-a')).toEqual({ active: 0, waiting: 0 });
  });

  it('releases the slot when the call throws', async () => {
    const limiter = new InFlightLimiter(() => 1);
    await expect(limiter.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run('k', async () => 1)).resolves.toBe(1);
  });

  it('does not limit with a limit of 0', async () => {
    const limiter = new InFlightLimiter(() => 0);
    const gate = deferred();
    const a = limiter.run('k', () => gate.promise);
    let second = false;
    const b = limiter.run('k', async () => {
      second = true;
    });
    await b;
    expect(second).toBe(true);
    gate.resolve();
    await a;
  });
});
