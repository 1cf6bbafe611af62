/**
 * Closed loop, scale to zero: with minReplicas 0 an idle pipeline drops to zero workers once the
 * scale-down window has passed (still Ready: WorkersReady says ScaledToZero), lines arriving wake
 * one worker within a poll or two (the group never committed, so the lag counts from the log
 * start), every line is stored once, and the pipeline goes back to zero.
 */
import { auditMark, writesSince } from './fleet-support';
import { apis, condition, getPipeline, maybe, waitFor } from './operator-harness';
import {
  createAutoscaledPipeline,
  produce,
  Recorder,
  pipelineTables,
  replicaChanges,
  scaleEvents,
  startLoop,
  stopLoop,
  storedRows,
  type Loop,
} from './autoscale-harness';

jest.setTimeout(240_000);

const DOWN_WINDOW_MS = 5_000;
let loop: Loop | undefined;

beforeAll(async () => {
  loop = await startLoop('as-zero');
});

afterAll(async () => {
  await stopLoop(loop);
});

test('goes to zero when idle, wakes when lines arrive, drains, and goes back to zero', async () => {
  const l = loop!;
  const mark = auditMark();
  await createAutoscaledPipeline(l, 'zero', {
    minReplicas: 0,
    maxReplicas: 3,
    lagPerReplica: 2000,
    scaleDownStabilization: `${DOWN_WINDOW_MS / 1000}s`,
  });
  const rec = new Recorder(l, 'zero');
  try {
    const idle = await rec.until(
      'scaled to zero',
      (s) => s.replicas === 0 && s.running === 0 && s.scaling?.reason === 'BelowActivation',
      60_000,
    );
    expect(idle.scaling!.message).toBe('0 workers (minReplicas); lag 0 is at or below activationLag 0');
    const lp = await getPipeline(l.namespace, 'zero');
    expect(condition(lp, 'WorkersReady')).toMatchObject({ status: 'True', reason: 'ScaledToZero' });
    expect(condition(lp, 'Ready')?.status).toBe('True');
    // No PodDisruptionBudget for a Deployment that never asked for a pod (issue 18)...
    const pdb = () =>
      maybe(apis().policy.readNamespacedPodDisruptionBudget({ namespace: l.namespace, name: 'zero-worker' }));
    expect(await pdb()).toBeUndefined();
    // ...nor a ConfigMap: no pod reads it until the first scale-up applies it.
    const cm = () =>
      maybe(apis().core.readNamespacedConfigMap({ namespace: l.namespace, name: 'zero-worker-config' }));
    expect(await cm()).toBeUndefined();
    // ...nor the parser-stats table only workers write: the data and dead-letter tables exist.
    expect(await pipelineTables(l, 'zero')).toEqual(['zero', 'zero_dlq']);

    const sent = Date.now();
    await produce(l, 'zero', 5_000, 5);
    const produced = Date.now();
    const woke = await rec.until('woken', (s) => s.replicas >= 1 && s.t > sent, 60_000);
    // ...and one from the scale-up that asks for the first (sent with the scale write).
    expect((await waitFor('the PDB of the woken workers', pdb)).spec?.maxUnavailable).toBe(1);
    // The ConfigMap was applied, and answered, before the scale write asked for the first pod.
    expect((await cm())?.data).toBeDefined();
    const writes = writesSince(mark, l.namespace).map(
      (w) => `${w.verb} ${w.resource}/${w.subresource ?? ''}`,
    );
    const cmWrite = writes.indexOf('patch configmaps/');
    expect(cmWrite).toBeGreaterThanOrEqual(0);
    expect(cmWrite).toBeLessThan(writes.indexOf('patch deployments/scale'));
    // The reconcile after the scale-up creates the parser-stats table (the workers' first window
    // INSERT retries on the next window if it came first).
    await waitFor(
      'the parser-stats table of the woken workers',
      async () => ((await pipelineTables(l, 'zero')).includes('zero_parser_stats') ? true : undefined),
      60_000,
    );
    const drained = await rec.until(
      'drained',
      (s, all) => s.lag?.total === 0 && all.some((x) => x.t > sent && (x.lag?.total ?? 0) > 0),
      120_000,
    );
    expect(await storedRows(l, 'zero')).toEqual({ rows: 5_000, distinct: 5_000 });
    const back = await rec.until(
      'back to zero',
      (s) => s.t > drained.t && s.replicas === 0 && s.running === 0,
      DOWN_WINDOW_MS + 60_000,
    );

    const wake = (await scaleEvents(l, 'zero')).find((e) => e.reason === 'ScaledUp');
    expect(wake?.message).toMatch(/^scaled up 0 -> [123] workers \(Activated\): lag \d+/);
    // From zero: up steps, then down steps back to zero, never up again after a step down.
    const after = replicaChanges(rec.samples.filter((s) => s.t >= idle.t));
    expect(after[0].from).toBe(0);
    const firstDown = after.findIndex((c) => c.to < c.from);
    expect(firstDown).toBeGreaterThan(0);
    expect(after.slice(firstDown).every((c) => c.to < c.from)).toBe(true);
    expect(after[after.length - 1].to).toBe(0);
    console.log(
      JSON.stringify({
        zero: {
          produceMs: produced - sent,
          wakeAfterFirstLineMs: woke.t - sent,
          drainMs: drained.t - sent,
          backToZeroAfterDrainMs: back.t - drained.t,
        },
      }),
    );
  } finally {
    await rec.stop();
  }
});
