/**
 * Closed loop, burst: a backlog lands on an idle autoscaled pipeline. The operator must scale the
 * real workers up within one poll interval of the smoothed lag crossing the per-replica target,
 * the workers must drain every line into ClickHouse exactly once, and once the scale-down
 * stabilization window has passed the pipeline must come back to minReplicas, with a ScaledUp and
 * a ScaledDown Event saying from -> to and the lag.
 */
import {
  createAutoscaledPipeline,
  createTopic,
  produce,
  Recorder,
  replicaChanges,
  scaleEvents,
  startLoop,
  stopLoop,
  storedRows,
  type Loop,
  type Sample,
} from './autoscale-harness';
import { deletePipeline, waitFor } from './operator-harness';

// Generous: on a loaded machine every wait below may take much of its own bound.
jest.setTimeout(600_000);

// The burst is produced by this (busy) process while one worker already consumes it: under load
// the producer managed only ~1100 lines/s and the worker kept pace, so the lag peaked at 2000 and a
// target of 2000 per worker never asked for a second one. A target of 500 keeps the burst a burst
// (the first poll sees several times the target) however slow the machine is.
const LAG_PER_REPLICA = 500;
const POLL_MS = 1000;
const DOWN_WINDOW_MS = 15_000;
const LINES = 60_000;
let loop: Loop | undefined;

beforeAll(async () => {
  loop = await startLoop('as-burst');
});

afterAll(async () => {
  await stopLoop(loop);
});

test('a burst scales up at once, drains exactly once, and scales down after the window', async () => {
  const l = loop!;
  await createAutoscaledPipeline(l, 'burst', {
    minReplicas: 1,
    maxReplicas: 3,
    lagPerReplica: LAG_PER_REPLICA,
    scaleDownStabilization: `${DOWN_WINDOW_MS / 1000}s`,
  });
  const rec = new Recorder(l, 'burst');
  const onset = Date.now();
  try {
    await produce(l, 'burst', LINES, 31);
    const produced = Date.now();
    // Drained: the lag was up and is back to 0, and every line is stored.
    const drained = await rec.until(
      'the backlog drained',
      (s, all) => s.lag?.total === 0 && all.some((x) => (x.lag?.total ?? 0) > 0),
      180_000,
    );
    expect(await storedRows(l, 'burst')).toEqual({ rows: LINES, distinct: LINES });
    const firstUp = replicaChanges(rec.samples).find((c) => c.to > c.from);
    expect(firstUp).toBeDefined();
    // The first sample whose smoothed lag asks for more than the one worker (outside the 10% band).
    const crossing = rec.samples.find((s) => (s.lag?.smoothed ?? 0) > 1.1 * LAG_PER_REPLICA);
    expect(crossing).toBeDefined();
    // Status and scale are written by the same poll: the scale is never later than about one poll
    // after. The recorder's two reads per sample take longer on a loaded machine: allow 3 polls.
    expect(firstUp!.t - crossing!.t).toBeLessThanOrEqual(3 * POLL_MS);
    const peak = Math.max(...rec.samples.map((s) => s.replicas));
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(3);

    // Down: back to one worker, not before the window has passed since the lag was last high.
    await rec.until(
      'back to one worker',
      (s) => s.replicas === 1 && s.running === 1 && s.t > drained.t,
      DOWN_WINDOW_MS + 60_000,
    );
    const firstDown = replicaChanges(rec.samples).find((c) => c.to < c.from);
    expect(firstDown).toBeDefined();
    // The last poll that still asked for `from` workers: ceil(smoothed / target) >= from while the
    // instant lag is above activationLag (0 here): a drained group asks for minReplicas whatever
    // the smoothed tail says (recommend.ts), so those polls do not hold the window open.
    const lastHigh = rec.samples
      .filter(
        (s) =>
          s.t < firstDown!.t &&
          (s.lag?.total ?? 0) > 0 &&
          (s.lag?.smoothed ?? 0) > (firstDown!.from - 1) * LAG_PER_REPLICA,
      )
      .pop() as Sample;
    // The recorder sees a poll's value up to one operator poll late, and on a loaded machine the
    // operator's polls come later than POLL_MS: the tolerance is two of the poll spacings observed
    // (gaps between successive smoothed-lag values) around the window, never less than two POLL_MS.
    const near = rec.samples.filter((s) => s.t >= lastHigh.t - 5_000 && s.t <= firstDown!.t);
    const changes = near.filter((s, i) => i > 0 && s.lag?.smoothed !== near[i - 1].lag?.smoothed);
    const spacing = Math.max(POLL_MS, ...changes.slice(1).map((s, i) => s.t - changes[i].t));
    expect(firstDown!.t - lastHigh.t).toBeGreaterThanOrEqual(DOWN_WINDOW_MS - 2 * spacing);
    expect(firstDown!.t - drained.t).toBeLessThanOrEqual(DOWN_WINDOW_MS + 10 * POLL_MS);
    const last = rec.samples[rec.samples.length - 1];
    expect(last.lag?.lastScaleReason).toMatch(/^scaled down \d -> 1 workers/);

    // One Event per scale: the autoscaler's own, or the Scaling condition's flip Event carrying the same text.
    // Events are sent in the background: wait until the last scale's Event is in (or time out).
    const scales = replicaChanges(rec.samples);
    const scaleEventCount = async () =>
      (await scaleEvents(l, 'burst')).filter((e) => e.reason === 'ScaledUp' || e.reason === 'ScaledDown')
        .length;
    await waitFor('every scale Event', async () => (await scaleEventCount()) >= scales.length, 30_000).catch(
      () => undefined,
    );
    const events = await scaleEvents(l, 'burst');
    const ups = events.filter((e) => e.reason === 'ScaledUp');
    const downs = events.filter((e) => e.reason === 'ScaledDown');
    expect(ups).toHaveLength(scales.filter((c) => c.to > c.from).length);
    expect(downs).toHaveLength(scales.filter((c) => c.to < c.from).length);
    // A burst may ask for more than maxReplicas at once: the Event then names the cap.
    expect(ups[0].message).toMatch(
      /^(Scaling is True \(was \w+\): )?scaled up 1 -> [23] workers \((LagTarget|AtMaximum(: wants \d+ workers, capped at \d+ = min\(maxReplicas \d+, partitions \d+\))?)\): lag \d+ \(max partition \d+\), smoothed \d+/,
    );
    expect(downs[downs.length - 1].message).toMatch(
      /^(Scaling is True \(was \w+\): )?scaled down \d -> 1 workers/,
    );
    console.log(
      JSON.stringify({
        burst: {
          lines: LINES,
          produceMs: produced - onset,
          reactionMs: firstUp!.t - onset,
          drainMs: drained.t - onset,
          peakReplicas: peak,
          scaleDownAfterDrainMs: firstDown!.t - drained.t,
          changes: replicaChanges(rec.samples).map((c) => `${c.from}->${c.to}@${c.t - onset}`),
        },
      }),
    );
  } finally {
    await rec.stop();
    if (process.env.LP_AUTOSCALE_DEBUG) console.log(rec.dump(onset));
  }
});

test('never more workers than partitions: a huge backlog is capped at the partition count', async () => {
  const l = loop!;
  // The backlog is in the topic before the pipeline exists: the group starts 40 000 lines behind.
  await createTopic(l, 'cap', 2);
  await produce(l, 'cap', 40_000, 7, 2);
  const rec = new Recorder(l, 'cap');
  try {
    await createAutoscaledPipeline(
      l,
      'cap',
      { minReplicas: 1, maxReplicas: 2, lagPerReplica: 100, scaleDownStabilization: '60s' },
      { partitions: 2, adopt: true },
    );
    await rec.until('the backlog drained', (s) => s.lag?.total === 0, 180_000);
    // The recommendation asked for far more than 2 (lag / 100); the partition count held it.
    // Said by the scale-up Event and, while the workers drain, by the AtMaximum condition.
    const up = (await scaleEvents(l, 'cap')).find((e) => e.reason === 'ScaledUp');
    expect(up?.message).toMatch(/scaled up 1 -> 2 workers \(AtMaximum: wants \d+ workers/);
    const message = up!.message;
    const wanted = Number(
      /wants (\d+) workers, capped at 2 = min\(maxReplicas 2, partitions 2\)/.exec(message)?.[1],
    );
    expect(wanted).toBeGreaterThan(2);
    expect(Math.max(...rec.samples.map((s) => s.replicas))).toBe(2);
    expect(Math.max(...rec.samples.map((s) => s.running))).toBeLessThanOrEqual(2);
    expect(await storedRows(l, 'cap')).toEqual({ rows: 40_000, distinct: 40_000 });
  } finally {
    await rec.stop();
  }
});

test('an unreachable Kafka keeps the replicas and reports LagUnavailable', async () => {
  const l = loop!;
  await createAutoscaledPipeline(
    l,
    'nokafka',
    { minReplicas: 2, maxReplicas: 3, lagPerReplica: 100 },
    { brokers: ['127.0.0.1:1'], ready: false },
  );
  const rec = new Recorder(l, 'nokafka');
  try {
    const s = await rec.until('LagUnavailable', (x) => x.scaling?.reason === 'LagUnavailable', 90_000);
    expect(s.scaling!.status).toBe('Unknown');
    expect(s.scaling!.message).toMatch(/^lag unavailable, keeping 2 workers: /);
    const from = rec.samples.indexOf(s);
    await new Promise((r) => setTimeout(r, 3000));
    expect(rec.samples.slice(from).every((x) => x.replicas === 2)).toBe(true);
  } finally {
    await rec.stop();
  }
});

test('forgets deleted pipelines: autoscaler state and metric series go with them', async () => {
  const l = loop!;
  const series = async () =>
    (await l.registry.getSingleMetric('logpipeline_autoscaler_lag_messages')!.get()).values.length;
  expect(l.external.autoscaler.stateSize()).toBeGreaterThanOrEqual(2);
  expect(await series()).toBeGreaterThanOrEqual(2);
  for (const name of ['burst', 'cap', 'nokafka']) await deletePipeline(l.namespace, name);
  // The sweep runs every 30 s, also when nothing is left to evaluate.
  await waitFor('autoscaler state swept', async () => l.external.autoscaler.stateSize() === 0, 75_000);
  expect(await series()).toBe(0);
});
