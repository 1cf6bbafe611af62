/**
 * Two operator instances in one process against the real apiserver: only the Lease holder
 * reconciles; when it stops (gracefully, releasing the Lease) the standby takes over within the
 * lease duration and reconciles what changes next.
 */
import { microTime } from '../operator/src/controller/leader';
import type { Manager } from '../operator/src/controller/manager';
import {
  apis,
  createNamespace,
  createPipeline,
  deleteNamespace,
  maybe,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';

jest.setTimeout(90_000);

const LEASE = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
let ns: string;
const managers: Manager[] = [];

beforeAll(async () => {
  ns = await createNamespace('op-leader');
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  if (ns) await deleteNamespace(ns);
});

function candidate(identity: string): Manager {
  const m = startManager(ns, {
    identity,
    leaderElection: { namespace: ns, name: 'logpipeline-operator', ...LEASE },
  });
  managers.push(m);
  return m;
}

describe('leader election', () => {
  it('lets only the leader reconcile and hands over within the lease duration when it stops', async () => {
    const a = candidate('operator-a');
    await waitFor('a leads', async () => a.isLeader());
    const b = candidate('operator-b');
    await waitFor('b caches synced', async () => b.isReady());

    await createPipeline(pipeline(ns, 'one'));
    await waitFor('one reconciled by a', () =>
      maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'one-worker' })),
    );
    // b saw the same events (its informers run) but has no workers while standing by.
    await new Promise((r) => setTimeout(r, 2 * LEASE.retryPeriodMs));
    expect(a.reconcileCount).toBeGreaterThan(0);
    expect(b.reconcileCount).toBe(0);
    expect(b.isLeader()).toBe(false);
    const lease = await apis().coordination.readNamespacedLease({
      namespace: ns,
      name: 'logpipeline-operator',
    });
    expect(lease.spec?.holderIdentity).toBe('operator-a');

    const stoppedAt = Date.now();
    await a.stop();
    expect(a.isLeader()).toBe(false);
    await waitFor('b leads', async () => b.isLeader(), LEASE.leaseDurationMs);
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE.leaseDurationMs);

    await createPipeline(pipeline(ns, 'two'));
    await waitFor('two reconciled by b', () =>
      maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'two-worker' })),
    );
    expect(b.reconcileCount).toBeGreaterThan(0);
    const after = await apis().coordination.readNamespacedLease({
      namespace: ns,
      name: 'logpipeline-operator',
    });
    expect(after.spec?.holderIdentity).toBe('operator-b');
    expect(after.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);
  });

  it('waits out the lease of a holder that stopped renewing (crash), then takes over', async () => {
    await Promise.all(managers.map((m) => m.stop()));
    // A holder that crashed: its last renewal is fresh and it will never renew or release.
    const { coordination } = apis();
    const lease = await coordination.readNamespacedLease({ namespace: ns, name: 'logpipeline-operator' });
    const now = microTime(Date.now());
    await coordination.replaceNamespacedLease({
      namespace: ns,
      name: 'logpipeline-operator',
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: 'crashed-operator',
          leaseDurationSeconds: LEASE.leaseDurationMs / 1000,
          renewTime: now as never,
          acquireTime: now as never,
        },
      },
    });
    const crashedAt = Date.now();
    const c = candidate('operator-c');
    await waitFor('c leads', async () => c.isLeader(), 3 * LEASE.leaseDurationMs);
    const waited = Date.now() - crashedAt;
    expect(waited).toBeGreaterThanOrEqual(LEASE.leaseDurationMs);
    expect(waited).toBeLessThan(LEASE.leaseDurationMs + 4 * LEASE.retryPeriodMs);
    const taken = await coordination.readNamespacedLease({ namespace: ns, name: 'logpipeline-operator' });
    expect(taken.spec?.holderIdentity).toBe('operator-c');
  });
});
