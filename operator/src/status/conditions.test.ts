import type { DeploymentView } from './views';
import { conflictConditions } from './compute';
import { coverageOf } from '../apply/parser-coverage';
import { parserCoverageCondition } from './conditions';
import {
  CONFLICT,
  conditionFlips,
  isWarning,
  mergeConditions,
  onlyConfirmsNoPods,
  readyCondition,
  scalingCondition,
  workersCondition,
  type ConditionInput,
} from './conditions';

function dep(status: DeploymentView['status'], generation = 2): DeploymentView {
  return {
    metadata: { name: 'fw-worker', namespace: 'ns', uid: 'u', resourceVersion: '1', ownerReferences: [] },
    fingerprint: 'f',
    generation,
    replicas: 3,
    ownsReplicas: true,
    status,
  };
}

describe('mergeConditions', () => {
  const a: ConditionInput = { type: 'Ready', status: 'False', reason: 'WorkersNotReady', message: 'x' };
  it('keeps lastTransitionTime while the status holds, moves it on a flip', () => {
    const first = mergeConditions(undefined, [a], 1, 'T1');
    expect(first).toEqual([{ ...a, observedGeneration: 1, lastTransitionTime: 'T1' }]);
    const same = mergeConditions(first, [{ ...a, message: 'y', reason: 'Other' }], 2, 'T2');
    expect(same[0]).toMatchObject({
      lastTransitionTime: 'T1',
      observedGeneration: 2,
      message: 'y',
      reason: 'Other',
    });
    const flipped = mergeConditions(same, [{ ...a, status: 'True' }], 2, 'T3');
    expect(flipped[0].lastTransitionTime).toBe('T3');
  });
  it('keeps conditions of types it does not own', () => {
    const foreign = {
      type: 'Audited',
      status: 'True' as const,
      reason: 'Ok',
      message: '',
      lastTransitionTime: 'T0',
    };
    expect(mergeConditions([foreign], [a], 1, 'T1')).toEqual([
      { ...a, observedGeneration: 1, lastTransitionTime: 'T1' },
      foreign,
    ]);
  });
  it('reports flips and new False conditions only', () => {
    const prev = mergeConditions(
      undefined,
      [a, { type: 'Scaling', status: 'False', reason: 'Stable', message: '' }],
      1,
      'T',
    );
    const next = mergeConditions(
      prev,
      [
        { ...a, status: 'True', reason: 'PipelineReady' },
        { type: 'Scaling', status: 'False', reason: 'Stable', message: '' },
        { type: 'TableReady', status: 'False', reason: 'Unreachable', message: 'm' },
      ],
      1,
      'T2',
    );
    expect(conditionFlips(prev, next).map((f) => [f.type, f.from, f.to])).toEqual([
      ['Ready', 'False', 'True'],
      ['TableReady', undefined, 'False'],
    ]);
  });
});

describe('Scaling is neither good nor bad news', () => {
  const scaling = (status: 'True' | 'False', reason: string) => ({
    type: 'Scaling' as const,
    status,
    reason,
    message: 'm',
  });
  it('records a finished manual scale as a Normal flip and a settled count at creation as none', () => {
    // Seen from outside: `kubectl scale` of a fixed-replica pipeline ended in a Warning Event
    // "Scaling is False (was True)".
    const t0 = mergeConditions(undefined, [scaling('False', 'AutoscalingDisabled')], 1, 'a');
    expect(conditionFlips(undefined, t0)).toEqual([]);
    const t1 = mergeConditions(t0, [scaling('True', 'ScalingUp')], 2, 'b');
    const t2 = mergeConditions(t1, [scaling('False', 'AutoscalingDisabled')], 2, 'c');
    const flips = [...conditionFlips(t0, t1), ...conditionFlips(t1, t2)];
    expect(flips.map((f) => [f.to, isWarning(f.type, f.to)])).toEqual([
      ['True', false],
      ['False', false],
    ]);
    expect(isWarning('WorkersReady', 'False')).toBe(true);
  });
});

describe('conditionFlips on the way to Ready (issue 18)', () => {
  const part = (type: 'TopicReady' | 'WorkersReady', status: 'True' | 'False' | 'Unknown') => ({
    type,
    status,
    reason: `${type}${status}`,
    message: 'm',
  });
  const ready = (status: 'True' | 'False' | 'Unknown') => ({
    type: 'Ready' as const,
    status,
    reason: 'R',
    message: 'r',
  });
  it('says no Event on the way to a first Ready, one on a recovery, and every part flip otherwise', () => {
    const t0 = mergeConditions(undefined, [ready('Unknown'), part('WorkersReady', 'Unknown')], 1, 'a');
    const t1 = mergeConditions(t0, [ready('True'), part('WorkersReady', 'True')], 1, 'b');
    // Unknown -> True (and the parts turning True with it): the Ready condition says it all.
    expect(conditionFlips(t0, t1)).toEqual([]);
    expect(conditionFlips(undefined, t1)).toEqual([]);
    // A part going bad while Ready stays or falls is always said.
    const t2 = mergeConditions(t1, [ready('False'), part('WorkersReady', 'False')], 1, 'c');
    expect(conditionFlips(t1, t2).map((f) => [f.type, f.to])).toEqual([
      ['Ready', 'False'],
      ['WorkersReady', 'False'],
    ]);
    // A part turning True while Ready does not flip (another part still pending) is said too.
    const t3 = mergeConditions(
      t2,
      [ready('False'), part('WorkersReady', 'True'), part('TopicReady', 'False')],
      1,
      'd',
    );
    expect(conditionFlips(t2, t3).map((f) => [f.type, f.to])).toEqual([
      ['WorkersReady', 'True'],
      ['TopicReady', 'False'],
    ]);
    // Back to Ready after a failure: that is news (one Event, the parts folded into it).
    const t4 = mergeConditions(
      t3,
      [ready('True'), part('WorkersReady', 'True'), part('TopicReady', 'True')],
      1,
      'e',
    );
    expect(conditionFlips(t3, t4).map((f) => [f.type, f.from, f.to])).toEqual([['Ready', 'False', 'True']]);
  });
});

describe('workersCondition', () => {
  it('needs no controller answer for a Deployment that never asked for a pod (issue 18)', () => {
    const fresh = { ...dep({}, 1), replicas: 0 };
    expect(workersCondition(fresh, 0, 'd')).toMatchObject({ status: 'True', reason: 'ScaledToZero' });
    // Scaled since creation (generation 2), or asking for pods: the controller must answer first.
    expect(workersCondition({ ...dep({}, 2), replicas: 0 }, 0, 'd')).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
    });
    expect(workersCondition(dep({}, 1), 3, 'd')).toMatchObject({ reason: 'RolloutPending' });
    // A stale status that still counts pods is never read as "none".
    expect(workersCondition({ ...dep({ replicas: 2 }, 1), replicas: 0 }, 0, 'd')).toMatchObject({
      reason: 'RolloutPending',
    });
  });

  it('distinguishes missing, unobserved, rolling, unavailable, ready and zero', () => {
    expect(workersCondition(undefined, 3, 'fw-worker')).toMatchObject({
      status: 'False',
      reason: 'DeploymentNotFound',
    });
    expect(workersCondition(dep({ observedGeneration: 1 }), 3, 'd')).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
    });
    expect(
      workersCondition(dep({ observedGeneration: 2, updatedReplicas: 1, readyReplicas: 3 }), 3, 'd'),
    ).toMatchObject({ status: 'False', reason: 'RollingOut' });
    expect(
      workersCondition(dep({ observedGeneration: 2, updatedReplicas: 3, readyReplicas: 2 }), 3, 'd'),
    ).toMatchObject({ status: 'False', reason: 'WorkersUnavailable', message: '2 of 3 workers ready' });
    expect(
      workersCondition(dep({ observedGeneration: 2, updatedReplicas: 3, readyReplicas: 3 }), 3, 'd'),
    ).toMatchObject({ status: 'True', reason: 'WorkersAvailable' });
    expect(workersCondition(dep({ observedGeneration: 2 }), 0, 'd')).toMatchObject({
      status: 'True',
      reason: 'ScaledToZero',
    });
    const stuck = dep({
      observedGeneration: 2,
      conditions: [
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' },
      ],
    });
    expect(workersCondition(stuck, 3, 'd')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'too slow',
    });
  });
});

describe('onlyConfirmsNoPods (issue 18: no reconcile for the controller answer)', () => {
  const fresh = { ...dep({}, 1), replicas: 0 };
  const answered = (extra: Partial<DeploymentView['status']> = {}): DeploymentView => ({
    ...fresh,
    metadata: { ...fresh.metadata, resourceVersion: '2' },
    status: {
      observedGeneration: 1,
      replicas: 0,
      conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
      ...extra,
    },
  });
  it('is true when the controller only confirms that a never-scaled Deployment has no pods', () => {
    expect(onlyConfirmsNoPods(fresh, answered())).toBe(true);
    // The same answer leaves workersCondition where it was: nothing to reconcile.
    expect(workersCondition(answered(), 0, 'd')).toEqual(workersCondition(fresh, 0, 'd'));
  });
  it('is false for anything the reconcile reads', () => {
    const failed = answered({
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
    });
    expect(onlyConfirmsNoPods(fresh, failed)).toBe(false);
    expect(onlyConfirmsNoPods(fresh, answered({ replicas: 1 }))).toBe(false);
    expect(onlyConfirmsNoPods(fresh, { ...answered(), fingerprint: 'edited' })).toBe(false);
    expect(onlyConfirmsNoPods(fresh, { ...answered(), replicas: 1, generation: 2 })).toBe(false);
    expect(onlyConfirmsNoPods(fresh, { ...answered(), ownsReplicas: false })).toBe(false);
    // Asked for pods since creation (generation 2): the controller's answer matters.
    const scaled = { ...fresh, generation: 2 };
    expect(onlyConfirmsNoPods(scaled, { ...answered(), generation: 2 })).toBe(false);
  });
});

describe('scalingCondition', () => {
  it('is True while pods are added or removed', () => {
    expect(scalingCondition(dep({ replicas: 1 }), true, 3)).toMatchObject({
      status: 'True',
      reason: 'ScalingUp',
    });
    expect(scalingCondition(dep({ replicas: 5 }), true, 3)).toMatchObject({
      status: 'True',
      reason: 'ScalingDown',
    });
    expect(scalingCondition(dep({ replicas: 3 }), true, 3)).toMatchObject({
      status: 'False',
      reason: 'Stable',
    });
    expect(scalingCondition(dep({ replicas: 3 }), false, 3)).toMatchObject({
      status: 'False',
      reason: 'AutoscalingDisabled',
    });
  });
});

describe('readyCondition', () => {
  const w = (status: 'True' | 'False' | 'Unknown'): ConditionInput => ({
    type: 'WorkersReady',
    status,
    reason: 'R',
    message: `workers ${status}`,
  });
  const notConfigured: ConditionInput = {
    type: 'TopicReady',
    status: 'Unknown',
    reason: 'NotConfigured',
    message: 'no topic manager',
  };
  it('summarizes required parts and ignores NotConfigured ones', () => {
    expect(readyCondition([notConfigured, w('True')])).toMatchObject({
      status: 'True',
      reason: 'PipelineReady',
    });
    expect(readyCondition([notConfigured, w('False')])).toMatchObject({
      status: 'False',
      reason: 'WorkersNotReady',
      message: 'workers False',
    });
    expect(readyCondition([{ ...notConfigured, reason: 'Connecting' }, w('True')])).toMatchObject({
      status: 'Unknown',
      reason: 'TopicPending',
    });
  });
});

describe('conflictConditions', () => {
  const topic = { type: 'TopicReady' as const, status: 'True' as const, reason: 'TopicReady', message: 'ok' };
  const table = {
    type: 'TableReady' as const,
    status: 'False' as const,
    reason: CONFLICT,
    message: 'table logs.fw is owned by LogPipeline a/b (uid u)',
  };

  it('says no workers were deployed and puts the Conflict on Ready', () => {
    const [ready, , , workers, scaling] = conflictConditions(topic, table, undefined, 'x-worker');
    expect(ready).toMatchObject({ type: 'Ready', status: 'False', reason: CONFLICT, message: table.message });
    expect(workers).toMatchObject({ status: 'False', reason: CONFLICT });
    expect(workers.message).toContain('no workers deployed');
    expect(scaling).toMatchObject({ status: 'False', reason: 'AutoscalingDisabled' });
  });

  it('reports an existing Deployment scaled to zero', () => {
    const stopped = { ...dep({ observedGeneration: 2, replicas: 0 }), replicas: 0 };
    const [ready, , , workers] = conflictConditions(topic, table, stopped, 'x-worker');
    expect(workers).toMatchObject({ status: 'True', reason: 'ScaledToZero' });
    expect(ready.reason).toBe(CONFLICT);
  });
});

describe('ParserCoverage', () => {
  it('is True under the threshold, False above it naming the top shapes, Unknown without rows', () => {
    const ok = coverageOf(900_000, 1000, 20, { 'rfc3164#00000001': '20' });
    expect(parserCoverageCondition(ok, 5)).toMatchObject({
      status: 'True',
      reason: 'SourceAddressesPresent',
    });
    const bad = coverageOf(900_000, 1000, 300, { 'rfc3164#0000000a': '200', 'fortigate#0000000b': '100' });
    expect(bad.missingSrcIpPercent).toBe(30);
    const c = parserCoverageCondition(bad, 5);
    expect(c).toMatchObject({ status: 'False', reason: 'SourceAddressMissing' });
    expect(c.message).toContain('30% of 1000 rows in the last 15m lack src_ip (threshold 5%)');
    expect(c.message).toContain('rfc3164#0000000a (200), fortigate#0000000b (100)');
    expect(parserCoverageCondition(coverageOf(900_000, 0, 0, {}), 5).status).toBe('Unknown');
    expect(parserCoverageCondition(undefined, 5).reason).toBe('NoCoverageStats');
  });
});
