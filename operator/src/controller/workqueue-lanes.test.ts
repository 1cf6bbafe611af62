import { FakeClock } from './clock';
import { WorkQueue } from './workqueue';

describe('WorkQueue lanes', () => {
  it('serves known keys ahead of a storm of new ones, without starving the new ones', async () => {
    const known = new Set(['k1', 'k2', 'k3', 'k4']);
    const q = new WorkQueue({
      clock: new FakeClock(),
      laneOf: (k) => (known.has(k) ? 'fast' : 'bulk'),
      fastBurst: 3,
    });
    for (let i = 0; i < 100; i++) q.add(`new${i}`);
    for (const k of known) q.add(k);
    const order: string[] = [];
    for (let i = 0; i < 8; i++) {
      const k = (await q.get())!;
      order.push(k);
      q.done(k);
    }
    expect(order).toEqual(['k1', 'k2', 'k3', 'new0', 'k4', 'new1', 'new2', 'new3']);
  });

  it('is one FIFO without laneOf', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a');
    q.add('b');
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });
});
