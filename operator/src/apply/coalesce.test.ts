import { Coalescer } from './coalesce';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Coalescer', () => {
  it('answers many callers of one moment with one batch, each with its own value', async () => {
    const calls: string[][] = [];
    const c = new Coalescer<string, number>(
      async (keys) => {
        calls.push(keys);
        return new Map(keys.map((k) => [k, k.length]));
      },
      { idOf: (k) => k, gatherMs: 1 },
    );
    const got = await Promise.all(['a', 'bb', 'ccc', 'bb'].map((k) => c.get(k)));
    expect(got).toEqual([1, 2, 3, 2]);
    expect(calls).toEqual([['a', 'bb', 'ccc']]);
    expect(c.batchCount()).toBe(1);
  });

  it('keeps errors per key and fails a whole batch only for its own callers', async () => {
    let fail = false;
    const c = new Coalescer<string, string>(
      async (keys) => {
        if (fail) throw new Error('down');
        return new Map<string, string | Error>(keys.map((k) => [k, k === 'bad' ? new Error('refused') : k]));
      },
      { idOf: (k) => k, gatherMs: 0 },
    );
    const [ok, bad] = await Promise.allSettled([c.get('ok'), c.get('bad')]);
    expect(ok).toEqual({ status: 'fulfilled', value: 'ok' });
    expect(bad.status === 'rejected' && (bad.reason as Error).message).toBe('refused');
    fail = true;
    await expect(c.get('x')).rejects.toThrow('down');
    fail = false;
    await expect(c.get('y')).resolves.toBe('y');
  });

  it('sends one batch at a time; keys arriving meanwhile gather into the next', async () => {
    const gate = deferred<void>();
    const calls: string[][] = [];
    const c = new Coalescer<string, string>(
      async (keys) => {
        calls.push(keys);
        if (calls.length === 1) await gate.promise;
        return new Map(keys.map((k) => [k, k]));
      },
      { idOf: (k) => k, gatherMs: 0 },
    );
    const first = c.get('a');
    await new Promise((r) => setTimeout(r, 5));
    const later = ['b', 'c', 'd'].map((k) => c.get(k));
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual([['a']]);
    gate.resolve();
    await Promise.all([first, ...later]);
    expect(calls).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('splits more keys than maxBatch over several batches', async () => {
    const sizes: number[] = [];
    const c = new Coalescer<number, number>(
      async (keys) => {
        sizes.push(keys.length);
        return new Map(keys.map((k) => [String(k), k]));
      },
      { idOf: String, gatherMs: 0, maxBatch: 4 },
    );
    await Promise.all(Array.from({ length: 10 }, (_, i) => c.get(i)));
    expect(sizes).toEqual([4, 4, 2]);
  });
});
