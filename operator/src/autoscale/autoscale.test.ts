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
    const snap = (total: number, pos: number) => ({ total, maxPartition: total, perPartition: new Map(), consumedPosition: pos });
    let t = updateTrend(undefined, snap(0, 0), 0, 30_000);
    t = updateTrend(t, snap(10_000, 1000), 10_000, 30_000);
    expect(t.smoothedLag).toBeGreaterThan(2000);
    expect(t.smoothedLag).toBeLessThan(3000); // 1 - e^(-1/3) ≈ 0.28
    expect(t.rate).toBeCloseTo(100 * (1 - Math.exp(-1 / 3)), 5);
  });
});

describe('recommendReplicas', () => {
  it('treats lagPerReplica as a per-replica target', () => {
    expect(recommendReplicas({ ...base, smoothedLag: 3500, instantLag: 3500 })).toEqual({ replicas: 4, reason: 'LagTarget' });
  });
  it('never exceeds the partition count', () => {
    const r = recommendReplicas({ ...base, smoothedLag: 1e9, instantLag: 1e9, maxReplicas: 20, partitions: 6 });
    expect(r).toEqual({ replicas: 6, reason: 'AtMaximum' });
  });
  it('falls to zero below activation and wakes from zero on any lag', () => {
    expect(recommendReplicas({ ...base, minReplicas: 0, smoothedLag: 3, instantLag: 0, activationLag: 5 }).replicas).toBe(0);
    expect(recommendReplicas({ ...base, minReplicas: 0, current: 0, smoothedLag: 0.5, instantLag: 1 })).toEqual({ replicas: 1, reason: 'Activated' });
  });
  it('uses the measured rate for a target drain time', () => {
    // 2 replicas drain 200/s together → 100/s each; 6000 lines in 10 s needs 6.
    const r = recommendReplicas({ ...base, lagPerReplica: undefined, targetDrainTimeMs: 10_000, current: 2, rate: 200, smoothedLag: 6000, instantLag: 6000 });
    expect(r).toEqual({ replicas: 6, reason: 'DrainTarget' });
  });
});

describe('stabilize', () => {
  const b: Behavior = { scaleUpWindowMs: 0, scaleDownWindowMs: 60_000, maxScaleUpStep: 2, maxScaleDownStep: 1 };
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
});
