import { dueForSampling, outcomeChanged, type SampledPipeline } from './scaling-schedule';

const entry = (
  cluster: string,
  lastPollAt: number,
  extra: Partial<SampledPipeline> = {},
): SampledPipeline => ({
  cluster,
  pollMs: 1000,
  lastPollAt,
  ...extra,
});

describe('dueForSampling', () => {
  it('samples nothing while every pipeline is within its interval', () => {
    expect(dueForSampling([entry('a', 500), entry('a', 900)], 1400)).toEqual([]);
  });

  it('pulls the nearly due pipelines of a due cluster into the same round, not those of other clusters', () => {
    const due = entry('a', 0);
    const nearly = entry('a', 450); // 55 % of its interval at t=1000
    const early = entry('a', 600);
    const other = entry('b', 150);
    expect(dueForSampling([due, nearly, early, other], 1000)).toEqual([due, nearly]);
  });

  it('skips pipelines never sampled, in flight, or waiting for their reconcile', () => {
    const never: SampledPipeline = { pollMs: 1000, lastPollAt: 0 };
    const inFlight = entry('a', 0, { polling: true });
    const pending = entry('a', 0, { pending: true });
    expect(dueForSampling([never, inFlight, pending], 1500)).toEqual([]);
  });

  it('decides a pending pipeline again only after a minute without its reconcile', () => {
    const pending = entry('a', 0, { pending: true });
    expect(dueForSampling([pending], 59_000)).toEqual([]);
    expect(dueForSampling([pending], 60_000)).toEqual([pending]);
  });
});

describe('outcomeChanged', () => {
  const base = { status: 'True' as const, reason: 'Steady', message: 'lag 0', lag: { total: 0 } };

  it('is false for the same written fields (requeue and replicas equal to the current count ignored)', () => {
    expect(outcomeChanged(base, { ...base, replicas: 2, requeueAfterMs: 5 }, 2)).toBe(false);
    // A new lag record with the same numbers (an undefined field is an absent one).
    expect(outcomeChanged(base, { ...base, lag: { total: 0, lastScaleTime: undefined } }, 2)).toBe(false);
    expect(outcomeChanged({ ...base, stall: undefined }, base, 2)).toBe(false);
  });

  it('is true for a replica count other than the current one', () => {
    expect(outcomeChanged(base, { ...base, replicas: 3 }, 2)).toBe(true);
  });

  it('is true for a different condition, lag or stall, and for the first outcome', () => {
    expect(outcomeChanged(base, { ...base, reason: 'ScaledUp' }, 2)).toBe(true);
    expect(outcomeChanged(base, { ...base, lag: { total: 7 } }, 2)).toBe(true);
    expect(outcomeChanged(base, { ...base, lag: { total: 0, smoothed: 1 } }, 2)).toBe(true);
    expect(outcomeChanged(base, { ...base, lag: undefined }, 2)).toBe(true);
    expect(outcomeChanged(base, { ...base, kafkaUnreachable: 'connect ECONNREFUSED' }, 2)).toBe(true);
    const lost = { ...base, retentionLoss: 'topic t: 9 offsets deleted by retention' };
    expect(outcomeChanged(base, lost, 2)).toBe(true);
    expect(outcomeChanged(lost, { ...lost }, 2)).toBe(false);
    expect(outcomeChanged(base, { ...base, stall: { reason: 'PartitionStalled', message: 'p0' } }, 2)).toBe(
      true,
    );
    expect(outcomeChanged(undefined, base, 2)).toBe(true);
  });
});
