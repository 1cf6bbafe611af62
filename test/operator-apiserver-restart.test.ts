/**
 * The apiserver goes away mid-run and comes back: the informers notice, back off, relist, and
 * reconciling resumes by itself, both for new pipelines and for repairs of existing children.
 */
import type { Manager } from '../operator/src/controller/manager';
import { startApiserver, stopApiserver } from './env/kubernetes';
import { readTestBed, writeTestBed } from './env/testbed';
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

jest.setTimeout(180_000);

let ns: string;
let manager: Manager;

beforeAll(async () => {
  ns = await createNamespace('op-restart');
  manager = startManager(ns);
  await waitFor('caches synced', async () => manager.isReady());
});

afterAll(async () => {
  await manager?.stop();
  if (ns) await deleteNamespace(ns);
});

describe('apiserver restart', () => {
  it('recovers informers and resumes reconciling after the apiserver restarts', async () => {
    await createPipeline(pipeline(ns, 'before'));
    const cm = await waitFor('before reconciled', () =>
      maybe(apis().core.readNamespacedConfigMap({ namespace: ns, name: 'before-worker-config' })),
    );
    const errorsBefore = manager.pipelines.stats().errors;

    const bed = readTestBed();
    await stopApiserver(bed.kubernetes!);
    // The informers notice the outage (a failed re-list) before the apiserver comes back: a
    // condition, not a guess at how long that takes on a loaded machine.
    await waitFor(
      'informers saw the outage',
      async () => manager.pipelines.stats().errors > errorsBefore,
      60_000,
    );
    // The jest process owns the bed (globalSetup ran in it), so it owns the new apiserver too.
    const kubernetes = await startApiserver(bed.kubernetes!, process.pid);
    writeTestBed({ ...readTestBed(), kubernetes });

    await createPipeline(pipeline(ns, 'after'));
    await waitFor(
      'after reconciled',
      () => maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'after-worker' })),
      90_000,
    );
    expect(manager.pipelines.stats().errors).toBeGreaterThan(errorsBefore);

    // Watches on children work again: a deleted ConfigMap of the earlier pipeline comes back.
    await apis().core.deleteNamespacedConfigMap({ namespace: ns, name: 'before-worker-config' });
    const again = await waitFor(
      'ConfigMap recreated',
      async () => {
        const c = await maybe(
          apis().core.readNamespacedConfigMap({ namespace: ns, name: 'before-worker-config' }),
        );
        return c && c.metadata!.uid !== cm.metadata!.uid ? c : undefined;
      },
      60_000,
    );
    expect(again.data).toEqual(cm.data);
  });
});
