import { computeLag, updateTrend } from './lag';
import { recommendReplicas, type RecommendInput } from './recommend';
import { stabilize, type Behavior, type Sample } from './stabilize';

const base: RecommendInput = {
  smoothedLag: 0,
  instantLag: 0,
  rate: 0,
  current: 1,
  partitions: 6,
  minReplicas: 1,
  maxReplicas: 6,
  lagPerReplica: 1000,
  activationLag: 0,
};

describe('computeLag', () => {
  it('sums per-partition lag and counts uncommitted partitions from the log start', () => {
    const lag = computeLag([
      { partition: 0, start: 0, end: 100, committed: 40 },
      { partition: 1, start: 10, end: 50, committed: -1 },
      { partition: 2, start: 0, end: 5, committed: 9 },
    ]);
    expect(lag.total).toBe(60 + 40 + 0);
    expect(lag.maxPartition).toBe(60);
    expect(lag.perPartition.get(2)).toBe(0);
    expect(lag.consumedPosition).toBe(40 + 10 + 9);
  });
});

describe('updateTrend', () => {
  it('damps a one-poll spike and measures the consumption rate', () => {
    const snap = (total: number, pos: number) => ({
      total,
      maxPartition: total,
      perPartition: new Map(),
      consumedPosition: pos,
    });
    let t = updateTrend(undefined, snap(0, 0), 0, 30_000);
    t = updateTrend(t, snap(10_000, 1000), 10_000, 30_000);
    expect(t.smoothedLag).toBeGreaterThan(2000);
    expect(t.smoothedLag).toBeLessThan(3000); // 1 - e^(-1/3) ≈ 0.28
    expect(t.rate).toBeCloseTo(100 * (1 - Math.exp(-1 / 3)), 5);
  });
});

describe('recommendReplicas', () => {
  it('treats lagPerReplica as a per-replica target', () => {
    expect(recommendReplicas({ ...base, smoothedLag: 3500, instantLag: 3500 })).toMatchObject({
      replicas: 4,
      reason: 'LagTarget',
    });
  });
  it('never exceeds the partition count', () => {
    const r = recommendReplicas({
      ...base,
      smoothedLag: 1e9,
      instantLag: 1e9,
      maxReplicas: 20,
      partitions: 6,
    });
    expect(r).toMatchObject({ replicas: 6, reason: 'AtMaximum', unbounded: 1e6, ceiling: 6 });
  });
  it('falls to zero below activation and wakes from zero on any lag', () => {
    expect(
      recommendReplicas({ ...base, minReplicas: 0, smoothedLag: 3, instantLag: 0, activationLag: 5 })
        .replicas,
    ).toBe(0);
    expect(
      recommendReplicas({ ...base, minReplicas: 0, current: 0, smoothedLag: 0.5, instantLag: 1 }),
    ).toMatchObject({ replicas: 1, reason: 'Activated' });
  });
  it('uses the measured rate for a target drain time', () => {
    // 2 replicas drain 200/s together → 100/s each; 6000 lines in 10 s needs 6.
    const r = recommendReplicas({
      ...base,
      lagPerReplica: undefined,
      targetDrainTimeMs: 10_000,
      current: 2,
      rate: 200,
      smoothedLag: 6000,
      instantLag: 6000,
    });
    expect(r).toMatchObject({ replicas: 6, reason: 'DrainTarget' });
  });
  it('measures the per-replica rate over the consumers that produced it', () => {
    // 4 replicas asked for, 2 ready: 200/s is 100/s per consumer, not 50/s.
    const r = recommendReplicas({
      ...base,
      lagPerReplica: undefined,
      targetDrainTimeMs: 10_000,
      current: 4,
      consumers: 2,
      rate: 200,
      smoothedLag: 6000,
      instantLag: 6000,
    });
    expect(r).toMatchObject({ replicas: 6, reason: 'DrainTarget' });
  });
  it('keeps the current count inside the 10% tolerance band and leaves it outside', () => {
    expect(recommendReplicas({ ...base, current: 2, smoothedLag: 2150, instantLag: 2150 })).toMatchObject({
      replicas: 2,
      reason: 'WithinTolerance',
    });
    expect(recommendReplicas({ ...base, current: 2, smoothedLag: 1850, instantLag: 1850 })).toMatchObject({
      replicas: 2,
      reason: 'WithinTolerance',
    });
    expect(recommendReplicas({ ...base, current: 2, smoothedLag: 2300, instantLag: 2300 })).toMatchObject({
      replicas: 3,
      reason: 'LagTarget',
    });
    expect(recommendReplicas({ ...base, current: 3, smoothedLag: 1500, instantLag: 1500 })).toMatchObject({
      replicas: 2,
      reason: 'LagTarget',
    });
  });
  it('reaches zero once the instant lag is at activation even while the EWMA still decays', () => {
    expect(recommendReplicas({ ...base, minReplicas: 0, smoothedLag: 0.0001, instantLag: 0 })).toMatchObject({
      replicas: 0,
      reason: 'BelowActivation',
    });
  });
});

describe('stabilize', () => {
  const b: Behavior = {
    scaleUpWindowMs: 0,
    scaleDownWindowMs: 60_000,
    maxScaleUpStep: 2,
    maxScaleDownStep: 1,
  };
  it('limits the scale-up step', () => {
    expect(stabilize([], { at: 0, replicas: 6 }, 1, b).replicas).toBe(3);
  });
  it('does not flap on noisy recommendations within the scale-down window', () => {
    let history: Sample[] = [];
    let current = 3;
    let changes = 0;
    const noisy = [3, 2, 3, 1, 3, 2, 2, 3, 1, 3, 2, 3];
    noisy.forEach((r, i) => {
      const out = stabilize(history, { at: i * 5000, replicas: r }, current, b);
      history = out.history;
      if (out.replicas !== current) changes++;
      current = out.replicas;
    });
    expect(changes).toBe(0);
    expect(current).toBe(3);
  });
  it('scales down once the window has only lower recommendations', () => {
    const history: Sample[] = [{ at: 0, replicas: 4 }];
    expect(stabilize(history, { at: 61_000, replicas: 1 }, 4, b).replicas).toBe(3);
  });
  it('keeps one sample per distinct value, so the history never outgrows maxReplicas + 1', () => {
    let history: Sample[] = [];
    for (let i = 0; i < 1000; i++)
      history = stabilize(history, { at: i * 100, replicas: i % 3 }, 2, b).history;
    expect(history).toHaveLength(3);
    expect(history.map((s) => s.at).sort((x, y) => x - y)).toEqual([99_700, 99_800, 99_900]);
  });
  it('a recommendation repeated inside the window still counts at its newest time', () => {
    let history: Sample[] = [];
    history = stabilize(history, { at: 0, replicas: 4 }, 4, b).history;
    history = stabilize(history, { at: 30_000, replicas: 2 }, 4, b).history;
    history = stabilize(history, { at: 50_000, replicas: 4 }, 4, b).history;
    // 4 was last seen at 50 s: at 100 s it is still inside the 60 s window.
    expect(stabilize(history, { at: 100_000, replicas: 1 }, 4, b).replicas).toBe(4);
    expect(stabilize(history, { at: 111_000, replicas: 1 }, 4, b).replicas).toBe(3);
  });
});
