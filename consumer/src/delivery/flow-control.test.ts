import { ByteBudget, PartitionGate, Slots } from './flow-control';

describe('ByteBudget', () => {
  it('tracks usage against its cap and wakes waiters on release', async () => {
    const b = new ByteBudget(100);
    b.add(60);
    expect(b.exhausted()).toBe(false);
    b.add(50);
    expect(b.exhausted()).toBe(true);
    let woke = false;
    const waiting = b.changed(10_000).then(() => (woke = true));
    b.release(50);
    await waiting;
    expect(woke).toBe(true);
    expect(b.bytes).toBe(60);
    b.release(1_000);
    expect(b.bytes).toBe(0);
  });

  it('times out a wait so callers can re-check and heartbeat', async () => {
    const b = new ByteBudget(1);
    const t0 = Date.now();
    await b.changed(30);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
  });
});

describe('Slots', () => {
  it('admits at most `count` holders, in FIFO order', async () => {
    const s = new Slots(2);
    const r1 = await s.acquire();
    const r2 = await s.acquire();
    const order: number[] = [];
    const p3 = s.acquire().then((r) => (order.push(3), r));
    const p4 = s.acquire().then((r) => (order.push(4), r));
    await Promise.resolve();
    expect(order).toEqual([]);
    r1();
    r1(); // idempotent
    const r3 = await p3;
    expect(order).toEqual([3]);
    r2();
    await p4;
    expect(order).toEqual([3, 4]);
    r3();
  });
});

describe('PartitionGate (issue 12)', () => {
  it('a failing partition holds at most one shared slot; a healthy one runs in parallel', async () => {
    const slots = new Slots(2);
    const stuck = new PartitionGate(slots);
    const healthy = new PartitionGate(slots);
    stuck.failed();
    const a = await stuck.acquire();
    let second = false;
    const b = stuck.acquire().then((r) => ((second = true), r));
    // The stuck partition's second attempt waits for its lane; the healthy one gets the free slot.
    const h = await healthy.acquire();
    await new Promise((r) => setTimeout(r, 10));
    expect(second).toBe(false);
    h();
    a();
    (await b)();
    expect(second).toBe(true);
    stuck.succeeded();
    const [x, y] = await Promise.all([stuck.acquire(), stuck.acquire()]);
    x();
    y();
  });
});
