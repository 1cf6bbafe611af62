import { FakeClock } from './clock';
import { WorkQueue } from './workqueue';

function queue(opts: ConstructorParameters<typeof WorkQueue>[0] = {}) {
  const clock = new FakeClock();
  return { clock, q: new WorkQueue({ clock, ...opts }) };
}

/** Resolves true if the promise settled within the current microtask flush. */
async function settled<T>(p: Promise<T>): Promise<{ done: boolean; value?: T }> {
  let out: { done: boolean; value?: T } = { done: false };
  void p.then((value) => (out = { done: true, value }));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return out;
}

describe('WorkQueue', () => {
  it('deduplicates keys and keeps FIFO order', async () => {
    const { q } = queue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.len()).toBe(0);
  });

  it('never hands the same key to two workers; a key re-added while processing comes back after done', async () => {
    const { q } = queue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0); // held back while processing
    const second = q.get();
    expect((await settled(second)).done).toBe(false);
    q.done(first!);
    expect((await settled(second)).value).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
    expect(q.processingLen()).toBe(0);
  });

  it('wakes a waiting worker on add', async () => {
    const { q } = queue();
    const waiting = q.get();
    expect((await settled(waiting)).done).toBe(false);
    q.add('x');
    expect((await settled(waiting)).value).toBe('x');
  });

  it('backs off exponentially per key with a cap and resets on forget', async () => {
    const { q, clock } = queue({ baseDelayMs: 5, maxDelayMs: 40, qps: 1e6, burst: 1e6 });
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      q.addRateLimited('k');
      let waited = 0;
      while (q.len() === 0 && waited < 1000) {
        clock.advance(1);
        waited++;
      }
      delays.push(waited);
      q.done((await q.get())!);
    }
    expect(delays).toEqual([5, 10, 20, 40, 40, 40]);
    expect(q.numRequeues('k')).toBe(6);
    q.forget('k');
    expect(q.numRequeues('k')).toBe(0);
  });

  it('keeps backoff per key: one failing key does not delay another', async () => {
    const { q, clock } = queue({ baseDelayMs: 100, qps: 1e6, burst: 1e6 });
    for (let i = 0; i < 4; i++) {
      q.addRateLimited('bad');
      clock.advance(100 * 2 ** i);
      q.done((await q.get())!);
    }
    q.addRateLimited('bad'); // 5th failure: 1600 ms
    q.addRateLimited('good'); // 1st failure: 100 ms
    clock.advance(100);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('good');
    clock.advance(1499);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(await q.get()).toBe('bad');
  });

  it('applies the overall token bucket on retries', () => {
    const { q, clock } = queue({ baseDelayMs: 1, qps: 10, burst: 2 });
    q.addRateLimited('a');
    q.addRateLimited('b');
    q.addRateLimited('c'); // bucket empty: waits 100 ms for a token
    clock.advance(1);
    expect(q.len()).toBe(2);
    clock.advance(98);
    expect(q.len()).toBe(2);
    clock.advance(1);
    expect(q.len()).toBe(3);
  });

  it('addAfter delays, and the earliest schedule of a key wins', () => {
    const { q, clock } = queue();
    q.addAfter('a', 1000);
    q.addAfter('a', 200);
    q.addAfter('a', 5000);
    expect(q.waitingLen()).toBe(1);
    clock.advance(199);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    clock.advance(10_000);
    expect(q.len()).toBe(1); // superseded schedules do not fire again
    expect(clock.pending()).toBe(0);
  });

  it('addAfter with zero delay adds immediately', () => {
    const { q } = queue();
    q.addAfter('a', 0);
    expect(q.len()).toBe(1);
  });

  it('orders many delayed keys by time', async () => {
    const { q, clock } = queue();
    const delays = [50, 10, 40, 20, 30];
    delays.forEach((d, i) => q.addAfter(`k${i}`, d));
    clock.advance(100);
    const out: string[] = [];
    while (q.len() > 0) out.push((await q.get())!);
    expect(out).toEqual(['k1', 'k3', 'k4', 'k2', 'k0']);
  });

  it('shutdown releases waiting workers, drops the backlog and drains in-flight work', async () => {
    const { q } = queue();
    q.add('a');
    q.add('b');
    const inFlight = await q.get();
    q.addAfter('c', 10);
    const idle = new WorkQueue().get();
    const drained = q.shutDownWithDrain();
    expect((await settled(drained)).done).toBe(false);
    expect(await q.get()).toBeUndefined();
    q.add('d');
    expect(q.len()).toBe(0);
    q.done(inFlight!);
    expect((await settled(drained)).done).toBe(true);
    expect((await settled(idle)).done).toBe(false); // a different queue is unaffected
  });

  it('resolves a pending get with undefined on shutdown', async () => {
    const { q } = queue();
    const pending = q.get();
    await q.shutDownWithDrain();
    expect(await pending).toBeUndefined();
  });

  it('runs N workers concurrently but each key alone', async () => {
    const { q } = queue();
    let concurrent = 0;
    let maxConcurrent = 0;
    const active = new Set<string>();
    let violations = 0;
    const work = async () => {
      for (let key = await q.get(); key !== undefined; key = await q.get()) {
        if (active.has(key)) violations++;
        active.add(key);
        maxConcurrent = Math.max(maxConcurrent, ++concurrent);
        await new Promise((r) => setImmediate(r));
        if (Math.random() < 0.3) q.add(key); // re-added while processing
        concurrent--;
        active.delete(key);
        q.done(key);
      }
    };
    const workers = Array.from({ length: 4 }, work);
    for (let i = 0; i < 200; i++) q.add(`k${i % 10}`);
    while (q.len() > 0 || q.processingLen() > 0) await new Promise((r) => setImmediate(r));
    await q.shutDownWithDrain();
    await Promise.all(workers);
    expect(violations).toBe(0);
    expect(maxConcurrent).toBeGreaterThan(1);
    expect(maxConcurrent).toBeLessThanOrEqual(4);
  });
});
