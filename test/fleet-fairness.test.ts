/**
 * A creation storm must not starve an edit of a pipeline that is already Ready (issue 18): keys
 * this operator has reconciled wait in the work queue's fast lane, never-reconciled ones in the
 * bulk lane. Proved by order, not timing: one worker, the storm's first reconcile held at the
 * Topic part (the real one, wrapped) until the storm and the edit are both in the informer's
 * cache (so both are queued), then released; the order in which the Topic part is called says
 * where the edit waited.
 */
import type { Manager } from '../operator/src/controller/manager';
import type { ExternalPart } from '../operator/src/controller/external';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { readTestBed } from './env/testbed';
import {
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  getPipeline,
  patchPipelineSpec,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';

jest.setTimeout(300_000);

const bed = readTestBed();
const STORM = 20;
let namespace: string;
let manager: Manager;
let external: ExternalClients;
/** Names the Topic part was called for, in order. */
const calls: string[] = [];
let release: () => void = () => undefined;
const gate = new Promise<void>((r) => (release = r));
let holding = false;
/** Two more gates, for the second case: its first late key, then its first late key after a throw. */
let releaseLate: () => void = () => undefined;
const lateGate = new Promise<void>((r) => (releaseLate = r));
let holdingLate = false;
let releaseAfterThrow: () => void = () => undefined;
const afterThrowGate = new Promise<void>((r) => (releaseAfterThrow = r));
let holdingAfterThrow = false;
let failed = false;

/** The real Topic part, recording each call and holding the first storm reconcile at the gate. */
function recorded(part: ExternalPart): ExternalPart {
  return {
    ...part,
    ensure: async (spec, ctx) => {
      calls.push(spec.name);
      if (spec.name.startsWith('storm-') && !holding) {
        holding = true;
        await gate;
      }
      if (spec.name.startsWith('late-') && !holdingLate) {
        holdingLate = true;
        await lateGate;
      } else if (spec.name.startsWith('late-') && failed && !holdingAfterThrow) {
        holdingAfterThrow = true;
        await afterThrowGate;
      }
      return part.ensure(spec, ctx);
    },
  };
}

beforeAll(async () => {
  namespace = await createNamespace('fleet-fair');
  manager = startManager(namespace, { concurrency: 1 });
  const register = manager.reconciler.registerPart.bind(manager.reconciler);
  manager.reconciler.registerPart = (part) => register(part.name === 'Topic' ? recorded(part) : part);
  external = registerExternalParts(manager);
});

afterAll(async () => {
  release();
  releaseLate();
  releaseAfterThrow();
  await manager.stop();
  await external.close();
  await deleteNamespace(namespace);
});

const spec = (name: string, podAnnotations: Record<string, string> = {}) => ({
  kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `${namespace}.${name}`, partitions: 1 } },
  clickhouse: {
    url: bed.clickhouse!.url,
    credentialsSecretRef: { name: 'ch' },
    database: namespace.replace(/-/g, '_'),
    table: name.replace(/-/g, '_'),
  },
  workers: { replicas: 0, podAnnotations },
  deadLetter: { enabled: false },
});

it('reconciles an edit of a reconciled pipeline ahead of a queued storm of new ones', async () => {
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  await createPipeline({ ...pipeline(namespace, 'edited'), spec: spec('edited') as never });
  // Reconciled once (its topic and tables made): from now on its key waits in the fast lane.
  await waitFor(
    'edited reconciled',
    async () => {
      const lp = await getPipeline(namespace, 'edited');
      return condition(lp, 'TopicReady')?.status === 'True' && condition(lp, 'TableReady')?.status === 'True';
    },
    120_000,
  );
  const storm = Array.from({ length: STORM }, (_, i) => `storm-${String(i).padStart(2, '0')}`);
  for (const name of storm) await createPipeline({ ...pipeline(namespace, name), spec: spec(name) as never });
  await waitFor('the first storm reconcile held', async () => holding);
  const before = (await getPipeline(namespace, 'edited'))!.metadata!.generation!;
  await patchPipelineSpec(namespace, 'edited', { workers: { podAnnotations: { edited: 'yes' } } });
  // Both are queued once the informer has them (its handlers enqueue synchronously).
  await waitFor(
    'the storm and the edit in the cache',
    async () =>
      storm.every((n) => manager.pipelines.get(namespace, n)) &&
      (manager.pipelines.get(namespace, 'edited')?.metadata.generation ?? 0) > before,
  );
  const mark = calls.length;
  release();
  await waitFor(
    'the edit observed',
    async () => {
      const lp = await getPipeline(namespace, 'edited');
      return lp?.status?.observedGeneration === lp?.metadata?.generation ? lp : undefined;
    },
    120_000,
  );
  await waitFor(
    'every storm pipeline reconciled',
    async () => storm.every((n) => calls.includes(n)),
    240_000,
  );
  // After the held storm key: at most `fastBurst` (3) fast keys and one bulk key before the edit,
  // where one FIFO would have served all the storm first.
  const after = calls.slice(mark);
  const at = after.indexOf('edited');
  const newBefore = new Set(
    after.slice(0, at).filter((n) => n.startsWith('storm-') && !calls.slice(0, mark).includes(n)),
  );
  expect(at).toBeGreaterThanOrEqual(0);
  expect(newBefore.size).toBeLessThanOrEqual(2);
});

it('retries a new pipeline whose first reconcile threw ahead of the untouched keys of a storm', async () => {
  // The first reconcile of `failing` throws (as an apiserver timeout would) before it does anything.
  const reconcile = manager.reconciler.reconcile.bind(manager.reconciler);
  manager.reconciler.reconcile = async (key) => {
    if (key.endsWith('/failing') && !failed) {
      failed = true;
      throw new Error('injected: the apiserver did not answer');
    }
    return reconcile(key);
  };
  const queue = (manager as unknown as { queue: { len(): number } }).queue;
  const late = Array.from({ length: 10 }, (_, i) => `late-${String(i).padStart(2, '0')}`);
  // late-00 holds the one worker while `failing` and the other nine are queued, in that order.
  await createPipeline({ ...pipeline(namespace, late[0]), spec: spec(late[0]) as never });
  await waitFor('the first late reconcile held', async () => holdingLate);
  for (const name of ['failing', ...late.slice(1)])
    await createPipeline({ ...pipeline(namespace, name), spec: spec(name) as never });
  await waitFor('all queued', async () => queue.len() >= late.length);
  // `failing` throws next; the late key after it is held until the retry is queued again.
  releaseLate();
  await waitFor('failing thrown and the next late key held', async () => failed && holdingAfterThrow);
  await waitFor('the retry of failing queued', async () => queue.len() >= late.length - 1);
  const mark = calls.length;
  releaseAfterThrow();
  await waitFor(
    'every late pipeline and failing reconciled',
    async () => ['failing', ...late].every((n) => calls.includes(n)),
    240_000,
  );
  // The retry goes first, not behind the 8 untouched keys (one lane of new keys put it last).
  const after = calls.slice(mark).filter((n) => n === 'failing' || n.startsWith('late-'));
  expect(after.indexOf('failing')).toBeGreaterThanOrEqual(0);
  expect(after.indexOf('failing')).toBeLessThanOrEqual(1);
});
